#include "spawn.hpp"
#include "child_report.hpp"
#include "exec_arrays.hpp"
#include "linux_features.hpp"
#include "log.hpp"
#include "run_limits.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace confine::detail {

std::uint64_t caught_signals() noexcept {
    std::uint64_t caught = 0;
    for (int s = 1; s < NSIG && s <= 64; ++s) {
        struct sigaction sa {};
        if (::sigaction(s, nullptr, &sa) == 0 && sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL) caught |= std::uint64_t{1} << (s - 1);
    }
    return caught;
}

namespace {

// The child's ends of the descriptors, closed in the parent once the child has them.
struct ChildEnds {
    Fd report, in, out, err, status, network_filter, proxy;
    std::vector<Fd> directories;
};

// What the child reads between fork and exec, all of it built before the fork.
struct ChildPlan {
    const char* program;
    char* const* argv;
    char* const* envp;
    const char* cwd;  // "": where the parent is
    bool own_group;
    bool new_session;
    bool take_terminal;  // makes ends->in (the run's own terminal) its controlling terminal
    bool trace;
    const InProcess* in_process;
    const ChildEnds* ends;
    int report;                // the write end of the report pipe (ends->report's number)
    const ReaperPlan* reaper;  // the run's supervisor, or nullptr
    // The descriptors above 2 the runner inherits: its status descriptor, directories and
    // network filter, and those the caller passes on; every other one closes at the exec.
    const int* kept;
    std::size_t kept_count;
    sigset_t mask;  // the parent's, restored in the child before its exec
    const ChildLimits* limits = nullptr;  // the run's limits (run_limits.hpp), or nullptr
};

// What the runner inherits above the standard descriptors: the host's own hand-overs
// and the caller's pass_fds, nothing else (docs/design.md §11).
std::vector<int> kept_descriptors(const ExecSpec& spec, const ChildEnds& child) {
    std::vector<int> kept(spec.pass_fds.begin(), spec.pass_fds.end());
    if (child.status.get() >= 0) kept.push_back(child.status.get());
    for (const Fd& dir : child.directories) kept.push_back(dir.get());
    if (child.network_filter.get() >= 0) kept.push_back(child.network_filter.get());
    if (child.proxy.get() >= 0) kept.push_back(child.proxy.get());
    return kept;
}

// `fd`, moved above the standard descriptors (which the child rearranges) when it is one
// of them; -1 (errno set) when it was -1 or cannot be moved.
Fd above_standard_descriptors(Fd fd) {
    if (fd.get() >= 0 && fd.get() <= 2) fd = Fd(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
    return fd;
}

// The runner's status descriptor: its number replaces the placeholder argument. Kept
// above the standard descriptors, which the child rearranges.
std::optional<SpawnRefusal> open_status_descriptor(const ExecSpec& spec, std::vector<std::string>& argv, StartedRunner& runner,
                                                   ChildEnds& child) {
    if (spec.attestation.kind != Attestation::Kind::status_fd) return std::nullopt;
    if (!make_pipe(runner.status, child.status) || (child.status = above_standard_descriptors(std::move(child.status))).get() < 0)
        return SpawnRefusal{errno, {}};
    if (spec.attestation.status_argument >= argv.size()) return SpawnRefusal{EINVAL, {}};
    argv[spec.attestation.status_argument] = std::to_string(child.status.get());
    return std::nullopt;
}

// Directories the runner is handed as descriptors: opened here without following a link
// anywhere in the path (the host resolved each root, so a link now is one swapped in
// since), kept above the standard descriptors, their numbers in place of the placeholder
// arguments.
std::optional<SpawnRefusal> open_directories(const ExecSpec& spec, std::vector<std::string>& argv, ChildEnds& child) {
    for (const Placeholder& p : spec.placeholders) {
        if (p.kind != Placeholder::Kind::dir_fd && p.kind != Placeholder::Kind::dir_path) continue;
        Fd dir = above_standard_descriptors(Fd(trust::open_without_links(p.path, trust::directory_only)));
        if (dir.get() < 0 || p.argument >= argv.size())
            return SpawnRefusal{dir.get() < 0 ? errno : EINVAL, "cannot open the writable root " + p.path};
        argv[p.argument] = (p.kind == Placeholder::Kind::dir_path ? "/proc/self/fd/" : "") + std::to_string(dir.get());
        child.directories.push_back(std::move(dir));
    }
    return std::nullopt;
}

// The network filter's program, in a file whose descriptor replaces each placeholder
// argument for it (bubblewrap's --seccomp), kept above the standard descriptors: the
// loopback program for {loopback-filter-fd}, else the proxy program with the network
// through the run's proxy, else the closed one. One runner argv asks for one of them.
std::optional<SpawnRefusal> open_network_filter(const ExecSpec& spec, std::vector<std::string>& argv, ChildEnds& child) {
    std::optional<Placeholder::Kind> asked;
    for (const Placeholder& p : spec.placeholders) {
        if (p.kind != Placeholder::Kind::network_filter_fd && p.kind != Placeholder::Kind::loopback_filter_fd) continue;
        if (asked && *asked != p.kind) return SpawnRefusal{EINVAL, "the runner asks for two network filters"};
        asked = p.kind;
        if (child.network_filter.get() < 0) {
            const auto kind = p.kind == Placeholder::Kind::loopback_filter_fd ? network::Filter::loopback
                              : spec.network_proxy                            ? network::Filter::proxy
                                                                              : network::Filter::closed;
            Fd filter = above_standard_descriptors(Fd(network_filter_descriptor(kind)));
            if (filter.get() < 0) return SpawnRefusal{errno, "cannot prepare the network filter"};
            child.network_filter = std::move(filter);
        }
        if (p.argument >= argv.size()) return SpawnRefusal{EINVAL, "cannot prepare the network filter"};
        argv[p.argument] = std::to_string(child.network_filter.get());
    }
    return std::nullopt;
}

// The sandbox's side of the proxy's receiving socket, a copy of the host's, whose number
// replaces each {proxy-fd} argument.
std::optional<SpawnRefusal> open_proxy_descriptor(const ExecSpec& spec, std::vector<std::string>& argv, ChildEnds& child) {
    for (const Placeholder& p : spec.placeholders) {
        if (p.kind != Placeholder::Kind::proxy_fd) continue;
        if (spec.proxy_fd < 0 || p.argument >= argv.size()) return SpawnRefusal{EINVAL, "the run's proxy is not there to hand the sandbox"};
        if (child.proxy.get() < 0 && (child.proxy = Fd(::fcntl(spec.proxy_fd, F_DUPFD_CLOEXEC, 3))).get() < 0)
            return SpawnRefusal{errno, "cannot hand the sandbox the run's proxy"};
        argv[p.argument] = std::to_string(child.proxy.get());
    }
    return std::nullopt;
}

// The run's own terminal as the command's standard descriptors (copies above the
// standard ones, which the child rearranges): stdin, stdout, and stderr where the
// caller's is a terminal too and is not read through a pipe.
std::optional<SpawnRefusal> give_terminal(const ExecSpec& spec, ChildEnds& child) {
    if (spec.terminal < 0) return std::nullopt;
    for (Fd* end : {&child.in, &child.out, &child.err}) {
        if (end == &child.err && (spec.copy_stderr || ::isatty(2) != 1)) continue;
        if ((*end = Fd(::fcntl(spec.terminal, F_DUPFD_CLOEXEC, 3))).get() < 0) return SpawnRefusal{errno, "cannot hand the command the run's own terminal"};
    }
    return std::nullopt;
}

// The run's own terminal's path in place of each {terminal-path}: without one, the runner
// is not started (it would bind whatever it found at the path).
std::optional<SpawnRefusal> fill_terminal_path(const ExecSpec& spec, std::vector<std::string>& argv) {
    for (const Placeholder& p : spec.placeholders) {
        if (p.kind != Placeholder::Kind::terminal_path) continue;
        if (spec.terminal < 0 || spec.terminal_path.empty() || p.argument >= argv.size())
            return SpawnRefusal{ENOTTY, "the run's own terminal is not there to hand the sandbox"};
        argv[p.argument] = spec.terminal_path;
    }
    return std::nullopt;
}

std::optional<SpawnRefusal> make_output_pipes(const ExecSpec& spec, StartedRunner& runner, ChildEnds& child) {
    if (auto refused = give_terminal(spec, child)) return refused;
    if (spec.background) {
        child.in = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (child.in.get() < 0 || !make_pipe(runner.out, child.out)) return SpawnRefusal{errno, {}};
    }
    if ((spec.background || spec.copy_stderr) && !make_pipe(runner.err, child.err)) return SpawnRefusal{errno, {}};
    // One pipe for both: the child's stdout is another descriptor of its stderr's write end.
    if (spec.merge_output && !spec.background && child.err.get() >= 0 && (child.out = Fd(::fcntl(child.err.get(), F_DUPFD_CLOEXEC, 3))).get() < 0)
        return SpawnRefusal{errno, {}};
#if defined(F_SETPIPE_SZ)
    // Fewer, larger reads for a command that writes a lot; where the system refuses
    // (a user over its pipe quota), the default size does.
    for (const Fd* pipe : {&runner.out, &runner.err})
        if (pipe->get() >= 0) (void)::fcntl(pipe->get(), F_SETPIPE_SZ, 1 << 20);
#endif
    return std::nullopt;
}


// Handlers the host installed must not run in the child; exec resets them anyway. Only
// the signals that have one are touched.
void reset_signal_handlers() noexcept {
    const std::uint64_t caught = caught_signals();
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG && s <= 64; ++s)
        if (caught & (std::uint64_t{1} << (s - 1))) ::sigaction(s, &dfl, nullptr);
}

// Applies the in-process confinement: returns only when it holds, else reports why.
void apply_in_process(const InProcess& in_process, int report_fd) noexcept {
    ChildReport r{static_cast<int>(ChildStage::confine), 0, {}};
    if (in_process.apply(in_process.state, r.message, sizeof r.message) == 0) return;
    r.message[sizeof r.message - 1] = '\0';
    report_and_exit(report_fd, r, 125);
}

// The child, from fork to exec: async-signal-safe calls only, no allocation, no logging.
// Every runner is started here: a runner confined in-process applies its confinement
// last, every other runner gets the terminal filter (docs/design.md §11: no terminal
// injection on any runner or path, whether or not the mechanism refuses it itself).
[[noreturn]] void run_child(const ChildPlan& p) noexcept {
    const ChildEnds& ends = *p.ends;
    const int report = p.report;
    // A background run has no business with the terminal: a session of its own leaves it
    // none to open (/dev/tty), to read or write, or to push input into.
    // So has a run with a terminal of its own, which becomes that session's controlling
    // terminal, with its job control (docs/design.md §7).
    if (p.new_session) ::setsid();
    else if (p.own_group) ::setpgid(0, 0);
    if (p.take_terminal && ::ioctl(ends.in.get(), TIOCSCTTY, 0) != 0) report_and_exit(report, ChildStage::terminal_session, errno, 125);
    if (ends.in.get() >= 0) ::dup2(ends.in.get(), 0);
    if (ends.out.get() >= 0) ::dup2(ends.out.get(), 1);
    if (ends.err.get() >= 0) ::dup2(ends.err.get(), 2);
    reset_signal_handlers();
    ::pthread_sigmask(SIG_SETMASK, &p.mask, nullptr);
    if (p.cwd[0] != '\0' && ::chdir(p.cwd) != 0) report_and_exit(report, ChildStage::chdir, errno, 127);
    // The descriptors the runner inherits on purpose (it keeps its own from the command),
    // and no other: whatever the host leaked to this process closes at the exec.
    if (const int error = inherit_only(p.kept, p.kept_count)) report_and_exit(report, ChildStage::descriptors, error, 125);
    if (p.limits)
        if (const int error = apply_child_limits(*p.limits)) report_and_exit(report, ChildStage::limits, error, 125);
    if (p.trace)
        if (const int error = trace_me()) report_and_exit(report, ChildStage::trace, error, 125);
    if (!p.in_process)
        if (const int error = install_terminal_filter()) report_and_exit(report, ChildStage::terminal, error, 125);
    if (p.in_process) apply_in_process(*p.in_process, report);
    ::execve(p.program, p.argv, p.envp);
    report_and_exit(report, ChildStage::exec, errno, 127);
}

// Starts the child with every signal blocked, so that no handler of the host runs in it
// before it has reset them: a child that shares this process's memory until its exec,
// or the run's supervisor, which starts one. The parent's mask is back when this
// returns. With a supervisor, the report pipe's write end is closed here.
pid_t fork_child(ChildPlan& plan, ChildEnds& child, int report_read, ChildMemory& memory) {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &plan.mask);
    pid_t pid = -1;
    {
        const auto guard = fork_guard();
        auto start = [](const void* p) { run_child(*static_cast<const ChildPlan*>(p)); };
        if (plan.reaper) pid = start_reaper(*plan.reaper, start, &plan, child.report.release(), report_read, memory);
        else pid = start_child(start, &plan, memory);
    }
    const int fork_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &plan.mask, nullptr);
    errno = fork_errno;
    return pid;
}

}  // namespace

SupervisorMemory::~SupervisorMemory() {
    if (!memory.empty() && pid > 0) end_supervisor(pid);
}

bool reports_command(const ExecSpec& spec) {
    return spec.attestation.kind == Attestation::Kind::status_fd && !spec.attestation.status_pid_key.empty();
}

std::expected<StartedRunner, SpawnRefusal> spawn_runner(const ExecSpec& spec, const std::string& program) {
    StartedRunner runner;
    ChildEnds child;
    // A time limit kills a whole process group where no supervisor ends the run, so such a
    // run with one gets its own group. So does a runner that names its command
    // (bubblewrap): the command has a session of its own, out of reach of the terminal's
    // signals, and the host passes them on to it (docs/design.md §7); the runner itself
    // must not be ended by them before it can.
    runner.own_group = spec.background || (spec.timeout.has_value() && !spec.supervised) || reports_command(spec);
    // A session of its own: a background run's, or one with a terminal of its own.
    const bool new_session = spec.background || spec.terminal >= 0;
    if (!make_pipe(runner.report, child.report)) return std::unexpected(SpawnRefusal{errno, {}});
    std::vector<std::string> argv = spec.argv;
    if (auto refused = open_status_descriptor(spec, argv, runner, child)) return std::unexpected(std::move(*refused));
    if (auto refused = open_directories(spec, argv, child)) return std::unexpected(std::move(*refused));
    if (auto refused = open_network_filter(spec, argv, child)) return std::unexpected(std::move(*refused));
    if (auto refused = open_proxy_descriptor(spec, argv, child)) return std::unexpected(std::move(*refused));
    if (auto refused = fill_terminal_path(spec, argv)) return std::unexpected(std::move(*refused));
    if (log_enabled(spdlog::level::debug))
        log_debug("exec{}: {}", spec.in_process ? " (confined in the child before its exec)" : "", shell_words(argv));
    // Everything the child needs is built here: between fork and exec it allocates nothing.
    const ExecArrays arrays(argv, spec.environment);
    const std::string cwd = spec.working_directory.string();
    if (auto refused = make_output_pipes(spec, runner, child)) return std::unexpected(std::move(*refused));
    ReaperPlan reaper;
    Fd reaped_end, lifeline_end;
    // The supervisor's pipes: the runner's status from it, and the host's life to it. Made
    // last, so that the runner's own descriptors keep their low numbers (a shell takes
    // only 0-9 in a redirection).
    if (spec.supervised) {
        if (!make_pipe(runner.reaped, reaped_end) || !make_pipe(lifeline_end, runner.lifeline)) return std::unexpected(SpawnRefusal{errno, {}});
        const ReaperSignals signals = reaper_signals();
        reaper = {reaper_mode() == ReaperMode::pid_namespace, runner.own_group && !new_session, reaped_end.get(), lifeline_end.get(),
                  runner.lifeline.get(), signals.term_run, signals.kill_run, signals.host_gone};
        runner.supervised = true;
    }
    const std::vector<int> kept = kept_descriptors(spec, child);
    ChildPlan plan{program.c_str(), arrays.argv(), arrays.envp(), cwd.c_str(), runner.own_group, new_session,
                   spec.terminal >= 0 && !reports_command(spec), spec.attestation.kind == Attestation::Kind::exec, spec.in_process, &child, child.report.get(),
                   spec.supervised ? &reaper : nullptr, kept.data(), kept.size(), {}};
    if (spec.limits) plan.limits = &spec.limits->child;
    // A stack for the child; with a supervisor, one more for it (start_reaper).
    ChildMemory memory = children_share_memory ? ChildMemory(spec.supervised ? 2 : 1, child_stack_size) : ChildMemory();
    if (children_share_memory && memory.empty()) return std::unexpected(SpawnRefusal{errno, {}});
    runner.pid = fork_child(plan, child, runner.report.get(), memory);
    // The supervisor runs on this memory as long as it lives; a child without one is past
    // its exec, and its memory free.
    if (spec.supervised && runner.pid > 0) runner.supervisor_memory = SupervisorMemory(std::move(memory), runner.pid);
    if (runner.pid < 0)
        return std::unexpected(SpawnRefusal{errno, spec.supervised && reaper.pid_namespace ? "cannot make a PID namespace for the run's supervisor" : ""});
    // Also here, so that no signal can race the child's own call (a background child makes
    // its own session, which a group set from here would prevent). A supervisor does it
    // for its runner. A child that shares this process's memory has made its call, and
    // executed, before this process goes on: nothing to race.
    if (!children_share_memory && runner.own_group && !new_session && !spec.supervised) ::setpgid(runner.pid, runner.pid);
    return runner;  // the child's ends close with `child`, the supervisor's with theirs
}

int runner_status(const StartedRunner& runner, int waited) {
    if (!runner.supervised || runner.reaped.get() < 0) return waited;
    int status = 0;
    for (;;) {
        const ssize_t n = ::read(runner.reaped.get(), &status, sizeof status);
        if (n < 0 && errno == EINTR) continue;
        return n == static_cast<ssize_t>(sizeof status) ? status : waited;
    }
}

}  // namespace confine::detail
