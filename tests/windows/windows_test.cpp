// The Windows build, as Windows binaries (under Wine on the build machine): the
// process layer (bounded runs, the executor, quoting through a real process), and
// confinectl on the default Windows chain failing closed where AppContainer is missing
// — exit 125 and one line naming why, never a crash and never an unconfined run.
#include "acl_lock.hpp"
#include "executor.hpp"
#include "platform.hpp"
#include "process.hpp"

#include <confine/config.hpp>
#include <confine/internal/windows_finish.hpp>

#include <catch2/catch.hpp>

#include <windows.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Build-tree paths are the build machine's; under Wine its file system is drive Z:.
std::string native(std::string p) {
    if (!p.empty() && p.front() == '/') p = "Z:" + p;
    for (char& c : p)
        if (c == '/') c = '\\';
    return p;
}

const std::string helper = native(WIN_HELPER);
const std::string confinectl_exe = native(CONFINECTL);
const std::string timed_run = native(TIMED_RUN);

std::size_t lines_starting(const std::string& text, const std::string& prefix) {
    std::size_t n = 0, at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        if (text.compare(at, prefix.size(), prefix) == 0) ++n;
        at = end + 1;
    }
    return n;
}

fs::path scratch_file(const std::string& name) {
    wchar_t buf[MAX_PATH + 1];
    const DWORD n = ::GetTempPathW(MAX_PATH + 1, buf);
    return fs::path(std::wstring(buf, n)) / (name + "-" + std::to_string(::GetCurrentProcessId()));
}

confine::sdk::ProbeRun run(const std::vector<std::string>& argv, std::chrono::milliseconds limit = 60s) {
    return confine::detail::run_bounded(argv, limit, 1 << 20);
}

}  // namespace

TEST_CASE("the default Windows chain is appcontainer", "[windows]") {
    auto cfg = confine::parse_config(confine::embedded_default_config(), "default");
    REQUIRE(cfg);
    CHECK(cfg->platforms.at("windows").chain == std::vector<std::string>{"appcontainer"});
}

TEST_CASE("bounded runs capture output and exit status, and end at their time limit", "[windows][process]") {
    auto r = run({helper, "out", "to stdout", "err", "to stderr", "exit", "7"});
    CHECK(r.spawned);
    CHECK(r.exited);
    CHECK(r.exit_code == 7);
    CHECK_THAT(r.stdout_text, Catch::Contains("to stdout"));
    CHECK_THAT(r.stderr_text, Catch::Contains("to stderr"));
    const auto start = std::chrono::steady_clock::now();
    auto slow = run({helper, "sleep", "30000"}, 500ms);
    CHECK(slow.timed_out);
    CHECK_FALSE(slow.exited);
    CHECK(std::chrono::steady_clock::now() - start < 20s);
    auto missing = run({"C:\\no\\such\\program.exe"});
    CHECK_FALSE(missing.spawned);
    CHECK(missing.spawn_errno == ENOENT);
}

TEST_CASE("hostile arguments reach a real process intact", "[windows][quoting]") {
    for (const std::string arg : {"two words", "\"quoted\"", "trailing\\", "a\\\\\"b", "tab\there", "\\\\server\\share\\"}) {
        INFO(arg);
        auto r = run({helper, "out", arg});
        CHECK(r.exit_code == 0);
        CHECK(r.stdout_text == arg + "\r\n");
    }
}

TEST_CASE("the Windows executor runs, captures, times out and refuses what it cannot do", "[windows][executor]") {
    confine::detail::ExecSpec spec;
    spec.argv = {helper, "out", "captured", "exit", "3"};
    spec.background = true;
    confine::detail::RunControl control;
    auto done = confine::detail::execute(spec, control);
    CHECK(done.observed.spawned);
    CHECK(done.observed.exit_code == 3);
    CHECK_THAT(done.stdout_text, Catch::Contains("captured"));

    // A capture keeps what its limit says and counts the rest; the scanner reads it all.
    spec.argv = {helper, "out", "captured", "err", "noise", "err", "fatal: past the limit", "exit", "1"};
    spec.capture = {.limit = 4, .keep = confine::RunOptions::Capture::Keep::tail};
    spec.failure_rule = {{}, {"fatal: "}, {}};
    confine::detail::RunControl limited_control;
    auto limited = confine::detail::execute(spec, limited_control);
    CHECK(limited.stdout_text == "ed\r\n");
    CHECK(limited.stdout_dropped == 6);
    CHECK(limited.stderr_text.size() == 4);
    CHECK(limited.stderr_dropped == 7 + 23 - 4);
    REQUIRE(limited.observed.stderr_findings.fatal_line);
    CHECK_THAT(*limited.observed.stderr_findings.fatal_line, Catch::StartsWith("fatal: past the limit"));
    spec.capture = {};
    spec.failure_rule = {};

    spec.argv = {helper, "sleep", "30000"};
    spec.timeout = 300ms;
    confine::detail::RunControl slow_control;
    auto slow = confine::detail::execute(spec, slow_control);
    CHECK(slow.observed.timed_out);

    spec.timeout.reset();
    spec.argv = {"C:\\no\\such\\runner.exe"};
    confine::detail::RunControl missing_control;
    auto missing = confine::detail::execute(spec, missing_control);
    CHECK_FALSE(missing.observed.spawned);
    CHECK(missing.observed.spawn_errno == ENOENT);

    // Windows has no exec: a runner that needs exec attestation fails closed here.
    spec.argv = {helper};
    spec.attestation.kind = confine::Attestation::Kind::exec;
    spec.attestation.exec_index = 2;
    confine::detail::RunControl traced_control;
    auto traced = confine::detail::execute(spec, traced_control);
    CHECK_FALSE(traced.observed.spawned);
    CHECK(traced.observed.spawn_errno == ENOSYS);
}

TEST_CASE("confinectl probe fails closed where AppContainer is missing", "[windows][confinectl]") {
    auto version = run({confinectl_exe, "--version"});
    CHECK(version.exit_code == 0);
    CHECK_THAT(version.stdout_text, Catch::StartsWith("confinectl "));
    auto probe = run({confinectl_exe, "probe"});
    INFO(probe.stdout_text << probe.stderr_text);
    CHECK(probe.exit_code == 125);
    CHECK_THAT(probe.stdout_text, Catch::Contains("platform: windows") && Catch::Contains("chain: appcontainer"));
    CHECK(lines_starting(probe.stderr_text, "confinectl: ") == 1);
    CHECK_THAT(probe.stderr_text, Catch::StartsWith("confinectl: sandbox unavailable: ") && Catch::Contains("AppContainer is not available"));
}

TEST_CASE("confinectl run fails closed where AppContainer is missing, the command never run", "[windows][confinectl]") {
    const fs::path marker = scratch_file("confine-ran");
    fs::remove(marker);
    auto r = run({confinectl_exe, "run", "--", helper, "touch", marker.string()});
    INFO(r.stdout_text << r.stderr_text);
    CHECK(r.exit_code == 125);
    CHECK(lines_starting(r.stderr_text, "confinectl: ") == 1);
    CHECK_THAT(r.stderr_text, Catch::Contains("confinectl: sandbox unavailable: appcontainer-run: AppContainer is not available"));
    CHECK_FALSE(fs::exists(marker));
    // A usage error is one line and 125 as well; --report-fd does not exist here.
    auto fd = run({confinectl_exe, "run", "--report-fd", "5", "--", helper});
    CHECK(fd.exit_code == 125);
    CHECK_THAT(fd.stderr_text, Catch::StartsWith("confinectl: --report-fd is not available on Windows; use --report FILE"));
    CHECK(lines_starting(fd.stderr_text, "confinectl: ") == 1);
}

namespace {

// A path as JSON spells it (backslashes doubled).
std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += c == '\\' ? std::string("\\\\") : std::string(1, c);
    return out + "\"";
}

}  // namespace

TEST_CASE("confinectl wrap plans reading where a read-only command runs, and a private temp for a writing one", "[windows][confinectl][appcontainer]") {
    // Issue 19: read-only mode granted nothing. The working directory (ABI 1.8) is read.
    const std::string cwd = fs::canonical(fs::current_path()).string();
    auto ro = run({confinectl_exe, "wrap", "--json", "--runner", "appcontainer", "--mode", "read-only", "--", "cmd.exe", "/c", "dir"});
    INFO(ro.stdout_text << ro.stderr_text);
    CHECK(ro.exit_code == 0);
    CHECK_THAT(ro.stdout_text, Catch::Contains("\"--ro\"") && Catch::Contains(json_string(cwd)));
    CHECK_THAT(ro.stdout_text, !Catch::Contains("--rw") && !Catch::Contains("--private-temp"));
    // Workspace-write: the workspace, and the run's own temporary directory, never %TEMP%.
    auto rw = run({confinectl_exe, "wrap", "--json", "--runner", "appcontainer", "--", "cmd.exe"});
    INFO(rw.stdout_text << rw.stderr_text);
    CHECK(rw.exit_code == 0);
    CHECK_THAT(rw.stdout_text, Catch::Contains("\"--rw\"") && Catch::Contains(json_string(cwd)) && Catch::Contains("\"--private-temp\""));
    wchar_t temp[MAX_PATH + 1];
    const DWORD n = ::GetTempPathW(MAX_PATH + 1, temp);
    const std::string user_temp = fs::path(std::wstring(temp, n)).string();
    const std::string argv_part = rw.stdout_text.substr(0, rw.stdout_text.find("\"attestation\""));  // not the environment, which names TEMP
    CHECK_THAT(argv_part, !Catch::Contains(json_string(user_temp.substr(0, user_temp.size() - 1))));
}

TEST_CASE("the Windows lookup follows PATH and PATHEXT, never the working directory, and refuses batch files", "[windows][program]") {
    const fs::path root = scratch_file("confine-lookup");
    fs::remove_all(root);
    fs::create_directories(root / "bin");
    fs::create_directories(root / "ws");
    fs::copy_file(helper, root / "bin" / "tool.exe");
    fs::copy_file(helper, root / "ws" / "tool.exe");
    fs::copy_file(helper, root / "ws" / "only-here.exe");
    { std::FILE* f = std::fopen((root / "bin" / "npm.cmd").string().c_str(), "w"); REQUIRE(f); std::fputs("@echo off\r\n", f); std::fclose(f); }
    confine::RunOptions options;
    options.environment = std::vector<std::string>{"Path=" + (root / "bin").string(), "PATHEXT=.COM;.EXE;.BAT;.CMD"};
    options.working_directory = root / "ws";

    // A bare name: the PATH's, not the working directory's, and the runner gets its path.
    auto tool = confine::resolve_command(std::vector<std::string>{"tool", "arg"}, options);
    REQUIRE(tool);
    CHECK(fs::equivalent(tool->front(), root / "bin" / "tool.exe"));
    CHECK(fs::path(tool->front()).is_absolute());
    CHECK(tool->at(1) == "arg");
    auto shadowed = confine::check_command(std::vector<std::string>{"only-here"}, options);
    REQUIRE(shadowed);
    CHECK(shadowed->code == confine::ErrorCode::command_not_found);
    CHECK(shadowed->message == "only-here: command not found");
    // Named with its directory, it is the user's choice, made absolute.
    auto here = confine::resolve_command(std::vector<std::string>{".\\only-here.exe"}, options);
    REQUIRE(here);
    CHECK(fs::equivalent(here->front(), root / "ws" / "only-here.exe"));
    CHECK(fs::path(here->front()).is_absolute());

    auto npm = confine::check_command(std::vector<std::string>{"npm", "install"}, options);
    REQUIRE(npm);
    CHECK(npm->code == confine::ErrorCode::command_not_executable);
    CHECK_THAT(npm->message, Catch::StartsWith("npm resolves to ") && Catch::Contains("npm.cmd, which is a batch file and is not run") &&
                                 Catch::Contains("CVE-2024-24576") && Catch::Contains("cmd.exe /c"));

    // confinectl says it in one line, 126, before any runner is chosen.
    auto r = run({confinectl_exe, "run", "--", (root / "bin" / "npm.cmd").string(), "install"});
    INFO(r.stdout_text << r.stderr_text);
    CHECK(r.exit_code == 126);
    CHECK(lines_starting(r.stderr_text, "confinectl: ") == 1);
    CHECK_THAT(r.stderr_text, Catch::Contains("is a batch file and is not run") && Catch::Contains("CVE-2024-24576"));
    CHECK_THAT(r.stderr_text, !Catch::Contains("sandbox unavailable"));
    fs::remove_all(root);
}

TEST_CASE("confinectl wrap names the file it found for the launcher to start", "[windows][program][confinectl]") {
    const fs::path dir = fs::path(helper).parent_path();
    wchar_t old[32767];
    const DWORD n = ::GetEnvironmentVariableW(L"PATH", old, 32767);
    const std::wstring path = dir.wstring() + L";" + std::wstring(old, n < 32767 ? n : 0);
    REQUIRE(::SetEnvironmentVariableW(L"PATH", path.c_str()));
    auto r = run({confinectl_exe, "wrap", "--json", "--runner", "appcontainer", "--", "win-helper", "exit", "0"});
    ::SetEnvironmentVariableW(L"PATH", std::wstring(old, n < 32767 ? n : 0).c_str());
    INFO(r.stdout_text << r.stderr_text);
    REQUIRE(r.exit_code == 0);
    // After "--", the absolute path of the helper (JSON doubles each backslash), not its bare name.
    const std::string expected = json_string((dir / "win-helper").string());
    CHECK_THAT(r.stdout_text, Catch::Contains("\"--\"") && Catch::Contains(expected.substr(0, expected.size() - 1)));
    CHECK_THAT(r.stdout_text, !Catch::Contains("\"win-helper\""));
}

TEST_CASE("timed-run, the world proofs' host with a time limit, fails closed where AppContainer is missing", "[windows][confinectl]") {
    const fs::path marker = scratch_file("confine-timed");
    fs::remove(marker);
    auto r = run({timed_run, "5000", fs::path(helper).parent_path().string(), helper, "touch", marker.string()});
    INFO(r.stdout_text << r.stderr_text);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.stdout_text, Catch::StartsWith("outcome: sandbox_unavailable timed_out: 0"));
    CHECK_FALSE(fs::exists(marker));
    CHECK(run({timed_run, "5000"}).exit_code == 125);
}

namespace {

// Starts `argv` (quoted simply: no argument here needs more) and returns its process.
HANDLE start(const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& a : argv) line += (line.empty() ? "\"" : " \"") + a + "\"";
    std::wstring wline(line.begin(), line.end());
    STARTUPINFOW si{sizeof si};
    PROCESS_INFORMATION pi{};
    if (!::CreateProcessW(nullptr, wline.data(), nullptr, nullptr, FALSE, CREATE_NO_WINDOW, nullptr, nullptr, &si, &pi)) return nullptr;
    ::CloseHandle(pi.hThread);
    return pi.hProcess;
}

// Waits until the process has made its finish event (or 20 s have passed).
bool finish_event_made(HANDLE process) {
    const auto name = confine::windows::finish_event_name(::GetProcessId(process));
    for (int i = 0; i < 200; ++i) {
        if (HANDLE e = ::OpenEventW(SYNCHRONIZE, FALSE, name.c_str())) {
            ::CloseHandle(e);
            return true;
        }
        ::Sleep(100);
    }
    return false;
}

}  // namespace

TEST_CASE("a time limit asks a runner with something to undo to finish before the job ends", "[windows][executor][finish]") {
    const fs::path marker = scratch_file("asked-at-time-limit");
    fs::remove(marker);
    confine::detail::ExecSpec spec;
    spec.argv = {helper, "await-finish", marker.string()};
    spec.background = true;
    spec.timeout = 2000ms;
    confine::detail::RunControl control;
    auto done = confine::detail::execute(spec, control);
    CHECK(done.observed.timed_out);
    CHECK(fs::exists(marker));  // it was asked, and finished on its own
    fs::remove(marker);
}

TEST_CASE("a console event asks confinectl's runner to finish, and leaves the default when it cannot", "[windows][confinectl][finish]") {
    std::atomic<int> child{0};
    confinectl::forward_signals(child);
    // No runner yet: the event's default (the end of confinectl) stays.
    CHECK_FALSE(confinectl::finish_child_on_console_event(CTRL_C_EVENT));
    CHECK_FALSE(confinectl::interrupted_by());

    // A runner without the event cannot be asked: the default again, and it runs on.
    HANDLE plain = start({helper, "sleep", "30000"});
    REQUIRE(plain);
    child = static_cast<int>(::GetProcessId(plain));
    CHECK_FALSE(confinectl::finish_child_on_console_event(CTRL_C_EVENT));
    CHECK(::WaitForSingleObject(plain, 0) == WAIT_TIMEOUT);
    CHECK_FALSE(confinectl::interrupted_by());
    ::TerminateProcess(plain, 1);
    ::CloseHandle(plain);

    // A runner with something to undo is asked, finishes, and the run counts as ended by SIGINT.
    const fs::path marker = scratch_file("asked-at-ctrl-c");
    fs::remove(marker);
    HANDLE runner = start({helper, "await-finish", marker.string()});
    REQUIRE(runner);
    REQUIRE(finish_event_made(runner));
    child = static_cast<int>(::GetProcessId(runner));
    CHECK(confinectl::finish_child_on_console_event(CTRL_C_EVENT));
    CHECK(::WaitForSingleObject(runner, 0) == WAIT_OBJECT_0);
    DWORD code = 0;
    ::GetExitCodeProcess(runner, &code);
    CHECK(code == 3);
    CHECK(fs::exists(marker));
    CHECK(confinectl::interrupted_by() == std::optional<int>(SIGINT));
    ::CloseHandle(runner);
    child = 0;
    fs::remove(marker);
}

TEST_CASE("an access list's lock is exclusive across handles and ends with its holder", "[windows][appcontainer][lock]") {
    namespace ac = confine::appcontainer;
    const fs::path dir = scratch_file("acl-locks");
    fs::create_directories(dir);
    {
        ac::AclLock first(dir.string(), "C:\\Work\\ws");
        REQUIRE(first.held());
        ac::AclLock same(dir.string(), "c:\\work\\WS\\", ac::AclLock::Wait::not_at_all);
        CHECK_FALSE(same.held());  // one folder, one holder
        ac::AclLock other(dir.string(), "C:\\Work\\elsewhere", ac::AclLock::Wait::not_at_all);
        CHECK(other.held());
    }
    ac::AclLock after(dir.string(), "C:\\Work\\ws", ac::AclLock::Wait::not_at_all);
    CHECK(after.held());
    // No folder for locks: not held, so no list is changed unserialised.
    ac::AclLock nowhere((dir / "missing").string(), "C:\\Work\\ws", ac::AclLock::Wait::not_at_all);
    CHECK_FALSE(nowhere.held());
    ac::AclLock unnamed("", "C:\\Work\\ws", ac::AclLock::Wait::not_at_all);
    CHECK_FALSE(unnamed.held());
}
