// The parts of linux_features.hpp and fd.hpp that are one Linux system call each.
#include "fd.hpp"
#include "linux_features.hpp"

#include <fcntl.h>
#if __has_include(<linux/close_range.h>)
#include <linux/close_range.h>  // CLOSE_RANGE_CLOEXEC; without it, inherit_only() marks each descriptor
#endif
#include <signal.h>
#include <sys/resource.h>
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

namespace {

// Marks `fd` close-on-exec; 0 or errno (a descriptor closed meanwhile is not an error).
int mark_close_on_exec(int fd) noexcept {
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0) return errno == EBADF ? 0 : errno;
    if ((flags & FD_CLOEXEC) == 0 && ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) return errno;
    return 0;
}

// A kernel without close_range's CLOSE_RANGE_CLOEXEC (before 5.11): each descriptor
// /proc lists, read by system calls alone (no allocation between fork and exec); where
// /proc cannot say, every number up to the limit on open files. 0 or errno.
int mark_each_close_on_exec() noexcept {
    const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        alignas(8) char buffer[4096];
        int error = 0;
        for (;;) {
            const long n = ::syscall(SYS_getdents64, dir, buffer, sizeof buffer);
            if (n < 0) error = errno;
            if (n <= 0) break;
            for (long at = 0; at < n;) {
                // struct linux_dirent64: inode (8 bytes), offset (8), record length (2), type (1), name.
                unsigned short length = 0;
                __builtin_memcpy(&length, buffer + at + 16, sizeof length);
                const char* name = buffer + at + 19;
                int fd = *name >= '0' && *name <= '9' ? 0 : -1;  // "." and ".." are no descriptors
                for (; *name && fd >= 0; ++name) fd = *name >= '0' && *name <= '9' ? fd * 10 + (*name - '0') : -1;
                if (fd > 2 && fd != dir && error == 0) error = mark_close_on_exec(fd);
                at += length;
            }
        }
        ::close(dir);
        return error;
    }
    struct rlimit limit {};
    const rlim_t top = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY ? limit.rlim_cur : 65536;
    for (rlim_t fd = 3; fd < top; ++fd)
        if (const int error = mark_close_on_exec(static_cast<int>(fd))) return error;
    return 0;
}

}  // namespace

int inherit_only(const int* kept, std::size_t count) noexcept {
#if defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
    if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
#endif
        if (const int error = mark_each_close_on_exec()) return error;
    for (std::size_t i = 0; i < count; ++i)
        if (::fcntl(kept[i], F_SETFD, 0) != 0) return errno;
    return 0;
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int same_open_file(int a, int b) {
#ifdef SYS_kcmp
    constexpr int kcmp_file = 0;  // KCMP_FILE (linux/kcmp.h)
    const pid_t self = ::getpid();
    const long order = ::syscall(SYS_kcmp, self, self, kcmp_file, a, b);
    return order < 0 ? -1 : order == 0 ? 1 : 0;
#else
    (void)a, (void)b;
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
