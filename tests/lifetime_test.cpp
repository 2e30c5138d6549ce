// A run owns its processes (issue 29): nothing the command started outlives the run —
// daemons by setsid, by a double fork or nohup, a process that ignores TERM, processes
// forked after the command's exit was seen — nor a run whose confinectl is killed; and
// `run --timeout` ends the command's whole tree at its deadline (TERM, then KILL after
// --kill-after), exit 124, the report saying "timed_out". Each case runs on every Linux
// way (tests/ways.hpp), as root and as nobody, and is judged by the world afterwards:
// every process of the run runs a copy of sleep named for the test, or a shell whose
// script names it, so that what is left of it is found in /proc by that name (zombies
// aside) — and killed by the test, so that a failing case leaves nothing behind either.
#include "support.hpp"
#include "ways.hpp"

#include "linux_features.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;
using namespace std::chrono_literals;

namespace {

// The in-place way's configuration accepts lifetime = "best-effort" (what makes confinectl
// exec in place); these cases hold the default minimum instead, under which confinectl,
// run as the in-place way runs it, supervises the run.
void at_default_minimum(Sandbox& box) {
    if (box.way == Way::landlock_in_place) test::write_file(box.config, test::way_config(Way::landlock_forked));
}

// How long a test waits for what must happen soon (a process to end, a file to appear):
// a bound on waiting, never a timing that is asserted.
constexpr auto settle = 3s;

template <class Done>
bool eventually(Done done, std::chrono::milliseconds bound) {
    const auto until = std::chrono::steady_clock::now() + bound;
    for (;;) {
        if (done()) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(10ms);
    }
}

// The processes (not zombies) whose argv holds `token`, as "PID: argv".
std::vector<std::pair<pid_t, std::string>> carrying(const std::string& token) {
    std::vector<std::pair<pid_t, std::string>> found;
    for (const auto& p : test::processes_with(token)) found.emplace_back(p.pid, p.argv);
    return found;
}

std::string listed(const std::vector<std::pair<pid_t, std::string>>& processes) {
    std::string text;
    for (const auto& [pid, argv] : processes) text += "  " + std::to_string(pid) + ": " + argv + "\n";
    return text;
}

// Kills every process that carries `token` until none is left (bounded).
void end_all(const std::string& token) {
    for (int round = 0; round < 200; ++round) {
        const auto left = carrying(token);
        if (left.empty()) return;
        for (const auto& p : left) ::kill(p.first, SIGKILL);
        std::this_thread::sleep_for(10ms);
    }
}

// One kind of process the command starts: a copy of sleep under a name no other test
// uses, in the tree but outside the workspace (nothing the command may write).
struct Kind {
    std::string what;      // for the messages
    std::string token;     // in the argv of every process of this kind
    fs::path sleep;        // the copy of sleep that carries it
    fs::path up;           // written once the kind is running
};

// The kinds of one test, and the processes of each killed when it ends, whatever it found.
struct Kinds {
    std::vector<Kind> all;
    Kinds(const Tree& t, const std::vector<std::string>& whats) {
        const fs::path bin = t.root / "bin";
        fs::create_directories(bin);
        for (const auto& what : whats) {
            Kind k{what, test::unique_text("confine-life-"), {}, {}};
            k.sleep = bin / k.token;
            k.up = t.ws / (k.token + ".up");
            fs::copy_file("/bin/sleep", k.sleep);
            fs::permissions(k.sleep, fs::perms(0755));
            all.push_back(std::move(k));
        }
    }
    ~Kinds() {
        for (const auto& k : all) end_all(k.token);
    }
    Kinds(const Kinds&) = delete;
    Kinds& operator=(const Kinds&) = delete;
    const Kind& operator[](std::size_t i) const { return all.at(i); }

    // Shell text that waits (bounded) until every kind has said it is up.
    std::string wait_up() const {
        std::string all_up;
        for (const auto& k : all) all_up += (all_up.empty() ? "" : " && ") + std::string("[ -e ") + k.up.string() + " ]";
        return "n=0; until " + all_up + "; do n=$((n+1)); [ $n -gt 1000 ] && exit 9; sleep 0.01; done; ";
    }

    // Waits (bounded) until no process of any kind is left, then checks each kind.
    void check_none_left() const {
        eventually(
            [&] {
                for (const auto& k : all)
                    if (!carrying(k.token).empty()) return false;
                return true;
            },
            settle);
        for (const auto& k : all) {
            const auto left = carrying(k.token);
            INFO("left of " << k.what << ":\n" << listed(left));
            CHECK(left.empty());
        }
    }
};

// confinectl as `box` runs it, started in a process group of its own (nothing it signals
// there reaches the test) that the test never kills — test::run kills what is left in
// the group it made, which would hide what this suite looks for: stdin /dev/null, its
// output to files.
struct Started {
    pid_t pid = -1;
    fs::path out, err;
};

Started start(const Sandbox& box, const std::vector<std::string>& args, bool unprivileged, const std::string& tag) {
    std::vector<std::string> argv = as_user(unprivileged);
    argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + box.confine.scratch("cache").string()});
    argv.push_back(box.confine.confinectl().string());
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    Started s{-1, box.confine.scratch(tag + ".out"), box.confine.scratch(tag + ".err")};
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int out = ::open(s.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(s.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(in >= 0);
    REQUIRE(out >= 0);
    REQUIRE(err >= 0);
    s.pid = ::fork();
    if (s.pid == 0) {
        ::setpgid(0, 0);  // whatever it signals in its own group, never the test
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
#if defined(SYS_close_range)
        ::syscall(SYS_close_range, 3U, ~0U, 0U);  // anything the test has open (all of it close-on-exec, where this is missing)
#endif
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD}) ::signal(sig, SIG_DFL);
        ::execv(c_argv[0], c_argv.data());
        ::_exit(127);
    }
    for (int fd : {in, out, err}) ::close(fd);
    REQUIRE(s.pid > 0);
    return s;
}

// Waits (at most `bound`) for `s` to end: its status, or nothing when it had to be killed.
std::optional<int> wait_for(const Started& s, std::chrono::milliseconds bound) {
    int status = 0;
    const bool ended = eventually([&] { return ::waitpid(s.pid, &status, WNOHANG) == s.pid; }, bound);
    if (ended) return status;
    ::kill(s.pid, SIGKILL);
    while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {}
    return std::nullopt;
}

test::Result result_of(const Started& s, std::optional<int> status) {
    test::Result r;
    if (status && WIFEXITED(*status)) r.exit_code = WEXITSTATUS(*status);
    if (status && WIFSIGNALED(*status)) r.signal = WTERMSIG(*status);
    r.out = test::read_file(s.out);
    r.err = test::read_file(s.err);
    return r;
}

// Runs confinectl to its end (bounded well past anything a case waits for).
test::Result run(const Sandbox& box, const std::vector<std::string>& args, bool unprivileged) {
    const Started s = start(box, args, unprivileged, "run");
    const auto status = wait_for(s, 60s);
    INFO("confinectl did not end within 60 s: " << test::read_file(s.err));
    REQUIRE(status);
    return result_of(s, status);
}

// Where a run of `box` writes its report; empty on the in-place way (no report there: a
// report keeps confinectl in front, which is the forked way).
fs::path report_of(const Sandbox& box, const Tree& t) {
    return box.way == Way::landlock_in_place ? fs::path() : t.root / "report.json";
}

// confinectl's argv for `command` in `t`'s workspace through `box`, with `flags` after
// "run" and a report where the way writes one.
std::vector<std::string> run_args(const Sandbox& box, const Tree& t, std::vector<std::string> flags, const std::vector<std::string>& command) {
    auto a = box.args(t, command);  // the forked way's report is already asked for
    if (box.way != Way::landlock_forked && box.way != Way::landlock_in_place) flags.insert(flags.end(), {"--report", report_of(box, t).string()});
    a.insert(a.begin() + 1, flags.begin(), flags.end());
    return a;
}

std::string who(Way way, bool unprivileged) { return name_of(way) + (unprivileged ? ", as nobody" : ", as root"); }

// --- Point 1: nothing outlives the run -------------------------------------------------

// Shell lines that start a process of kind `k` in the background, which says it is up.
const std::string quiet = " </dev/null >/dev/null 2>&1";
std::string up_then(const Kind& k, const std::string& rest) { return ": > " + k.up.string() + "; " + rest; }
std::string setsid_daemon(const Kind& k) { return "setsid /bin/sh -c '" + up_then(k, "exec " + k.sleep.string() + " 1000") + "'" + quiet + " &\n"; }
std::string double_forked(const Kind& k) { return "( /bin/sh -c '" + up_then(k, "exec " + k.sleep.string() + " 1000") + "'" + quiet + " & )\n"; }
std::string nohup_daemon(const Kind& k) { return "nohup /bin/sh -c '" + up_then(k, "exec " + k.sleep.string() + " 1000") + "'" + quiet + " &\n"; }
// A shell that ignores TERM (and HUP, INT), as do the sleeps it runs one after another.
std::string ignoring_term(const Kind& k) {
    return "/bin/sh -c 'trap \"\" TERM HUP INT; " + up_then(k, "while :; do " + k.sleep.string() + " 1; done") + "'" + quiet + " &\n";
}
// A session of its own that starts a new sleep every 10 ms, for as long as it lives.
std::string fork_loop(const Kind& k) {
    return "( setsid /bin/sh -c '" + up_then(k, "while :; do " + k.sleep.string() + " 30 & " + k.sleep.string() + " 0.01; done") + "'" + quiet +
           " & )\n";
}

// A session of its own that waits until the command (process `$$` of the command's shell)
// has exited, and only then starts a new sleep every 10 ms.
std::string fork_loop_after_exit(const Kind& k) {
    return "( setsid /bin/sh -c '" + up_then(k, "while kill -0 \"$1\" 2>/dev/null; do sleep 0.01; done; while :; do " + k.sleep.string() + " 30 & " +
                                            k.sleep.string() + " 0.01; done") + "' sh $$" + quiet + " & )\n";
}

// The command starts one process of each kind, waits until all are up, and exits 0.
void daemons(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    at_default_minimum(box);
    Tree t(unprivileged);
    Kinds k(t, {"a setsid daemon", "a double-forked daemon", "a nohup daemon", "a process that ignores TERM",
                "processes forked every 10 ms, on after the command's exit", "processes forked only once the command has exited"});
    const std::string script =
        setsid_daemon(k[0]) + double_forked(k[1]) + nohup_daemon(k[2]) + ignoring_term(k[3]) + fork_loop(k[4]) + fork_loop_after_exit(k[5]) +
        k.wait_up() + "exit 0\n";
    const auto r = run(box, run_args(box, t, {}, {"/bin/sh", "-c", script}), unprivileged);
    INFO(who(way, unprivileged) << "\nexit " << r.exit_code << " signal " << r.signal << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);  // every kind was up when the command ended
    for (const auto& kind : k.all) REQUIRE(fs::exists(kind.up));
    k.check_none_left();
}

// The command starts daemons and sleeps; confinectl is sent `sig` mid-run.
void confinectl_killed(Way way, bool unprivileged, int sig) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    at_default_minimum(box);
    Tree t(unprivileged);
    Kinds k(t, {"the command", "a setsid daemon", "a double-forked daemon", "a process that ignores TERM"});
    const fs::path ready = t.ws / "ready";
    const std::string script = setsid_daemon(k[1]) + double_forked(k[2]) + ignoring_term(k[3]) + up_then(k[0], k.wait_up()) + ": > " +
                               ready.string() + "\n" + k[0].sleep.string() + " 1000\n";
    const Started s = start(box, run_args(box, t, {}, {"/bin/sh", "-c", script}), unprivileged, "killed");
    int status = 0;
    bool ended_early = false;
    const bool up = eventually(
        [&] {
            if (::waitpid(s.pid, &status, WNOHANG) == s.pid) ended_early = true;
            return ended_early || fs::exists(ready);
        },
        20s);
    INFO(who(way, unprivileged) << ", confinectl sent " << ::strsignal(sig) << "\nstderr: " << test::read_file(s.err));
    if (ended_early || !up) {
        if (!ended_early) wait_for(s, 0ms);
        FAIL("the command never got going: " << (ended_early ? "confinectl ended first" : "no ready file within 20 s"));
    }
    REQUIRE(::kill(s.pid, sig) == 0);
    const auto killed = wait_for(s, 10s);
    CHECK(killed);  // confinectl ends
    k.check_none_left();
}

// What the run says of lifetime: "full" where no process of the run can outlive it
// (bubblewrap's PID namespace; Landlock as root, a PID namespace of the run), "partial"
// where a determined one can (Landlock as nobody: a subreaper supervisor), the gap named.
void reports_lifetime(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    at_default_minimum(box);
    Tree t(unprivileged);
    const bool partial = test::is_landlock(way) && unprivileged;
    if (way == Way::landlock_in_place) {
        // No report in place: -v says the levels; not asked for best-effort lifetime, the
        // run is supervised, not exec'd in place.
        auto a = run_args(box, t, {}, {"/bin/true"});
        a.insert(a.begin(), "-v");
        const auto r = run(box, a, unprivileged);
        INFO(who(way, unprivileged) << "\nstderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.err, Catch::Contains("confinectl: wrapped by landlock: ") &&
                              Catch::Contains(partial ? "lifetime partial" : "lifetime full"));
        CHECK_THAT(r.err, !Catch::Contains("exec (confined in place"));
        if (partial) CHECK_THAT(r.err, Catch::Contains("confinectl: left open by landlock: ") && Catch::Contains("lifetime: "));
        return;
    }
    const auto r = run(box, run_args(box, t, {}, {"/bin/true"}), unprivileged);
    INFO(who(way, unprivileged) << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    json d = json::parse(test::read_file(report_of(box, t)))["dimensions"];  // not const: a missing key reads as null
    INFO(d.dump());
    CHECK(d["lifetime"] == (partial ? "partial" : "full"));
    const std::string open = d["open"].is_string() ? d["open"].get<std::string>() : std::string();
    if (partial) CHECK_THAT(open, Catch::Contains("lifetime: "));
    else CHECK_THAT(open, !Catch::Contains("lifetime:"));
}

// --- Point 2: --timeout ----------------------------------------------------------------

// The report of a run that wrote one (none on the in-place way).
std::optional<json> report(const Sandbox& box, const Tree& t) {
    const fs::path file = report_of(box, t);
    if (file.empty()) return std::nullopt;
    CHECK(fs::exists(file));
    if (!fs::exists(file)) return std::nullopt;
    return json::parse(test::read_file(file));
}

// confinectl's lines on `err` that say a time limit ended the run.
std::vector<std::string> time_limit_lines(const std::string& err) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < err.size()) {
        const std::size_t end = std::min(err.find('\n', at), err.size());
        if (err.compare(at, 23, "confinectl: time limit ") == 0) out.push_back(err.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

// confinectl itself ended 124 (never by a signal), and said the time limit ended the run in
// one line beginning with `start`.
void says_time_limit(const test::Result& r, const std::string& start) {
    CHECK(r.signal == 0);
    CHECK(r.exit_code == 124);
    const auto lines = time_limit_lines(r.err);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::StartsWith(start));
}

// A command that sleeps past a 300 ms deadline, with a daemon of its own: 124, timed out,
// nothing of it left. With the deadline from the configuration, confinectl runs with -v:
// the line is the same, said once.
void sleeps_past(Way way, bool unprivileged, bool from_config) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    at_default_minimum(box);
    if (from_config) test::write_file(box.config, test::way_config(way) + "[policy]\ntimeout = \"300ms\"\n");
    Tree t(unprivileged);
    Kinds k(t, {"the command", "a setsid daemon"});
    const std::string script = "setsid " + k[1].sleep.string() + " 1000 </dev/null >/dev/null 2>&1 &\n" + k[0].sleep.string() + " 1000\n";
    const auto flags = from_config ? std::vector<std::string>{} : std::vector<std::string>{"--timeout", "300ms"};
    auto args = run_args(box, t, flags, {"/bin/sh", "-c", script});
    if (from_config) args.insert(args.begin(), "-v");
    const auto r = run(box, args, unprivileged);
    INFO(who(way, unprivileged) << (from_config ? ", [policy] timeout" : ", --timeout") << "\nexit " << r.exit_code << " signal " << r.signal
                                << "\nstderr: " << r.err);
    says_time_limit(r, "confinectl: time limit 300ms reached: the run got SIGTERM");
    if (auto j = report(box, t)) {
        CHECK((*j)["timed_out"] == true);
        CHECK((*j)["limit_note"] == time_limit_lines(r.err).at(0).substr(12));
    }
    k.check_none_left();
}

// A command that traps TERM, writes a file and exits: it got TERM first, and the run
// still ends 124.
void term_first(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    at_default_minimum(box);
    Tree t(unprivileged);
    Kinds k(t, {"the command"});
    const fs::path termed = t.ws / "termed";
    const std::string script =
        "trap 'echo TERM > " + termed.string() + "; exit 3' TERM\n" + k[0].sleep.string() + " 1000 &\nwait\n";
    const auto r = run(box, run_args(box, t, {"--timeout", "300ms"}, {"/bin/sh", "-c", script}), unprivileged);
    INFO(who(way, unprivileged) << "\nexit " << r.exit_code << " signal " << r.signal << "\nstderr: " << r.err);
    // It ended of itself after the TERM: no SIGKILL was needed.
    says_time_limit(r, "confinectl: time limit 300ms reached: the run got SIGTERM; sh exited 3");
    CHECK(test::read_file(termed) == "TERM\n");
    if (auto j = report(box, t)) CHECK((*j)["timed_out"] == true);
    k.check_none_left();
}

// A command that ignores TERM, with a child that does too: KILL after --kill-after.
void ignores_term(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    at_default_minimum(box);
    Tree t(unprivileged);
    Kinds k(t, {"the command", "its child"});
    const std::string script = "trap '' TERM\n" + k[1].sleep.string() + " 1000 </dev/null >/dev/null 2>&1 &\n" + k[0].sleep.string() + " 1000\n";
    const auto r = run(box, run_args(box, t, {"--timeout", "300ms", "--kill-after", "200ms"}, {"/bin/sh", "-c", script}), unprivileged);
    INFO(who(way, unprivileged) << "\nexit " << r.exit_code << " signal " << r.signal << "\nstderr: " << r.err);
    says_time_limit(r, "confinectl: time limit 300ms reached: the run got SIGTERM, then SIGKILL 200ms later; sh ");
    if (auto j = report(box, t)) CHECK((*j)["timed_out"] == true);
    k.check_none_left();
}

// A command that ends before its deadline keeps its own status.
void ends_in_time(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    at_default_minimum(box);
    Tree t(unprivileged);
    const fs::path ran = t.ws / "ran";
    const auto r = run(box, run_args(box, t, {"--timeout", "30s", "--kill-after", "1s"}, {"/bin/sh", "-c", ": > " + ran.string() + "; exit 7"}),
                       unprivileged);
    INFO(who(way, unprivileged) << "\nexit " << r.exit_code << " signal " << r.signal << "\nstderr: " << r.err);
    CHECK(r.exit_code == 7);
    CHECK(time_limit_lines(r.err).empty());
    CHECK(fs::exists(ran));
    if (auto j = report(box, t)) {
        CHECK((*j)["timed_out"] == false);
        CHECK((*j)["exit_code"] == 7);
    }
}

}  // namespace

#define LIFETIME_CASES(WAY, TAG, USER, UNPRIVILEGED)                                                                                       \
    TEST_CASE("nothing the command started outlives the run through " TAG ", " USER, "[lifetime][e2e][linux-only]") {                     \
        daemons(WAY, UNPRIVILEGED);                                                                                                     \
    }                                                                                                                                   \
    TEST_CASE("killing confinectl with SIGKILL ends every process of the run through " TAG ", " USER, "[lifetime][e2e][linux-only]") {  \
        confinectl_killed(WAY, UNPRIVILEGED, SIGKILL);                                                                                  \
    }                                                                                                                                   \
    TEST_CASE("SIGTERM to confinectl ends every process of the run through " TAG ", " USER, "[lifetime][e2e][linux-only]") {            \
        confinectl_killed(WAY, UNPRIVILEGED, SIGTERM);                                                                                  \
    }                                                                                                                                   \
    TEST_CASE("the run reports the lifetime it gives through " TAG ", " USER, "[lifetime][e2e][linux-only]") {                           \
        reports_lifetime(WAY, UNPRIVILEGED);                                                                                            \
    }                                                                                                                                   \
    TEST_CASE("run --timeout ends a command that sleeps past it, 124, through " TAG ", " USER, "[timeout][e2e][linux-only]") {           \
        sleeps_past(WAY, UNPRIVILEGED, false);                                                                                          \
    }                                                                                                                                   \
    TEST_CASE("[policy] timeout ends a command that sleeps past it, 124, through " TAG ", " USER, "[timeout][e2e][linux-only]") {        \
        sleeps_past(WAY, UNPRIVILEGED, true);                                                                                           \
    }                                                                                                                                   \
    TEST_CASE("run --timeout sends TERM first, and the command's handler runs, through " TAG ", " USER, "[timeout][e2e][linux-only]") { \
        term_first(WAY, UNPRIVILEGED);                                                                                                  \
    }                                                                                                                                   \
    TEST_CASE("run --timeout kills a command that ignores TERM after --kill-after through " TAG ", " USER, "[timeout][e2e][linux-only]") { \
        ignores_term(WAY, UNPRIVILEGED);                                                                                                \
    }                                                                                                                                   \
    TEST_CASE("run --timeout leaves a command that ends in time its own status through " TAG ", " USER, "[timeout][e2e][linux-only]") { \
        ends_in_time(WAY, UNPRIVILEGED);                                                                                                \
    }

#define LIFETIME_WAY(WAY, TAG)                          \
    LIFETIME_CASES(WAY, TAG, "as root", false)          \
    LIFETIME_CASES(WAY, TAG, "as an unprivileged user", true)

LIFETIME_WAY(Way::bwrap, "the bwrap plugin")
LIFETIME_WAY(Way::runner_command, "an asserted runner_command")
LIFETIME_WAY(Way::landlock_launcher, "landlock-run")
LIFETIME_WAY(Way::landlock_forked, "landlock in a forked child")
LIFETIME_WAY(Way::landlock_in_place, "landlock in place")

namespace {

// In place, with lifetime accepted at best-effort: confinectl still becomes the command
// (the fast path), and -v says the run's lifetime is none.
void in_place_best_effort(bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(Way::landlock_in_place);
    // Nothing to protect: no run-end check is due, which in place could not make.
    test::write_file(box.config, test::way_config(Way::landlock_in_place) + "[policy]\nprotect = []\n");
    Tree t(unprivileged);
    auto a = box.args(t, {"/bin/true"});
    a.insert(a.begin(), "-v");
    const auto r = run(box, a, unprivileged);
    INFO((unprivileged ? "as nobody" : "as root") << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    // The wrap says what a supervised run would give; the choice to exec in place, what
    // that leaves of it.
    CHECK_THAT(r.err, Catch::Contains("confinectl: lifetime none: the command is executed in place of this process"));
    CHECK_THAT(r.err, Catch::Contains("confinectl: exec (confined in place"));
}

}  // namespace

// The fast path gives up lifetime, never the timeout: a run that asks for one is timed
// out all the same (by a supervisor, as the run is then no longer exec'd in place).
void in_place_best_effort_timeout(bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(Way::landlock_in_place);
    test::write_file(box.config, test::way_config(Way::landlock_in_place));
    Tree t(unprivileged);
    Kinds k(t, {"the command"});
    auto a = box.args(t, {k[0].sleep.string(), "1000"});
    a.insert(a.begin() + 1, {"--timeout", "300ms"});
    const auto r = run(box, a, unprivileged);
    INFO((unprivileged ? "as nobody" : "as root") << "\nexit " << r.exit_code << " signal " << r.signal << "\nstderr: " << r.err);
    says_time_limit(r, "confinectl: time limit 300ms reached: the run got SIGTERM");
    k.check_none_left();
}

TEST_CASE("in place with lifetime = best-effort, -v says lifetime none, as root", "[lifetime][e2e][linux-only]") { in_place_best_effort(false); }
TEST_CASE("in place with lifetime = best-effort, -v says lifetime none, as an unprivileged user", "[lifetime][e2e][linux-only]") {
    in_place_best_effort(true);
}
TEST_CASE("in place with lifetime = best-effort, run --timeout still ends the command, 124, as root", "[timeout][e2e][linux-only]") {
    in_place_best_effort_timeout(false);
}
TEST_CASE("in place with lifetime = best-effort, run --timeout still ends the command, 124, as an unprivileged user", "[timeout][e2e][linux-only]") {
    in_place_best_effort_timeout(true);
}

// A bad duration is a usage error: one line naming the flag or key, 125, nothing run.
TEST_CASE("run --timeout and --kill-after refuse a bad duration in one line, exit 125, the command not run", "[timeout][e2e][linux-only]") {
    test::Installed confine;
    Tree t(false);
    const fs::path ran = t.ws / "ran";
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"--timeout", "0"}, "--timeout"},
        {{"--timeout", "-1s"}, "--timeout"},
        {{"--timeout", "5x"}, "--timeout"},
        {{"--timeout", ""}, "--timeout"},
        {{"--timeout", "1s", "--kill-after", "nope"}, "--kill-after"},
    };
    const auto run_with = [&](const std::vector<std::string>& flags) {
        std::vector<std::string> args{"run", "--workspace", t.ws.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/bin/sh", "-c", ": > " + ran.string()});
        return confine.run(args);
    };
    // Good durations run the command: what is refused below is the value.
    for (const auto& [timeout, grace] : {std::pair{"30s", "2s"}, std::pair{"5m", "500ms"}}) {
        const auto r = run_with({"--timeout", timeout, "--kill-after", grace});
        INFO("--timeout " << timeout << " --kill-after " << grace << "\nstderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        REQUIRE(fs::exists(ran));
        fs::remove(ran);
    }
    for (const auto& [flags, named] : cases) {
        const auto r = run_with(flags);
        INFO(flags.front() << " '" << flags.back() << "'\nstderr: " << r.err);
        CHECK(r.exit_code == 125);
        CHECK(test::line_count(r.err) == 1);
        CHECK_THAT(r.err, Catch::StartsWith("confinectl: ") && Catch::Contains(named));
        CHECK_FALSE(fs::exists(ran));
    }
}

TEST_CASE("a bad [policy] timeout is one line naming the key and where it is, exit 125, the command not run", "[timeout][e2e][linux-only]") {
    test::Installed confine;
    Tree t(false);
    const fs::path ran = t.ws / "ran", cfg = confine.scratch("timeout.toml");
    const auto run_with = [&](const std::string& value) {
        test::write_file(cfg, "[policy]\ntimeout = " + value + "\n");
        return confine.run({"run", "--config", cfg.string(), "--workspace", t.ws.string(), "--", "/bin/sh", "-c", ": > " + ran.string()});
    };
    {
        // A good one runs the command: what is refused below is the value.
        const auto r = run_with("\"30s\"");
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        REQUIRE(fs::exists(ran));
        fs::remove(ran);
    }
    for (const std::string value : {"\"5x\"", "\"0\"", "\"-1s\"", "\"\""}) {
        const auto r = run_with(value);
        INFO("timeout = " << value << "\nstderr: " << r.err);
        CHECK(r.exit_code == 125);
        CHECK(test::line_count(r.err) == 1);
        CHECK_THAT(r.err, Catch::StartsWith("confinectl: " + cfg.string() + ":2:") && Catch::Contains("timeout"));
        CHECK_FALSE(fs::exists(ran));
    }
}

namespace {

// A library host's provider with Landlock alone, from `confine`'s plugins.
std::unique_ptr<confine::Provider> landlock_provider(const test::Installed& confine) {
    auto provider = confine::Provider::create(test::config_from("[platform.linux]\nchain = [\"landlock\"]\n"),
                                              {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{confine.plugin_dir()}});
    REQUIRE(provider);
    return std::move(*provider);
}

}  // namespace

// The supervisor shares the host's memory (docs/design.md §7): many runs started at once
// from threads of one library host each have a supervisor of their own, each gets its
// own command's status and nothing of another's, and none leaves a process behind.
TEST_CASE("runs started at once from eight threads of one library host each end with their own status, and leave nothing", "[lifetime][landlock][e2e][linux-only]") {
    test::require_landlock();
    test::Installed confine;
    auto provider = landlock_provider(confine);
    Tree t(false);
    const std::string token = test::unique_text("confine-life-threads-");
    const fs::path sleeper = t.root / token;
    fs::copy_file("/bin/sleep", sleeper);
    fs::permissions(sleeper, fs::perms(0755));
    constexpr int threads = 8, runs = 6;
    std::vector<std::string> failures(threads);
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
        pool.emplace_back([&, k] {
            for (int i = 0; i < runs; ++i) {
                const int code = 10 + k * runs + i;
                const fs::path out = t.ws / ("out-" + std::to_string(code));
                // A daemon left behind by each run, and the run's own status and file.
                const std::vector<std::string> argv{"/bin/sh", "-c", "(setsid " + sleeper.string() + " 300 &); echo " + std::to_string(code) +
                                                                         " > " + out.string() + "; exit " + std::to_string(code)};
                auto ran = confine::run(*provider, confine::PolicyRequest{confine::Mode::workspace_write, t.ws}, argv);
                if (!ran || ran->kind != confine::OutcomeKind::task_failed || ran->exit_code != code)
                    failures[k] += "run " + std::to_string(code) + ": " + (ran ? ran->evidence : ran.error().message) + "; ";
                else if (test::read_file(out) != std::to_string(code) + "\n")
                    failures[k] += "run " + std::to_string(code) + " wrote " + test::read_file(out) + "; ";
            }
        });
    for (auto& thread : pool) thread.join();
    const auto left = carrying(token);
    end_all(token);
    for (int k = 0; k < threads; ++k) {
        INFO("thread " << k);
        CHECK(failures[k] == "");
    }
    INFO("left running:\n" << listed(left));
    CHECK(left.empty());
}

// The path that ships is the path every build runs, the sanitizer's too: a supervised
// run's supervisor shares the host's memory (kcmp says the two have one address space),
// not a copy of it made another way.
TEST_CASE("a supervised run's supervisor shares the host's memory in this build too, sanitizers or not", "[lifetime][landlock][e2e][linux-only]") {
    REQUIRE(confine::detail::children_share_memory);
    test::require_landlock();
    test::Installed confine;
    auto provider = landlock_provider(confine);
    Tree t(false);
    const fs::path started = t.ws / "started";
    std::optional<confine::Outcome> outcome;
    std::thread host([&] {
        const std::vector<std::string> argv{"/bin/sh", "-c", "touch " + started.string() + "; sleep 3"};
        auto ran = confine::run(*provider, confine::PolicyRequest{confine::Mode::workspace_write, t.ws}, argv);
        if (ran) outcome = *ran;
    });
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!fs::exists(started) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    // This process's children: the supervisor, whose parent is this process.
    std::vector<pid_t> children;
    for (const auto& p : test::processes_with(""))
        if (p.parent == ::getpid()) children.push_back(p.pid);
    int sharing = 0;
    for (pid_t child : children)
        if (::syscall(SYS_kcmp, ::getpid(), child, KCMP_VM, 0, 0) == 0) ++sharing;
    host.join();
    REQUIRE(fs::exists(started));
    INFO("children of this process: " << children.size());
    CHECK(sharing == 1);
    REQUIRE(outcome);
    CHECK(outcome->kind == confine::OutcomeKind::completed);
}

#endif  // __linux__
