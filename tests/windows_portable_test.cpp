// The portable parts of the Windows side, on any OS: command-line quoting checked
// against a parser written here from the documented CommandLineToArgvW rules (and,
// in the Windows build under Wine, against CommandLineToArgvW itself), and the
// AppContainer runner's grant and denial planning, profile naming and launcher grammar.
#include "plan.hpp"

#include <confine/sdk/windows_command_line.hpp>

#include <catch2/catch.hpp>

#if !defined(_WIN32)
#include "support.hpp"

#include <confine/plugins.hpp>
#endif

#if defined(_WIN32)
#include <windows.h>
#include <shellapi.h>
#endif

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
    CHECK(win::command_line({"C:\\a\"b.exe"}).error() == "program name C:\\a\"b.exe contains a quote or a control character");
    CHECK(win::command_line({"C:\\t.exe", std::string("a\0b", 3)}).error() == "an argument contains a NUL character");
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
    auto rw = ac::plan_grants(true, "C:\\Work\\ws", "C:\\Users\\me\\AppData\\Local\\Temp\\", {"D:/cache", "c:\\work\\WS\\"});
    REQUIRE(rw);
    CHECK(*rw == std::vector<ac::Grant>{{"C:\\Users\\me\\AppData\\Local\\Temp", ac::Access::read_write},
                                        {"C:\\Work\\ws", ac::Access::read_write},
                                        {"D:\\cache", ac::Access::read_write}});
    auto ro = ac::plan_grants(false, "C:\\Work\\ws", "C:\\Temp", {});
    REQUIRE(ro);
    CHECK(*ro == std::vector<ac::Grant>{{"C:\\Work\\ws", ac::Access::read_only}});
    CHECK(ac::plan_grants(false, "C:\\ws", "", {"C:\\x"}).error() == "read-only mode cannot have writable roots");
    CHECK(ac::plan_grants(true, "relative\\ws", "", {}).error() == "not an absolute Windows path: relative\\ws");
    CHECK(ac::plan_grants(true, "C:ws", "", {}).error() == "not an absolute Windows path: C:ws");
    CHECK(ac::plan_grants(true, "\\\\server\\share\\ws", "", {}).has_value());
    CHECK_FALSE(ac::plan_grants(true, "\\\\?\\C:\\ws", "", {}).has_value());
}

TEST_CASE("appcontainer profile names follow the policy, within Windows' limit", "[windows][appcontainer]") {
    auto a = ac::plan_grants(true, "C:\\Work\\ws", "C:\\Temp", {});
    auto same = ac::plan_grants(true, "c:/work/ws/", "C:\\TEMP", {});
    auto other = ac::plan_grants(true, "C:\\Work\\other", "C:\\Temp", {});
    auto ro = ac::plan_grants(false, "C:\\Work\\ws", "C:\\Temp", {});
    const std::string name = ac::profile_name(*a);
    CHECK(name.size() <= 64);
    CHECK(name.starts_with("confine."));
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.") == std::string::npos);
    CHECK(ac::profile_name(*same) == name);
    CHECK(ac::profile_name(*other) != name);
    CHECK(ac::profile_name(*ro) != name);
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
    CHECK(ac::parse_launcher_args({"--ro", "rel", "--", "x"}).error() == "--ro needs an absolute path, got rel");
    CHECK(ac::parse_launcher_args({"--bogus", "--", "x"}).error() == "unknown argument: --bogus");
    CHECK_FALSE(ac::parse_launcher_args({"--ro", "C:\\in", "--", "x"})->network);
    CHECK(ac::parse_launcher_args({"--network", "--ro", "C:\\in", "--", "x"})->network);
    CHECK(ac::launcher_argv("run.exe", {}, {"x"}, true) == std::vector<std::string>{"run.exe", "--network", "--", "x"});
    CHECK(ac::launcher_argv("run.exe", {}, {"x"}) == std::vector<std::string>{"run.exe", "--", "x"});
    CHECK(ac::parse_launcher_args({"--rw", "C:\\a", "--"}).error() == "no command given");
    const auto grants = *ac::plan_grants(true, "C:\\ws", "C:\\Temp", {});
    CHECK(ac::launcher_argv("C:\\confine\\appcontainer-run.exe", grants, {"cl.exe", "/c", "x.c"}) ==
          std::vector<std::string>{"C:\\confine\\appcontainer-run.exe", "--rw", "C:\\Temp", "--rw", "C:\\ws", "--", "cl.exe", "/c", "x.c"});
}

TEST_CASE("appcontainer denials: read on deny_read, write on protect, remove above it inside a writable root", "[windows][appcontainer]") {
    const auto grants = *ac::plan_grants(true, "C:\\Work\\ws", "C:\\Users\\me\\AppData\\Local\\Temp", {});
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
    const auto nested = *ac::plan_grants(true, "C:\\Temp\\ws", "C:\\Temp", {});
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
    CHECK(ac::plan_denials(grants, {"relative\\.ssh"}, {}).error() == "deny_read path is not an absolute Windows path: relative\\.ssh");
    CHECK(ac::plan_denials(grants, {}, {"/home/me/ws/.git/hooks"}).error() == "protect path is not an absolute Windows path: /home/me/ws/.git/hooks");
    CHECK(ac::plan_denials(grants, {}, {}).value().empty());
}

TEST_CASE("appcontainer denials reach the launcher and name a container of their own", "[windows][appcontainer]") {
    const auto grants = *ac::plan_grants(true, "C:\\ws", "C:\\Temp", {});
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
    CHECK(ac::parse_launcher_args({"--deny-write", "rel", "--", "x"}).error() == "--deny-write needs an absolute path, got rel");
    CHECK(ac::parse_launcher_args({"--deny-remove", "", "--", "x"}).error() == "--deny-remove requires a path");
    // Without denials the name is what it was; with them, another container.
    CHECK(ac::profile_name(grants, {}) == ac::profile_name(grants));
    CHECK(ac::profile_name(grants, denials) != ac::profile_name(grants));
    CHECK(ac::profile_name(grants, *ac::plan_denials(grants, {"C:\\ws\\.env"}, {})) != ac::profile_name(grants, denials));
    CHECK(ac::profile_name(grants, denials).size() <= 64);
}

#if !defined(_WIN32)
TEST_CASE("the appcontainer plugin plans denials and reports read and protect as partial", "[windows][appcontainer]") {
    test::TempDir dir;
    auto plugin = confine::load_plugin(test::install_builtin(dir.path(), "appcontainer"), "appcontainer");
    REQUIRE(plugin);
    auto runner = (*plugin)->create_runner(nullptr);
    REQUIRE(runner);
    const std::vector<std::string> argv{"cmd.exe"};
    confine::Policy policy{confine::Mode::workspace_write, "C:\\ws", {}};
    auto plain = (*runner)->wrap(policy, argv);
    REQUIRE(plain);
    CHECK(plain->dimensions.read == confine::Level::full);  // nothing to deny
    CHECK(plain->dimensions.protect == confine::Level::full);
    CHECK(plain->dimensions.open.empty());
    policy.deny_read = {"C:\\Users\\me\\.ssh", "C:\\ws\\.env"};
    policy.protect = {"C:\\ws\\.git\\hooks"};
    auto wrapped = (*runner)->wrap(policy, argv);
    REQUIRE(wrapped);
    const std::string launcher = (dir / "appcontainer-run").string();
    CHECK(wrapped->argv == std::vector<std::string>{launcher, "--rw", "C:\\ws", "--deny-remove", "C:\\ws\\.git", "--deny-write", "C:\\ws\\.git\\hooks",
                                                    "--deny-read", "C:\\Users\\me\\.ssh", "--deny-read", "C:\\ws\\.env", "--", "cmd.exe"});
    CHECK(wrapped->dimensions.read == confine::Level::partial);
    CHECK(wrapped->dimensions.protect == confine::Level::partial);
    const std::string open(ac::left_open);
    CHECK(wrapped->dimensions.open == "read: " + open + "; protect: " + open);
    CHECK(wrapped->dimensions.write == confine::Level::full);
    policy.deny_read.clear();
    CHECK((*runner)->wrap(policy, argv)->dimensions.open == "protect: " + open);
    policy.protect = {"relative\\hooks"};
    auto refused = (*runner)->wrap(policy, argv);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::EndsWith("protect path is not an absolute Windows path: relative\\hooks"));
}
#endif
