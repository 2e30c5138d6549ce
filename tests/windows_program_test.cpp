// Which file a Windows command starts (confine/internal/windows_program.hpp), and how
// appcontainer-run starts it (command.hpp): on any OS, against a file system written
// here, so that each rule is seen to choose what it says.
#include "command.hpp"
#include "plan.hpp"

#include <confine/internal/windows_program.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

namespace ac = confine::appcontainer;
namespace win = confine::windows;
using Reason = win::ProgramRefusal::Reason;

namespace {

// A file system of a few paths, compared without regard to case as Windows does.
struct Files {
    std::map<std::string, win::FileKind> entries;
    mutable std::vector<std::string> asked;

    static std::string key(std::string p) {
        for (char& c : p) {
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            if (c == '/') c = '\\';
        }
        for (std::size_t at; (at = p.find("\\.\\")) != std::string::npos;) p.erase(at, 2);
        return p;
    }
    Files& file(const std::string& p) {
        entries[key(p)] = win::FileKind::file;
        return *this;
    }
    Files& directory(const std::string& p) {
        entries[key(p)] = win::FileKind::directory;
        return *this;
    }
    std::function<win::FileKind(const std::string&)> kind() const {
        return [this](const std::string& p) {
            asked.push_back(p);
            auto it = entries.find(key(p));
            return it == entries.end() ? win::FileKind::missing : it->second;
        };
    }
};

constexpr const char* path = "C:\\Windows\\system32;C:\\Program Files\\Git\\cmd;C:\\tools";
constexpr const char* pathext = ".COM;.EXE;.BAT;.CMD;.VBS";
constexpr const char* workspace = "C:\\work\\ws";

}  // namespace

TEST_CASE("a bare name is found in PATH order, each directory tried with every PATHEXT extension before the next", "[windows][program]") {
    Files fs;
    fs.file("C:\\Program Files\\Git\\cmd\\git.exe").file("C:\\tools\\git.com").file("C:\\tools\\git.exe");
    auto found = win::resolve_program("git", path, pathext, workspace, fs.kind());
    REQUIRE(found);
    CHECK(*found == "C:\\Program Files\\Git\\cmd\\git.exe");  // the extension in lower case
    // Within one directory PATHEXT decides: .COM before .EXE.
    Files both;
    both.file("C:\\tools\\tool.exe").file("C:\\tools\\tool.com");
    CHECK(win::resolve_program("tool", path, pathext, workspace, both.kind()).value() == "C:\\tools\\tool.com");
    CHECK(win::resolve_program("tool", path, ".EXE;.COM", workspace, both.kind()).value() == "C:\\tools\\tool.exe");
    // The extension's case does not matter; the name's spelling is kept.
    CHECK(win::resolve_program("TOOL", path, ".EXE", workspace, both.kind()).value() == "C:\\tools\\TOOL.exe");
    CHECK(win::resolve_program("tool.EXE", path, ".exe", workspace, both.kind()).value() == "C:\\tools\\tool.EXE");
}

TEST_CASE("a bare name is never looked up in the working directory, nor through a relative PATH entry", "[windows][program]") {
    Files fs;
    fs.file("C:\\work\\ws\\git.exe").file("C:\\Program Files\\Git\\cmd\\git.exe");
    auto found = win::resolve_program("git", path, pathext, workspace, fs.kind());
    REQUIRE(found);
    CHECK(*found == "C:\\Program Files\\Git\\cmd\\git.exe");
    for (const auto& p : fs.asked) CHECK_FALSE(Files::key(p).starts_with("c:\\work\\ws"));
    // Only in the workspace: not found, as if it were not there.
    Files only_here;
    only_here.file("C:\\work\\ws\\evil.exe").file("evil.exe").file(".\\evil.exe").file("bin\\evil.exe");
    auto missing = win::resolve_program("evil", std::string(path) + ";.;bin;;\"\"", pathext, workspace, only_here.kind());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().reason == Reason::not_found);
    CHECK(missing.error().message == "evil: command not found");
    for (const auto& p : only_here.asked) CHECK(win::is_absolute_path(p));
}

TEST_CASE("a quoted PATH entry is a directory, and PATHEXT unset means COM EXE BAT CMD", "[windows][program]") {
    Files fs;
    fs.file("C:\\Program Files\\Node\\node.exe");
    CHECK(win::resolve_program("node", "\"C:\\Program Files\\Node\"", "", workspace, fs.kind()).value() == "C:\\Program Files\\Node\\node.exe");
    Files batch;
    batch.file("C:\\tools\\x.cmd");
    auto x = win::resolve_program("x", path, "", workspace, batch.kind());
    REQUIRE_FALSE(x);
    CHECK(x.error().reason == Reason::batch_file);
}

TEST_CASE("a name with a PATHEXT extension is tried as it is, another is tried with each extension", "[windows][program]") {
    Files fs;
    fs.file("C:\\tools\\python3.11.exe").file("C:\\tools\\tool.exe").file("C:\\tools\\tool.exe.exe");
    CHECK(win::resolve_program("tool.exe", path, pathext, workspace, fs.kind()).value() == "C:\\tools\\tool.exe");
    CHECK(win::resolve_program("python3.11", path, pathext, workspace, fs.kind()).value() == "C:\\tools\\python3.11.exe");
}

TEST_CASE("a batch file is refused with one line naming it, why and what to run instead", "[windows][program][cve-2024-24576]") {
    Files fs;
    fs.file("C:\\tools\\npm.cmd").file("C:\\tools\\later\\npm.exe").file("C:\\work\\ws\\build.bat");
    auto npm = win::resolve_program("npm", std::string(path) + ";C:\\tools\\later", pathext, workspace, fs.kind());
    REQUIRE_FALSE(npm);
    CHECK(npm.error().reason == Reason::batch_file);
    const std::string& line = npm.error().message;
    CHECK(line.find('\n') == std::string::npos);
    CHECK_THAT(line, Catch::StartsWith("npm resolves to C:\\tools\\npm.cmd, which is a batch file and is not run"));
    CHECK_THAT(line, Catch::Contains("cmd.exe") && Catch::Contains("CVE-2024-24576") && Catch::Contains("start cmd.exe /c explicitly"));
    // Named explicitly, in any case, relative or absolute: refused the same way.
    for (const char* name : {"C:\\work\\ws\\build.bat", ".\\build.BAT", "C:/work/ws/BUILD.bat"}) {
        auto bat = win::resolve_program(name, path, pathext, workspace, fs.kind());
        REQUIRE_FALSE(bat);
        CHECK(bat.error().reason == Reason::batch_file);
        CHECK_THAT(bat.error().message, Catch::Contains("CVE-2024-24576"));
    }
    // cmd.exe itself, named by the user, runs: the user chose cmd.exe's parsing.
    Files system;
    system.file("C:\\Windows\\system32\\cmd.exe");
    CHECK(win::resolve_program("cmd.exe", path, pathext, workspace, system.kind()).value() == "C:\\Windows\\system32\\cmd.exe");
    CHECK(win::resolve_program("cmd", path, pathext, workspace, system.kind()).value() == "C:\\Windows\\system32\\cmd.exe");
}

TEST_CASE("only a .exe or .com is started, anything else refused with what to do", "[windows][program]") {
    Files fs;
    fs.file("C:\\tools\\hello.vbs").file("C:\\tools\\script.ps1").file("C:\\tools\\noext");
    auto vbs = win::resolve_program("hello", path, pathext, workspace, fs.kind());
    REQUIRE_FALSE(vbs);
    CHECK(vbs.error().reason == Reason::not_startable);
    CHECK_THAT(vbs.error().message, Catch::StartsWith("hello resolves to C:\\tools\\hello.vbs, which is not a program Windows starts directly"));
    auto ps1 = win::resolve_program("C:\\tools\\script.ps1", path, pathext, workspace, fs.kind());
    REQUIRE_FALSE(ps1);
    CHECK(ps1.error().reason == Reason::not_startable);
    CHECK_THAT(ps1.error().message, Catch::StartsWith("C:\\tools\\script.ps1 is not a program Windows starts directly"));
    CHECK(win::resolve_program("C:\\tools\\noext", path, ".X", workspace, fs.kind()).error().reason == Reason::not_found);
}

TEST_CASE("an explicit path names its file, relative ones from the working directory, made absolute", "[windows][program]") {
    Files fs;
    fs.file("C:\\work\\ws\\build\\tool.exe").file("D:\\bin\\app.exe").file("\\\\server\\share\\x.exe").directory("C:\\work\\ws\\dir.exe");
    CHECK(win::resolve_program(".\\build\\tool.exe", path, pathext, workspace, fs.kind()).value() == "C:\\work\\ws\\.\\build\\tool.exe");
    CHECK(win::resolve_program("build\\tool", path, pathext, workspace, fs.kind()).value() == "C:\\work\\ws\\build\\tool.exe");
    CHECK(win::resolve_program("build/tool.exe", path, pathext, "C:\\work\\ws\\", fs.kind()).value() == "C:\\work\\ws\\build/tool.exe");
    CHECK(win::resolve_program("D:\\bin\\app", path, pathext, workspace, fs.kind()).value() == "D:\\bin\\app.exe");
    CHECK(win::resolve_program("\\\\server\\share\\x.exe", path, pathext, workspace, fs.kind()).value() == "\\\\server\\share\\x.exe");
    auto missing = win::resolve_program("C:\\no\\such.exe", path, pathext, workspace, fs.kind());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().reason == Reason::not_found);
    CHECK(missing.error().message == "C:\\no\\such.exe: No such file or directory");
    auto dir = win::resolve_program(".\\dir.exe", path, pathext, workspace, fs.kind());
    REQUIRE_FALSE(dir);
    CHECK(dir.error().reason == Reason::not_executable);
    CHECK(dir.error().message == ".\\dir.exe: Permission denied");
    CHECK(win::resolve_program("", path, pathext, workspace, fs.kind()).error().reason == Reason::not_found);
}

TEST_CASE("a directory on PATH by the name does not stop the lookup", "[windows][program]") {
    Files fs;
    fs.directory("C:\\Windows\\system32\\tool.exe").file("C:\\tools\\tool.exe");
    CHECK(win::resolve_program("tool", path, pathext, workspace, fs.kind()).value() == "C:\\tools\\tool.exe");
    Files only_dir;
    only_dir.directory("C:\\tools\\tool.exe");
    CHECK(win::resolve_program("tool", path, pathext, workspace, only_dir.kind()).error().reason == Reason::not_executable);
}

TEST_CASE("appcontainer-run starts the resolved file it is given, and resolves a bare name by the same rule", "[windows][appcontainer][program]") {
    Files fs;
    fs.file("C:\\Program Files\\Git\\cmd\\git.exe").file("C:\\work\\ws\\git.exe").file("C:\\tools\\npm.cmd");
    CHECK(ac::command_file("C:\\Program Files\\Git\\cmd\\git.exe", path, pathext, workspace, fs.kind()).value() ==
          "C:\\Program Files\\Git\\cmd\\git.exe");
    CHECK(ac::command_file("git", path, pathext, workspace, fs.kind()).value() == "C:\\Program Files\\Git\\cmd\\git.exe");
    auto npm = ac::command_file("npm", path, pathext, workspace, fs.kind());
    REQUIRE_FALSE(npm);
    CHECK_THAT(npm.error(), Catch::Contains("CVE-2024-24576"));
    // The launcher's grammar carries an absolute argv[0] with spaces, verbatim.
    auto request = ac::parse_launcher_args({"--rw", "C:\\work\\ws", "--", "C:\\Program Files\\Git\\cmd\\git.exe", "status", "--short"});
    REQUIRE(request);
    CHECK(request->command == std::vector<std::string>{"C:\\Program Files\\Git\\cmd\\git.exe", "status", "--short"});
    // A command that begins like an option is a command after "--".
    auto dashed = ac::parse_launcher_args({"--", "--probe"});
    REQUIRE(dashed);
    CHECK_FALSE(dashed->probe);
    CHECK(dashed->command == std::vector<std::string>{"--probe"});
    CHECK_FALSE(ac::parse_launcher_args({"--rw", "C:\\work\\ws", "--"}));
}

TEST_CASE("appcontainer-run passes no console handle on and inherits each standard handle once", "[windows][appcontainer][handles]") {
    CHECK(ac::passed_as(ac::GivenHandle::console) == ac::PassedHandle::pipe);
    CHECK(ac::passed_as(ac::GivenHandle::none) == ac::PassedHandle::null_device);
    CHECK(ac::passed_as(ac::GivenHandle::other) == ac::PassedHandle::same);
    CHECK(ac::handle_list<int>({3, 5, 5}, 0) == std::vector<int>{3, 5});
    CHECK(ac::handle_list<int>({0, 7, 0}, 0) == std::vector<int>{7});
    CHECK(ac::handle_list<int>({4, 4, 4}, 0) == std::vector<int>{4});
}
