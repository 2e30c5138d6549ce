// reach PID...: what a confined command can do to each process it is given, printed as
// one line per PID, "PID kill=R seize=R pidfd=R getfd=R", where R is "ok" or the errno's
// name. Run inside a sandbox by the escape tests: every R must be an error for a process
// outside the sandbox (docs/design.md §11, "the supervisor cannot be entered").
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

const char* outcome(long rc) {
    if (rc >= 0) return "ok";
    const char* name = ::strerrorname_np(errno);
    return name ? name : "error";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: reach PID...\n");
        return 2;
    }
    for (int i = 1; i < argc; ++i) {
        const pid_t pid = static_cast<pid_t>(std::atol(argv[i]));
        const char* kill = outcome(::kill(pid, 0));
        // PTRACE_SEIZE is checked as PTRACE_ATTACH is, without stopping the process should
        // it succeed; the tracer's exit detaches it again.
        const char* seize = outcome(::ptrace(PTRACE_SEIZE, pid, nullptr, nullptr));
        const long pidfd = ::syscall(SYS_pidfd_open, pid, 0);
        const char* opened = outcome(pidfd);
        const char* getfd = pidfd >= 0 ? outcome(::syscall(SYS_pidfd_getfd, static_cast<int>(pidfd), 0, 0)) : "-";
        std::printf("%d kill=%s seize=%s pidfd=%s getfd=%s\n", static_cast<int>(pid), kill, seize, opened, getfd);
    }
    return 0;
}
