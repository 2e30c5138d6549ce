// Every signal a transparent wrapper passes on reaches the command, on every Linux way
// (tests/ways.hpp), as root and as nobody (docs/design.md §7): the terminal's — Ctrl-C,
// a resize, Ctrl-Z and `fg` — on a real pseudo-terminal run as a shell with job control
// runs a job (tests/pty.hpp), and those sent to confinectl with kill. Each is judged by
// what the command saw and by the processes left in /proc, found by a text only this run
// has on its command lines.
#include "pty.hpp"
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using test::Tree;
using test::Way;

namespace {

constexpr Way all_ways[] = {Way::bwrap, Way::runner_command, Way::landlock_launcher, Way::landlock_forked, Way::landlock_in_place};

// confinectl's argv for `command` through sandbox `s`, as `unprivileged` says; with
// `no_tty`, the command gets the terminal itself rather than one of the run's own.
std::vector<std::string> confinectl_argv(const test::Sandbox& s, const Tree& t, const std::vector<std::string>& command, bool unprivileged,
                                         bool no_tty = false) {
    std::vector<std::string> argv = test::as_user(unprivileged);
    argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + s.confine.scratch("cache").string(),
                             s.confine.confinectl().string()});
    auto args = s.args(t, command);
    if (no_tty) args.insert(args.begin() + 1, "--no-tty");
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

// Waits, 20 s at most, until `done` holds; whether it did.
template <class Done>
bool eventually(Done done) {
    for (int i = 0; i < 400; ++i) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
}

// A pause after the command has said it is ready, as a person's before a key: under
// bubblewrap, confinectl finds the command a moment after it starts, and a stop typed
// before then is held for it (the terminal tests pause alike).
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

// Ends whatever a failed case left with `token` on its command line.
struct Leftovers {
    std::string token;
    ~Leftovers() {
        for (const auto& p : test::processes_with(token)) ::kill(p.pid, SIGKILL);
    }
};

bool none_left(const std::string& token) {
    return eventually([&] { return test::processes_with(token).empty(); });
}

std::string left_text(const std::string& token) {
    std::string text;
    for (const auto& p : test::processes_with(token)) text += std::to_string(p.pid) + " " + p.state + " " + p.argv0 + "\n";
    return text;
}

// Runs `check(way, unprivileged)` for every Linux way, as root and as nobody. An
// asserted runner_command names no command (it has no status descriptor): its signals can
// only go to bubblewrap, which ends the sandbox on an interrupt but passes nothing on, so
// the cases a command must see itself leave it out (`with_runner_command` false).
template <class Check>
void for_every_way(Check check, bool with_runner_command = true) {
    for (const Way way : all_ways) {
        if (way == Way::runner_command && !with_runner_command) continue;
        test::require_way(way);
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            INFO(test::name_of(way) << (unprivileged ? ", as nobody" : ", as root"));
            check(way, unprivileged);
        }
    }
}

}  // namespace

TEST_CASE("Ctrl-C at a terminal ends make and the recipe it runs, and confinectl, on every Linux way, as root and as nobody",
          "[signals][e2e][linux-only]") {
    for_every_way([](Way way, bool unprivileged) {
        test::Sandbox s(way);
        Tree t(unprivileged);
        const std::string token = test::unique_text("signals-make-");
        Leftovers leftovers{token};
        // The recipe's process, named by the token: a link to sleep in the workspace.
        const fs::path sleeper = t.ws / (token + "-sleep"), makefile = t.ws / (token + ".mk");
        fs::create_symlink("/bin/sleep", sleeper);
        test::write_file(makefile, "all:\n\t@echo ready; exec " + sleeper.string() + " 1000\n");
        test::PtyJob job(confinectl_argv(s, t, {"/bin/sh", "-c", "make -f " + makefile.string()}, unprivileged), unprivileged);
        REQUIRE(job.expect("ready"));
        settle();
        REQUIRE(eventually([&] {
            for (const auto& p : test::processes_with(token))
                if (p.argv0 == sleeper.string()) return true;
            return false;
        }));
        job.type("\x03");
        const auto r = job.wait();
        INFO(job.screen());
        REQUIRE(r);
        // make ends by the interrupt it got; at a terminal the command has one of its own,
        // and confinectl exits 128 + 2 for it on every way, as a terminal's program does.
        CHECK(r->exit_code == 128 + SIGINT);
        CHECK_FALSE(r->signal);
        INFO(left_text(token));
        CHECK(none_left(token));
    });
}

TEST_CASE("a terminal's resize reaches the command, on every Linux way, as root and as nobody", "[signals][e2e][linux-only]") {
    for_every_way([](Way way, bool unprivileged) {
        test::Sandbox s(way);
        Tree t(unprivileged);
        const std::string token = test::unique_text("signals-winch-");
        Leftovers leftovers{token};
        const fs::path stop = t.ws / "stop";
        const std::string script =
            ": " + token + "; trap 'stty size' WINCH; echo ready; while [ ! -e " + stop.string() + " ]; do sleep 0.05; done; echo done";
        test::PtyJob job(confinectl_argv(s, t, {"/bin/sh", "-c", script}, unprivileged), unprivileged);
        REQUIRE(job.expect("ready"));
        settle();
        job.resize(33, 111);
        CHECK(job.expect("33 111"));
        test::write_file(stop, "");
        CHECK(job.expect("done"));
        const auto r = job.wait();
        INFO(job.screen());
        REQUIRE(r);
        CHECK(r->exit_code == 0);
    }, false);
}

TEST_CASE("with --no-tty, Ctrl-Z at a terminal stops the command and confinectl, and a continuation resumes the command, on every Linux way, as root and as nobody",
          "[signals][e2e][linux-only]") {
    for_every_way([](Way way, bool unprivileged) {
        test::Sandbox s(way);
        Tree t(unprivileged);
        const std::string token = test::unique_text("signals-stop-");
        Leftovers leftovers{token};
        // The command waits on a FIFO the test holds open, and starts nothing meanwhile (a
        // child forked as the stop arrives could miss it; one vforked leaves its shell in D).
        const fs::path fifo = t.ws / "go";
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        if (unprivileged) REQUIRE(::chown(fifo.c_str(), test::nobody, test::nobody) == 0);
        const int go = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
        REQUIRE(go >= 0);
        const std::string script = ": " + token + "; echo ready; read line < " + fifo.string() + "; echo finished $line";
        test::PtyJob job(confinectl_argv(s, t, {"/bin/sh", "-c", script}, unprivileged, true), unprivileged);
        REQUIRE(job.expect("ready"));
        settle();
        job.type("\x1a");
        // The command and confinectl are stopped, as the shell then shows.
        auto command_stopped = [&] {
            bool seen = false;
            for (const auto& p : test::processes_with(token))
                if (p.argv0 == "/bin/sh") {
                    if (p.state != 'T') return false;
                    seen = true;
                }
            return seen;
        };
        const bool stopped = eventually(command_stopped);
        INFO(left_text(token));
        CHECK(stopped);
        CHECK(eventually([&] { return test::process_state(job.pid()) == 'T'; }));
        // Nothing runs on while stopped: what it waits for is there, and stays unread.
        REQUIRE(::write(go, "go\n", 3) == 3);
        // `fg` continues the job's process group; in place confinectl is the command
        // itself, and the others get SIGCONT on confinectl alone (`kill -CONT`).
        if (way == Way::landlock_in_place) ::kill(-job.pid(), SIGCONT);
        else ::kill(job.pid(), SIGCONT);
        const bool finished = job.expect("finished go");
        ::close(go);
        INFO("after the continuation:\n" << left_text(token));
        CHECK(finished);
        const auto r = job.wait();
        INFO(job.screen());
        REQUIRE(r);
        CHECK(r->exit_code == 0);
        CHECK(none_left(token));
    }, false);
}

TEST_CASE("USR1, USR2, HUP, QUIT and TERM sent to confinectl reach the command, which handles them, on every Linux way, as root and as nobody",
          "[signals][e2e][linux-only]") {
    for_every_way([](Way way, bool unprivileged) {
        test::Sandbox s(way);
        Tree t(unprivileged);
        const std::string token = test::unique_text("signals-kill-");
        Leftovers leftovers{token};
        const std::string script = ": " + token +
                                   "; ulimit -c 0; for s in USR1 USR2 HUP QUIT; do trap \"echo got-$s\" $s; done; "
                                   "trap 'echo got-TERM; exit 7' TERM; echo ready; while :; do sleep 0.05; done";
        test::PtyJob job(confinectl_argv(s, t, {"/bin/sh", "-c", script}, unprivileged), unprivileged);
        REQUIRE(job.expect("ready"));
        settle();
        for (const auto& [sig, name] : std::vector<std::pair<int, std::string>>{
                 {SIGUSR1, "USR1"}, {SIGUSR2, "USR2"}, {SIGHUP, "HUP"}, {SIGQUIT, "QUIT"}, {SIGTERM, "TERM"}}) {
            INFO(name);
            REQUIRE(::kill(job.pid(), sig) == 0);
            CHECK(job.expect("got-" + name));
        }
        const auto r = job.wait();
        INFO(job.screen());
        REQUIRE(r);
        // confinectl ends with the command's status, not by a signal of its own.
        CHECK(r->exit_code == 7);
        CHECK(r->signal == 0);
        CHECK(none_left(token));
    }, false);
}

// A stand-in for bubblewrap that starts the command at once but names it on its status
// descriptor only once `go` exists: a signal sent in between must neither reach the
// runner (it would end the sandbox) nor be lost.
namespace {

struct SlowToName {
    test::TempDir dir{"/var/tmp"};  // only root can write here, as a runner program's directory must be
    fs::path go = dir / "go";
    fs::path program = dir / "slow-bwrap";
    SlowToName() {
        fs::permissions(dir.path(), fs::perms(0755));
        test::write_file(program,
                         "#!/bin/sh\n"
                         "while [ \"$1\" != -- ]; do [ \"$1\" = --json-status-fd ] && fd=$2; shift; done; shift\n"
                         "\"$@\" & child=$!\n"
                         "[ \"$1\" = true ] || while [ ! -e " + go.string() + " ]; do sleep 0.05; done\n"
                         "eval \"echo '{ \\\"child-pid\\\": '$child' }' >&$fd\"\n"
                         "wait $child; status=$?\n"
                         "eval \"echo '{ \\\"exit-code\\\": '$status' }' >&$fd\"\n"
                         "exit $status\n",
                         fs::perms(0755));
    }
    std::string config() const { return "[platform.linux]\nchain = [\"bwrap\"]\n[runner.bwrap]\nprogram = \"" + program.string() + "\"\n"; }
};

}  // namespace

TEST_CASE("a signal sent to confinectl before bubblewrap has named its command is held, and reaches the command once named",
          "[signals][e2e][linux-only]") {
    SlowToName runner;
    test::Installed confine;
    const fs::path config = confine.scratch("slow.toml");
    test::write_file(config, runner.config());
    Tree t(false);
    const std::string token = test::unique_text("signals-held-");
    Leftovers leftovers{token};
    const fs::path ready = t.ws / "ready", got = t.ws / "got";
    const std::string script = ": " + token + "; trap 'echo USR1 > " + got.string() + "; exit 3' USR1; echo ready > " + ready.string() +
                               "; while :; do sleep 0.05; done";
    test::PtyJob job({"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + confine.scratch("cache").string(), confine.confinectl().string(),
                      "run", "--config", config.string(), "--workspace", t.ws.string(), "--", "/bin/sh", "-c", script});
    REQUIRE(eventually([&] { return test::read_file(ready) == "ready\n"; }));
    REQUIRE(::kill(job.pid(), SIGUSR1) == 0);
    // Time for a signal passed to the runner to end it, were it passed there.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_FALSE(fs::exists(got));
    test::write_file(runner.go, "");
    const auto r = job.wait();
    INFO(job.screen());
    REQUIRE(r);
    CHECK(r->exit_code == 3);
    CHECK(test::read_file(got) == "USR1\n");
}

TEST_CASE("a background run's signal sent before its runner has named the command is held, and reaches the command once named",
          "[signals][e2e][linux-only]") {
    SlowToName runner;
    test::TempDir plugins;
    test::install_builtin(plugins.path(), "bwrap");
    auto provider = confine::Provider::create(test::config_from(runner.config()),
                                              {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{plugins.path()}});
    REQUIRE(provider);
    Tree t(false);
    const std::string token = test::unique_text("signals-held-");
    Leftovers leftovers{token};
    const fs::path ready = t.ws / "ready";
    const std::string script = ": " + token + "; trap 'echo handled; exit 7' TERM; echo ready > " + ready.string() + "; while :; do sleep 0.05; done";
    auto p = confine::spawn(**provider, {confine::Mode::workspace_write, t.ws, {}}, std::vector<std::string>{"/bin/sh", "-c", script});
    REQUIRE(p);
    REQUIRE(eventually([&] { return test::read_file(ready) == "ready\n"; }));
    p->kill(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    test::write_file(runner.go, "");
    const auto& done = p->wait();
    CHECK(done.outcome.exit_code == 7);
    CHECK(done.outcome.basis == confine::Basis::attestation);
    CHECK(done.stdout_text == "handled\n");
}

TEST_CASE("a background run under bubblewrap is stopped by SIGTSTP and continued by SIGCONT, the command's whole group",
          "[signals][e2e][linux-only]") {
    test::require_bwrap();
    test::TempDir plugins;
    test::install_builtin(plugins.path(), "bwrap");
    auto provider = confine::Provider::create(test::config_from("[platform.linux]\nchain = [\"bwrap\"]\n"),
                                              {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{plugins.path()}});
    REQUIRE(provider);
    Tree t(false);
    const std::string token = test::unique_text("signals-bg-stop-");
    Leftovers leftovers{token};
    const fs::path fifo = t.ws / "go";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const int go = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(go >= 0);
    // A child of the command waits with it: both must stop.
    const std::string script = ": " + token + "; /bin/sh -c ': " + token + "; read line < " + fifo.string() + "; echo child $line' & read line < " +
                               fifo.string() + "; wait; echo parent $line";
    auto p = confine::spawn(**provider, {confine::Mode::workspace_write, t.ws, {}}, std::vector<std::string>{"/bin/sh", "-c", script});
    REQUIRE(p);
    auto shells = [&] {
        std::vector<test::ProcessSeen> found;
        for (const auto& seen : test::processes_with(token))
            if (seen.argv0 == "/bin/sh") found.push_back(seen);
        return found;
    };
    REQUIRE(eventually([&] { return shells().size() == 2; }));
    settle();  // until the command is found (a stop before then is held for it)
    p->kill(SIGTSTP);
    CHECK(eventually([&] {
        const auto found = shells();
        return found.size() == 2 && found[0].state == 'T' && found[1].state == 'T';
    }));
    REQUIRE(::write(go, "a\nb\n", 4) == 4);
    p->kill(SIGCONT);
    const auto& done = p->wait();
    ::close(go);
    CHECK(done.outcome.exit_code == 0);
    CHECK_THAT(done.stdout_text, Catch::Contains("parent") && Catch::Contains("child"));
}

TEST_CASE("bash -i has job control on a terminal of the run's own: tty names it, Ctrl-Z stops the foreground job and fg resumes it, on every Linux way, as root and as nobody",
          "[signals][e2e][linux-only]") {
    for_every_way([](Way way, bool unprivileged) {
        test::Sandbox s(way);
        Tree t(unprivileged);
        const std::string token = test::unique_text("signals-job-");
        Leftovers leftovers{token};
        const fs::path sleeper = t.ws / (token + "-sleep");
        fs::create_symlink("/bin/sleep", sleeper);
        test::PtyJob job(confinectl_argv(s, t, {"/usr/bin/env", "PS1=P> ", "/bin/bash", "--norc", "--noprofile", "-i"}, unprivileged), unprivileged);
        REQUIRE(job.expect("P> "));
        job.type("tty; echo T$((6*7))\n");
        REQUIRE(job.expect("T42"));
        // A job's process: Ctrl-Z is a byte that reaches the command's terminal, whose
        // line discipline stops its foreground job; bash says so and `fg` continues it.
        job.type(sleeper.string() + " 1000\n");
        auto sleeper_state = [&] {
            for (const auto& p : test::processes_with(token))
                if (p.argv0 == sleeper.string()) return p.state;
            return '\0';
        };
        REQUIRE(eventually([&] { return sleeper_state() == 'S'; }));
        job.type("\x1a");
        CHECK(job.expect("Stopped"));
        CHECK(eventually([&] { return sleeper_state() == 'T'; }));
        // confinectl itself runs on, relaying: it is not what was stopped.
        CHECK(test::process_state(job.pid()) != 'T');
        job.type("fg\n");
        CHECK(eventually([&] { return sleeper_state() == 'S'; }));
        job.type("\x03");
        CHECK(eventually([&] { return sleeper_state() == '\0'; }));
        job.type("exit 4\n");
        const auto r = job.wait();
        INFO(job.screen());
        REQUIRE(r);
        CHECK(r->exit_code == 4);
        CHECK_THAT(job.screen(), Catch::Contains("/dev/pts/"));
        CHECK_THAT(job.screen(), !Catch::Contains("no job control"));
        CHECK_THAT(job.screen(), !Catch::Contains("not a tty"));
    }, false);
}
