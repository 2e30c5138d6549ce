// linux_features.hpp and fd.hpp for a build without platform/linux/ (macOS, or
// CONFINE_PORTABLE_POSIX): POSIX calls only. What needs Linux is refused before anything
// starts (docs/design.md §3: fail closed); nothing here runs a command with less than
// it asked for without saying so.
#include "fd.hpp"
#include "linux_features.hpp"

#include <confine/internal/network_filter_linux.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace confine::detail {
namespace {

// Taken by make_pipe from pipe() until both ends are close-on-exec, and by fork_guard
// around each fork and spawn of this library.
std::mutex descriptors_in_the_making;

}  // namespace

std::optional<std::string> missing_feature(const ExecSpec& spec) {
    // The Landlock runner's path (docs/design.md §8); refused rather than run by a build
    // that cannot follow or check it.
    if (spec.in_process) return "in-process confinement is not available in this build";
    // Following a runner's execs takes ptrace's exec events, which only Linux has.
    if (spec.attestation.kind == Attestation::Kind::exec) return "exec attestation is not available in this build";
    return std::nullopt;
}

// Never reached: missing_feature refuses a run that would need it.
int trace_me() noexcept { return ENOSYS; }

int signal_processes_below(pid_t, int) { return 0; }

// No supervisor: run_supervision says none, so no run asks for one.
ReaperMode reaper_mode() { return ReaperMode::subreaper; }
ReaperSignals reaper_signals() { return {0, 0, 0}; }
pid_t start_reaper(const ReaperPlan&, void (*)(const void*), const void*, int report_fd, int, ChildMemory&) noexcept {
    ::close(report_fd);
    errno = ENOSYS;
    return -1;
}

// No supervisor here, and none that shares this process's memory.
void end_supervisor(pid_t) noexcept {}

// A fork: the child has memory of its own, and the parent goes on at once.
pid_t start_child(void (*start)(const void*), const void* arg, ChildMemory&) noexcept {
    const pid_t pid = ::fork();
    if (pid == 0) {
        start(arg);
        ::_exit(127);
    }
    return pid;
}

// Nothing here gathers a run's processes: what the command leaves running outlives the
// run, and the report says so.
Supervision run_supervision(const WrapResult&) {
    return {Level::none, "lifetime: this build has no supervisor of the run: what the command leaves running outlives it"};
}

// No seccomp, so no host filter: what keeps a command from the terminal is a runner
// that starts a new session without one (bubblewrap's --new-session), and the host
// reports the filter as missing (terminal_filter_linux.hpp, without_host_filter) rather
// than claim it (docs/design.md §11).
int install_terminal_filter() noexcept { return 0; }

// Where the program exists (this build on Linux), a runner that loads it itself
// (bubblewrap) is handed it in an unlinked file; elsewhere there is none, and a run that
// needs it fails before it starts.
int network_filter_descriptor(network::Filter kind) {
#if defined(CONFINE_NETWORK_FILTER_PROGRAM)
    char name[] = "/var/tmp/confine-network-filter.XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) return -1;
    ::unlink(name);
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    const auto* bytes = reinterpret_cast<const char*>(network::filter_code(kind));
    const std::size_t size = network::filter_size(kind) * sizeof(sock_filter);
    if (::write(fd, bytes, size) != static_cast<ssize_t>(size) || ::lseek(fd, 0, SEEK_SET) != 0) {
        const int error = errno ? errno : EIO;
        ::close(fd);
        errno = error;
        return -1;
    }
    return fd;
#else
    (void)kind;
    errno = ENOSYS;
    return -1;
#endif
}

// Never reached: missing_feature refuses a run that would need it. Fails closed all the
// same: the runner is ended and counts as stopped before the command.
bool follow_execs(pid_t pid, std::uint32_t, const std::filesystem::path&, Observation& o) {
    ::kill(pid, SIGKILL);
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    o.attested = Observation::Attested::runner_stopped;
    o.attestation_detail = "exec attestation is not available in this build";
    return false;
}

// No pidfd: the pump asks waitpid every few milliseconds instead.
int open_pidfd(pid_t) {
    errno = ENOSYS;
    return -1;
}

// No kcmp: standard_outputs_shared compares what it can see of the two descriptors.
int same_open_file(int, int) { return -1; }

// Without sigtimedwait: sigwait, only while the signal is pending. A signal sent to the
// whole process stays pending only while every thread blocks it; another thread waiting
// for it could then take it between the two calls and leave this one waiting. A host
// that blocks SIGPIPE everywhere and waits for it too is not one this path serves.
void discard_pending(int sig) {
    sigset_t only, pending;
    sigemptyset(&only);
    sigaddset(&only, sig);
    int got = 0;
    while (::sigpending(&pending) == 0 && sigismember(&pending, sig) == 1) ::sigwait(&only, &got);
}

// The status descriptor's process ID cannot be judged without pidfds: it might name a
// process that has ended and whose number has passed to another. Signals go to the runner.
std::unique_ptr<CommandLocator> locate_reported_command(pid_t, std::string, std::function<void(int)>, std::function<void()>) {
    return nullptr;
}

bool locates_reported_commands() { return false; }

// pipe() and then FD_CLOEXEC: between the two, a fork would hand both ends to its
// child. This library's own forks wait for the mark (fork_guard); a fork by other code
// of the host in that moment is not covered, as with any library on a system without
// pipe2 — the portable build accepts that, the Linux build does not need to.
bool make_pipe(Fd& read_end, Fd& write_end) {
    const std::lock_guard lock(descriptors_in_the_making);
    int fds[2];
    if (::pipe(fds) != 0) return false;
    read_end = Fd(fds[0]);
    write_end = Fd(fds[1]);
    return ::fcntl(fds[0], F_SETFD, FD_CLOEXEC) == 0 && ::fcntl(fds[1], F_SETFD, FD_CLOEXEC) == 0;
}

std::unique_lock<std::mutex> fork_guard() { return std::unique_lock(descriptors_in_the_making); }

// No close_range: each number up to the limit on open files (where there is no finite
// limit, the first 65536), with fcntl alone, which is async-signal-safe.
int inherit_only(const int* kept, std::size_t count) noexcept {
    struct rlimit limit {};
    const rlim_t top = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY ? limit.rlim_cur : 65536;
    for (rlim_t fd = 3; fd < top; ++fd) {
        const int flags = ::fcntl(static_cast<int>(fd), F_GETFD);
        if (flags < 0) {
            if (errno == EBADF) continue;
            return errno;
        }
        if ((flags & FD_CLOEXEC) == 0 && ::fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC) != 0) return errno;
    }
    for (std::size_t i = 0; i < count; ++i)
        if (::fcntl(kept[i], F_SETFD, 0) != 0) return errno;
    return 0;
}

}  // namespace confine::detail
