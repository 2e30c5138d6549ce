// The terminal filter for every runner the host starts (docs/design.md §11), installed
// by the forked child before its exec.
#include "linux_features.hpp"

#include <confine/sdk/terminal_filter_linux.hpp>

#include <sys/prctl.h>

#include <cerrno>

namespace confine::detail {

int install_terminal_filter() noexcept {
    // Allowed as is with CAP_SYS_ADMIN (root, and what bubblewrap needs then); otherwise
    // with no_new_privs, which the kernel requires for a filter.
    int rc = terminal::install_injection_filter();
    if (rc == -EACCES && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) rc = terminal::install_injection_filter();
    return -rc;
}

}  // namespace confine::detail
