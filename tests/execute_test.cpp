#include "support.hpp"
#include "rig.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#define CONFINE_TEST_PROCESS_TREE 1
#include "linux_features.hpp"
#include "process_tree.hpp"
#include "spawn.hpp"
#endif

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>

extern char** environ;

using confine::OutcomeKind;
namespace fs = std::filesystem;

using test::Rig;

namespace {

const std::string notice = "landlock-run: partial enforcement (older Landlock ABI)";
const std::string fatal = "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)";


std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

struct Both {
    confine::Outcome foreground;
    confine::Finished background;
};

Both run_both(const Rig& rig, const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {}) {
    confine::RunOptions options;
    options.environment = environment_with(extra_env);
    auto fg = confine::run(rig.provider(), rig.policy(), argv, options);
    REQUIRE(fg);
    auto bg = confine::spawn(rig.provider(), rig.policy(), argv, options);
    REQUIRE(bg);
    return {*fg, bg->wait()};
}

void check_agree(const Both& b) {
    const auto& f = b.foreground;
    const auto& g = b.background.outcome;
    CHECK(f.kind == g.kind);
    CHECK(f.exit_code == g.exit_code);
    CHECK(f.signal == g.signal);
    CHECK(f.basis == g.basis);
    CHECK(f.evidence == g.evidence);
    CHECK(f.denial_hint == g.denial_hint);
    CHECK(f.runner == g.runner);
}

std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

}  // namespace

TEST_CASE("child exits 0, 1, 2, 125, 126, 127 stay task outcomes, foreground and background alike", "[execute][linux-only]") {
    for (auto kind : {Rig::Kind::plugin, Rig::Kind::plugin_attested, Rig::Kind::runner_command}) {
        Rig rig(kind);
        for (int code : {0, 1, 2, 125, 126, 127}) {
            INFO("rig " << static_cast<int>(kind) << ", exit " << code);
            auto both = run_both(rig, sh("exit " + std::to_string(code)));
            check_agree(both);
            CHECK(both.background.outcome.kind == (code == 0 ? OutcomeKind::completed : OutcomeKind::task_failed));
            CHECK(both.background.outcome.exit_code == code);
            CHECK(both.background.stderr_text == notice + "\n");
            CHECK(both.background.outcome.basis == (kind == Rig::Kind::plugin_attested ? confine::Basis::attestation : confine::Basis::rule));
        }
    }
}

TEST_CASE("a fatal line with exit 1 or 2 is not evidence under the Landlock rule", "[execute][linux-only]") {
    for (auto kind : {Rig::Kind::plugin, Rig::Kind::plugin_attested}) {
        Rig rig(kind);
        for (int code : {1, 2}) {
            auto both = run_both(rig, sh("echo '" + fatal + "' >&2; exit " + std::to_string(code)));
            check_agree(both);
            CHECK(both.background.outcome.kind == OutcomeKind::task_failed);
            CHECK(both.background.outcome.evidence.empty());
        }
    }
}

TEST_CASE("the launcher's fatal line and 125 make sandbox unavailable, with that line as evidence", "[execute][linux-only]") {
    for (auto kind : {Rig::Kind::plugin, Rig::Kind::plugin_attested, Rig::Kind::runner_command}) {
        INFO("rig " << static_cast<int>(kind));
        Rig rig(kind);
        test::TempDir scratch;
        const fs::path marker = scratch / "ran";
        auto both = run_both(rig, sh("touch " + marker.string()), {"FAKE_LAUNCHER_FAIL=1"});
        check_agree(both);
        const auto& o = both.background.outcome;
        CHECK(o.kind == OutcomeKind::sandbox_unavailable);
        CHECK(o.evidence == fatal);
        CHECK(o.exit_code == 125);
        CHECK(o.basis == (kind == Rig::Kind::plugin_attested ? confine::Basis::attestation : confine::Basis::rule));
        CHECK(both.background.stderr_text == notice + "\n" + fatal + "\n");
        CHECK_FALSE(fs::exists(marker));
    }
}

TEST_CASE("the notice and a Permission denied from the command make a denial hint", "[execute][linux-only]") {
    for (auto kind : {Rig::Kind::plugin, Rig::Kind::plugin_attested}) {
        Rig rig(kind);
        auto both = run_both(rig, sh("echo 'sh: 1: cannot create /etc/confine-x: Permission denied' >&2; exit 2"));
        check_agree(both);
        const auto& o = both.background.outcome;
        CHECK(o.kind == OutcomeKind::task_failed);
        REQUIRE(o.denial_hint);
        CHECK(*o.denial_hint == "sh: 1: cannot create /etc/confine-x: Permission denied");
    }
}

TEST_CASE("a command that prints a fatal line and exits 125 itself is a task failure where attestation exists", "[execute][attestation][linux-only]") {
    Rig attested(Rig::Kind::plugin_attested);
    auto both = run_both(attested, sh("echo '" + fatal + "' >&2; exit 125"));
    check_agree(both);
    CHECK(both.background.outcome.kind == OutcomeKind::task_failed);
    CHECK(both.background.outcome.basis == confine::Basis::attestation);
    CHECK(both.background.outcome.exit_code == 125);

    // Without attestation the in-band rule cannot tell: the forgery is believed.
    // This is the limit that attestation removes.
    Rig unattested(Rig::Kind::plugin);
    auto forged = run_both(unattested, sh("echo '" + fatal + "' >&2; exit 125"));
    check_agree(forged);
    CHECK(forged.background.outcome.kind == OutcomeKind::sandbox_unavailable);
    CHECK(forged.background.outcome.basis == confine::Basis::rule);
}

TEST_CASE("a launcher that stops before the command is attested as a runner failure whatever it prints", "[execute][attestation][linux-only]") {
    test::TempDir dir;
    const fs::path quiet = dir / "quiet-launcher";
    test::write_file(quiet, "#!/bin/sh\nexit 1\n", fs::perms(0755));
    Rig rig(Rig::Kind::plugin_attested, quiet.string());
    auto both = run_both(rig, sh("true"));
    check_agree(both);
    const auto& o = both.background.outcome;
    CHECK(o.kind == OutcomeKind::sandbox_unavailable);
    CHECK(o.basis == confine::Basis::attestation);
    CHECK(o.evidence == "runner 'usable' ended with exit status 1 before starting the command (1 of 2 execs seen)");
}

// A launcher like the fake one that execs `program` in place of the command's own
// name, with the command's arguments.
fs::path launcher_execing(const fs::path& dir, const std::string& name, const std::string& program) {
    const fs::path file = dir / name;
    test::write_file(file, "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done\nshift 2\nexec " + program + " \"$@\"\n", fs::perms(0755));
    return file;
}

TEST_CASE("exec attestation lets the runner go at the command's own file, however the command was named", "[execute][attestation][exec-check][linux-only]") {
    Rig rig(Rig::Kind::plugin_attested);
    test::TempDir dir;
    fs::create_directories(dir / "bin");
    const fs::path tool = dir / "bin" / "make-marker";
    test::write_file(tool, "#!/bin/sh\ntouch \"$1\"\n", fs::perms(0755));
    struct Case {
        std::string what;
        std::vector<std::string> argv;
        std::vector<std::string> env;
        fs::path working_directory;
    };
    const std::vector<Case> cases{
        {"an absolute path", {"/usr/bin/touch"}, {}, {}},
        {"a name found on PATH", {"touch"}, {}, {}},
        {"a #! script by absolute path", {tool.string()}, {}, {}},
        {"a #! script found on the PATH the command gets", {"make-marker"}, {"PATH=" + (dir / "bin").string() + ":/usr/bin:/bin"}, {}},
        {"a relative path from the working directory", {"bin/make-marker"}, {}, dir.path()},
    };
    for (const auto& c : cases) {
        INFO(c.what);
        const fs::path marker = dir / "ran";
        fs::remove(marker);
        auto argv = c.argv;
        argv.push_back(marker.string());
        confine::RunOptions options;
        options.environment = environment_with({});
        if (!c.env.empty()) std::erase_if(*options.environment, [](const std::string& e) { return e.starts_with("PATH="); });
        options.environment->insert(options.environment->end(), c.env.begin(), c.env.end());
        options.working_directory = c.working_directory;
        auto fg = confine::run(rig.provider(), rig.policy(), argv, options);
        REQUIRE(fg);
        CHECK(fg->kind == OutcomeKind::completed);
        CHECK(fg->basis == confine::Basis::attestation);
        CHECK(fg->evidence.empty());
        CHECK(fs::exists(marker));
        fs::remove(marker);
        auto bg = confine::spawn(rig.provider(), rig.policy(), argv, options);
        REQUIRE(bg);
        CHECK(bg->wait().outcome.kind == OutcomeKind::completed);
        CHECK(bg->wait().outcome.basis == confine::Basis::attestation);
        CHECK(fs::exists(marker));
    }
}

TEST_CASE("exec attestation compares the attested exec's file by inode, not by name", "[execute][attestation][exec-check][linux-only]") {
    test::TempDir dir;
    const fs::path tool = dir / "tool";
    fs::copy_file("/usr/bin/touch", tool);
    fs::permissions(tool, fs::perms(0755));
    fs::create_hard_link(tool, dir / "hard-link");
    fs::create_symlink(tool, dir / "symbolic-link");
    fs::copy_file(tool, dir / "copy");
    const fs::path marker = dir / "ran";
    for (const std::string other : {"hard-link", "symbolic-link"}) {
        INFO(other);
        Rig rig(Rig::Kind::plugin_attested, launcher_execing(dir.path(), "via-" + other, (dir / other).string()).string());
        auto both = run_both(rig, {tool.string(), marker.string()});
        check_agree(both);
        CHECK(both.background.outcome.kind == OutcomeKind::completed);
        CHECK(both.background.outcome.basis == confine::Basis::attestation);
        CHECK(fs::exists(marker));
        fs::remove(marker);
    }
    // The same bytes in another file are not the command's file. That exec is not let go:
    // it is the runner's, followed (traced) to its end for the command's file.
    const fs::path launcher = launcher_execing(dir.path(), "via-copy", (dir / "copy").string());
    Rig rig(Rig::Kind::plugin_attested, launcher.string());
    auto both = run_both(rig, {tool.string(), marker.string()});
    check_agree(both);
    CHECK(both.background.outcome.kind == OutcomeKind::sandbox_unavailable);
    CHECK(both.background.outcome.basis == confine::Basis::attestation);
    CHECK(both.background.outcome.evidence == "runner declared the command at exec 2 but exec 2 ran " + (dir / "copy").string() +
                                                  "; the command's file " + tool.string() + " was never exec'd (the runner ended after exec 2)");
}

TEST_CASE("an exec index declared too low fails closed before the command runs, naming both execs", "[execute][attestation][exec-check][linux-only]") {
    Rig rig(Rig::Kind::plugin_attested, FAKE_LAUNCHER, 1);
    test::TempDir dir;
    const fs::path marker = dir / "ran";
    auto both = run_both(rig, {"/usr/bin/touch", marker.string()});
    check_agree(both);
    const auto& o = both.background.outcome;
    CHECK(o.kind == OutcomeKind::sandbox_unavailable);
    CHECK(o.basis == confine::Basis::attestation);
    CHECK(o.evidence == "runner declared the command at exec 1 but exec 1 ran " FAKE_LAUNCHER "; the command's file /usr/bin/touch was exec 2");
    // Ended at the command's exec-stop: not one instruction of touch ran.
    CHECK_FALSE(fs::exists(marker));
    CHECK_FALSE(o.exit_code);
    CHECK_FALSE(o.signal);
}

TEST_CASE("an exec index declared too low names no later exec when the command's file never comes", "[execute][attestation][exec-check][linux-only]") {
    Rig rig(Rig::Kind::plugin_attested, FAKE_LAUNCHER, 1);
    test::TempDir dir;
    const fs::path marker = dir / "ran";
    SECTION("the runner ends first") {
        auto both = run_both(rig, {"/usr/bin/touch", marker.string()}, {"FAKE_LAUNCHER_FAIL=1"});
        check_agree(both);
        CHECK(both.background.outcome.kind == OutcomeKind::sandbox_unavailable);
        CHECK(both.background.outcome.basis == confine::Basis::attestation);
        CHECK(both.background.outcome.evidence == "runner declared the command at exec 1 but exec 1 ran " FAKE_LAUNCHER
                                                  "; the command's file /usr/bin/touch was never exec'd (the runner ended after exec 1)");
    }
    SECTION("the runner starts the command in a child process, which is ended before it runs") {
        auto both = run_both(rig, {"/usr/bin/touch", marker.string()}, {"FAKE_LAUNCHER_FAIL_AFTER=1"});
        check_agree(both);
        CHECK(both.background.outcome.kind == OutcomeKind::sandbox_unavailable);
        CHECK(both.background.outcome.basis == confine::Basis::attestation);
        CHECK(both.background.outcome.evidence ==
              "runner declared the command at exec 1 but exec 1 ran " FAKE_LAUNCHER
              "; the command's file /usr/bin/touch was not among the runner's execs before it started another process (after exec 1), which is not followed");
    }
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("a script runner whose interpreter is the command is not taken for the command", "[execute][attestation][exec-check][linux-only]") {
    // Exec 1 runs /bin/sh, the command's file, but as the interpreter of the launcher
    // script: the exec named the script, so it is not the command's.
    Rig rig(Rig::Kind::plugin_attested, FAKE_LAUNCHER, 1);
    auto both = run_both(rig, sh("exit 3"));
    check_agree(both);
    CHECK(both.background.outcome.kind == OutcomeKind::sandbox_unavailable);
    CHECK(both.background.outcome.evidence == "runner declared the command at exec 1 but exec 1 ran " FAKE_LAUNCHER "; the command's file /bin/sh was exec 2");
}

TEST_CASE("an exec index declared too high keeps its message and says where the command's file was", "[execute][attestation][exec-check][linux-only]") {
    Rig rig(Rig::Kind::plugin_attested, FAKE_LAUNCHER, 3);
    auto both = run_both(rig, {"/usr/bin/true"});
    check_agree(both);
    const auto& o = both.background.outcome;
    CHECK(o.kind == OutcomeKind::sandbox_unavailable);
    CHECK(o.basis == confine::Basis::attestation);
    CHECK(o.evidence == "runner 'usable' ended with exit status 0 before starting the command (2 of 3 execs seen; the command's file /usr/bin/true was exec 2)");
}

TEST_CASE("signals pass through as the command's outcome", "[execute][linux-only]") {
    for (auto kind : {Rig::Kind::plugin, Rig::Kind::plugin_attested}) {
        Rig rig(kind);
        auto both = run_both(rig, sh("kill -TERM $$"));
        check_agree(both);
        CHECK(both.background.outcome.kind == OutcomeKind::task_failed);
        CHECK(both.background.outcome.signal == SIGTERM);
        CHECK_FALSE(both.background.outcome.exit_code);
    }
}

TEST_CASE("a runner that cannot be started is sandbox unavailable, naming it", "[execute][linux-only]") {
    test::TempDir dir;
    test::write_file(dir / "not-executable", "#!/bin/sh\nexec \"$@\"\n", fs::perms(0644));
    test::write_file(dir / "bad-interpreter", "#!/nonexistent/interpreter\n", fs::perms(0755));
    const std::vector<std::pair<std::string, std::string>> cases{
        {(dir / "missing").string(), "No such file or directory"},
        {(dir / "not-executable").string(), "Permission denied"},
        {(dir / "bad-interpreter").string(), "No such file or directory"},
        {"confine-no-such-launcher-on-path", "No such file or directory"},
    };
    for (const auto& [launcher, why] : cases) {
        for (auto kind : {Rig::Kind::plugin, Rig::Kind::plugin_attested}) {
            INFO(launcher);
            Rig rig(kind, launcher);
            auto both = run_both(rig, sh("true"));
            check_agree(both);
            const auto& o = both.background.outcome;
            CHECK(o.kind == OutcomeKind::sandbox_unavailable);
            CHECK(o.basis == confine::Basis::spawn_error);
            CHECK(o.evidence == "cannot start runner 'usable' (" + launcher + "): " + why);
        }
    }
    Rig asserted(Rig::Kind::runner_command, (dir / "missing").string());
    auto both = run_both(asserted, sh("true"));
    CHECK(both.background.outcome.kind == OutcomeKind::sandbox_unavailable);
    CHECK(both.background.outcome.evidence == "cannot start runner 'runner_command' (" + (dir / "missing").string() + "): No such file or directory");
}

TEST_CASE("output bytes reach the caller unchanged, more than 1 MiB on both streams", "[execute][linux-only]") {
    Rig rig(Rig::Kind::plugin_attested);
    test::TempDir dir;
    std::string blob;
    for (int i = 0; i < (3 << 19); ++i) blob.push_back(static_cast<char>((i * 7 + i / 256) & 0xFF));
    blob += "no newline at the end";
    test::write_file(dir / "blob", blob);
    const std::string f = (dir / "blob").string();
    confine::RunOptions options;
    options.capture.limit = 4 << 20;
    auto p = confine::spawn(rig.provider(), rig.policy(), sh("cat " + f + " & cat " + f + " >&2; wait"), options);
    REQUIRE(p);
    const auto& done = p->wait();
    CHECK(done.outcome.kind == OutcomeKind::completed);
    CHECK(done.stdout_text.size() == blob.size());
    CHECK(done.stdout_text == blob);
    CHECK(done.stderr_text == notice + "\n" + blob);
    CHECK_FALSE(done.truncated());
}

TEST_CASE("a background run keeps the head or the tail of its output up to the limit, says what it dropped, and the rule still reads all", "[execute][output][linux-only]") {
    using Keep = confine::RunOptions::Capture::Keep;
    Rig rig(Rig::Kind::plugin);
    // 3 MB on each stream; the launcher's own fatal line after the command's stderr.
    const std::string script = "head -c 3000000 /dev/zero | tr '\\0' o & { head -c 3000000 /dev/zero | tr '\\0' e; echo; } >&2; wait";
    const std::uint64_t err_total = notice.size() + 1 + 3000001 + fatal.size() + 1;
    for (Keep keep : {Keep::head, Keep::tail}) {
        INFO((keep == Keep::head ? "head" : "tail"));
        confine::RunOptions options;
        options.environment = environment_with({"FAKE_LAUNCHER_FAIL_AFTER=1"});
        options.capture = {.limit = 100000, .keep = keep};
        auto p = confine::spawn(rig.provider(), rig.policy(), sh(script), options);
        REQUIRE(p);
        const auto& done = p->wait();
        CHECK(done.outcome.kind == OutcomeKind::sandbox_unavailable);
        CHECK(done.outcome.basis == confine::Basis::rule);
        CHECK(done.outcome.evidence == fatal);
        CHECK(done.truncated());
        CHECK(done.stdout_text == std::string(100000, 'o'));
        CHECK(done.stdout_dropped == 3000000 - 100000);
        CHECK(done.stderr_text.size() == 100000);
        CHECK(done.stderr_dropped == err_total - 100000);
        if (keep == Keep::head) CHECK(done.stderr_text == notice + "\n" + std::string(100000 - notice.size() - 1, 'e'));
        else CHECK(done.stderr_text == std::string(100000 - fatal.size() - 2, 'e') + "\n" + fatal + "\n");
    }
    // Nothing kept at all: the rule still reads the stream.
    confine::RunOptions none;
    none.environment = environment_with({"FAKE_LAUNCHER_FAIL_AFTER=1"});
    none.capture.limit = 0;
    auto p = confine::spawn(rig.provider(), rig.policy(), sh("echo out; echo err >&2"), none);
    REQUIRE(p);
    const auto& done = p->wait();
    CHECK(done.outcome.evidence == fatal);
    CHECK(done.stdout_text.empty());
    CHECK(done.stdout_dropped == 4);
    CHECK(done.stderr_dropped == notice.size() + 1 + 4 + fatal.size() + 1);
}

TEST_CASE("a grandchild that keeps the output open does not hold the run once the command has ended", "[execute][output][linux-only]") {
    Rig rig(Rig::Kind::plugin);
    test::TempDir dir;
    const fs::path pid_file = dir / "pid";
    // The grandchild holds stdout and stderr open for 60 s; the command ends at once.
    const auto argv = sh("sleep 60 & echo $! > " + pid_file.string() + "; echo done");
    auto alive = [&] {
        const pid_t pid = std::stoi(test::read_file(pid_file));
        return ::kill(pid, 0) == 0;
    };
    auto fg = confine::run(rig.provider(), rig.policy(), argv);
    REQUIRE(fg);
    CHECK(fg->kind == OutcomeKind::completed);
    CHECK(alive());  // the run returned while it still runs
    ::kill(std::stoi(test::read_file(pid_file)), SIGKILL);
    auto bg = confine::spawn(rig.provider(), rig.policy(), argv);
    REQUIRE(bg);
    const auto& done = bg->wait();
    CHECK(done.outcome.kind == OutcomeKind::completed);
    CHECK(done.stdout_text == "done\n");
    CHECK(alive());
    ::kill(std::stoi(test::read_file(pid_file)), SIGKILL);
}

TEST_CASE("a background run is ended with every process of it at its time limit", "[execute][linux-only]") {
    Rig rig(Rig::Kind::plugin_attested);
    test::TempDir dir;
    const fs::path pids = dir / "pids";
    // The sleeper's number as /proc has it (the run may have a PID namespace of its own).
    auto p = confine::spawn(rig.provider(), rig.policy(),
                            sh("sh -c 'read -r p _ < /proc/self/stat; echo $p > " + pids.string() + "; exec sleep 300' & wait"),
                            {.timeout = std::chrono::milliseconds(300)});
    REQUIRE(p);
    const auto& done = p->wait();
    CHECK(done.outcome.timed_out);
    CHECK(done.outcome.kind == OutcomeKind::task_failed);
    CHECK(done.outcome.signal == SIGTERM);  // its first step; SIGKILL comes kill_after later
    int sleeper = 0;
    std::istringstream(test::read_file(pids)) >> sleeper;
    REQUIRE(sleeper > 0);
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
        std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
        std::string line;
        gone = !std::getline(stat, line) || line.find(") Z") != std::string::npos;
        if (!gone) ::usleep(10000);
    }
    CHECK(gone);
}

TEST_CASE("a background process can be signalled and waited for", "[execute]") {
    Rig rig(Rig::Kind::plugin);
    auto p = confine::spawn(rig.provider(), rig.policy(), std::vector<std::string>{"sleep", "300"});
    REQUIRE(p);
    CHECK_FALSE(p->finished());
    p->kill(SIGTERM);
    const auto& done = p->wait();
    CHECK(done.outcome.signal == SIGTERM);
    CHECK(p->finished());
    CHECK(&p->wait() == &done);
}

TEST_CASE("a background run has a session of its own, so no terminal to open, read or write", "[execute][linux-only]") {
    Rig rig(Rig::Kind::plugin);
    auto p = confine::spawn(rig.provider(), rig.policy(),
                            std::vector<std::string>{"/bin/sh", "-c",
                                                     "read -r p _ _ _ _ s _ < /proc/self/stat; echo $p; echo $s; (exec 3<>/dev/tty) 2>/dev/null || echo no-terminal"});
    REQUIRE(p);
    const auto& done = p->wait();
    std::istringstream lines(done.stdout_text);
    std::string pid, session, terminal;
    std::getline(lines, pid);
    std::getline(lines, session);
    std::getline(lines, terminal);
    CHECK(session == pid);  // the command leads its own session
    CHECK(session != std::to_string(::getsid(0)));
    CHECK(terminal == "no-terminal");
    // Signalled at once, before its child could have made that session, it still ends.
    auto quick = confine::spawn(rig.provider(), rig.policy(), std::vector<std::string>{"sleep", "300"});
    REQUIRE(quick);
    quick->kill(SIGTERM);
    CHECK(quick->wait().outcome.signal == SIGTERM);
}

TEST_CASE("the environment and working directory given reach the command", "[execute][linux-only]") {
    Rig rig(Rig::Kind::plugin_attested);
    confine::RunOptions options;
    options.environment = std::vector<std::string>{"PATH=/usr/bin:/bin", "CONFINE_TEST_VALUE=a b"};
    options.working_directory = rig.workspace();
    auto p = confine::spawn(rig.provider(), rig.policy(), sh("printf '%s|%s' \"$CONFINE_TEST_VALUE\" \"$(pwd)\""), options);
    REQUIRE(p);
    CHECK(p->wait().stdout_text == "a b|" + rig.workspace().string());
}

TEST_CASE("nothing runs when the policy is bad or no runner can be selected", "[execute]") {
    Rig rig(Rig::Kind::plugin);
    test::TempDir dir;
    const fs::path marker = dir / "ran";
    auto bad = confine::run(rig.provider(), {confine::Mode::workspace_write, dir / "absent", {}}, sh("touch " + marker.string()));
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == confine::ErrorCode::invalid_policy);
    auto bad_bg = confine::spawn(rig.provider(), {confine::Mode::workspace_write, dir / "absent", {}}, sh("touch " + marker.string()));
    REQUIRE_FALSE(bad_bg);

    auto none = confine::Provider::create(test::config_from("[platform.linux]\nchain = []\n"), {.platform = "linux"});
    REQUIRE(none);
    auto fg = confine::run(**none, rig.policy(), sh("touch " + marker.string()));
    REQUIRE(fg);
    CHECK(fg->kind == OutcomeKind::sandbox_unavailable);
    CHECK(fg->basis == confine::Basis::selection);
    CHECK(fg->evidence == "the runner chain for platform 'linux' is empty (test.toml)");
    auto bg = confine::spawn(**none, rig.policy(), sh("touch " + marker.string()));
    REQUIRE(bg);
    CHECK(bg->wait().outcome.evidence == fg->evidence);
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("a command that does not exist is the caller's error, never a runner failure", "[execute]") {
    Rig rig(Rig::Kind::plugin_attested);
    test::TempDir dir;
    test::write_file(dir / "script", "#!/bin/sh\ntrue\n", fs::perms(0644));
    auto expect = [&](const std::vector<std::string>& argv, confine::ErrorCode code, const std::string& message, confine::RunOptions options = {}) {
        INFO(argv.front());
        auto fg = confine::run(rig.provider(), rig.policy(), argv, options);
        REQUIRE_FALSE(fg);
        CHECK(fg.error().code == code);
        CHECK(fg.error().message == message);
        auto bg = confine::spawn(rig.provider(), rig.policy(), argv, options);
        REQUIRE_FALSE(bg);
        CHECK(bg.error().code == code);
    };
    expect({"confine-no-such-command"}, confine::ErrorCode::command_not_found, "confine-no-such-command: command not found");
    expect({(dir / "absent").string()}, confine::ErrorCode::command_not_found, (dir / "absent").string() + ": No such file or directory");
    expect({(dir / "script").string()}, confine::ErrorCode::command_not_executable, (dir / "script").string() + ": Permission denied");
    confine::RunOptions in_dir;
    in_dir.working_directory = dir.path();
    expect({"./script"}, confine::ErrorCode::command_not_executable, "./script: Permission denied", in_dir);
    confine::RunOptions own_path;
    own_path.environment = std::vector<std::string>{"PATH=" + dir.path().string()};
    expect({"script"}, confine::ErrorCode::command_not_executable, "script: Permission denied", own_path);
    expect({"sh"}, confine::ErrorCode::command_not_found, "sh: command not found", own_path);
}

TEST_CASE("the runner is told the directory the command runs in, by run and spawn alike", "[execute]") {
    Rig rig(Rig::Kind::plugin_showing_workdir);
    test::TempDir elsewhere;
    fs::create_directories(elsewhere.path() / "sub dir");
    const std::vector<std::string> argv{"/bin/sh", "-c", "printf '%s|%s' \"$FAKE_POLICY_WORKDIR\" \"$PWD\""};
    auto told = [&](const confine::RunOptions& options) {
        confine::RunOptions background = options;
        background.environment = environment_with({});
        auto p = confine::spawn(rig.provider(), rig.policy(), argv, background);
        REQUIRE(p);
        auto done = p->wait();
        CHECK(done.outcome.kind == OutcomeKind::completed);
        return done.stdout_text;
    };
    const std::string named = fs::canonical(elsewhere.path() / "sub dir").string();
    confine::RunOptions in_dir;
    in_dir.working_directory = elsewhere.path() / "sub dir";
    CHECK(told(in_dir) == named + "|" + named);
    // Unnamed: the caller's own directory, where the command runs too.
    CHECK(told({}) == fs::current_path().string() + "|" + fs::current_path().string());

    // The foreground run tells the runner the same.
    const fs::path out = elsewhere.path() / "foreground.txt";
    const std::vector<std::string> to_file{"/bin/sh", "-c", "printf '%s' \"$FAKE_POLICY_WORKDIR\" > '" + out.string() + "'"};
    auto fg = confine::run(rig.provider(), rig.policy(), to_file, in_dir);
    REQUIRE(fg);
    CHECK(fg->kind == OutcomeKind::completed);
    CHECK(test::read_file(out) == named);
}

#ifdef CONFINE_TEST_PROCESS_TREE
TEST_CASE("the parent check names the parent of a process held alive, and nothing once it is gone", "[execute][linux-only]") {
    namespace detail = confine::detail;
    detail::Fd self(detail::open_pidfd(::getpid()));
    if (self.get() < 0) test::skip_test("no pidfd_open on this kernel");
    CHECK(detail::parent_of(self.get(), ::getpid()) == ::getppid());

    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    REQUIRE(child > 0);
    detail::Fd held(detail::open_pidfd(child));
    REQUIRE(held.get() >= 0);
    CHECK(detail::parent_of(held.get(), child) == ::getpid());
    ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    // Reaped: its number may pass to another process, which the held pidfd is not.
    CHECK(detail::parent_of(held.get(), child) == 0);
}

namespace {
void counted(int) {}
}  // namespace

TEST_CASE("the child before its exec resets exactly the handlers the kernel says this process has", "[execute][linux-only]") {
    namespace detail = confine::detail;
    struct sigaction handled {}, ignored {}, before_usr1 {}, before_usr2 {}, before_rt {};
    handled.sa_handler = counted;
    ignored.sa_handler = SIG_IGN;
    REQUIRE(::sigaction(SIGUSR1, &handled, &before_usr1) == 0);
    REQUIRE(::sigaction(SIGUSR2, &ignored, &before_usr2) == 0);
    REQUIRE(::sigaction(SIGRTMIN + 3, &handled, &before_rt) == 0);
    struct Restore {
        const struct sigaction &usr1, &usr2, &rt;
        ~Restore() {
            ::sigaction(SIGUSR1, &usr1, nullptr);
            ::sigaction(SIGUSR2, &usr2, nullptr);
            ::sigaction(SIGRTMIN + 3, &rt, nullptr);
        }
    } restore{before_usr1, before_usr2, before_rt};
    const std::uint64_t caught = detail::caught_signals();
    const auto bit = [](int s) { return std::uint64_t{1} << (s - 1); };
    CHECK((caught & bit(SIGUSR1)) != 0);
    CHECK((caught & bit(SIGRTMIN + 3)) != 0);
    CHECK((caught & bit(SIGUSR2)) == 0);  // ignored, not caught: exec keeps it ignored
    // The kernel's own account of them (SigCgt in /proc/self/status) for every signal
    // glibc lets a program ask about: the same answer.
    std::ifstream status("/proc/self/status");
    std::string line, sigcgt;
    while (std::getline(status, line))
        if (line.starts_with("SigCgt:")) sigcgt = line.substr(line.find_first_not_of(" \t", 7));
    REQUIRE(sigcgt.size() == 16);
    const std::uint64_t kernel = std::stoull(sigcgt, nullptr, 16);
    for (int s = 1; s <= 64; ++s) {
        struct sigaction now {};
        if (::sigaction(s, nullptr, &now) != 0) continue;
        INFO("signal " << s);
        CHECK(((kernel & bit(s)) != 0) == ((caught & bit(s)) != 0));
    }
}
#endif
