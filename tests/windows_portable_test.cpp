// The portable parts of the Windows side, on any OS: command-line quoting checked
// against a parser written here from the documented CommandLineToArgvW rules (and,
// in the Windows build under Wine, against CommandLineToArgvW itself), and the
// AppContainer runner's grant planning, profile naming and launcher grammar.
#include "plan.hpp"

#include <confine/sdk/windows_command_line.hpp>

#include <catch2/catch.hpp>

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
