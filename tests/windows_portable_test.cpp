// The portable parts of the Windows side, on any OS: command-line quoting checked
// against a parser written here from the documented CommandLineToArgvW rules (and,
// in the Windows build under Wine, against CommandLineToArgvW itself), and the
// AppContainer runner's grant and denial planning, profile naming and launcher grammar.
#include "plan.hpp"

#include <confine/internal/windows_command_line.hpp>

#include <catch2/catch.hpp>

#if !defined(_WIN32)
#include "support.hpp"

#include <confine/plugins.hpp>
#endif

#if defined(_WIN32)
#include <windows.h>
#include <shellapi.h>
#endif

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ac = confine::appcontainer;
namespace win = confine::windows;

namespace {

// CommandLineToArgvW's rules, independently: the program name up to the first
// whitespace (or between quotes, backslashes literal); then arguments split on spaces
// and tabs outside quotes, where 2n backslashes before a quote are n backslashes and a
// quote that toggles quoting, 2n+1 are n backslashes and a literal quote, and
// backslashes before anything else are literal.
std::vector<std::string> reference_split(const std::string& line) {
    std::vector<std::string> out;
    std::size_t i = 0;
    std::string program;
    if (i < line.size() && line[i] == '"') {
        ++i;
        while (i < line.size() && line[i] != '"') program += line[i++];
        if (i < line.size()) ++i;
    } else {
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') program += line[i++];
    }
    out.push_back(program);
    for (;;) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i >= line.size()) break;
        std::string arg;
        bool quoted = false;
        while (i < line.size() && (quoted || (line[i] != ' ' && line[i] != '\t'))) {
            std::size_t backslashes = 0;
            while (i < line.size() && line[i] == '\\') ++backslashes, ++i;
            if (i < line.size() && line[i] == '"') {
                arg.append(backslashes / 2, '\\');
                if (backslashes % 2) arg.push_back('"');
                else quoted = !quoted;
                ++i;
            } else {
                arg.append(backslashes, '\\');
                if (i < line.size() && (quoted || (line[i] != ' ' && line[i] != '\t'))) arg.push_back(line[i++]);
            }
        }
        out.push_back(arg);
    }
    return out;
}

const std::vector<std::string> hostile{"plain",
                                       "",
                                       "two words",
                                       "tab\there",
                                       "new\nline",
                                       "\"quoted\"",
                                       "mid\"quote",
                                       "back\\slash",
                                       "trailing\\",
                                       "trailing two\\\\",
                                       "\\\\server\\share\\",
                                       "\\\"",
                                       "\\\\\"",
                                       "a\\\\\\\"b",
                                       "  ",
                                       "\"",
                                       "\\",
                                       "C:\\Program Files\\x\\",
                                       "caf\xc3\xa9 \xe4\xb8\xad"};

}  // namespace

TEST_CASE("windows command lines split back into exactly their arguments", "[windows][quoting]") {
    std::vector<std::string> argv{"C:\\Program Files\\tool\\tool.exe"};
    argv.insert(argv.end(), hostile.begin(), hostile.end());
    auto line = win::command_line(argv);
    REQUIRE(line);
    CHECK(reference_split(*line) == argv);
    for (const auto& a : hostile) {
        INFO(a);
        auto one = win::command_line({"C:\\t.exe", a});
        REQUIRE(one);
        CHECK(reference_split(*one) == std::vector<std::string>{"C:\\t.exe", a});
    }
    CHECK(win::quote_argument("") == "\"\"");
    CHECK(win::quote_argument("plain") == "plain");
    CHECK(win::quote_argument("a b\\") == "\"a b\\\\\"");
    CHECK(win::quote_argument("a\\\"b") == "\"a\\\\\\\"b\"");
    CHECK_FALSE(win::command_line({}));
    CHECK(win::command_line({"C:\\a\"b.exe"}).error() == "program name C:\\a\"b.exe contains a quote, a NUL or a control character");
    CHECK(win::command_line({"C:\\t.exe", std::string("a\0b", 3)}).error() == "an argument contains a NUL character");
    CHECK_FALSE(win::command_line({std::string("C:\\a\0b.exe", 10)}));  // Windows would end the line at the NUL
}

#if defined(_WIN32)
TEST_CASE("CommandLineToArgvW itself splits the command lines back", "[windows][quoting][native]") {
    std::vector<std::string> argv{"C:\\Program Files\\tool\\tool.exe"};
    for (const auto& a : hostile)
        if (a.find('\n') == std::string::npos && a.find('\xc3') == std::string::npos) argv.push_back(a);
    auto line = win::command_line(argv);
    REQUIRE(line);
    std::wstring wide(line->begin(), line->end());
    int n = 0;
    LPWSTR* split = ::CommandLineToArgvW(wide.c_str(), &n);
    REQUIRE(split);
    std::vector<std::string> back;
    for (int i = 0; i < n; ++i) {
        std::wstring w(split[i]);
        back.emplace_back(w.begin(), w.end());
    }
    ::LocalFree(split);
    CHECK(back == argv);
}
#endif

TEST_CASE("appcontainer grants: per mode, each path once, read-write wins, stable order", "[windows][appcontainer]") {
    auto rw = ac::plan_grants(true, "C:\\Work\\ws", "C:\\Elsewhere", {"D:/cache", "c:\\work\\WS\\", "C:\\Work\\ws\\sub\\..\\.\\"});
    REQUIRE(rw);
    // The whole user %TEMP% is never planned: the launcher makes the run's own.
    CHECK(*rw == std::vector<ac::Grant>{{"C:\\Work\\ws", ac::Access::read_write}, {"D:\\cache", ac::Access::read_write}});
    auto ro = ac::plan_grants(false, "C:\\Work\\ws", "C:\\Elsewhere", {});
    REQUIRE(ro);
    CHECK(*ro == std::vector<ac::Grant>{{"C:\\Work\\ws", ac::Access::read_only}});
    CHECK(ac::plan_grants(false, "C:\\ws", "", {"C:\\x"}).error() == "read-only mode cannot have writable roots");
    CHECK(ac::plan_grants(true, "relative\\ws", "", {}).error() == "not an absolute Windows path: relative\\ws");
    CHECK(ac::plan_grants(true, "C:ws", "", {}).error() == "not an absolute Windows path: C:ws");
    CHECK(ac::plan_grants(true, "\\\\?\\C:\\ws", "", {}).value() == std::vector<ac::Grant>{{"C:\\ws", ac::Access::read_write}});
}

TEST_CASE("appcontainer read-only mode grants reading where the command runs", "[windows][appcontainer]") {
    CHECK(ac::plan_grants(false, "", "C:\\Work\\ws", {}).value() == std::vector<ac::Grant>{{"C:\\Work\\ws", ac::Access::read_only}});
    CHECK(ac::plan_grants(false, "", "", {}).value().empty());
    // Never where it would reach too far: a drive, the profile folder or above it.
    CHECK(ac::plan_grants(false, "", "C:\\", {}).error() == "refusing to grant the container a whole drive: C:\\");
    CHECK(ac::plan_grants(false, "", "C:\\Users\\Me", {}, "c:\\users\\me").error() ==
          "refusing to grant the container C:\\Users\\Me: it is, or holds, the user's profile folder c:\\users\\me");
    CHECK(ac::plan_grants(false, "", "C:\\Users", {}, "C:\\Users\\me").has_value() == false);
    CHECK(ac::plan_grants(false, "", "C:\\Users\\me\\src", {}, "C:\\Users\\me").has_value());
    CHECK(ac::plan_grants(true, "C:\\Users\\me", "", {}, "C:\\Users\\me\\").has_value() == false);
}

TEST_CASE("appcontainer refuses network shares and device paths, with one line naming them", "[windows][appcontainer]") {
    CHECK(ac::path_refusal("\\\\server\\share\\ws") == "a network path (\\\\server\\share) is not supported: \\\\server\\share\\ws");
    CHECK(ac::path_refusal("//server/share") == "a network path (\\\\server\\share) is not supported: //server/share");
    CHECK(ac::path_refusal("\\\\?\\UNC\\server\\share") == "a network path (\\\\server\\share) is not supported: \\\\?\\UNC\\server\\share");
    CHECK(ac::path_refusal("\\\\?\\unc\\server\\share").starts_with("a network path"));
    for (const char* device : {"\\\\.\\pipe\\x", "\\\\?\\Volume{0b1c2d3e-0000-0000-0000-100000000000}\\ws", "\\\\?\\GLOBALROOT\\Device\\HarddiskVolume1",
                               "\\\\.\\PhysicalDrive0", "\\??\\C:\\ws"})
        CHECK(ac::path_refusal(device) == std::string("a device path (\\\\.\\ or \\\\?\\ other than a drive path) is not supported: ") + device);
    CHECK(ac::path_refusal("C:\\ws:secret").starts_with("a path with a ':' after its drive"));
    // A drive path behind either prefix is the drive path.
    CHECK(ac::path_refusal("\\\\?\\C:\\ws").empty());
    CHECK(ac::path_refusal("\\\\.\\D:\\ws").empty());
    CHECK(ac::normalized("\\\\.\\D:\\ws\\") == "D:\\ws");
    CHECK(ac::plan_denials({}, {"\\\\srv\\s\\.ssh"}, {}).error() == "deny_read: a network path (\\\\server\\share) is not supported: \\\\srv\\s\\.ssh");
    CHECK(ac::parse_launcher_args({"--rw", "\\\\.\\pipe\\x", "--", "x"}).error() ==
          "--rw: a device path (\\\\.\\ or \\\\?\\ other than a drive path) is not supported: \\\\.\\pipe\\x");
}

TEST_CASE("appcontainer paths: one spelling, dot and dot-dot taken lexically, never above the drive", "[windows][appcontainer]") {
    CHECK(ac::normalized("C:/a//b/./c/../d/") == "C:\\a\\b\\d");
    CHECK(ac::normalized("C:\\..\\..\\x") == "C:\\x");
    CHECK(ac::normalized("c:\\") == "c:\\");
    CHECK(ac::folded("C:\\Work\\WS\\.") == "c:\\work\\ws");
    CHECK(ac::within("C:\\Work\\ws\\..\\ws\\a", "c:\\work\\WS"));
}

TEST_CASE("appcontainer profile names follow the policy and the run, within Windows' limit", "[windows][appcontainer]") {
    auto a = ac::plan_grants(true, "C:\\Work\\ws", "", {});
    auto same = ac::plan_grants(true, "c:/work/ws/", "", {});
    auto other = ac::plan_grants(true, "C:\\Work\\other", "", {});
    auto ro = ac::plan_grants(false, "C:\\Work\\ws", "", {});
    const std::string name = ac::profile_name(*a);
    CHECK(name.size() <= 64);
    CHECK(name.starts_with("confine."));
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.") == std::string::npos);
    CHECK(ac::profile_name(*same) == name);
    CHECK(ac::profile_name(*other) != name);
    CHECK(ac::profile_name(*ro) != name);
    // Each run a container of its own.
    const std::string n1 = ac::run_nonce(4242, 1000), n2 = ac::run_nonce(4242, 1001), n3 = ac::run_nonce(4243, 1000);
    CHECK(ac::is_nonce(n1));
    CHECK(n1 != n2);
    CHECK(n1 != n3);
    CHECK(ac::run_nonce(4242, 1000) == n1);
    CHECK(ac::profile_name(*a, {}, n1) != name);
    CHECK(ac::profile_name(*a, {}, n1) != ac::profile_name(*a, {}, n2));
    CHECK(ac::profile_name(*a, {}, n1).size() == 24);
}

TEST_CASE("appcontainer private temporary directories are named by the run", "[windows][appcontainer]") {
    const std::string nonce = ac::run_nonce(7, 9);
    CHECK(ac::private_temp_name(nonce) == "confine-" + nonce);
    CHECK(ac::is_private_temp("C:\\Users\\me\\AppData\\Local\\Temp\\confine-" + nonce));
    CHECK_FALSE(ac::is_private_temp("C:\\Users\\me\\AppData\\Local\\Temp"));
    CHECK_FALSE(ac::is_private_temp("C:\\Users\\me"));
    CHECK_FALSE(ac::is_private_temp("C:\\confine-" + nonce.substr(1)));
    CHECK_FALSE(ac::is_private_temp("C:\\confine-0123456789ABCDEF"));
    CHECK_FALSE(ac::is_private_temp("\\\\server\\share\\confine-" + nonce));
    CHECK(ac::acl_lock_file("C:\\Work\\WS\\") == ac::acl_lock_file("c:\\work\\ws"));
    CHECK(ac::acl_lock_file("C:\\Work\\ws") != ac::acl_lock_file("C:\\Work\\ws2"));
    CHECK(ac::acl_lock_file("C:\\Work\\ws").starts_with("acl."));
    CHECK(ac::acl_lock_file("C:\\Work\\ws").ends_with(".lock"));
    CHECK(ac::acl_lock_file("C:\\Work\\ws").find_first_of("\\/:") == std::string::npos);
}

TEST_CASE("appcontainer-run's grammar, and the argv the plugin builds for it", "[windows][appcontainer]") {
    auto r = ac::parse_launcher_args({"--ro", "C:\\in", "--rw", "D:/out/", "--", "cmd.exe", "/c", "--rw"});
    REQUIRE(r);
    CHECK_FALSE(r->probe);
    CHECK(r->grants == std::vector<ac::Grant>{{"C:\\in", ac::Access::read_only}, {"D:\\out", ac::Access::read_write}});
    CHECK(r->command == std::vector<std::string>{"cmd.exe", "/c", "--rw"});
    CHECK(ac::parse_launcher_args({"tool.exe"})->command == std::vector<std::string>{"tool.exe"});
    CHECK(ac::parse_launcher_args({"--probe"})->probe);
    CHECK(ac::parse_launcher_args({"--rw"}).error() == "--rw requires a path");
    CHECK(ac::parse_launcher_args({"--ro", "rel", "--", "x"}).error() == "--ro: not an absolute Windows path: rel");
    CHECK(ac::parse_launcher_args({"--bogus", "--", "x"}).error() == "unknown argument: --bogus");
    CHECK_FALSE(ac::parse_launcher_args({"--ro", "C:\\in", "--", "x"})->network);
    CHECK(ac::parse_launcher_args({"--network", "--ro", "C:\\in", "--", "x"})->network);
    CHECK(ac::launcher_argv("run.exe", {}, {"x"}, true) == std::vector<std::string>{"run.exe", "--network", "--", "x"});
    CHECK(ac::launcher_argv("run.exe", {}, {"x"}) == std::vector<std::string>{"run.exe", "--", "x"});
    CHECK(ac::parse_launcher_args({"--rw", "C:\\a", "--"}).error() == "no command given");
    const auto grants = *ac::plan_grants(true, "C:\\ws", "", {});
    CHECK(ac::launcher_argv("C:\\confine\\appcontainer-run.exe", grants, {"cl.exe", "/c", "x.c"}, false, {}, {true, ""}) ==
          std::vector<std::string>{"C:\\confine\\appcontainer-run.exe", "--rw", "C:\\ws", "--private-temp", "--", "cl.exe", "/c", "x.c"});
    const auto with_parent = ac::launcher_argv("run.exe", grants, {"x"}, true, {}, {true, "D:\\tmp"});
    CHECK(with_parent == std::vector<std::string>{"run.exe", "--rw", "C:\\ws", "--private-temp", "--temp-parent", "D:\\tmp", "--network", "--", "x"});
    auto back = ac::parse_launcher_args(std::vector<std::string>(with_parent.begin() + 1, with_parent.end()));
    REQUIRE(back);
    CHECK(back->private_temp);
    CHECK(back->temp_parent == "D:\\tmp");
    CHECK(back->network);
    CHECK(ac::parse_launcher_args({"--temp-parent", "D:\\tmp", "--", "x"}).error() == "--temp-parent needs --private-temp");
}

TEST_CASE("appcontainer denials: read on deny_read, write on protect, remove above it inside a writable root", "[windows][appcontainer]") {
    const auto grants = *ac::plan_grants(true, "C:\\Work\\ws", "", {});
    auto d = ac::plan_denials(grants, {"C:\\Users\\me\\.ssh", "c:/work/ws/.env", "C:\\Work\\ws\\.ENV\\"},
                              {"C:\\Work\\ws\\.git\\hooks", "C:\\Work\\ws\\.git\\config", "C:\\Work\\ws\\sub\\deep\\.git\\hooks"});
    REQUIRE(d);
    // Removals (not inherited) first, then writes, then reads, each sorted; each path once.
    CHECK(*d == std::vector<ac::Deny>{{"C:\\Work\\ws\\.git", ac::Denial::remove},
                                      {"C:\\Work\\ws\\sub", ac::Denial::remove},
                                      {"C:\\Work\\ws\\sub\\deep", ac::Denial::remove},
                                      {"C:\\Work\\ws\\sub\\deep\\.git", ac::Denial::remove},
                                      {"C:\\Work\\ws\\.git\\config", ac::Denial::write},
                                      {"C:\\Work\\ws\\.git\\hooks", ac::Denial::write},
                                      {"C:\\Work\\ws\\sub\\deep\\.git\\hooks", ac::Denial::write},
                                      {"C:\\Users\\me\\.ssh", ac::Denial::read},
                                      {"c:\\work\\ws\\.env", ac::Denial::read}});
    // Never the writable root itself, nor what lies above it...
    for (const auto& x : *d) {
        CHECK(ac::folded(x.path) != "c:\\work\\ws");
        CHECK(ac::folded(x.path) != "c:\\work");
    }
    // ... unless the root lies in another: a workspace in the temporary directory.
    const auto nested = *ac::plan_grants(true, "C:\\Temp\\ws", "", {"C:\\Temp"});
    CHECK(*ac::plan_denials(nested, {}, {"C:\\Temp\\ws\\.git\\hooks"}) == std::vector<ac::Deny>{{"C:\\Temp\\ws", ac::Denial::remove},
                                                                                              {"C:\\Temp\\ws\\.git", ac::Denial::remove},
                                                                                              {"C:\\Temp\\ws\\.git\\hooks", ac::Denial::write}});
    // A read-only grant cannot be renamed in: nothing to remove there.
    const auto ro = *ac::plan_grants(false, "C:\\Work\\ws", "", {});
    CHECK(*ac::plan_denials(ro, {}, {"C:\\Work\\ws\\.git\\hooks"}) == std::vector<ac::Deny>{{"C:\\Work\\ws\\.git\\hooks", ac::Denial::write}});
    // A sibling that shares the root's first characters is not inside it.
    CHECK(*ac::plan_denials(grants, {}, {"C:\\Work\\wsx\\.git\\hooks"}) == std::vector<ac::Deny>{{"C:\\Work\\wsx\\.git\\hooks", ac::Denial::write}});
    CHECK(ac::within("C:\\Work\\ws\\a", "c:\\work\\WS"));
    CHECK_FALSE(ac::within("C:\\Work\\wsx", "C:\\Work\\ws"));
    CHECK(ac::within("D:\\x", "D:\\"));
    CHECK(ac::plan_denials(grants, {"relative\\.ssh"}, {}).error() == "deny_read: not an absolute Windows path: relative\\.ssh");
    CHECK(ac::plan_denials(grants, {}, {"/home/me/ws/.git/hooks"}).error() == "protect: not an absolute Windows path: /home/me/ws/.git/hooks");
    CHECK(ac::plan_denials(grants, {}, {}).value().empty());
}

TEST_CASE("appcontainer denials reach the launcher and name a container of their own", "[windows][appcontainer]") {
    const auto grants = *ac::plan_grants(true, "C:\\ws", "", {"C:\\Temp"});
    const auto denials = *ac::plan_denials(grants, {"C:\\ws\\.env"}, {"C:\\ws\\.git\\hooks"});
    const auto argv = ac::launcher_argv("run.exe", grants, {"git", "commit"}, false, denials);
    CHECK(argv == std::vector<std::string>{"run.exe", "--rw", "C:\\Temp", "--rw", "C:\\ws", "--deny-remove", "C:\\ws\\.git", "--deny-write",
                                           "C:\\ws\\.git\\hooks", "--deny-read", "C:\\ws\\.env", "--", "git", "commit"});
    auto r = ac::parse_launcher_args(std::vector<std::string>(argv.begin() + 1, argv.end()));
    REQUIRE(r);
    CHECK(r->grants == grants);
    CHECK(r->denials == denials);
    CHECK(r->command == std::vector<std::string>{"git", "commit"});
    CHECK(ac::parse_launcher_args({"--deny-read"}).error() == "--deny-read requires a path");
    CHECK(ac::parse_launcher_args({"--deny-write", "rel", "--", "x"}).error() == "--deny-write: not an absolute Windows path: rel");
    CHECK(ac::parse_launcher_args({"--deny-remove", "", "--", "x"}).error() == "--deny-remove requires a path");
    // Without denials the name is what it was; with them, another container.
    CHECK(ac::profile_name(grants, {}) == ac::profile_name(grants));
    CHECK(ac::profile_name(grants, denials) != ac::profile_name(grants));
    CHECK(ac::profile_name(grants, *ac::plan_denials(grants, {"C:\\ws\\.env"}, {})) != ac::profile_name(grants, denials));
    CHECK(ac::profile_name(grants, denials).size() <= 64);
}

TEST_CASE("appcontainer-run resolves every path to its final one, then grants each folder once", "[windows][appcontainer]") {
    // A stand-in for GetFinalPathNameByHandleW: an 8.3 name, a case, a junction, a mapped
    // drive that leads to a share.
    auto final_path = [](const std::string& p) -> std::expected<std::string, std::string> {
        const std::string f = ac::folded(p);
        if (f == "c:\\work~1\\ws" || f == "c:\\work\\ws") return std::string("C:\\Work\\ws");
        if (f == "c:\\link") return std::string("C:\\Work\\ws");
        if (f == "c:\\work\\ws\\.git\\hooks" || f == "c:\\work~1\\ws\\.git\\hooks") return std::string("C:\\Work\\ws\\.git\\hooks");
        if (f == "z:\\ws") return std::string("\\\\?\\UNC\\server\\share\\ws");
        if (f == "c:\\gone") return std::unexpected(std::string("the system cannot find the file specified"));
        return std::string(p);
    };
    auto r = ac::parse_launcher_args({"--ro", "C:\\WORK~1\\ws", "--rw", "c:\\link", "--ro", "C:\\Work\\sub\\..\\ws", "--deny-write",
                                      "C:\\WORK~1\\ws\\.git\\hooks", "--deny-write", "c:\\work\\ws\\.git\\HOOKS", "--", "x"});
    REQUIRE(r);
    REQUIRE(ac::resolve_paths(*r, final_path));
    CHECK(r->grants == std::vector<ac::Grant>{{"C:\\Work\\ws", ac::Access::read_write}});
    CHECK(r->denials == std::vector<ac::Deny>{{"C:\\Work\\ws\\.git\\hooks", ac::Denial::write}});
    auto share = ac::parse_launcher_args({"--rw", "Z:\\ws", "--", "x"});
    CHECK(ac::resolve_paths(*share, final_path).error() ==
          "Z:\\ws resolves to \\\\?\\UNC\\server\\share\\ws: a network path (\\\\server\\share) is not supported: \\\\?\\UNC\\server\\share\\ws");
    auto gone = ac::parse_launcher_args({"--deny-read", "C:\\gone", "--", "x"});
    CHECK(ac::resolve_paths(*gone, final_path).error() == "cannot resolve C:\\gone: the system cannot find the file specified");
}

namespace {

// What one launcher writes before each step of a run, in order.
std::string journal_of_a_run(const std::string& nonce) {
    std::string j = std::string(ac::journal_header) + "\n";
    j += ac::journal_line("profile", "confine.0123456789abcdef");
    j += ac::journal_line("sid", "S-1-15-2-1-2-3-4-5-6-7");
    j += ac::journal_line("temp", "C:\\Users\\me\\AppData\\Local\\Temp\\" + ac::private_temp_name(nonce));
    j += ac::journal_line("acl", "C:\\Users\\me\\AppData\\Local\\Temp\\" + ac::private_temp_name(nonce));
    j += ac::journal_line("acl", "C:\\Work\\ws");
    j += ac::journal_line("acl", "C:\\Work\\ws\\.git\\hooks");
    j += ac::journal_line("acl", "c:\\work\\WS");  // a grant and a denial on one folder
    return j;
}

// A file system of access lists, enough to replay a journal against: each folder's
// explicit entries, by SID.
struct FakeAcls {
    std::map<std::string, std::vector<std::string>> entries;
    std::set<std::string> dirs, profiles;

    void undo(const ac::Journal& j) {  // what the launcher's recovery does, step by step
        for (auto it = j.acl.rbegin(); it != j.acl.rend(); ++it) std::erase(entries[ac::folded(*it)], j.sid);
        if (!j.temp.empty()) dirs.erase(ac::folded(j.temp));
        if (!j.profile.empty()) profiles.erase(j.profile);
    }
};

}  // namespace

TEST_CASE("appcontainer journal: written before each step, read back, and a crashed run undone", "[windows][appcontainer][journal]") {
    const std::string nonce = ac::run_nonce(1234, 5678);
    const std::string text = journal_of_a_run(nonce);
    auto j = ac::parse_journal(text);
    REQUIRE(j);
    CHECK(j->profile == "confine.0123456789abcdef");
    CHECK(j->sid == "S-1-15-2-1-2-3-4-5-6-7");
    CHECK(j->temp == "C:\\Users\\me\\AppData\\Local\\Temp\\confine-" + nonce);
    CHECK(j->acl == std::vector<std::string>{"C:\\Users\\me\\AppData\\Local\\Temp\\confine-" + nonce, "C:\\Work\\ws", "C:\\Work\\ws\\.git\\hooks"});
    CHECK(ac::journal_file_name(nonce) == nonce + ".journal");

    // A crash at every point of the run: the journal as far as it was written (the last
    // line perhaps torn), and the world as the launcher left it, which had made every
    // change whose line was complete. The next start's recovery leaves nothing of the run,
    // and nothing of another run or of the user's.
    for (std::size_t cut = std::string(ac::journal_header).size() + 1; cut <= text.size(); ++cut) {
        auto partial = ac::parse_journal(std::string_view(text).substr(0, cut));
        REQUIRE(partial);
        FakeAcls world;
        world.entries["c:\\work\\ws"] = {"S-1-5-21-user", "S-1-15-2-9-9-9"};  // the user's, another run's
        if (!partial->profile.empty()) world.profiles.insert(partial->profile);
        if (!partial->temp.empty()) world.dirs.insert(ac::folded(partial->temp));
        for (const auto& p : partial->acl) world.entries[ac::folded(p)].push_back(partial->sid);
        world.undo(*partial);
        world.undo(*partial);  // a crash while undoing: undone again, to the same end
        CHECK(world.entries["c:\\work\\ws"] == std::vector<std::string>{"S-1-5-21-user", "S-1-15-2-9-9-9"});
        for (const auto& [path, sids] : world.entries)
            CHECK(std::find(sids.begin(), sids.end(), "S-1-15-2-1-2-3-4-5-6-7") == sids.end());
        CHECK(world.dirs.empty());
        CHECK(world.profiles.empty());
    }
}

TEST_CASE("appcontainer journal: what it names is bounded, so a changed one cannot undo the user's own", "[windows][appcontainer][journal]") {
    const std::string head = std::string(ac::journal_header) + "\n";
    CHECK(ac::parse_journal("").error() == "an empty journal");
    CHECK(ac::parse_journal("confine appcontainer journal 2\n").error() == "not a journal of this launcher");
    CHECK(ac::parse_journal(head + "sid S-1-5-21-1-2-3-1001\n").error() == "not an AppContainer SID: S-1-5-21-1-2-3-1001");
    CHECK(ac::parse_journal(head + "temp C:\\Users\\me\n").error() == "not a temporary directory of this launcher: C:\\Users\\me");
    CHECK(ac::parse_journal(head + "profile Microsoft.Windows.Photos\n").error() == "not a profile of this launcher: Microsoft.Windows.Photos");
    CHECK(ac::parse_journal(head + "acl \\\\srv\\share\n").error() == "not a drive path: \\\\srv\\share");
    CHECK(ac::parse_journal(head + "acl C:\\ws\n").error() == "access-list entries without the SID they were for");
    CHECK(ac::parse_journal(head + "rm C:\\ws\n").error() == "unknown journal line: rm C:\\ws");
    CHECK(ac::parse_journal(head + "sid S-1-15-2-1\nacl C:\\ws").value().acl.empty());  // torn: never acted on
    const auto grants = *ac::plan_grants(true, "C:\\Users\\me\\AppData", "", {});
    CHECK(ac::journal_refusal("C:\\Users\\me\\AppData\\Local\\confine\\appcontainer", grants) ==
          "the journal folder C:\\Users\\me\\AppData\\Local\\confine\\appcontainer lies inside the read-write root C:\\Users\\me\\AppData, where the "
          "container could change it");
    CHECK(ac::journal_refusal("C:\\Users\\me\\AppData\\Local\\confine\\appcontainer", *ac::plan_grants(false, "C:\\Users\\me\\AppData", "", {})).empty());
    CHECK(ac::journal_refusal("C:\\Users\\me\\AppData\\Local\\confine\\appcontainer", *ac::plan_grants(true, "C:\\Work\\ws", "", {})).empty());
}

#if !defined(_WIN32)
TEST_CASE("the appcontainer plugin plans denials and reports read and protect as partial", "[windows][appcontainer]") {
    test::TempDir dir;
    auto runner = test::builtin_runner(dir.path(), "appcontainer");
    const std::vector<std::string> argv{"cmd.exe"};
    confine::Policy policy{confine::Mode::workspace_write, "C:\\ws", {}};
    auto plain = runner->wrap(policy, argv);
    REQUIRE(plain);
    CHECK(plain->dimensions.read == confine::Level::full);  // nothing to deny
    CHECK(plain->dimensions.protect == confine::Level::full);
    CHECK(plain->dimensions.open.empty());
    policy.deny_read = {"C:\\Users\\me\\.ssh", "C:\\ws\\.env"};
    policy.protect = {"C:\\ws\\.git\\hooks"};
    auto wrapped = runner->wrap(policy, argv);
    REQUIRE(wrapped);
    const std::string launcher = (dir / "appcontainer-run").string();
    CHECK(wrapped->argv == std::vector<std::string>{launcher, "--rw", "C:\\ws", "--deny-remove", "C:\\ws\\.git", "--deny-write", "C:\\ws\\.git\\hooks",
                                                    "--deny-read", "C:\\Users\\me\\.ssh", "--deny-read", "C:\\ws\\.env", "--private-temp", "--", "cmd.exe"});
    CHECK(wrapped->dimensions.read == confine::Level::partial);
    CHECK(wrapped->dimensions.protect == confine::Level::partial);
    const std::string open(ac::left_open);
    CHECK(wrapped->dimensions.open == "read: " + open + "; protect: " + open);
    CHECK(wrapped->dimensions.write == confine::Level::full);
    policy.deny_read.clear();
    CHECK(runner->wrap(policy, argv)->dimensions.open == "protect: " + open);
    policy.protect = {"relative\\hooks"};
    auto refused = runner->wrap(policy, argv);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::EndsWith("protect: not an absolute Windows path: relative\\hooks"));
}

TEST_CASE("the appcontainer plugin's denial dialect has Access is denied, and the socket refusal where the network is confined",
          "[windows][appcontainer][hints]") {
    test::TempDir dir;
    auto runner = test::builtin_runner(dir.path(), "appcontainer");
    confine::Policy policy{confine::Mode::workspace_write, "C:\\ws", {}};
    policy.network = confine::Network::none;
    auto confined = runner->wrap(policy, std::vector<std::string>{"cmd.exe"});
    REQUIRE(confined);
    std::vector<std::string> dialect{"access is denied", "eacces", "eperm"};
    for (const auto& s : confine::sdk::network_denial_signatures()) dialect.push_back(s);
    CHECK(confined->denial_signatures == dialect);
    // WSAEACCES, as FormatMessage words it, and a name that cannot be resolved.
    auto has = [&](const std::string& line) {
        return std::any_of(dialect.begin(), dialect.end(), [&](const std::string& sig) {
            std::string lower = line;
            std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            return lower.find(sig) != std::string::npos;
        });
    };
    CHECK(has("An attempt was made to access a socket in a way forbidden by its access permissions."));
    CHECK(has("curl: (6) Could not resolve host: example.com"));
    CHECK(has("No such host is known."));
    policy.network = confine::Network::allow;
    auto open = runner->wrap(policy, std::vector<std::string>{"cmd.exe"});
    REQUIRE(open);
    CHECK(open->denial_signatures == std::vector<std::string>{"access is denied", "eacces", "eperm"});
}

TEST_CASE("the appcontainer plugin grants reading where a read-only command runs, and a private temp to a writing one", "[windows][appcontainer]") {
    test::TempDir dir;
    auto runner = test::builtin_runner(dir.path(), "appcontainer");
    const std::string launcher = (dir / "appcontainer-run").string();
    confine::Policy ro{confine::Mode::read_only, {}, {}};
    ro.working_directory = "C:\\Work\\ws";
    auto wrapped = runner->wrap(ro, std::vector<std::string>{"cmd.exe", "/c", "dir"});
    REQUIRE(wrapped);
    CHECK(wrapped->argv == std::vector<std::string>{launcher, "--ro", "C:\\Work\\ws", "--", "cmd.exe", "/c", "dir"});
    CHECK(wrapped->tmp == confine::Tmp::host);
    confine::Policy rw{confine::Mode::workspace_write, "C:\\Work\\ws", {}};
    rw.working_directory = "C:\\Work\\ws\\sub";
    wrapped = runner->wrap(rw, std::vector<std::string>{"cmd.exe"});
    REQUIRE(wrapped);
    CHECK(wrapped->argv == std::vector<std::string>{launcher, "--rw", "C:\\Work\\ws", "--private-temp", "--", "cmd.exe"});
    CHECK(wrapped->tmp == confine::Tmp::private_);
    ro.working_directory = "\\\\server\\share\\ws";
    auto refused = runner->wrap(ro, std::vector<std::string>{"cmd.exe"});
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::EndsWith("a network path (\\\\server\\share) is not supported: \\\\server\\share\\ws"));
}
#endif
