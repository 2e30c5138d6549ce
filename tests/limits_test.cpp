// Limits on a run (issue 29, point 3; docs/design.md §12): --limit and [policy.limits],
// held by a cgroup of the run's own where the host can make one (root here: the v1
// memory and pids hierarchies) and by resource limits set in the runner's process
// otherwise (nobody), on every Linux way that runs a command with them (bubblewrap, its
// asserted runner_command, Landlock through landlock-run and in a forked child; a run with
// limits is never executed in place). Judged by the world afterwards: what the command
// could start, write or hold, and what is left of it in /proc.
#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#include "run_cgroup.hpp"
#include "support.hpp"
#include "ways.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <thread>
#include <fstream>

using nlohmann::json;
using test::name_of;
using test::Way;
namespace fs = std::filesystem;

namespace {

struct Limited {
    test::Result result;
    json report;
};

// `script` run by /bin/sh in `tree`'s workspace through `way`, with `limits` (--limit's
// values), as root or nobody; with the report confinectl wrote.
Limited run_limited(const test::Sandbox& box, const test::Tree& tree, const std::vector<std::string>& limits, const std::string& script,
                    bool unprivileged) {
    std::vector<std::string> args{"run", "--config", box.config.string(), "--workspace", tree.ws.string()};
    for (const auto& l : limits) args.insert(args.end(), {"--limit", l});
    const fs::path report = tree.root / "report.json";
    std::error_code ec;
    fs::remove(report, ec);
    args.insert(args.end(), {"--report", report.string(), "--", "/bin/sh", "-c", script});
    Limited out{box.confine.run(args, {}, test::as_user(unprivileged)), json()};
    if (fs::exists(report)) out.report = json::parse(test::read_file(report));
    INFO("stdout: " << out.result.out << "\nstderr: " << out.result.err << "\nreport: " << out.report.dump());
    REQUIRE(out.report.is_object());
    return out;
}

// confinectl's lines on `err` that say a limit ended the run, or may have.
std::vector<std::string> limit_lines(const std::string& err) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < err.size()) {
        const std::size_t end = std::min(err.find('\n', at), err.size());
        const std::string line = err.substr(at, end - at);
        if (line.starts_with("confinectl: ") && (line.find(" reached: ") != std::string::npos || line.find(", which may ") != std::string::npos))
            out.push_back(line);
        at = end + 1;
    }
    return out;
}

// confinectl itself ended with `status` (never by a signal: a limit never ends it), said
// in one line beginning with `start` and holding `rest`, the report's limit_note, what
// the limit ended.
void says_limit(const Limited& r, int status, const std::string& start, const std::string& rest = {}) {
    CHECK(r.result.signal == 0);
    CHECK(r.result.exit_code == status);
    const auto lines = limit_lines(r.result.err);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::StartsWith(start) && Catch::Contains(rest));
    CHECK(r.report["limit_note"] == lines[0].substr(12));
}

// The processes whose command line holds `marker`, zombies aside.
// The run cgroups left behind by a confinectl that has ended: a run cgroup is named
// confine-run-<PID namespace>-<its host's process ID>-<count>, and one whose host still
// runs belongs to a run going on (another test's, in parallel). The stale cgroups the
// sweeping test below plants on purpose, named ...-planted, are that test's to judge.
std::size_t run_cgroups_left() {
    auto host_gone = [](const std::string& name) {
        const std::size_t ns_end = name.find('-', std::string("confine-run-").size());
        if (ns_end == std::string::npos) return true;
        const long host = std::strtol(name.c_str() + ns_end + 1, nullptr, 10);
        return host <= 0 || (::kill(static_cast<pid_t>(host), 0) != 0 && errno == ESRCH);
    };
    std::size_t n = 0;
    for (const fs::path hierarchy : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/unified"}) {
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(hierarchy, fs::directory_options::skip_permission_denied, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        {
            const std::string name = it->path().filename().string();
            if (it->is_directory(ec) && name.starts_with("confine-run-") && !name.ends_with("-planted") && host_gone(name)) ++n;
        }
    }
    return n;
}

// Root makes the run a cgroup here; nobody cannot, and gets resource limits.
const char* level_for(bool unprivileged) { return unprivileged ? "partial" : "full"; }

void flood(Way way, bool unprivileged) {
    test::Sandbox box(way);
    if (unprivileged) test::require_user_switch();
    test::Tree tree(unprivileged);
    // 500 sleepers asked for; the shell stops at the first fork refused.
    const std::string marker = "4321.5";
    const auto r = run_limited(box, tree, {"processes=64"},
                               "cd " + tree.ws.string() + " && i=0; while [ $i -lt 500 ]; do sleep " + marker +
                                   " & echo $! >> started; i=$((i+1)); done",
                               unprivileged);
    INFO(name_of(way) << (unprivileged ? " as nobody" : " as root") << "; report: " << r.report.dump());
    const std::string started = test::read_file(tree.ws / "started");
    const std::size_t n = test::line_count(started);
    CHECK(n >= 1);
    CHECK(n <= 64);
    CHECK(r.report["dimensions"]["limits"] == (unprivileged ? "partial" : "full"));
    if (!unprivileged) {
        CHECK(r.report["limit"] == "processes");
        says_limit(r, r.result.exit_code, "confinectl: processes limit 64 reached: the run's cgroup refused it a process; sh exited ");
        CHECK(r.result.exit_code != 0);
    } else if (r.result.exit_code != 0) {
        // RLIMIT_NPROC: a fork refused is the shell's own error; the limit may have ended it.
        CHECK(r.report["limit"].is_null());
        CHECK(r.report["limit_possible"] == json::array({"processes"}));
        says_limit(r, r.result.exit_code, "confinectl: sh exited ",
                   " under processes limit 64 (RLIMIT_NPROC, the user's processes), which may have ended it: a fork refused at a limit");
    }
    CHECK(test::processes_with(marker).empty());
    CHECK(run_cgroups_left() == 0);
}

void memory(Way way, bool unprivileged) {
    test::Sandbox box(way);
    if (unprivileged) test::require_user_switch();
    test::Tree tree(unprivileged);
    // The command is python3 itself (exec): the signal that kills it is the run's end.
    const auto r = run_limited(box, tree, {"memory=128M"},
                               "exec python3 -c 'b = bytearray(1 << 30); b[-1] = 1; open(\"" + (tree.ws / "allocated").string() + "\", \"w\")'",
                               unprivileged);
    INFO(name_of(way) << (unprivileged ? " as nobody" : " as root") << "; report: " << r.report.dump());
    CHECK_FALSE(fs::exists(tree.ws / "allocated"));
#if defined(__SANITIZE_ADDRESS__)
    // A landlock-run built with AddressSanitizer cannot reserve its shadow memory under
    // RLIMIT_AS: it aborts before the command starts. Nothing was had; that is all here.
    if (unprivileged && way == Way::landlock_launcher) return;
#endif
    CHECK(r.report["outcome"] == "task_failed");
    CHECK(r.report["dimensions"]["limits"] == level_for(unprivileged));
    if (unprivileged) {
        // The allocation failed, the command said so itself (MemoryError, 1): the limit may
        // have ended it, which confinectl cannot tell.
        CHECK(r.report["limit"].is_null());
        CHECK(r.report["limit_possible"] == json::array({"memory"}));
        CHECK(r.report["dimensions"]["open"].get<std::string>().find("limits: memory is each process's address space") != std::string::npos);
        says_limit(r, 1, "confinectl: sh exited 1 under memory limit 128M (RLIMIT_AS, each process's address space), which may have ended it: ",
                   "an allocation refused at a limit is an error the command sees, not a kill, so confinectl cannot tell");
    } else {
        // Killed by the kernel: under Landlock the command's own SIGKILL, which confinectl
        // gives as 137 (it once re-raised it on itself), as bubblewrap gives it.
        CHECK(r.report["limit"] == "memory");
        CHECK(r.report["limit_possible"] == json::array());
        says_limit(r, 128 + SIGKILL, "confinectl: memory limit 128M reached: the kernel killed a process of the run, out of memory in the run's cgroup; sh ",
                   "SIGKILL");
    }
    CHECK(run_cgroups_left() == 0);
}

void cpu(Way way, bool unprivileged) {
    test::Sandbox box(way);
    if (unprivileged) test::require_user_switch();
    test::Tree tree(unprivileged);
    // Two busy loops: the run's CPU time is theirs together.
    const auto r = run_limited(box, tree, {"cpu=1"}, "(while :; do :; done) & while :; do :; done", unprivileged);
    INFO(name_of(way) << (unprivileged ? " as nobody" : " as root") << "; report: " << r.report.dump());
    CHECK(r.report["limit"] == "cpu");
    CHECK(r.report["dimensions"]["limits"] == level_for(unprivileged));
    if (unprivileged) {
        // RLIMIT_CPU, each process's: SIGXCPU, which confinectl gives as 128 + it.
        says_limit(r, 128 + SIGXCPU, "confinectl: cpu limit 1s reached: a process passed its CPU time (RLIMIT_CPU) and got SIGXCPU; sh ", "SIGXCPU");
        CHECK(r.report["dimensions"]["open"].get<std::string>().find("cpu is each process's CPU time") != std::string::npos);
        // One that ignores SIGXCPU gets RLIMIT_CPU's hard limit a second later: SIGKILL,
        // the same limit, 137.
        const auto ignored = run_limited(box, tree, {"cpu=1"}, "exec python3 -c 'import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass'",
                                         unprivileged);
        CHECK(ignored.report["limit"] == "cpu");
        says_limit(ignored, 128 + SIGKILL, "confinectl: cpu limit 1s reached: a process passed its CPU time (RLIMIT_CPU) by a second and got SIGKILL; sh ",
                   "SIGKILL");
    } else {
        // The run's cgroup, whose CPU time the host watches: every process of it killed
        // once the two together passed the limit.
        says_limit(r, 128 + SIGKILL, "confinectl: cpu limit 1s reached: the run's CPU time passed it, and every process of the run was killed; sh ",
                   "SIGKILL");
    }
    CHECK(run_cgroups_left() == 0);
}

void file_size(Way way, bool unprivileged) {
    test::Sandbox box(way);
    if (unprivileged) test::require_user_switch();
    test::Tree tree(unprivileged);
    const fs::path f = tree.ws / "f";
    const auto r = run_limited(box, tree, {"file-size=1M"}, "exec head -c 2M /dev/zero > " + f.string(), unprivileged);
    INFO(name_of(way) << (unprivileged ? " as nobody" : " as root") << "; report: " << r.report.dump());
    REQUIRE(fs::exists(f));
    CHECK(fs::file_size(f) <= (1u << 20));
    CHECK(r.report["limit"] == "file-size");
    says_limit(r, 128 + SIGXFSZ, "confinectl: file-size limit 1M reached: a process wrote a file past it (RLIMIT_FSIZE) and got SIGXFSZ; sh ", "SIGXFSZ");
    // A shell that gives its child's SIGXFSZ as 128 + it: the same limit.
    const auto shell = run_limited(box, tree, {"file-size=1M"}, "head -c 2M /dev/zero > " + f.string() + "; exit $?", unprivileged);
    CHECK(shell.report["limit"] == "file-size");
    says_limit(shell, 128 + SIGXFSZ, "confinectl: file-size limit 1M reached: ", "; sh exited 153 (128 + SIGXFSZ)");
}

void open_files(Way way, bool unprivileged) {
    test::Sandbox box(way);
    if (unprivileged) test::require_user_switch();
    test::Tree tree(unprivileged);
    const auto r = run_limited(box, tree, {"open-files=16"},
                               "python3 -c '\nimport os\nfds = []\ntry:\n    while len(fds) < 1000: fds.append(os.open(\"/dev/null\", os.O_RDONLY))\n"
                               "except OSError: pass\nprint(max(fds) + 1 if fds else 0)'",
                               unprivileged);
    INFO(name_of(way) << (unprivileged ? " as nobody" : " as root") << "; report: " << r.report.dump());
    REQUIRE(r.result.exit_code == 0);
    const int highest = std::stoi(r.result.out);
    CHECK(highest <= 16);
    CHECK(highest > 3);
    CHECK(r.report["limit"].is_null());
    // It ended well: no limit ended it, nor may have, and nothing is said.
    CHECK(r.report["limit_possible"] == json::array());
    CHECK(r.report["limit_note"].is_null());
    CHECK(limit_lines(r.result.err).empty());
    // One that fails where an open is refused (EMFILE): the limit may have ended it, untold.
    const auto failed = run_limited(box, tree, {"open-files=16"},
                                    "exec python3 -c 'import os\nfor _ in range(100): os.open(\"/dev/null\", os.O_RDONLY)'", unprivileged);
    CHECK(failed.report["limit"].is_null());
    CHECK(failed.report["limit_possible"] == json::array({"open-files"}));
    says_limit(failed, 1, "confinectl: sh exited 1 under open-files limit 16 (RLIMIT_NOFILE, each process's descriptors), which may have ended it: ",
               "an open refused at a limit");
}

}  // namespace

#define LIMIT_CASES(WAY, TAG)                                                                                                             \
    TEST_CASE("a process flood under processes=64 starts at most 64 and leaves nothing, through " TAG, "[limits][e2e][linux-only]") {     \
        SECTION("as root") { flood(WAY, false); }                                                                                       \
        SECTION("as nobody") { flood(WAY, true); }                                                                                      \
    }                                                                                                                                   \
    TEST_CASE("1 GiB under memory=128M is not had, and the report says which limit, through " TAG, "[limits][e2e][linux-only]") {        \
        SECTION("as root") { memory(WAY, false); }                                                                                      \
        SECTION("as nobody") { memory(WAY, true); }                                                                                     \
    }                                                                                                                                   \
    TEST_CASE("busy loops under cpu=1 are ended, limit cpu, through " TAG, "[limits][e2e][linux-only]") {                               \
        SECTION("as root") { cpu(WAY, false); }                                                                                         \
        SECTION("as nobody") { cpu(WAY, true); }                                                                                        \
    }                                                                                                                                   \
    TEST_CASE("a 2M write under file-size=1M stops at 1M by SIGXFSZ, limit file-size, through " TAG, "[limits][e2e][linux-only]") {      \
        SECTION("as root") { file_size(WAY, false); }                                                                                   \
        SECTION("as nobody") { file_size(WAY, true); }                                                                                  \
    }                                                                                                                                   \
    TEST_CASE("open-files=16 holds the command's descriptors below 16, through " TAG, "[limits][e2e][linux-only]") {                    \
        SECTION("as root") { open_files(WAY, false); }                                                                                  \
        SECTION("as nobody") { open_files(WAY, true); }                                                                                 \
    }

LIMIT_CASES(Way::bwrap, "the bwrap plugin")
LIMIT_CASES(Way::runner_command, "an asserted runner_command")
LIMIT_CASES(Way::landlock_launcher, "landlock-run")
LIMIT_CASES(Way::landlock_forked, "landlock in a forked child")

TEST_CASE("a bad --limit or [policy.limits] is one line, exit 125, and the command never runs", "[limits][e2e][linux-only]") {
    test::Sandbox box(Way::landlock_forked);
    test::Tree tree(false);
    const fs::path ran = tree.ws / "ran";
    const std::vector<std::string> command{"--", "/bin/sh", "-c", "touch " + ran.string()};
    auto with = [&](std::vector<std::string> args) {
        std::vector<std::string> all{"run", "--workspace", tree.ws.string()};
        all.insert(all.end(), args.begin(), args.end());
        all.insert(all.end(), command.begin(), command.end());
        return box.confine.run(all);
    };
    struct Bad {
        std::vector<std::string> args;
        std::string line;
    };
    const std::vector<Bad> flags{
        {{"--limit", "bogus=1"}, "confinectl: run: --limit bogus=1: unknown limit 'bogus' (known: memory, processes, cpu, file-size, open-files)\n"},
        {{"--limit", "memory=0"}, "confinectl: run: --limit memory=0: memory must be a positive whole number of bytes (K, M, G: KiB, MiB, GiB), not '0'\n"},
        {{"--limit", "memory=-1"}, "confinectl: run: --limit memory=-1: memory must be a positive whole number of bytes (K, M, G: KiB, MiB, GiB), not '-1'\n"},
        {{"--limit", "cpu=1M"}, "confinectl: run: --limit cpu=1M: cpu must be a positive whole number of seconds, not '1M'\n"},
        {{"--limit", "processes"}, "confinectl: run: --limit processes: expected NAME=VALUE (memory, processes, cpu, file-size, open-files)\n"},
        {{"--limit", "open-files=8", "--limit", "open-files=9"}, "confinectl: run: --limit open-files=9: open-files is limited twice\n"},
    };
    for (const auto& bad : flags) {
        const auto r = with(bad.args);
        INFO(bad.args.back());
        CHECK(r.exit_code == 125);
        CHECK(r.err == bad.line);
        CHECK_FALSE(fs::exists(ran));
    }
    struct BadFile {
        std::string text, line;
    };
    const fs::path config = box.confine.scratch("limits.toml");
    const std::vector<BadFile> files{
        {"[policy.limits]\nmemory = \"12Q\"\n", ":4:10: policy.limits.memory must be a positive whole number of bytes (K, M, G: KiB, MiB, GiB), not '12Q'"},
        {"[policy.limits]\nprocesses = -4\n", ":4:13: policy.limits.processes must be a positive whole number, not '-4'"},
        {"[policy.limits]\nfiles = 4\n", ":4:1: unknown limit 'files' (known: memory, processes, cpu, file-size, open-files) in [policy.limits]"},
        {"[policy.limits]\ncpu = true\n", ":4:7: policy.limits.cpu must be a number or a string, not boolean"},
        {"[policy]\nlimits = 3\n", ":4:10: policy.limits must be a table, not integer"},
    };
    for (const auto& bad : files) {
        test::write_file(config, test::way_config(Way::landlock_forked) + bad.text);
        const auto r = with({"--config", config.string()});
        INFO(bad.text);
        CHECK(r.exit_code == 125);
        CHECK(test::line_count(r.err) == 1);
        CHECK(r.err.find(config.string() + bad.line) != std::string::npos);
        CHECK_FALSE(fs::exists(ran));
    }
}

TEST_CASE("[policy.limits] holds a run, the call's --limit overrides it by name, and a minimum above the level fails closed",
          "[limits][e2e][linux-only]") {
    test::Sandbox box(Way::landlock_forked);
    test::require_user_switch();
    test::Tree tree(true);
    const fs::path f = tree.ws / "f";
    test::write_file(box.config, test::way_config(Way::landlock_forked) + "[policy.limits]\nfile-size = \"64K\"\n");
    auto r = run_limited(box, tree, {}, "exec head -c 1M /dev/zero > " + f.string(), true);
    CHECK(fs::file_size(f) == 64u << 10);
    CHECK(r.report["limit"] == "file-size");
    r = run_limited(box, tree, {"file-size=128K"}, "exec head -c 1M /dev/zero > " + f.string(), true);
    CHECK(fs::file_size(f) == 128u << 10);
    // nobody gets resource limits (partial): below a minimum of full, nothing runs.
    test::write_file(box.config, test::way_config(Way::landlock_forked) + "[policy.limits]\nmemory = \"1G\"\n[policy.enforcement]\nlimits = \"full\"\n");
    fs::remove(f);
    r = run_limited(box, tree, {}, "touch " + f.string(), true);
    CHECK(r.result.exit_code == 125);
    CHECK(r.result.err.find("below the minimum full ([policy.enforcement] limits)") != std::string::npos);
    CHECK(r.report["outcome"] == "sandbox_unavailable");
    CHECK_FALSE(fs::exists(f));
}

TEST_CASE("a library host's run() and spawn() hold RunOptions::limits over the configuration's, and say which ended the command",
          "[limits][e2e][linux-only]") {
    test::require_landlock();
    test::Installed confine;
    test::TempDir ws("/var/tmp");
    auto provider = confine::Provider::create(
        test::config_from("[platform.linux]\nchain = [\"landlock\"]\n[policy.limits]\nfile-size = \"1M\"\nprocesses = 32\n"),
        {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{confine.plugin_dir()}});
    REQUIRE(provider);
    const confine::Policy policy{confine::Mode::workspace_write, ws.path(), {}};
    const fs::path f = ws / "f";
    const std::vector<std::string> write{"/bin/sh", "-c", "exec head -c 2M /dev/zero > " + f.string()};
    confine::RunOptions options;
    options.limits.file_size = 64u << 10;  // over the configuration's 1M
    auto fg = confine::run(**provider, confine::PolicyRequest(policy), write, options);
    REQUIRE(fg);
    CHECK(fs::file_size(f) == 64u << 10);
    CHECK(fg->limit == "file-size");
    CHECK(fg->signal == SIGXFSZ);
    CHECK(fg->limit_note == "file-size limit 64K reached: a process wrote a file past it (RLIMIT_FSIZE) and got SIGXFSZ; sh ended by SIGXFSZ");
    CHECK(fg->limits_asked);
    REQUIRE(fg->dimensions);
    // Partial either way: as root, processes by the run's cgroup but file-size a resource
    // limit root may raise; as another user, processes by RLIMIT_NPROC, the user's count.
    CHECK(fg->dimensions->limits == confine::Level::partial);
    CHECK(fg->enforcement == confine::Enforcement::partial);
    fs::remove(f);
    options.limits = {};
    auto bg = confine::spawn(**provider, confine::PolicyRequest(policy), write, options);
    REQUIRE(bg);
    const auto& done = bg->wait();
    CHECK(fs::file_size(f) == 1u << 20);  // the configuration's
    CHECK(done.outcome.limit == "file-size");
    CHECK(done.outcome.limit_note == "file-size limit 1M reached: a process wrote a file past it (RLIMIT_FSIZE) and got SIGXFSZ; sh ended by SIGXFSZ");
    // Nothing ended by a limit: none named.
    auto fine = confine::run(**provider, confine::PolicyRequest(policy), std::vector<std::string>{"/bin/true"}, options);
    REQUIRE(fine);
    CHECK(fine->kind == confine::OutcomeKind::completed);
    CHECK_FALSE(fine->limit);
    CHECK(fine->limit_possible.empty());
    CHECK(fine->limit_note.empty());
    CHECK(run_cgroups_left() == 0);
}

TEST_CASE("a run cgroup whose host was killed before it could remove it is removed by the next run, its processes killed",
          "[limits][e2e][linux-only]") {
    test::require_landlock();
    if (::geteuid() != 0) test::skip_test("only root makes cgroups here");
    const auto places = confine::detail::find_cgroup_places("/sys/fs/cgroup", test::read_file("/proc/self/cgroup"));
    if (places.v1_memory.empty() || places.v1_pids.empty()) test::skip_test("no v1 memory and pids hierarchies here");
    struct stat ns {};
    REQUIRE(::stat("/proc/self/ns/pid", &ns) == 0);
    // A host that is gone: a child of this process, reaped.
    const pid_t gone = ::fork();
    if (gone == 0) ::_exit(0);
    ::waitpid(gone, nullptr, 0);
    const std::string name = "confine-run-" + std::to_string(ns.st_ino) + "-" + std::to_string(gone) + "-planted";
    // And its run: a process left in the stale pids cgroup.
    fs::create_directory(places.v1_memory / name);
    fs::create_directory(places.v1_pids / name);
    const pid_t left = ::fork();
    if (left == 0) {
        ::execl("/bin/sleep", "sleep", "3217.5", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    test::write_file(places.v1_pids / name / "cgroup.procs", std::to_string(left));
    test::Sandbox box(Way::landlock_forked);
    test::Tree tree(false);
    const auto r = run_limited(box, tree, {"processes=16"}, "true", false);
    CHECK(r.result.exit_code == 0);
    int status = 0;
    CHECK(::waitpid(left, &status, 0) == left);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    CHECK_FALSE(fs::exists(places.v1_memory / name));
    CHECK_FALSE(fs::exists(places.v1_pids / name));
}

TEST_CASE("the line a limit or the time limit ends a run with: which, its value, what was done, how the command ended, or which may have",
          "[limits][linux-only]") {
    using confine::detail::limit_note;
    using namespace std::chrono_literals;
    confine::Outcome out;
    out.kind = confine::OutcomeKind::task_failed;
    confine::Observation o;
    confine::Limits limits;
    limits.memory = 50u << 20;
    limits.file_size = 1000;
    limits.cpu = 2;
    limits.processes = 64;
    limits.open_files = 16;
    // Nothing ended it: nothing said.
    out.exit_code = 1;
    CHECK(limit_note(out, o, limits, std::nullopt, 5s, "make").empty());
    // The time limit: SIGTERM alone, SIGTERM then SIGKILL, SIGKILL at once.
    out.timed_out = true;
    out.exit_code.reset();
    out.signal = SIGTERM;
    CHECK(limit_note(out, o, limits, 1500ms, 5s, "sleep") == "time limit 1500ms reached: the run got SIGTERM; sleep ended by SIGTERM");
    o.timeout_killed = true;
    out.signal = SIGKILL;
    CHECK(limit_note(out, o, limits, 2min, 5s, "sleep") == "time limit 2m reached: the run got SIGTERM, then SIGKILL 5s later; sleep ended by SIGKILL");
    CHECK(limit_note(out, o, limits, 1s, 0ms, "sleep") == "time limit 1s reached: the run got SIGKILL; sleep ended by SIGKILL");
    out.timed_out = false;
    // A limit: its value as --limit takes it; a runner's 128 + the signal named.
    out.limit = "memory";
    o.limit_how = "the kernel killed a process of the run, out of memory in the run's cgroup";
    out.signal.reset();
    out.exit_code = 137;
    CHECK(limit_note(out, o, limits, std::nullopt, 5s, "python3") ==
          "memory limit 50M reached: the kernel killed a process of the run, out of memory in the run's cgroup; python3 exited 137 (128 + SIGKILL)");
    out.limit = "file-size";
    o.limit_how = "x";
    CHECK(limit_note(out, o, limits, std::nullopt, 5s, "head") == "file-size limit 1000 bytes reached: x; head exited 137 (128 + SIGKILL)");
    out.limit = "cpu";
    out.exit_code = 3;
    CHECK(limit_note(out, o, limits, std::nullopt, 5s, "sh") == "cpu limit 2s reached: x; sh exited 3");
    // Limits that may have ended it, untold.
    out.limit.reset();
    out.limit_possible = {"memory", "processes", "open-files"};
    CHECK(limit_note(out, o, limits, std::nullopt, 5s, "cc") ==
          "cc exited 3 under memory limit 50M (RLIMIT_AS, each process's address space), processes limit 64 (RLIMIT_NPROC, the user's processes) "
          "and open-files limit 16 (RLIMIT_NOFILE, each process's descriptors), which may each have ended it: an allocation, a fork or an open "
          "refused at a limit is an error the command sees, not a kill, so confinectl cannot tell");
    // A run that never started: nothing of a limit.
    out.kind = confine::OutcomeKind::sandbox_unavailable;
    CHECK(limit_note(out, o, limits, std::nullopt, 5s, "cc").empty());
}

TEST_CASE("the run's cgroup: v2 where this process's cgroup has the controllers, else v1, its events read, found in a tree standing for /sys/fs/cgroup",
          "[limits][linux-only]") {
    using confine::detail::event_count;
    using confine::detail::find_cgroup_places;
    CHECK(event_count("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n", "oom_kill") == 2);
    CHECK(event_count("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "oom_kill") == 1);
    CHECK(event_count("max 0\n", "max") == 0);
    CHECK(event_count("", "max") == 0);

    test::TempDir root("/var/tmp");
    const fs::path v2 = root / "run.slice" / "me";
    fs::create_directories(v2);
    test::write_file(root / "cgroup.controllers", "cpu io memory pids\n");
    test::write_file(v2 / "cgroup.controllers", "memory pids\n");
    test::write_file(v2 / "cgroup.subtree_control", "\n");
    auto places = find_cgroup_places(root.path(), "0::/run.slice/me\n");
    CHECK(places.v2 == v2);
    CHECK(places.v1_memory.empty());

    confine::Limits limits;
    limits.memory = 128u << 20;
    limits.processes = 64;
    // A cgroup file system makes a cgroup's files with it; a directory here has none: the
    // first file written is the run cgroup's failure, and nothing of it is left.
    confine::detail::ChildLimits child;
    std::string why;
    CHECK_FALSE(confine::detail::make_run_cgroup(places, limits, child, why));
    CHECK(test::read_file(v2 / "cgroup.subtree_control") == "+memory +pids ");
    CHECK_THAT(why, Catch::StartsWith("cannot write " + (v2 / "confine-run-").string()) && Catch::Contains("/memory.max: No such file or directory; no cgroup v2 with"));
    CHECK(child.cgroup_count == 0);
    std::size_t left = 0;
    for (const auto& e : fs::directory_iterator(v2)) left += e.is_directory();
    CHECK(left == 0);

    // A cgroup made with the kernel's files: the limits written in it, its events read.
    const fs::path made = v2 / "confine-run-made";
    const auto kernel_made = [&](const fs::path& dir, std::initializer_list<const char*> files) {
        fs::create_directories(dir);
        for (const char* f : files) test::write_file(dir / f, "");
    };
    kernel_made(made, {"cgroup.procs", "cgroup.kill", "memory.max", "memory.swap.max", "pids.max", "cpu.stat"});
    why.clear();
    auto group = confine::detail::hold_in_v2_cgroup(made, limits, child, why);
    REQUIRE(group);
    CHECK(why.empty());
    CHECK(child.cgroup_count == 1);
    CHECK(test::read_file(made / "memory.max") == std::to_string(128u << 20));
    CHECK(test::read_file(made / "memory.swap.max") == "0");
    CHECK(test::read_file(made / "pids.max") == "64");
    CHECK_FALSE(group->out_of_memory());
    test::write_file(made / "memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
    test::write_file(made / "pids.events", "max 7\n");
    CHECK(group->out_of_memory());
    CHECK(group->processes_refused());
    CHECK_FALSE(group->watches_cpu());  // cpu was not asked
    // A cgroup's files go with it; here they are files, removed first.
    for (const auto& e : fs::directory_iterator(made)) fs::remove(e.path());
    group.reset();
    CHECK_FALSE(fs::exists(made));

    // One without pids.max (the controller not given): refused, and removed whatever comes.
    kernel_made(made, {"cgroup.procs", "memory.max"});
    confine::detail::ChildLimits refused_child;
    CHECK_FALSE(confine::detail::hold_in_v2_cgroup(made, limits, refused_child, why));
    CHECK(why == "cannot write " + (made / "pids.max").string() + ": No such file or directory");
    CHECK(refused_child.cgroup_count == 0);
    CHECK(fs::exists(made));  // a directory with files is no cgroup rmdir can take: said, left to the test
    for (const auto& e : fs::directory_iterator(made)) fs::remove(e.path());
    fs::remove(made);

    // CPU time, watched in cpu.stat: past the limit, the cgroup is killed whole.
    confine::Limits cpu;
    cpu.cpu = 2;
    confine::detail::ChildLimits cpu_child;
    kernel_made(made, {"cgroup.procs", "cgroup.kill"});
    test::write_file(made / "cpu.stat", "usage_usec 1999999\nuser_usec 1999999\nsystem_usec 0\n");
    auto watched = confine::detail::hold_in_v2_cgroup(made, cpu, cpu_child, why);
    REQUIRE(watched);
    CHECK(watched->watches_cpu());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK_FALSE(watched->cpu_exceeded());
    test::write_file(made / "cpu.stat", "usage_usec 2000001\nuser_usec 2000001\nsystem_usec 0\n");
    for (int i = 0; i < 400 && !watched->cpu_exceeded(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    CHECK(watched->cpu_exceeded());
    CHECK(test::read_file(made / "cgroup.kill") == "1");
    for (const auto& e : fs::directory_iterator(made)) fs::remove(e.path());
    watched.reset();
    CHECK_FALSE(fs::exists(made));

    // No controllers for this cgroup: none of v2; the v1 hierarchies where mounted so.
    test::write_file(v2 / "cgroup.controllers", "\n");
    fs::create_directories(root / "memory" / "a");
    test::write_file(root / "memory" / "a" / "memory.limit_in_bytes", "9223372036854771712\n");
    fs::create_directories(root / "pids");
    test::write_file(root / "pids" / "cgroup.procs", "");
    fs::create_directories(root / "cpu,cpuacct");
    test::write_file(root / "cpu,cpuacct" / "cpuacct.usage", "0\n");
    places = find_cgroup_places(root.path(), "9:pids:/\n4:memory:/a\n2:cpu,cpuacct:/\n0::/run.slice/me\n");
    CHECK(places.v1_cpuacct == root / "cpu,cpuacct");
    CHECK(places.v2.empty());
    CHECK(places.v1_memory == root / "memory" / "a");
    CHECK(places.v1_pids == root / "pids");
    // Unified beside v1 (this machine's layout).
    fs::create_directories(root / "unified" / "x");
    fs::remove(root / "cgroup.controllers");
    test::write_file(root / "unified" / "cgroup.controllers", "");
    test::write_file(root / "unified" / "x" / "cgroup.controllers", "memory pids");
    CHECK(find_cgroup_places(root.path(), "0::/x\n").v2 == root / "unified" / "x");
}

#endif
