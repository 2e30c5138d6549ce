// confine-proxy's own confinement (Linux): the proxy reads what a confined command sends,
// so what a flaw there could reach is kept small. Once its descriptors are in hand it may
// read files (name resolution reads /etc/hosts, /etc/resolv.conf and the NSS modules) and
// nothing more of the file system: no file written, created, renamed or removed, no
// program executed (Landlock, every access it handles but reading); no privilege gained
// (no_new_privs); no process outside it signalled (Landlock's signal scope, ABI 6). Its
// sockets and the host's pipes are its own and stay usable. Called before any thread is
// made (Landlock confines the calling thread and what it starts).
#pragma once

#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#include "ruleset.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace confine::proxy {

// nullptr once confined (or where the kernel has no Landlock: no_new_privs alone); else
// the step that failed.
inline const char* confine_itself() noexcept {
    namespace ll = confine::landlock;
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "no_new_privs";
    const int abi = ll::negotiated_abi();
    if (abi < 1) return nullptr;
    const std::uint64_t handled = ll::handled_access(abi);
    const int ruleset = ll::create_ruleset(handled, ll::scope::from_all(abi) & ll::scope::signal, 0);
    if (ruleset < 0) return "the Landlock ruleset";
    const int root = ::open("/", O_PATH | O_CLOEXEC | O_DIRECTORY);
    ll::PathBeneathAttr rule{(ll::access::read_file | ll::access::read_dir) & handled, root};
    const bool added = root >= 0 && ::syscall(__NR_landlock_add_rule, ruleset, ll::rule_path_beneath, &rule, 0u) == 0;
    if (root >= 0) ::close(root);
    const bool restricted = added && ::syscall(__NR_landlock_restrict_self, ruleset, 0u) == 0;
    ::close(ruleset);
    return restricted ? nullptr : "Landlock";
}

}  // namespace confine::proxy
#else
namespace confine::proxy {
// No Landlock in this build: the proxy runs as the caller.
inline const char* confine_itself() noexcept { return nullptr; }
}  // namespace confine::proxy
#endif
