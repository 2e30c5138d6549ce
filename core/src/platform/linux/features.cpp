// The parts of linux_features.hpp and fd.hpp that are one Linux system call each.
#include "fd.hpp"
#include "linux_features.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace confine::detail {

// Linux has all of it: exec attestation, in-process confinement.
std::optional<std::string> missing_feature(const ExecSpec&) { return std::nullopt; }

bool make_pipe(Fd& read_end, Fd& write_end) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read_end = Fd(fds[0]);
    write_end = Fd(fds[1]);
    return true;
}

// pipe2 leaves no moment in which a fork could inherit a pipe: nothing to hold.
std::unique_lock<std::mutex> fork_guard() { return {}; }

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

void discard_pending(int sig) {
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    struct timespec zero {};
    while (::sigtimedwait(&only, nullptr, &zero) > 0) {}
}

}  // namespace confine::detail
