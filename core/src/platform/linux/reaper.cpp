// The run's supervisor (docs/design.md §7): a process of the host's own between the host
// and the runner, which owns every process of the run and ends them all when the runner
// ends, when a time limit says, or when the host is gone.
//
// Where this process may make a PID namespace (CAP_SYS_ADMIN), the supervisor is the
// init of one: when it exits, the kernel kills every process left in it, and it dies
// with the host (PR_SET_PDEATHSIG, SIGKILL), which no process of the run can stop.
// Elsewhere it is a child subreaper: every orphan of the run becomes its child, and it
// kills them all, again and again until none is left; told by a signal of its own that
// the host is gone, it does the same before it exits. A process of the run then
// outlives it only when something outside the run kills the supervisor with SIGKILL
// (Landlock's signal scope keeps the command itself from signalling it).
//
// The supervisor shares the host's memory (a clone with CLONE_VM, on a stack of its
// own): starting it copies nothing of the host. It makes system calls only (no
// allocation, no lock, nothing of glibc that reads the thread's cached identity), and
// once the runner is started, while the host goes on, only calls that leave errno alone
// (raw_syscall.hpp): it shares the host thread's errno as it shares the rest. Before
// that, the host waits for the runner's exec (start_reaper), so the supervisor and the
// runner may read the host's plan and use glibc's wrappers. Under AddressSanitizer the
// same path runs, the sanitizer told of each move onto a child's stack
// (sanitizer_stacks.hpp); the supervisor's loop and the ways it ends are then not
// address-sanitized themselves (the sanitizer's thread stands for the host's stack once
// the host goes on), what they call is.
#include "linux_features.hpp"
#include "child_report.hpp"
#include "raw_syscall.hpp"
#include "sanitizer_stacks.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#if !defined(__x86_64__) && !defined(__aarch64__)
namespace confine::detail::raw {
long call(long nr, long a, long b, long c, long d, long e, long f) noexcept {
    const long r = ::syscall(nr, a, b, c, d, e, f);
    return r < 0 ? -errno : r;
}
}  // namespace confine::detail::raw
#endif

namespace confine::detail {
namespace {

// Whether this process may make a PID namespace: CAP_SYS_ADMIN in its effective set.
bool may_make_pid_namespace() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
    if (::syscall(SYS_capget, &header, data) != 0) return false;
    return (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) != 0;
}

// The number of `text` up to its first non-digit, or -1.
long number_at(const char*& text) {
    long n = -1;
    for (; *text >= '0' && *text <= '9'; ++text) n = (n < 0 ? 0 : n * 10) + (*text - '0');
    return n;
}

// Appends `s`, then returns the end, in a buffer the caller sized.
char* append(char* out, const char* s) {
    while (*s) *out++ = *s++;
    return out;
}

char* append_number(char* out, long n) {
    char digits[24];
    int count = 0;
    do digits[count++] = static_cast<char>('0' + n % 10);
    while ((n /= 10) > 0);
    while (count) *out++ = digits[--count];
    return out;
}

// "/proc/<a>/task/<b>/children", or "/proc/<a>/task" when b < 0, into `out`.
void proc_path(char* out, long a, long b) {
    out = append_number(append(out, "/proc/"), a);
    out = append(out, "/task");
    if (b >= 0) out = append(append_number(append(out, "/"), b), "/children");
    *out = '\0';
}

// Reads a whole small file into `buf` (NUL-terminated); its length, or -1.
long read_small(const char* path, char* buf, long size) {
    const long fd = raw::call(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    long got = 0;
    while (got + 1 < size) {
        const long n = raw::call(SYS_read, fd, reinterpret_cast<long>(buf + got), size - 1 - got);
        if (n == -EINTR) continue;
        if (n <= 0) break;
        got += n;
    }
    raw::call(SYS_close, fd);
    buf[got] = '\0';
    return got;
}

constexpr int most_processes = 8192;

// Appends the children of every thread of `pid` to `pids` (up to most_processes).
void add_children(long pid, int* pids, int& count) {
    char path[96];
    proc_path(path, pid, -1);
    const long dir = raw::call(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    alignas(8) char entries[2048];
    for (;;) {
        const long n = raw::call(SYS_getdents64, dir, reinterpret_cast<long>(entries), sizeof entries);
        if (n <= 0) break;
        for (long at = 0; at < n;) {
            unsigned short length = 0;
            __builtin_memcpy(&length, entries + at + 16, sizeof length);
            const char* name = entries + at + 19;
            const long tid = number_at(name);
            at += length;
            if (tid <= 0) continue;
            char children_path[96], text[4096];
            proc_path(children_path, pid, tid);
            if (read_small(children_path, text, sizeof text) <= 0) continue;
            for (const char* p = text; *p && count < most_processes;) {
                const long child = number_at(p);
                if (child > 0) pids[count++] = static_cast<int>(child);
                while (*p == ' ' || *p == '\n') ++p;
                if (child <= 0 && *p) ++p;
            }
        }
    }
    raw::call(SYS_close, dir);
}

// The parent of `pid` as /proc says now, or 0.
long parent_now(long pid) {
    char path[64], text[2048];
    *append(append_number(append(path, "/proc/"), pid), "/stat") = '\0';
    if (read_small(path, text, sizeof text) <= 0) return 0;
    // "pid (comm) state ppid ...": the name may hold anything, so after its last ')'.
    const char* close = nullptr;
    for (const char* p = text; *p; ++p)
        if (*p == ')') close = p;
    if (!close || close[1] != ' ' || !close[2] || close[3] != ' ') return 0;
    const char* at = close + 4;
    return number_at(at);
}

// Sends `sig` to every descendant of `root`, its children first; how many it was sent
// to. A process that is not a child of this one is signalled through a descriptor of its
// own, and only while /proc still names its parent as the one it was found under: a
// number freed and reused in between is never signalled. `pids` and `parents` hold
// most_processes entries each.
int signal_below(long root, int sig, int* pids, int* parents) {
    int count = 0;
    const long self = raw::call(SYS_getpid);
    add_children(root, pids, count);
    for (int i = 0; i < count; ++i) parents[i] = static_cast<int>(root);
    int signalled = 0;
    for (int i = 0; i < count; ++i) {
        const int before = count;
        add_children(pids[i], pids, count);
        for (int j = before; j < count; ++j) parents[j] = pids[i];
        if (parents[i] == self) {
            // A child of its own: not reaped, so its number cannot have been reused.
            if (raw::call(SYS_kill, pids[i], sig) == 0) ++signalled;
            continue;
        }
        const long fd = raw::call(SYS_pidfd_open, pids[i], 0);
        if (fd < 0) continue;
        if (parent_now(pids[i]) == parents[i] && raw::call(SYS_pidfd_send_signal, fd, sig, 0, 0) == 0) ++signalled;
        raw::call(SYS_close, fd);
    }
    return signalled;
}

// The same for the supervisor's own descendants, on its own stack (the memory around it
// is the host's).
int signal_descendants(int sig) {
    int pids[most_processes];
    int parents[most_processes];
    return signal_below(raw::call(SYS_getpid), sig, pids, parents);
}

struct State {
    ReaperPlan plan;  // a copy: the host's goes when the runner is started
    pid_t runner = -1;
    bool runner_done = false;
    int runner_status = 0;
};

// Reaps every child that has ended; true when none is left.
bool reap(State& s, bool block) {
    for (;;) {
        int status = 0;
        const long pid = raw::call(SYS_wait4, -1, reinterpret_cast<long>(&status), block ? 0 : WNOHANG, 0);
        if (pid == -EINTR) continue;
        if (pid < 0) return pid == -ECHILD;
        if (pid == 0) return false;
        if (pid == s.runner) {
            s.runner_done = true;
            s.runner_status = status;
        }
        block = false;
    }
}

// Sends `sig` to every process of the run but the supervisor.
void signal_run(const State& s, int sig) {
    if (s.plan.pid_namespace) raw::call(SYS_kill, -1, sig);  // in its namespace: every process but its init
    else signal_descendants(sig);
}

// Ends every process of the run: what a subreaper must do itself before it exits (the
// init of a PID namespace leaves it to the kernel).
void end_run(State& s) {
    for (;;) {
        if (reap(s, false)) return;
        signal_descendants(SIGKILL);
        if (reap(s, true)) return;
    }
}

[[noreturn]] void exit_now(int code) {
    for (;;) raw::call(SYS_exit_group, code);
}

[[noreturn]] CONFINE_NOT_ADDRESS_SANITIZED void finish(State& s) {
    if (!s.plan.pid_namespace) end_run(s);
    const int status = s.runner_status;
    raw::call(SYS_write, s.plan.reaped, reinterpret_cast<long>(&status), sizeof status);
    exit_now(0);
}

// Passes a signal sent to the supervisor on to the runner: to its process group when it
// has one of its own, else to it alone. The terminal's own signals (SI_KERNEL) reached
// the runner already, when it is in the terminal's foreground group with this one.
void pass_on(const State& s, int sig, const siginfo_t& info) {
    if (s.runner_done || (info.si_code != SI_USER && info.si_code != SI_QUEUE && info.si_code != SI_TKILL)) return;
    const long group = raw::call(SYS_getpgid, s.runner);
    if (group == s.runner) raw::call(SYS_kill, -group, sig);
    else raw::call(SYS_kill, s.runner, sig);
}

// Closes every descriptor above 2 but `a` and `b`.
void close_all_but(int a, int b) {
    if (a > b) {
        const int t = a;
        a = b;
        b = t;
    }
    auto close_range = [](unsigned from, unsigned to) {
        if (from <= to) raw::call(SYS_close_range, from, to, 0);
    };
    close_range(3, static_cast<unsigned>(a) - 1);
    close_range(static_cast<unsigned>(a) + 1, static_cast<unsigned>(b) - 1);
    close_range(static_cast<unsigned>(b) + 1, ~0u);
}

// What the supervisor and the runner are started with, read while the host waits.
struct ReaperStart {
    const ReaperPlan* plan;
    void (*start_runner)(const void*);
    const void* runner_plan;
    int report_fd;
    ChildMemory* memory;
    StackMove* move;
};

struct RunnerStart {
    int lifeline, reaped;
    void (*start_runner)(const void*);
    const void* runner_plan;
};

// The runner, in the supervisor's child: the supervisor's own descriptors closed, then
// the runner's plan, which ends in its exec.
void start_runner_of(const void* arg) {
    const auto& r = *static_cast<const RunnerStart*>(arg);
    ::close(r.lifeline);
    ::close(r.reaped);
    r.start_runner(r.runner_plan);  // does not return
    ::_exit(127);
}

// Takes each signal in turn (every one stays blocked) until the run is over.
[[noreturn]] CONFINE_NOT_ADDRESS_SANITIZED void supervise_loop(State& s) {
    const ReaperPlan& plan = s.plan;
    sigset_t all;
    ::sigfillset(&all);
    for (;;) {
        siginfo_t info{};
        const long sig = raw::call(SYS_rt_sigtimedwait, reinterpret_cast<long>(&all), reinterpret_cast<long>(&info), 0, _NSIG / 8);
        if (sig < 0) continue;
        if (sig == SIGCHLD) {
            reap(s, false);
            if (s.runner_done) finish(s);
        } else if (sig == plan.term_run) {
            signal_run(s, SIGTERM);
            signal_run(s, SIGCONT);  // a stopped process takes its TERM too
        } else if (sig == plan.kill_run) {
            signal_run(s, SIGKILL);
        } else if (sig == plan.host_gone && !plan.pid_namespace) {
            end_run(s);
            exit_now(125);
        } else {
            pass_on(s, static_cast<int>(sig), info);
        }
    }
}

[[noreturn]] CONFINE_NOT_ADDRESS_SANITIZED void supervise(const ReaperStart& start) {
    State s{*start.plan};
    const ReaperPlan& plan = s.plan;
    // Dies with the thread of the host that started it; if the host was gone already, so
    // is the run.
    ::prctl(PR_SET_PDEATHSIG, plan.pid_namespace ? SIGKILL : plan.host_gone);
    ::close(plan.host_end);
    pollfd lifeline{plan.lifeline, POLLIN, 0};
    if (::poll(&lifeline, 1, 0) != 0) ::_exit(125);
    if (!plan.pid_namespace && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) report_and_exit(start.report_fd, ChildStage::supervise, errno, 125);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &dfl, nullptr);  // ended children wait to be reaped
    // Every signal stays blocked: each is taken in turn below.
    const RunnerStart runner_start{plan.lifeline, plan.reaped, start.start_runner, start.runner_plan};
    const pid_t runner = start_child(start_runner_of, &runner_start, *start.memory);
    if (runner < 0) report_and_exit(start.report_fd, ChildStage::supervise, errno, 125);
    s.runner = runner;
    // Also here, so that no signal races the runner's own call, where the runner is a copy
    // (one that shares this memory has made its call, and executed, before this goes on).
    if (!children_share_memory && plan.runner_group) ::setpgid(s.runner, s.runner);
    // The report pipe's last write end closes here: the host goes on from now, and with
    // it only calls that leave errno alone.
    close_all_but(plan.lifeline, plan.reaped);
    supervise_loop(s);
}

int supervise_entry(void* start) {
    const auto& s = *static_cast<const ReaperStart*>(start);
    s.move->arrive();
    supervise(s);
}

struct ChildStart {
    void (*start)(const void*);
    const void* arg;
    StackMove* move;
};

int child_entry(void* arg) {
    const auto& c = *static_cast<const ChildStart*>(arg);
    c.move->arrive();
    c.start(c.arg);
    return 127;
}

// Until the runner has executed or failed and the supervisor has let go of the report
// pipe: its write ends all closed (the runner's at its exec or exit, the supervisor's
// once it has started it, or at its exit). A report on it comes before that.
void wait_for_runner(int report_read) {
    for (;;) {
        pollfd p{report_read, POLLIN, 0};
        const long n = raw::call(SYS_ppoll, reinterpret_cast<long>(&p), 1, 0, 0, 0);
        if (n == -EINTR) continue;
        if (n <= 0 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) return;
        // A report, while a write end is still open: the supervisor is about to close it.
        const timespec pause{0, 100000};
        raw::call(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    }
}

}  // namespace

int signal_processes_below(pid_t root, int sig) {
    std::vector<int> pids(most_processes), parents(most_processes);
    return signal_below(root, sig, pids.data(), parents.data());
}

ReaperMode reaper_mode() {
    static const ReaperMode mode = may_make_pid_namespace() ? ReaperMode::pid_namespace : ReaperMode::subreaper;
    return mode;
}

ReaperSignals reaper_signals() { return {SIGRTMIN + 1, SIGRTMIN + 2, SIGRTMIN + 3}; }

pid_t start_reaper(const ReaperPlan& plan, void (*start_runner)(const void*), const void* runner_plan, int report_fd, int report_read,
                   ChildMemory& memory) noexcept {
    StackMove move;
    const ReaperStart start{&plan, start_runner, runner_plan, report_fd, &memory, &move};
    const int flags = SIGCHLD | (plan.pid_namespace ? CLONE_NEWPID : 0);
    constexpr bool shared = raw::available && children_share_memory;
    long pid = -1;
    if constexpr (shared) {
        move.leave_for(memory, 1);
        pid = ::clone(supervise_entry, memory.top(1), flags | CLONE_VM, const_cast<ReaperStart*>(&start));
    } else {
        pid = ::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr);
        if (pid == 0) supervise(start);
    }
    const int error = pid < 0 ? errno : 0;
    raw::call(SYS_close, report_fd);
    if (pid > 0 && shared) wait_for_runner(report_read);
    if constexpr (shared) move.come_back();
    if (pid < 0) errno = error;
    return static_cast<pid_t>(pid);
}

void end_supervisor(pid_t pid) noexcept {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != 0) return;  // reaped, or ended
    ::kill(pid, SIGKILL);
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {}
}

pid_t start_child(void (*start)(const void*), const void* arg, ChildMemory& memory) noexcept {
    if constexpr (!children_share_memory) {
        // A copy, by a raw clone: no fork handler of the host's runs in it (its caller
        // may be the supervisor, itself such a copy of a host with other threads).
        const long pid = ::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
        if (pid == 0) {
            start(arg);
            ::_exit(127);
        }
        return static_cast<pid_t>(pid);
    }
    StackMove move;
    const ChildStart c{start, arg, &move};
    move.leave_for(memory, 0);
    const pid_t pid = ::clone(child_entry, memory.top(0), CLONE_VM | CLONE_VFORK | SIGCHLD, const_cast<ChildStart*>(&c));
    const int error = errno;
    move.come_back();
    errno = error;
    return pid;
}

Supervision run_supervision(const WrapResult& wrapped) {
    if (wrapped.attestation.kind == Attestation::Kind::exec)
        return {Level::none,
                "lifetime: a runner followed by exec attestation is the host's own child, with no supervisor between them: what its command "
                "leaves running outlives the run"};
    if (reaper_mode() == ReaperMode::pid_namespace) return {Level::full, {}, true};
    return {Level::partial,
            "lifetime: the run's processes are gathered by a supervisor (a child subreaper) that ends them all, but they outlive the run when "
            "something outside it kills that supervisor with SIGKILL (a PID namespace of the run's own needs CAP_SYS_ADMIN)"};
}

}  // namespace confine::detail
