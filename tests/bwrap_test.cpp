// The bubblewrap runner against the real bubblewrap: its program, its probe, its
// profiles per mode, the status-descriptor attestation, the asserted runner_command
// shape, the default chain's arbitration, and the confinement matrix (scenarios.hpp)
// through the plugin and an asserted runner_command, as root and as an unprivileged user.
#include "scenarios.hpp"
#include "support.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>

#include <sys/shm.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <csignal>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;
using test::as_user;
using test::Tree;

namespace {

const std::string bwrap = "/usr/bin/bwrap";

// confinectl on a chain of bubblewrap alone, with `extra` configuration.
struct Bwrapped {
    test::Installed confine;
    fs::path config = confine.scratch("bwrap.toml");
    explicit Bwrapped(const std::string& extra = "") { test::write_file(config, "[platform.linux]\nchain = [\"bwrap\"]\n" + extra); }
    test::Result run(const Tree& tree, const std::string& script, bool unprivileged = false, std::vector<std::string> flags = {},
                     std::vector<std::string> env = {}) const {
        std::vector<std::string> args{"run", "--config", config.string(), "--workspace", tree.ws.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/bin/sh", "-c", script});
        return confine.run(args, env, as_user(unprivileged));
    }
    // Runs `command` confined, with confinectl in the background of a shell that runs
    // `before` first; once `ready` holds something, the shell runs `between` (confinectl's
    // process ID is $runner), sends confinectl `signal_name`, waits for it, then runs
    // `after` (by default: print its status).
    test::Result run_then_signal(const Tree& tree, const fs::path& ready, const std::string& signal_name, const std::string& command,
                                 const std::string& before = "", const std::string& after = "echo \"status=$?\"",
                                 const std::string& between = "", bool unprivileged = false) const {
        const std::string script = before + "\"$@\" & runner=$!; for i in $(seq 200); do [ -s " + ready.string() +
                                   " ] && break; sleep 0.05; done; " + between + "kill -" + signal_name + " $runner; wait $runner; " +
                                   after;
        std::vector<std::string> argv{"/bin/sh", "-c", script, "sh"};
        for (const auto& a : as_user(unprivileged)) argv.push_back(a);
        argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + confine.scratch("cache").string(),
                                 confine.confinectl().string(), "run", "--config", config.string(), "--workspace", tree.ws.string(), "--",
                                 "/bin/sh", "-c", command});
        return test::run(argv);
    }
    json wrap(const std::vector<std::string>& flags) const {
        std::vector<std::string> args{"wrap", "--json", "--config", config.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "echo", "hi"});
        auto r = confine.run(args);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        return json::parse(r.out);
    }
};

// A program in a directory only root can write, as a runner program must be; not under
// /tmp, which workspace-write grants.
struct Programs {
    test::TempDir dir{"/var/tmp"};
    Programs() { fs::permissions(dir.path(), fs::perms(0755)); }
    fs::path add(const std::string& name, const std::string& body) const;
};

fs::path Programs::add(const std::string& name, const std::string& body) const {
    const fs::path file = dir / name;
    test::write_file(file, "#!/bin/sh\n" + body + "\n", fs::perms(0755));
    return file;
}

json report_of(const fs::path& file) { return json::parse(test::read_file(file)); }

// A shell snippet that finds, from outside, the deepest process below `start` by first
// children (confinectl, bubblewrap, its reaper, the command), and writes its process ID
// to `into` and its NSpid numbers ("outer inner") to `into`-nspid.
std::string command_below(const std::string& start, const fs::path& into) {
    return "p=" + start + "; while c=$(cat /proc/$p/task/$p/children 2>/dev/null) && [ -n \"$c\" ]; do p=${c%% *}; done; printf %s $p > " +
           into.string() + "; awk '/^NSpid:/ { print $2, $3 }' /proc/$p/status > " + into.string() + "-nspid; ";
}

// A word for a POSIX shell: `text` verbatim.
std::string quoted(const std::string& text) {
    std::string q = "'";
    for (char ch : text) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return q + "'";
}

// What bubblewrap does in the confinement matrix (scenarios.hpp): its own /tmp and /dev,
// binds that a rename cannot cross, a status descriptor that attests the command's start,
// and a killed command's signal turned into 128 + the signal.
const test::RunnerExpectations bwrap_plugin{.name = "bwrap",
                                            .runner = "bwrap",
                                            .config = "[platform.linux]\nchain = [\"bwrap\"]\n",
                                            .require = &test::require_bwrap,
                                            .denial = "Read-only file system",
                                            .fatal_signature = "bwrap: ",
                                            .basis = test::Basis::attestation,
                                            .tmp = test::Tmp::the_commands_own,
                                            .dev = test::Dev::the_runners_own,
                                            .move = test::MoveFromOutside::may_leave_a_copy,
                                            .killed = test::Killed::exit_128_plus_signal,
                                            .reports = test::Reports::when_asked,
                                            .enforcement = "full",
                                            .levels = {"full", "full", "full"}};

// The same bubblewrap as an operator's asserted runner_command: the same profile, but no
// attestation, so the failure rule alone judges the outcome.
const test::RunnerExpectations asserted_bwrap{
    .name = "asserted runner_command of bubblewrap",
    .runner = "runner_command",
    .config = "[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"bwrap: \"]\n",
    .require = &test::require_bwrap,
    .denial = "Read-only file system",
    .fatal_signature = "bwrap: ",
    .basis = test::Basis::rule,
    .tmp = test::Tmp::the_commands_own,
    .dev = test::Dev::the_runners_own,
    .move = test::MoveFromOutside::may_leave_a_copy,
    .killed = test::Killed::exit_128_plus_signal,
    .reports = test::Reports::when_asked,
    .enforcement = "full",
    .levels = {"full", "full", "full"}};

}  // namespace

TEST_CASE("bwrap confines writes to the policy's roots, as root", "[bwrap][e2e]") { test::run_matrix(bwrap_plugin, test::User::caller); }
TEST_CASE("bwrap confines writes to the policy's roots, as an unprivileged user", "[bwrap][e2e]") {
    test::run_matrix(bwrap_plugin, test::User::nobody);
}
TEST_CASE("an asserted runner_command of bubblewrap confines writes to the policy's roots, as root", "[bwrap][e2e]") {
    test::run_matrix(asserted_bwrap, test::User::caller);
}
TEST_CASE("an asserted runner_command of bubblewrap confines writes to the policy's roots, as an unprivileged user", "[bwrap][e2e]") {
    test::run_matrix(asserted_bwrap, test::User::nobody);
}

TEST_CASE("under bwrap the host's System V IPC is out of reach", "[bwrap][e2e][escape]") {
    test::require_bwrap();
    Bwrapped c;
    Tree t(false);
    // A shared memory segment of the host's, anyone's to attach.
    const int id = ::shmget(0x636f6e66, 4096, IPC_CREAT | 0666);
    REQUIRE(id >= 0);
    struct Removed {
        int id;
        ~Removed() { ::shmctl(id, IPC_RMID, nullptr); }
    } removed{id};
    auto r = c.run(t, "ipcs -m; echo end");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::EndsWith("end\n") && !Catch::Contains("0x636f6e66"));
}

TEST_CASE("bwrap confines the network unless the run or the configuration allows it", "[bwrap][network]") {
    const std::vector<std::string> confined{"--unshare-net", "--seccomp", "{loopback-filter-fd}"};
    auto has = [&](const json& argv) { return std::search(argv.begin(), argv.end(), confined.begin(), confined.end()) != argv.end(); };
    Bwrapped by_default;
    CHECK(has(by_default.wrap({"--mode", "read-only"})["argv"]));
    CHECK_FALSE(has(by_default.wrap({"--mode", "read-only", "--network", "allow"})["argv"]));
    Bwrapped allowing("[policy]\nnetwork = \"allow\"\n");
    CHECK_FALSE(has(allowing.wrap({"--mode", "read-only"})["argv"]));
    CHECK(has(allowing.wrap({"--mode", "read-only", "--network", "none"})["argv"]));
    auto bad = by_default.confine.run({"wrap", "--json", "--config", by_default.config.string(), "--network", "off", "--", "true"});
    CHECK(bad.exit_code == 125);
    CHECK(bad.err == "confinectl: --network: off is not one of none, allow\n");
}

TEST_CASE("bwrap wraps per mode with its extra roots, a status descriptor and no capabilities", "[bwrap]") {
    Bwrapped c("[policy]\ndeny_read = []\n");  // the argv alone, whatever the account's home holds
    test::TempDir ws("/var/tmp"), extra("/var/tmp");
    auto ro = c.wrap({"--mode", "read-only"});
    std::vector<std::string> base{bwrap,         "--ro-bind",         "/",          "/",   "--dev",         "/dev",
                                        "--proc",      "/proc",             "--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL",
                                        "--new-session", "--unshare-net", "--seccomp", "{loopback-filter-fd}", "--json-status-fd", "{status-fd}"};
    const auto devices = test::device_binds();  // root's: after --new-session
    base.insert(base.begin() + 15, devices.begin(), devices.end());
    std::vector<std::string> expected = base;
    expected.insert(expected.end(), {"--", "echo", "hi"});
    CHECK(ro["argv"] == expected);
    CHECK(ro["attestation"] == json{{"kind", "status_fd"}, {"status_argument", 19 + devices.size()}, {"status_marker", "\"exit-code\""}, {"status_pid_key", "\"child-pid\""}});
    // bubblewrap's refusals, and with the network confined the tools' words for its absence.
    json dialect = json::array({"read-only file system", "permission denied", "no such process", "erofs", "eacces", "eperm", "esrch"});
    for (const auto& s : confine::sdk::network_denial_signatures()) dialect.push_back(s);
    CHECK(ro["denial_signatures"] == dialect);
    CHECK(ro["failure_rule"]["fatal_signatures"] == json::array({"bwrap: ", "confine-loopback: "}));
    CHECK(ro["enforcement"] == "full");
    CHECK(ro["dimensions"] == json{{"write", "full"}, {"network", "full"}, {"processes", "full"}, {"read", "not asked"}, {"read_scope", "not asked"}, {"protect", "not asked"},
                                   {"lifetime", "full"}, {"limits", "not asked"}, {"open", nullptr}});
    CHECK(ro["runner"] == "bwrap");

    auto rw = c.wrap({"--workspace", ws.path().string(), "--writable", extra.path().string()});
    expected = base;
    // Each root from a descriptor the host opens without following links (bubblewrap's
    // --bind-fd), not by name.
    expected.insert(expected.end(), {"--tmpfs", "/tmp", "--bind-fd", "{dir-fd:" + ws.path().string() + "}", ws.path().string(), "--bind-fd",
                                     "{dir-fd:" + extra.path().string() + "}", extra.path().string(), "--", "echo", "hi"});
    CHECK(rw["argv"] == expected);

    // share_terminal_session = false is what it always is; said explicitly, it changes nothing.
    Bwrapped own_session("[runner.bwrap]\nshare_terminal_session = false\n[policy]\ndeny_read = []\n");
    CHECK(own_session.wrap({"--mode", "read-only"})["argv"] == ro["argv"]);
}

TEST_CASE("bwrap refuses share_terminal_session = true, which would let the command inject terminal input", "[bwrap]") {
    Tree t(false);
    Bwrapped c("[runner.bwrap]\nshare_terminal_session = true\n");
    const std::string why = "runner.bwrap: setting 'share_terminal_session' cannot be true: without bubblewrap's --new-session the "
                            "command could push input into the terminal it was started from (TIOCSTI)";
    auto checked = c.confine.run({"check-config", c.config.string()});
    CHECK(checked.exit_code == 125);
    CHECK(test::line_count(checked.err) == 1);
    CHECK_THAT(checked.err, Catch::Contains(why));
    for (const std::string mode : {"read-only", "workspace-write"}) {
        INFO(mode);
        const fs::path marker = t.root / ("ran-" + mode);
        std::vector<std::string> args{"run", "--config", c.config.string(), "--mode", mode};
        if (mode == "workspace-write") args.insert(args.end(), {"--workspace", t.ws.string()});
        args.insert(args.end(), {"--", "/usr/bin/touch", marker.string()});
        auto r = c.confine.run(args);
        CHECK(r.exit_code == 125);
        CHECK(test::line_count(r.err) == 1);
        // The configuration's error, as check-config says it: never a fallback.
        CHECK(r.err == checked.err);
        CHECK_FALSE(fs::exists(marker));
    }
    // wrap, for hosts that spawn by themselves, refuses it too.
    auto wrapped = c.confine.run({"wrap", "--json", "--config", c.config.string(), "--mode", "read-only", "--", "true"});
    CHECK(wrapped.exit_code == 125);
    CHECK_THAT(wrapped.err, Catch::Contains(why));
}

TEST_CASE("bwrap's former setting new_session is refused, naming share_terminal_session, whatever its value", "[bwrap]") {
    for (const std::string value : {"true", "false"}) {
        INFO(value);
        Bwrapped c("[runner.bwrap]\nnew_session = " + value + "\n");
        auto checked = c.confine.run({"check-config", c.config.string()});
        CHECK(checked.exit_code == 125);
        CHECK(test::line_count(checked.err) == 1);
        CHECK_THAT(checked.err, Catch::Contains("runner.bwrap: setting 'new_session' was renamed 'share_terminal_session'"));
    }
}

TEST_CASE("bwrap's program is an absolute, trusted path outside anything the command may write", "[bwrap]") {
    Bwrapped relative("[runner.bwrap]\nprogram = \"bwrap\"\n");
    auto r = relative.confine.run({"probe", "--config", relative.config.string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("setting 'program' must be an absolute path, got 'bwrap'"));

    Bwrapped kind("[runner.bwrap]\nshare_terminal_session = \"no\"\n");
    CHECK_THAT(kind.confine.run({"probe", "--config", kind.config.string()}).err,
               Catch::Contains("setting 'share_terminal_session' must be a boolean, not a string"));

    // Group-writable, or in a group-writable directory: refused, saying so.
    test::Installed confine;
    Programs programs;
    const fs::path loose = programs.add("loose-bwrap", "exec /usr/bin/bwrap \"$@\"");
    fs::permissions(loose, fs::perms(0775));
    const fs::path cfg = confine.scratch("loose.toml");
    test::write_file(cfg, "[platform.linux]\nchain = [\"bwrap\"]\n[runner.bwrap]\nprogram = \"" + loose.string() + "\"\n");
    r = confine.run({"probe", "--config", cfg.string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("runner.bwrap: setting 'program': refusing " + loose.string() + ": " + loose.string() +
                                      " is writable by its group (mode 0775)"));
    // check-config says so too, before anything runs.
    auto checked = confine.run({"check-config", cfg.string()});
    CHECK(checked.exit_code == 125);
    CHECK_THAT(checked.err, Catch::Contains(loose.string() + " is writable by its group (mode 0775)"));

    // Not executable.
    fs::permissions(loose, fs::perms(0644));
    CHECK_THAT(confine.run({"probe", "--config", cfg.string()}).err, Catch::Contains("refusing " + loose.string() + ": " + loose.string() + " is not executable"));

    // Inside the workspace: whoever put it there, the command could have replaced it.
    test::TempDir ws("/var/tmp");
    fs::permissions(ws.path(), fs::perms(0755));
    fs::copy_file(bwrap, ws / "bwrap");
    fs::permissions(ws / "bwrap", fs::perms(0755));
    const fs::path inside = confine.scratch("inside.toml");
    test::write_file(inside, "[platform.linux]\nchain = [\"bwrap\"]\n[runner.bwrap]\nprogram = \"" + (ws / "bwrap").string() + "\"\n");
    r = confine.run({"run", "--config", inside.string(), "--workspace", ws.path().string(), "--", "/usr/bin/touch", (ws / "ran").string()});
    CHECK(r.exit_code == 125);
    CHECK(test::line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("sandbox unavailable: ") &&
                          Catch::Contains(" lies in " + ws.path().string() + ", which ") &&
                          Catch::Contains(" confined command may write"));
    CHECK_FALSE(fs::exists(ws / "ran"));
}

TEST_CASE("bwrap's probe confines true, is bounded, and says why bubblewrap cannot work", "[bwrap]") {
    test::require_bwrap();
    test::Installed confine;
    Programs programs;
    const fs::path cfg = confine.scratch("probe.toml");
    // In a chain of two, so that bubblewrap is probed.
    test::write_file(cfg, "[platform.linux]\nchain = [\"bwrap\", \"landlock\"]\n");
    auto j = json::parse(confine.run({"probe", "--json", "--config", cfg.string()}).out);
    CHECK(j["runners"][0]["verdict"] == "full");
    CHECK(j["runners"][0]["probed"] == true);
    CHECK(j["selected"] == "bwrap");

    // What bubblewrap says when it cannot set up is the reason.
    const fs::path failing = programs.add("failing-bwrap", "exec /usr/bin/bwrap --bind /nonexistent-source /x \"$@\"");
    test::write_file(cfg, "[platform.linux]\nchain = [\"bwrap\", \"landlock\"]\n[runner.bwrap]\nprogram = \"" + failing.string() + "\"\n");
    j = json::parse(confine.run({"probe", "--json", "--config", cfg.string()}).out);
    CHECK(j["runners"][0]["verdict"] == "unusable");
    CHECK(j["runners"][0]["reason"] == "bwrap: Can't find source path /nonexistent-source: No such file or directory");

    // A bubblewrap that hangs is given up at probe_timeout_ms.
    const fs::path hanging = programs.add("hanging-bwrap", "exec sleep 30");
    test::write_file(cfg, "probe_timeout_ms = 300\n[platform.linux]\nchain = [\"bwrap\", \"landlock\"]\n[runner.bwrap]\nprogram = \"" +
                              hanging.string() + "\"\n");
    j = json::parse(confine.run({"probe", "--json", "--config", cfg.string()}).out);
    CHECK(j["runners"][0]["verdict"] == "unusable");
    CHECK_THAT(j["runners"][0]["reason"].get<std::string>(), Catch::Contains("timed out"));
}

TEST_CASE("a bubblewrap set-up failure is sandbox unavailable even when it prints nothing", "[bwrap][e2e][linux-only]") {
    test::require_bwrap();
    Tree t(false);
    Bwrapped plain;
    Programs programs;
    const fs::path silent = programs.add("silent-bwrap", "exec /usr/bin/bwrap --bind /nonexistent-source /x \"$@\" 2>/dev/null");
    test::write_file(plain.config, "[platform.linux]\nchain = [\"bwrap\"]\n[runner.bwrap]\nprogram = \"" + silent.string() + "\"\n");
    const fs::path report = t.root / "report.json";
    auto r = plain.run(t, "touch " + t.ws.string() + "/ran", false, {"--report", report.string()});
    CHECK(r.exit_code == 125);
    CHECK(r.err == "confinectl: sandbox unavailable: runner 'bwrap' ended with exit status 1 before starting the command "
                   "(its status descriptor never reported the command)\n");
    CHECK_FALSE(fs::exists(t.ws / "ran"));
    auto j = report_of(report);
    CHECK(j["outcome"] == "sandbox_unavailable");
    CHECK(j["basis"] == "attestation");

    // With its message: the message is the evidence.
    const fs::path loud = programs.add("loud-bwrap", "exec /usr/bin/bwrap --bind /nonexistent-source /x \"$@\"");
    test::write_file(plain.config, "[platform.linux]\nchain = [\"bwrap\"]\n[runner.bwrap]\nprogram = \"" + loud.string() + "\"\n");
    r = plain.run(t, "touch " + t.ws.string() + "/ran", false, {"--report", report.string()});
    CHECK(r.exit_code == 125);
    // Said once, by confinectl: bubblewrap's own line is its evidence, not a second line.
    CHECK(r.err == "confinectl: sandbox unavailable: bwrap: Can't find source path /nonexistent-source: No such file or directory\n");
    CHECK(report_of(report)["evidence"]["rule"] == "bwrap: ");
}

TEST_CASE("an asserted runner_command of real bubblewrap confines, and a missing one fails closed", "[bwrap][e2e]") {
    test::require_bwrap();
    Tree t(false);
    test::Installed confine;
    const fs::path cfg = confine.scratch("asserted.toml");
    test::write_file(cfg, "[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"bwrap: \"]\n");
    auto run = [&](const std::string& script, std::vector<std::string> flags = {}) {
        std::vector<std::string> args{"run", "--config", cfg.string(), "--workspace", t.ws.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/bin/sh", "-c", script});
        return confine.run(args);
    };
    CHECK(run("echo kept > " + t.ws.string() + "/kept").exit_code == 0);
    CHECK(test::read_file(t.ws / "kept") == "kept\n");
    const fs::path report = t.root / "report.json";
    auto denied = run("echo x > " + t.root.path().string() + "/denied", {"--report", report.string()});
    CHECK(denied.exit_code != 0);
    CHECK_FALSE(fs::exists(t.root / "denied"));
    auto j = report_of(report);
    CHECK(j["runner"] == "runner_command");
    CHECK(j["outcome"] == "task_failed");
    CHECK(j["basis"] == "rule");
    run("mount -o remount,bind,rw / 2>/dev/null; echo x > " + t.root.path().string() + "/remounted");
    CHECK_FALSE(fs::exists(t.root / "remounted"));

    test::write_file(cfg, "[platform.linux]\nrunner_command = [\"" + confine.scratch("absent/bwrap").string() +
                              "\"]\nrunner_failure_signatures = [\"bwrap: \"]\n");
    auto missing = run("touch " + t.ws.string() + "/ran");
    CHECK(missing.exit_code == 125);
    CHECK(test::line_count(missing.err) == 1);
    CHECK_THAT(missing.err, Catch::StartsWith("confinectl: sandbox unavailable: cannot start runner 'runner_command'"));
    CHECK_FALSE(fs::exists(t.ws / "ran"));
}

TEST_CASE("the default chain runs with bubblewrap where it works, and with landlock where it does not", "[bwrap][landlock][e2e][linux-only]") {
    test::require_bwrap();
    test::require_landlock();
    Tree t(false);
    test::Installed confine;
    const fs::path report = t.root / "report.json";
    auto r = confine.run({"run", "--workspace", t.ws.string(), "--report", report.string(), "--", "/bin/sh", "-c",
                          "echo x > " + t.ws.string() + "/a; echo x > " + t.root.path().string() + "/denied"});
    CHECK(r.exit_code != 0);
    CHECK(report_of(report)["runner"] == "bwrap");
    CHECK(fs::exists(t.ws / "a"));
    CHECK_FALSE(fs::exists(t.root / "denied"));

    r = confine.run({"run", "--config", confine.config_without_bwrap().string(), "--workspace", t.ws.string(), "--report", report.string(),
                     "--", "/bin/sh", "-c", "echo x > " + t.ws.string() + "/b; echo x > " + t.root.path().string() + "/denied"});
    CHECK(r.exit_code != 0);
    CHECK(report_of(report)["runner"] == "landlock");
    CHECK(fs::exists(t.ws / "b"));
    CHECK_FALSE(fs::exists(t.root / "denied"));
}

TEST_CASE("a signal sent to confinectl reaches the command itself under bubblewrap, which may handle it", "[bwrap][e2e][linux-only]") {
    test::require_bwrap();
    // Sent to bubblewrap instead, TERM or USR1 would end it, and --die-with-parent would
    // then kill the command before it could do anything about the signal.
    for (const std::string signal_name : {"TERM", "USR1"}) {
        INFO(signal_name);
        Tree t(false);
        Bwrapped c;
        const fs::path pidfile = t.ws / "pid", handled = t.ws / "handled";
        const std::string command = "trap 'echo " + signal_name + " > " + handled.string() + "; exit 7' " + signal_name +
                                    "; echo $$ > " + pidfile.string() + "; while :; do sleep 0.05; done";
        auto r = c.run_then_signal(t, pidfile, signal_name, command);
        CHECK(r.out == "status=7\n");
        CHECK(test::read_file(handled) == signal_name + "\n");
    }
}

TEST_CASE("a background run under bubblewrap passes a signal to the command, which may handle it, and SIGKILL ends the sandbox", "[bwrap][e2e][linux-only]") {
    test::require_bwrap();
    test::TempDir plugins;
    test::install_builtin(plugins.path(), "bwrap");
    auto provider = confine::Provider::create(test::config_from("[platform.linux]\nchain = [\"bwrap\"]\n"),
                                              {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{plugins.path()}});
    REQUIRE(provider);
    for (const int sig : {SIGTERM, SIGINT, SIGKILL}) {
        INFO("signal " << sig);
        Tree t(false);
        const fs::path ready = t.ws / "ready";
        const std::string script = "trap 'echo handled; exit 7' TERM INT; echo ready > " + ready.string() + "; while :; do sleep 0.05; done";
        auto p = confine::spawn(**provider, {confine::Mode::workspace_write, t.ws, {}}, std::vector<std::string>{"/bin/sh", "-c", script});
        REQUIRE(p);
        for (int i = 0; i < 400 && !fs::exists(ready); ++i) ::usleep(10000);
        REQUIRE(fs::exists(ready));
        p->kill(sig);
        const auto& done = p->wait();
        if (sig == SIGKILL) {
            // The runner is killed, and bubblewrap's reaper with it: nothing is left.
            CHECK(done.outcome.signal == SIGKILL);
            CHECK(done.stdout_text.empty());
        } else {
            CHECK(done.outcome.kind == confine::OutcomeKind::task_failed);
            CHECK(done.outcome.exit_code == 7);
            CHECK(done.outcome.basis == confine::Basis::attestation);
            CHECK(done.stdout_text == "handled\n");
        }
    }
}

TEST_CASE("bwrap gives the /tmp a run asks for: private by default, the host's with --tmp host, a private one in read-only mode with --tmp private", "[bwrap][e2e][tmp]") {
    test::require_bwrap();
    for (const bool unprivileged : {false, true}) {
        if (unprivileged) test::require_user_switch();
        INFO((unprivileged ? "as nobody" : "as root"));
        Tree t(unprivileged);
        Bwrapped c;
        const std::string name = "/tmp/confine-tmp-kind-" + std::to_string(::getpid());
        const fs::path report = t.root / "report.json";
        fs::remove(name);
        // By default its own: nothing is left on the host.
        auto own = c.run(t, "echo own > " + name + " && cat " + name, unprivileged, {"--report", report.string()});
        CHECK(own.out == "own\n");
        CHECK_FALSE(fs::exists(name));
        CHECK(json::parse(test::read_file(report))["tmp"] == "private");
        // Asked for the host's: it lands there, written by the user who ran it.
        auto host = c.run(t, "echo host > " + name, unprivileged, {"--tmp", "host", "--report", report.string()});
        CHECK(host.exit_code == 0);
        CHECK(test::read_file(name) == "host\n");
        struct stat st {};
        REQUIRE(::stat(name.c_str(), &st) == 0);
        CHECK(st.st_uid == (unprivileged ? static_cast<uid_t>(test::nobody) : ::geteuid()));
        CHECK(json::parse(test::read_file(report))["tmp"] == "host");
        fs::remove(name);
        // Read-only mode: the host's, read-only, unless a private one is asked for.
        auto read_only = [&](std::vector<std::string> flags) {
            std::vector<std::string> args{"run", "--config", c.config.string(), "--mode", "read-only", "--report", report.string()};
            args.insert(args.end(), flags.begin(), flags.end());
            args.insert(args.end(), {"--", "/bin/sh", "-c", "echo ro > " + name + " && cat " + name});
            return c.confine.run(args, {}, as_user(unprivileged));
        };
        auto ro_host = read_only({});
        CHECK(ro_host.exit_code != 0);
        CHECK_FALSE(fs::exists(name));
        CHECK(json::parse(test::read_file(report))["tmp"] == "host");
        auto ro_private = read_only({"--tmp", "private"});
        CHECK(ro_private.out == "ro\n");
        CHECK_FALSE(fs::exists(name));
        CHECK(json::parse(test::read_file(report))["tmp"] == "private");
    }
}

TEST_CASE("a process the runner names that is not its child never gets confinectl's signals", "[bwrap][e2e]") {
    test::require_bwrap();
    Tree t(false);
    Bwrapped c;
    Programs programs;
    // A stand-in runner that names another process (VICTIM) as the command it started.
    const fs::path liar = programs.add(
        "lying-bwrap",
        "while [ \"$1\" != -- ]; do [ \"$1\" = --json-status-fd ] && fd=$2; shift; done; shift\n"
        "eval \"echo '{ \\\"child-pid\\\": $VICTIM }' >&$fd\"\n"
        "\"$@\"; status=$?\n"
        "eval \"echo '{ \\\"exit-code\\\": '$status' }' >&$fd\"\n"
        "exit $status");
    test::write_file(c.config, "[platform.linux]\nchain = [\"bwrap\"]\n[runner.bwrap]\nprogram = \"" + liar.string() + "\"\n");
    const fs::path ready = t.ws / "ready";
    auto r = c.run_then_signal(t, ready, "TERM", "echo ready > " + ready.string() + "; exec sleep 1",
                               "sleep 30 & victim=$!; export VICTIM=$victim; ",
                               "if kill -0 $victim 2>/dev/null; then echo victim-alive; kill $victim; fi");
    CHECK(test::read_file(ready) == "ready\n");
    CHECK(r.out == "victim-alive\n");
}

TEST_CASE("a signal sent to confinectl ends a bubblewrap run, the command included", "[bwrap][e2e]") {
    test::require_bwrap();
    Tree t(false);
    Bwrapped c;
    const fs::path pidfile = t.ws / "pid", outer = t.root / "outer";
    // Once the command has said who it is, find it from outside — in its own PID
    // namespace, $$ is not the number this side knows it by — then TERM confinectl.
    auto r = c.run_then_signal(t, pidfile, "TERM", "echo $$ > " + pidfile.string() + "; exec sleep 30", "", "echo \"status=$?\"",
                               command_below("$runner", outer));
    CHECK(r.out == "status=" + std::to_string(128 + SIGTERM) + "\n");
    const std::string pid = test::read_file(outer);
    REQUIRE_FALSE(pid.empty());
    // The process found is the command: its number in its own namespace is what it wrote.
    CHECK(test::read_file(t.root / "outer-nspid") == pid + " " + test::read_file(pidfile));
    // The command is gone with it (bubblewrap's --die-with-parent), not left running.
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = !fs::exists("/proc/" + pid);
        if (!gone) ::usleep(20000);
    }
    CHECK(gone);
}

// The escape suite for bubblewrap (docs/design.md §11, "the supervisor cannot be entered"): run
// through the bwrap plugin and through an operator's asserted runner_command of the real
// bubblewrap, as root and as an unprivileged user, in both modes. Each case checks the
// world, not only the command's status.
namespace {

enum class Via { plugin, runner_command };

struct Escape {
    Via via;
    bool unprivileged;
    std::string mode;
    test::Installed confine;
    fs::path config = confine.scratch("escape.toml");

    Escape(Via v, bool u, std::string m) : via(v), unprivileged(u), mode(std::move(m)) {
        test::write_file(config, via == Via::plugin ? "[platform.linux]\nchain = [\"bwrap\"]\n"
                                                    : "[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\n"
                                                      "runner_failure_signatures = [\"bwrap: \"]\n");
    }
    // confinectl running `script` confined as this case's user, in `run_mode` (this
    // case's mode by default), with `t`'s workspace in workspace-write; a shell line.
    std::string line(const Tree& t, const std::string& script, const std::string& run_mode = "") const {
        const std::string m = run_mode.empty() ? mode : run_mode;
        std::vector<std::string> argv = as_user(unprivileged);
        argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + confine.scratch("cache").string(),
                                 confine.confinectl().string(), "run", "--config", config.string(), "--mode", m});
        if (m == "workspace-write") argv.insert(argv.end(), {"--workspace", t.ws.string()});
        argv.insert(argv.end(), {"--", "/bin/sh", "-c", script});
        std::string text;
        for (const auto& a : argv) text += (text.empty() ? "" : " ") + quoted(a);
        return text;
    }
    test::Result run(const Tree& t, const std::string& script) const { return test::run({"/bin/sh", "-c", line(t, script)}); }
};

// Runs `check` through each way to bubblewrap, as each user, in each mode.
template <class Check>
void for_each_escape_case(Check check) {
    test::require_bwrap();
    test::require_user_switch();
    for (Via via : {Via::plugin, Via::runner_command})
        for (bool unprivileged : {false, true})
            for (const std::string mode : {"read-only", "workspace-write"}) {
                INFO((via == Via::plugin ? "bwrap plugin" : "asserted runner_command") << ", "
                                                                                       << (unprivileged ? "as nobody" : "as root") << ", " << mode);
                Escape e(via, unprivileged, mode);
                check(e);
            }
}

// Names of the entries of `dir` that start with `prefix`.
std::vector<std::string> entries_starting(const fs::path& dir, const std::string& prefix) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().filename().string().starts_with(prefix)) found.push_back(entry.path().filename().string());
    return found;
}

}  // namespace

TEST_CASE("bubblewrap: the command cannot write the host through /proc/<its parent>/root, nor any process's it sees",
          "[bwrap][e2e][escape]") {
    for_each_escape_case([](const Escape& e) {
        Tree t(e.unprivileged);
        const std::string outside = t.root.path().string();
        // Its parent first ($PPID is bubblewrap's process outside the sandbox when there is
        // no PID namespace), then every process its /proc shows.
        auto r = e.run(t, "for p in $PPID $(ls /proc | grep -E '^[0-9]+$'); do echo pwned > /proc/$p/root" + outside +
                              "/escaped-$p 2>/dev/null; done; echo tried");
        CHECK(r.out == "tried\n");
        CHECK(entries_starting(t.root.path(), "escaped") == std::vector<std::string>{});
    });
}

TEST_CASE("bubblewrap: the command cannot reach another sandbox's workspace through /proc/<its pid>/root", "[bwrap][e2e][escape]") {
    for_each_escape_case([](const Escape& e) {
        Tree t(e.unprivileged), other(e.unprivileged);
        const fs::path up = other.ws / "up", found = t.root / "other", target = t.ws / "target";
        const std::string other_ws = other.ws.string();
        // Another confined run that waits, writable workspace and all; its command is found
        // from outside and handed to the first run through a file in the first's workspace.
        const std::string script =
            e.line(other, "echo up > " + up.string() + "; exec sleep 30", "workspace-write") + " & second=$!; " +
            "for i in $(seq 400); do [ -s " + up.string() + " ] && break; sleep 0.05; done; " + command_below("$second", found) +
            "[ -d /proc/$(cat " + found.string() + ")/root" + other_ws + " ] && echo other-workspace-found; cp " + found.string() + " " +
            target.string() + "; " +
            e.line(t, "p=$(cat " + target.string() + "); echo pwned > /proc/$p/root" + other_ws + "/escaped 2>/dev/null; echo tried") +
            "; kill $second; wait $second";
        auto r = test::run({"/bin/sh", "-c", script});
        CHECK(r.out == "other-workspace-found\ntried\n");
        CHECK(test::read_file(up) == "up\n");  // the other sandbox could write there itself
        CHECK_FALSE(fs::exists(other.ws / "escaped"));
    });
}

TEST_CASE("bubblewrap: the command can neither see, signal, trace nor take descriptors from confinectl or bubblewrap",
          "[bwrap][e2e][escape]") {
    for_each_escape_case([](const Escape& e) {
        Tree t(e.unprivileged);
        const fs::path reach = t.root / "reach", pids = t.ws / "pids", out = t.root / "out";
        fs::copy_file(REACH, reach);
        fs::permissions(reach, fs::perms(0755));
        // Outside, confinectl's process ID and that of its child (bubblewrap) go to the
        // command through its workspace; the command tries them.
        const std::string command = "while [ ! -s " + pids.string() + " ]; do sleep 0.05; done; for p in $(cat " + pids.string() +
                                    "); do kill -0 $p 2>/dev/null && echo signalled $p; done; " + reach.string() + " $(cat " +
                                    pids.string() + "); echo init $(cat /proc/1/comm); echo visible $(ls /proc | grep -E '^[0-9]+$')";
        const std::string script = e.line(t, command) + " > " + out.string() + " 2>&1 & runner=$!; " +
                                   "for i in $(seq 400); do b=$(cat /proc/$runner/task/$runner/children 2>/dev/null); [ -n \"$b\" ] && "
                                   "break; sleep 0.05; done; echo $runner ${b%% *} > " +
                                   pids.string() + "; wait $runner; echo status=$? >> " + out.string() + "; cat " + pids.string();
        auto r = test::run({"/bin/sh", "-c", script});
        std::istringstream ids(r.out);
        std::string confinectl, bubblewrap;
        ids >> confinectl >> bubblewrap;
        REQUIRE_FALSE(bubblewrap.empty());
        const std::string said = test::read_file(out);
        INFO(said);
        std::istringstream lines(said);
        std::size_t tried = 0;
        for (std::string line; std::getline(lines, line);) {
            CHECK_FALSE(line.starts_with("signalled "));
            if (line.starts_with(confinectl + " ") || line.starts_with(bubblewrap + " ")) {
                ++tried;
                CHECK_THAT(line, !Catch::Contains("=ok"));
            }
            if (line.starts_with("visible ")) {
                // Its /proc is its PID namespace's: neither of them is in it.
                std::istringstream visible(line.substr(8));
                for (std::string pid; visible >> pid;) CHECK((pid != confinectl && pid != bubblewrap));
            }
        }
        CHECK(tried == 2);
        // Its PID 1 is bubblewrap's reaper, not this machine's init.
        CHECK_THAT(said, Catch::Contains("\ninit bwrap\n"));
        CHECK_THAT(said, Catch::EndsWith("status=0\n"));
    });
}

TEST_CASE("a command in its own PID namespace handles the TERM sent to confinectl, and its status is confinectl's", "[bwrap][e2e][linux-only]") {
    test::require_bwrap();
    for (bool unprivileged : {false, true}) {
        INFO((unprivileged ? "as nobody" : "as root"));
        if (unprivileged) test::require_user_switch();
        Tree t(unprivileged);
        Bwrapped c;
        const fs::path ready = t.ws / "ready", handled = t.ws / "handled";
        const std::string command = "trap 'echo handled > " + handled.string() + "; exit 9' TERM; cat /proc/1/comm > " + ready.string() +
                                    "; while :; do sleep 0.05; done";
        auto r = c.run_then_signal(t, ready, "TERM", command, "", "echo \"status=$?\"", "", unprivileged);
        CHECK(r.out == "status=9\n");
        CHECK(test::read_file(handled) == "handled\n");
        // It ran in a PID namespace of its own, whose PID 1 is bubblewrap's reaper.
        CHECK(test::read_file(ready) == "bwrap\n");
    }
}

#if defined(__linux__)
#include <confine/sdk/bwrap_devices.hpp>
#include <confine/sdk/bwrap_profile.hpp>

#include <sys/mount.h>
#include <sys/sysmacros.h>

TEST_CASE("confine's own device nodes for root's bubblewrap are made, made again when changed, and refused where they cannot be had",
          "[bwrap][metadata][linux-only]") {
    namespace sdk = confine::sdk;
    if (::geteuid() != 0) test::skip_test("only root makes device nodes");
    // Beneath a directory only root writes (not /var/tmp, which anyone may write).
    test::TempDir tmp("/var/lib");
    const fs::path dir = fs::canonical(tmp.path()) / "lib" / "devices";
    auto as_made = [&dir] {
        for (const auto& n : sdk::bwrap_device_nodes) {
            struct stat st {};
            if (::lstat((dir / n.name).c_str(), &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(n.major, n.minor) ||
                st.st_uid != sdk::private_device_owner || (st.st_mode & 07777) != 0666)
                return false;
        }
        return true;
    };
    REQUIRE(sdk::private_devices_ready(dir.string()));  // the directories on the way made too
    CHECK(as_made());
    CHECK((fs::status(dir).permissions() & (fs::perms::group_write | fs::perms::others_write)) == fs::perms::none);

    // Each way a node can be wrong is put right: another mode, another owner, another
    // device, a regular file, a link, a second link to it.
    REQUIRE(::chmod((dir / "null").c_str(), 0600) == 0);
    REQUIRE(::chown((dir / "zero").c_str(), 0, 0) == 0);
    REQUIRE(::unlink((dir / "full").c_str()) == 0);
    REQUIRE(::mknod((dir / "full").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    REQUIRE(::chown((dir / "full").c_str(), sdk::private_device_owner, sdk::private_device_owner) == 0);
    fs::remove(dir / "random");
    test::write_file(dir / "random", "not a device\n", fs::perms(0666));
    fs::remove(dir / "urandom");
    fs::create_symlink("/dev/urandom", dir / "urandom");
    REQUIRE(::link((dir / "tty").c_str(), (tmp / "tty-again").c_str()) == 0);
    CHECK_FALSE(as_made());
    REQUIRE(sdk::private_devices_ready(dir.string()));
    CHECK(as_made());

    // A directory on the way that another user may write, or that is a link: refused.
    fs::permissions(dir.parent_path(), fs::perms::others_write, fs::perm_options::add);
    CHECK_FALSE(sdk::private_devices_ready(dir.string()));
    fs::permissions(dir.parent_path(), fs::perms::others_write, fs::perm_options::remove);
    REQUIRE(sdk::private_devices_ready(dir.string()));
    fs::create_directory_symlink(dir, tmp / "linked");
    CHECK_FALSE(sdk::private_devices_ready((fs::canonical(tmp.path()) / "linked").string()));
    CHECK_FALSE(sdk::private_devices_ready("relative/devices"));

    // For root, write is judged by the profile's own arguments: full only with the bind of
    // confine's /dev/null in it, not for a policy path that merely names the node.
    const sdk::Policy policy{sdk::Mode::read_only, {}, {}};
    const std::string own = std::string(sdk::private_devices_dir) + "/null";
    CHECK(sdk::bwrap_dimensions(policy, std::vector<std::string>{"--dev-bind", own, "/dev/null"}).write == sdk::Level::full);
    const auto named = sdk::bwrap_dimensions(policy, std::vector<std::string>{"--ro-bind", "/dev/null", own});
    CHECK(named.write == sdk::Level::partial);
    CHECK(named.open == sdk::host_devices_left_open);
    CHECK(sdk::bwrap_dimensions(policy, sdk::bwrap_profile(std::vector<std::string>{"/usr/bin/bwrap"}, policy)).write == sdk::Level::full);

    // A file system where a device node cannot be opened (nodev) or made (read-only).
    const fs::path mount_point = fs::canonical(tmp.path()) / "nodev";
    fs::create_directories(mount_point);
    for (const unsigned long flags : {MS_NODEV, MS_RDONLY}) {
        REQUIRE(::mount("tmpfs", mount_point.c_str(), "tmpfs", flags, "mode=0755") == 0);
        CHECK_FALSE(sdk::private_devices_ready((mount_point / "devices").string()));
        REQUIRE(::umount(mount_point.c_str()) == 0);
    }
}
#endif

// Scoped reads: the host's root is not bound whole; only what the scope names, read-only,
// the links at the top of the root made again, and a denied path outside the scope not
// masked at all (it is not there).
TEST_CASE("bwrap's scoped reads bind only the scope and the root's links, never the whole root", "[bwrap]") {
    Bwrapped c("[policy]\nread = \"scoped\"\n");
    test::TempDir ws("/var/tmp");
    const auto argv = c.wrap({"--workspace", ws.path().string(), "--deny-read", "/srv"})["argv"].get<std::vector<std::string>>();
    std::string said;
    for (const auto& a : argv) said += a + " ";
    INFO(said);
    auto bound = [&](const std::string& p) {
        const std::vector<std::string> bind{"--ro-bind", p, p};
        return std::search(argv.begin(), argv.end(), bind.begin(), bind.end()) != argv.end();
    };
    CHECK_FALSE(bound("/"));
    CHECK(bound("/usr"));
    CHECK(bound("/etc"));
    CHECK_FALSE(bound(ws.path().string()));  // bound writable, after
    std::error_code ec;
    if (fs::is_symlink("/bin", ec)) {
        const std::vector<std::string> link{"--symlink", fs::read_symlink("/bin").string(), "/bin"};
        CHECK(std::search(argv.begin(), argv.end(), link.begin(), link.end()) != argv.end());
    }
    CHECK(std::find(argv.begin(), argv.end(), "/srv") == argv.end());
}
