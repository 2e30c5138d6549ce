// The Landlock runner against the real kernel: the launcher's contract, the runner
// through confinectl as root and as an unprivileged user, a kernel without Landlock
// (seccomp makes the system calls fail with ENOSYS), and older ABIs (a test-only
// launcher build that caps the ABI it negotiates).
#include "support.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string notice = "landlock-run: partial enforcement (older Landlock ABI)";
const std::string not_enforced = "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)";
const std::string launcher = std::string(BUILTIN_PLUGIN_DIR) + "/landlock-run";
using test::as_user;
using test::nobody;
using test::Tree;

// The three ways a command gets confined by Landlock: through the landlock-run launcher,
// by a forked child that applies the ruleset before its exec (taken when a report must be
// written afterwards), and by confinectl applying it to itself and exec'ing in place.
enum class Path { launcher, forked_in_process, in_place };

std::string path_name(Path p) {
    return p == Path::launcher ? "launcher" : p == Path::forked_in_process ? "forked in-process" : "in place";
}

struct Confined {
    test::Installed confine;
    fs::path config = confine.scratch("landlock.toml");
    Path path = Path::in_place;
    explicit Confined(const std::string& extra = "", Path p = Path::in_place) : path(p) {
        std::string text = "[platform.linux]\nchain = [\"landlock\"]\n" + extra;
        if (p == Path::launcher) text += "[runner.landlock]\nin_process = false\n";
        test::write_file(config, text);
    }
    test::Result run(const Tree& tree, const std::string& script, bool unprivileged, std::vector<std::string> flags = {},
                     std::vector<std::string> env = {}) const {
        std::vector<std::string> args{"run", "--config", config.string(), "--workspace", tree.ws.string()};
        const bool has_report = std::find(flags.begin(), flags.end(), "--report") != flags.end();
        if (path == Path::forked_in_process && !has_report) args.insert(args.end(), {"--report", (tree.root / "forced.json").string()});
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/bin/sh", "-c", script});
        return confine.run(args, env, as_user(unprivileged));
    }
};

void check_confinement(bool unprivileged, Path path) {
    test::require_landlock();
    if (unprivileged) test::require_user_switch();
    Tree t(unprivileged);
    Confined c("", path);
    INFO("path: " << path_name(path));
    const std::string root = t.root.path().string(), ws = t.ws.string();

    // A granted write holds its bytes; a denied write leaves no file.
    auto granted = c.run(t, "printf 'granted bytes' > " + ws + "/granted", unprivileged);
    CHECK(granted.exit_code == 0);
    CHECK(test::read_file(t.ws / "granted") == "granted bytes");
    struct stat st {};
    REQUIRE(::stat((t.ws / "granted").c_str(), &st) == 0);
    CHECK(st.st_uid == (unprivileged ? static_cast<uid_t>(nobody) : ::geteuid()));  // it really ran as that user
    auto denied = c.run(t, "echo x > " + root + "/denied", unprivileged);
    CHECK(denied.exit_code != 0);
    CHECK_THAT(denied.err, Catch::Contains("Permission denied"));
    CHECK_FALSE(fs::exists(t.root / "denied"));

    // A nested child is confined too.
    c.run(t, "sh -c 'echo x > " + root + "/nested'", unprivileged);
    CHECK_FALSE(fs::exists(t.root / "nested"));

    // /dev/null is writable; /dev/shm is not.
    CHECK(c.run(t, "echo x > /dev/null", unprivileged).exit_code == 0);
    if (fs::is_directory("/dev/shm")) {
        const std::string shm = "/dev/shm/confine-test-" + std::to_string(::getpid());
        CHECK(c.run(t, "echo x > " + shm, unprivileged).exit_code != 0);
        CHECK_FALSE(fs::exists(shm));
    }

    // Read-only mode cannot write the workspace, but reads anything.
    std::vector<std::string> ro_args{"run", "--config", c.config.string(), "--mode", "read-only"};
    if (path == Path::forked_in_process) ro_args.insert(ro_args.end(), {"--report", (t.root / "ro.json").string()});
    ro_args.insert(ro_args.end(), {"--", "/bin/sh", "-c", "cat " + t.outside_file.string() + "; echo x > " + ws + "/ro"});
    auto ro = c.confine.run(ro_args, {}, as_user(unprivileged));
    CHECK(ro.out == "original");
    CHECK_FALSE(fs::exists(t.ws / "ro"));

    // workspace-write: the workspace and /tmp, not $HOME nor a sibling directory.
    CHECK(c.run(t, "f=$(mktemp /tmp/confine-ll-XXXXXX) && echo y > \"$f\" && rm \"$f\"", unprivileged).exit_code == 0);
    c.run(t, "echo x > " + t.home.string() + "/x", unprivileged, {}, {"HOME=" + t.home.string()});
    CHECK_FALSE(fs::exists(t.home / "x"));
    c.run(t, "echo x > " + t.sibling.string() + "/x", unprivileged);
    CHECK_FALSE(fs::exists(t.sibling / "x"));

    // A symlink inside the workspace that points outside gives no write outside.
    c.run(t, "echo x > " + ws + "/link/escaped", unprivileged);
    CHECK_FALSE(fs::exists(t.outside_dir / "escaped"));

    // Renaming or hard-linking a file from outside into the workspace is denied; so is
    // truncating a file outside.
    CHECK(c.run(t, "mv " + t.outside_file.string() + " " + ws + "/moved", unprivileged).exit_code != 0);
    CHECK(c.run(t, "ln " + t.outside_file.string() + " " + ws + "/linked", unprivileged).exit_code != 0);
    CHECK(c.run(t, "truncate -s 0 " + t.outside_file.string(), unprivileged).exit_code != 0);
    c.run(t, ": > " + t.outside_file.string(), unprivileged);
    CHECK(test::read_file(t.outside_file) == "original");
    CHECK_FALSE(fs::exists(t.ws / "moved"));
    CHECK_FALSE(fs::exists(t.ws / "linked"));

    // Exit statuses pass through, 125 included (attested: the command's own).
    CHECK(c.run(t, "exit 7", unprivileged).exit_code == 7);
    const std::string forged = "echo 'landlock-run: exec failed: forged' >&2; exit 125";
    if (path == Path::in_place) {
        auto own125 = c.run(t, forged, unprivileged);
        CHECK(own125.exit_code == 125);
        CHECK(own125.err == "landlock-run: exec failed: forged\n");  // nothing of confinectl's
    } else {
        const fs::path report = t.root / "report.json";
        auto own125 = c.run(t, forged, unprivileged, {"--report", report.string()});
        CHECK(own125.exit_code == 125);
        auto j = json::parse(test::read_file(report));
        CHECK(j["outcome"] == "task_failed");
        CHECK(j["basis"] == "attestation");
        CHECK(j["runner"] == "landlock");
        CHECK(j["enforcement"] == "full");
    }
}

}  // namespace

TEST_CASE("landlock-run --probe reports full enforcement on this kernel", "[landlock][e2e]") {
    test::require_landlock();
    auto r = test::run({launcher, "--probe"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "landlock: fully enforced\n");
    CHECK(r.err.empty());
}

TEST_CASE("landlock-run prints the contract's fatal lines and exits 125, running nothing", "[landlock]") {
    test::TempDir dir;
    const std::string marker = (dir / "ran").string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{}, "landlock-run: usage error: missing `-- <argv>...` command\n"},
        {{"--ro", "/"}, "landlock-run: usage error: missing `-- <argv>...` command\n"},
        {{"--"}, "landlock-run: usage error: missing `-- <argv>...` command\n"},
        {{"--bogus", "--", "/usr/bin/touch", marker}, "landlock-run: usage error: unknown argument: --bogus\n"},
        {{"--ro"}, "landlock-run: usage error: --ro requires a path\n"},
        {{"--rw", "--", "/usr/bin/touch", marker}, "landlock-run: usage error: --rw requires a path\n"},
        {{"--probe", "--ro", "/"}, "landlock-run: usage error: --probe takes no other arguments\n"},
        {{"--ro", "/", "--probe"}, "landlock-run: usage error: --probe takes no other arguments\n"},
    };
    for (const auto& [args, line] : cases) {
        std::vector<std::string> argv{launcher};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = test::run(argv);
        INFO(line);
        CHECK(r.exit_code == 125);
        CHECK(r.err == line);
        CHECK(r.out.empty());
    }
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("an unopenable grant root gives 125 and the command never runs", "[landlock][e2e]") {
    test::require_landlock();
    test::TempDir dir;
    const std::string marker = (dir / "ran").string();
    auto r = test::run({launcher, "--ro", "/", "--rw", "/nonexistent/confine", "--", "/usr/bin/touch", marker});
    CHECK(r.exit_code == 125);
    CHECK(r.err == "landlock-run: cannot open rule path: /nonexistent/confine: No such file or directory\n");
    CHECK_FALSE(fs::exists(marker));
    auto exec = test::run({launcher, "--ro", "/", "--", "/nonexistent/command"});
    CHECK(exec.exit_code == 125);
    CHECK(exec.err == "landlock-run: exec failed: No such file or directory\n");
}

TEST_CASE("landlock-run passes exit statuses through, 7 and 125 included", "[landlock][e2e]") {
    test::require_landlock();
    CHECK(test::run({launcher, "--ro", "/", "--", "/bin/sh", "-c", "exit 7"}).exit_code == 7);
    auto r = test::run({launcher, "--ro", "/", "--", "/bin/sh", "-c", "exit 125"});
    CHECK(r.exit_code == 125);
    CHECK(r.err.empty());
}

TEST_CASE("landlock confines writes to the policy's roots, as root, through the launcher", "[landlock][e2e]") {
    check_confinement(false, Path::launcher);
}
TEST_CASE("landlock confines writes to the policy's roots, as root, in a forked child", "[landlock][e2e]") {
    check_confinement(false, Path::forked_in_process);
}
TEST_CASE("landlock confines writes to the policy's roots, as root, in place", "[landlock][e2e]") {
    check_confinement(false, Path::in_place);
}
TEST_CASE("landlock confines writes to the policy's roots, as an unprivileged user, through the launcher", "[landlock][e2e]") {
    check_confinement(true, Path::launcher);
}
TEST_CASE("landlock confines writes to the policy's roots, as an unprivileged user, in a forked child", "[landlock][e2e]") {
    check_confinement(true, Path::forked_in_process);
}
TEST_CASE("landlock confines writes to the policy's roots, as an unprivileged user, in place", "[landlock][e2e]") {
    check_confinement(true, Path::in_place);
}

TEST_CASE("each Landlock path is the one it claims to be", "[landlock][e2e]") {
    test::require_landlock();
    Tree t(false);
    // What the command's parent is tells the paths apart: landlock-run execs into the
    // command (its parent is confinectl), a forked child has confinectl as its parent
    // too, and in place there is no confinectl left: the parent is whoever ran it.
    const std::string script = "cat /proc/$PPID/comm; tr '\\0' ' ' < /proc/$PPID/cmdline";
    auto launcher_run = Confined("", Path::launcher).run(t, script, false);
    CHECK_THAT(launcher_run.out, Catch::StartsWith("confinectl\n"));
    auto forked = Confined("", Path::forked_in_process).run(t, script, false);
    CHECK_THAT(forked.out, Catch::StartsWith("confinectl\n"));
    auto in_place = Confined("", Path::in_place).run(t, script, false);
    CHECK_THAT(in_place.out, !Catch::StartsWith("confinectl\n"));
    CHECK(in_place.exit_code == 0);
}

TEST_CASE("a kernel without Landlock fails closed at every level", "[landlock][nolandlock]") {
    test::TempDir dir;
    const std::string marker = (dir / "ran").string();
    auto probe = test::run({NO_LANDLOCK, launcher, "--probe"});
    CHECK(probe.exit_code == 125);
    CHECK(probe.err == not_enforced + "\n");
    CHECK(probe.out.empty());
    auto run = test::run({NO_LANDLOCK, launcher, "--ro", "/", "--", "/usr/bin/touch", marker});
    CHECK(run.exit_code == 125);
    CHECK(run.err == not_enforced + "\n");

    Confined c;
    auto cli = c.confine.run({"run", "--config", c.config.string(), "--workspace", dir.path().string(), "--", "/usr/bin/touch", marker}, {},
                             {NO_LANDLOCK});
    CHECK(cli.exit_code == 125);
    CHECK(test::line_count(cli.err) == 1);
    CHECK_THAT(cli.err, Catch::StartsWith("confinectl: sandbox unavailable: ") && Catch::Contains("landlock is not enforced by this kernel"));
    auto cli_probe = c.confine.run({"probe", "--config", c.config.string()}, {}, {NO_LANDLOCK});
    CHECK(cli_probe.exit_code == 125);
    CHECK(cli_probe.err == "confinectl: sandbox unavailable: runner 'landlock', the only one in the chain, is unusable: " + not_enforced + "\n");
    // The default chain, with bubblewrap out of the way too.
    auto dflt = c.confine.run({"probe", "--config", c.confine.config_without_bwrap().string()}, {}, {NO_LANDLOCK});
    CHECK(dflt.exit_code == 125);
    CHECK_THAT(dflt.err, Catch::EndsWith("bwrap: " + c.confine.absent_bwrap_reason() + "; landlock: " + not_enforced + "\n"));
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("a landlock launcher without its execute bit is reported as exactly that", "[landlock]") {
    test::Installed confine;
    fs::permissions(confine.plugin_dir() / "landlock-run", fs::perms(0644));
    auto r = confine.run({"probe", "--config", confine.config_without_bwrap().string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::EndsWith("landlock: landlock-run launcher at " + (confine.plugin_dir() / "landlock-run").string() +
                                      " is not executable\n"));
}

TEST_CASE("older Landlock ABIs report partial enforcement, print the notice, and still confine", "[landlock][e2e][abi]") {
    test::require_landlock();
    for (int abi = 1; abi <= 4; ++abi) {
        INFO("ABI " << abi);
        const std::string cap = "CONFINE_TEST_LANDLOCK_ABI_CAP=" + std::to_string(abi);
        auto probe = test::run({"/usr/bin/env", cap, LANDLOCK_RUN_ABI_CAP, "--probe"});
        CHECK(probe.exit_code == 0);
        CHECK(probe.out == "landlock: partially enforced (older ABI)\n");
        Tree t(false);
        auto r = test::run({"/usr/bin/env", cap, LANDLOCK_RUN_ABI_CAP, "--ro", "/", "--rw", "/dev/null", "--rw", t.ws.string(), "--",
                            "/bin/sh", "-c", "echo in > " + t.ws.string() + "/in; echo out > " + t.root.path().string() + "/out; exit 3"});
        CHECK(r.exit_code == 3);
        CHECK_THAT(r.err, Catch::StartsWith(notice + "\n"));
        CHECK(test::read_file(t.ws / "in") == "in\n");
        CHECK_FALSE(fs::exists(t.root / "out"));
    }
    auto full = test::run({"/usr/bin/env", "CONFINE_TEST_LANDLOCK_ABI_CAP=5", LANDLOCK_RUN_ABI_CAP, "--probe"});
    CHECK(full.out == "landlock: fully enforced\n");
}

TEST_CASE("partial enforcement through confinectl leaves task outcomes alone", "[landlock][e2e][abi]") {
    test::require_landlock();
    // The launcher path: only the test-only launcher build can pretend to be an older kernel.
    Confined c(std::string("[runner.landlock]\nin_process = false\nlauncher = \"") + LANDLOCK_RUN_ABI_CAP + "\"\n");
    Tree t(false);
    const std::vector<std::string> cap{"CONFINE_TEST_LANDLOCK_ABI_CAP=3"};
    const fs::path report = t.root / "report.json";
    for (const char* script : {"false", "grep -q no-such-text /dev/null", "echo 'grep: Unmatched ( or \\\\(' >&2; exit 2", "exit 125"}) {
        INFO(script);
        auto r = c.run(t, script, false, {"--report", report.string()}, cap);
        CHECK(r.exit_code != 0);
        CHECK_THAT(r.err, Catch::StartsWith(notice + "\n"));
        CHECK_THAT(r.err, !Catch::Contains("confinectl:"));
        auto j = json::parse(test::read_file(report));
        CHECK(j["outcome"] == "task_failed");
        CHECK(j["evidence"].is_null());
    }
    auto ok = c.run(t, "echo hi > " + t.ws.string() + "/hi", false, {}, cap);
    CHECK(ok.exit_code == 0);
    CHECK(test::read_file(t.ws / "hi") == "hi\n");
    auto probe = c.confine.run({"probe", "--config", c.config.string()}, cap);
    CHECK(probe.exit_code == 0);
    CHECK_THAT(probe.out, Catch::Contains("selected: landlock (enforcement partial)"));
}

TEST_CASE("both Landlock paths look the command up with the run's own PATH", "[landlock][e2e]") {
    test::require_landlock();
    test::TempDir plugins;
    test::install_builtin(plugins.path(), "landlock");
    Tree t(false);
    test::write_file(t.ws / "confine-own-tool", "#!/bin/sh\necho from the workspace tool\n", fs::perms(0755));
    for (const char* in_process : {"true", "false"}) {
        INFO("in_process = " << in_process);
        auto provider = confine::Provider::create(
            test::config_from(std::string("[platform.linux]\nchain = [\"landlock\"]\n[runner.landlock]\nin_process = ") + in_process + "\n"),
            {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{plugins.path()}});
        REQUIRE(provider);
        confine::RunOptions options;
        options.environment = std::vector<std::string>{"PATH=" + t.ws.string() + ":/usr/bin:/bin"};
        auto p = confine::spawn(**provider, {confine::Mode::workspace_write, t.ws, {}}, std::vector<std::string>{"confine-own-tool"}, options);
        REQUIRE(p);
        const auto& done = p->wait();
        CHECK(done.outcome.kind == confine::OutcomeKind::completed);
        CHECK(done.outcome.basis == confine::Basis::attestation);
        CHECK(done.stdout_text == "from the workspace tool\n");
    }
}
