// An owned file descriptor, closed when it goes. Internal to libconfine.
#pragma once

#include <confine/sdk/trust_posix.hpp>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <utility>

namespace confine::detail {

// The owned descriptor of the trust rule's header, under the name the process code uses.
using Fd = trust::Descriptor;

// A close-on-exec pipe; false (errno set) when it cannot be made.
inline bool make_pipe(Fd& read_end, Fd& write_end) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read_end = Fd(fds[0]);
    write_end = Fd(fds[1]);
    return true;
}

// A descriptor that becomes readable when `pid` exits (before it is reaped), or -1.
inline int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

}  // namespace confine::detail
