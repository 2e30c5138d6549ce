// The terminal filter for every runner the host starts (docs/design.md §11), installed
// by the forked child before its exec; and the network filter's program in a file, for a
// runner that loads it itself (bubblewrap's --seccomp, docs/design.md §12).
#include "linux_features.hpp"

#include <confine/internal/network_filter_linux.hpp>
#include <confine/internal/terminal_filter_linux.hpp>

#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>

namespace confine::detail {

int install_terminal_filter() noexcept {
    // Allowed as is with CAP_SYS_ADMIN (root, and what bubblewrap needs then); otherwise
    // with no_new_privs, which the kernel requires for a filter.
    int rc = terminal::install_injection_filter();
    if (rc == -EACCES && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) rc = terminal::install_injection_filter();
    return -rc;
}

int network_filter_descriptor(network::Filter kind) {
#if !defined(CONFINE_NETWORK_FILTER_PROGRAM)
    (void)kind;
    errno = ENOSYS;
    return -1;
#else
    const int fd = ::memfd_create("confine-network-filter", MFD_CLOEXEC);
    if (fd < 0) return -1;
    const auto* bytes = reinterpret_cast<const char*>(network::filter_code(kind));
    std::size_t left = network::filter_size(kind) * sizeof(sock_filter);
    while (left > 0) {
        const ssize_t n = ::write(fd, bytes, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : EIO;
            ::close(fd);
            errno = error;
            return -1;
        }
        bytes += n;
        left -= static_cast<std::size_t>(n);
    }
    if (::lseek(fd, 0, SEEK_SET) != 0) {
        const int error = errno;
        ::close(fd);
        errno = error;
        return -1;
    }
    return fd;
#endif
}

}  // namespace confine::detail
