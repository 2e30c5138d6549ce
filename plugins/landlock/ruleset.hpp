// Landlock, spoken directly to the kernel: the one table that maps a kernel's ABI to
// what can be governed, the few steps that build a ruleset, confine_self(), which
// applies it together with what Landlock does not govern (capabilities, terminal
// injection), and the notice a partially enforcing path prints. Shared by the
// landlock-run launcher and the plugin, so every Landlock path confines the same way.
// Allocates nothing and throws nothing, so it may run between fork and exec.
#pragma once

#include <confine/internal/network_filter_linux.hpp>
#include <confine/internal/terminal_filter_linux.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

// Vendored from <linux/landlock.h>: the system headers may predate the ABIs we handle.
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

namespace confine::landlock {

inline constexpr std::uint32_t create_ruleset_version = 1u << 0;
inline constexpr int rule_path_beneath = 1;
inline constexpr int rule_net_port = 2;  // ABI 4

// struct landlock_net_port_attr.
struct NetPortAttr {
    std::uint64_t allowed_access;
    std::uint64_t port;
};

// The Landlock ABI versions, named as rust-landlock's `ABI` names them, each with what it
// added. A kernel reports the highest it speaks (abi_version()); the sets below follow.
struct Abi {
    static constexpr int v1 = 1;  // the filesystem: execute, read, write, remove, make
    static constexpr int v2 = 2;  // refer: link or rename across directories
    static constexpr int v3 = 3;  // truncate
    static constexpr int v4 = 4;  // the network: TCP bind and connect
    static constexpr int v5 = 5;  // ioctl on device files
    static constexpr int v6 = 6;  // scopes: abstract unix sockets, signals
    static constexpr int v7 = 7;  // audit logging of denials; no new right
};

// The filesystem access rights (<linux/landlock.h> LANDLOCK_ACCESS_FS_*, rust-landlock's
// AccessFs), each with the ABI that brought it.
namespace access {
inline constexpr std::uint64_t execute = 1ull << 0;        // ABI 1
inline constexpr std::uint64_t write_file = 1ull << 1;     // ABI 1
inline constexpr std::uint64_t read_file = 1ull << 2;      // ABI 1
inline constexpr std::uint64_t read_dir = 1ull << 3;       // ABI 1
inline constexpr std::uint64_t remove_dir = 1ull << 4;     // ABI 1
inline constexpr std::uint64_t remove_file = 1ull << 5;    // ABI 1
inline constexpr std::uint64_t make_char = 1ull << 6;      // ABI 1
inline constexpr std::uint64_t make_dir = 1ull << 7;       // ABI 1
inline constexpr std::uint64_t make_reg = 1ull << 8;       // ABI 1
inline constexpr std::uint64_t make_sock = 1ull << 9;      // ABI 1
inline constexpr std::uint64_t make_fifo = 1ull << 10;     // ABI 1
inline constexpr std::uint64_t make_block = 1ull << 11;    // ABI 1
inline constexpr std::uint64_t make_sym = 1ull << 12;      // ABI 1
inline constexpr std::uint64_t refer = 1ull << 13;         // ABI 2
inline constexpr std::uint64_t truncate = 1ull << 14;      // ABI 3
inline constexpr std::uint64_t ioctl_dev = 1ull << 15;     // ABI 5

// The rights that only read, for a kernel ABI (rust-landlock's AccessFs::from_read).
inline constexpr std::uint64_t from_read(int abi) noexcept { return abi >= Abi::v1 ? execute | read_file | read_dir : 0; }

// The rights that change something, for a kernel ABI (AccessFs::from_write): ABI 1's,
// then refer (2), truncate (3; ABI 4 added only network rights), ioctl on devices (5).
inline constexpr std::uint64_t from_write(int abi) noexcept {
    if (abi < Abi::v1) return 0;
    std::uint64_t rights = write_file | remove_dir | remove_file | make_char | make_dir | make_reg | make_sock | make_fifo | make_block | make_sym;
    if (abi >= Abi::v2) rights |= refer;
    if (abi >= Abi::v3) rights |= truncate;
    if (abi >= Abi::v5) rights |= ioctl_dev;
    return rights;
}

// Every filesystem right a kernel ABI knows (AccessFs::from_all).
inline constexpr std::uint64_t from_all(int abi) noexcept { return from_read(abi) | from_write(abi); }

// The rights that mean something on a file that is not a directory (the kernel's
// ACCESS_FILE; rust-landlock's AccessFs::from_file).
inline constexpr std::uint64_t file = execute | write_file | read_file | truncate | ioctl_dev;
}  // namespace access

// The network access rights (LANDLOCK_ACCESS_NET_*, rust-landlock's AccessNet).
namespace net_access {
inline constexpr std::uint64_t bind_tcp = 1ull << 0;     // ABI 4
inline constexpr std::uint64_t connect_tcp = 1ull << 1;  // ABI 4

// Every network right a kernel ABI knows (AccessNet::from_all).
inline constexpr std::uint64_t from_all(int abi) noexcept { return abi >= Abi::v4 ? bind_tcp | connect_tcp : 0; }
}  // namespace net_access

// What a domain can be scoped to (LANDLOCK_SCOPE_*, rust-landlock's Scope).
namespace scope {
inline constexpr std::uint64_t abstract_unix_socket = 1ull << 0;  // ABI 6
inline constexpr std::uint64_t signal = 1ull << 1;                // ABI 6

// Every scope a kernel ABI knows (Scope::from_all).
inline constexpr std::uint64_t from_all(int abi) noexcept { return abi >= Abi::v6 ? abstract_unix_socket | signal : 0; }
}  // namespace scope

// The kernel's struct landlock_ruleset_attr; it reads only the size it is given, so a
// ruleset without scopes is passed as the first field alone (what ABI 1 knows).
struct RulesetAttr {
    std::uint64_t handled_access_fs;
    std::uint64_t handled_access_net;  // ABI 4
    std::uint64_t scoped;              // ABI 6
};

struct [[gnu::packed]] PathBeneathAttr {
    std::uint64_t allowed_access;
    std::int32_t parent_fd;
};

// The kernel's Landlock ABI version, or a value < 1 when it does not enforce Landlock.
// `cap` (> 0) pretends the kernel is no newer than that: for tests only.
inline int abi_version(int cap = 0) noexcept {
    long v = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, create_ruleset_version);
    if (v < 1) return 0;
    return cap > 0 && v > cap ? cap : static_cast<int>(v);
}

// The ABI the launcher and the plugin negotiate: the kernel's. A test-only build
// (CONFINE_LANDLOCK_TEST_ABI_CAP) pretends to be an older kernel, as its environment's
// CONFINE_TEST_LANDLOCK_ABI_CAP says; the shipped builds have no such input.
inline int negotiated_abi() noexcept {
#ifdef CONFINE_LANDLOCK_TEST_ABI_CAP
    const char* cap = std::getenv("CONFINE_TEST_LANDLOCK_ABI_CAP");
    return abi_version(cap ? std::atoi(cap) : 0);
#else
    return abi_version();
#endif
}

// The filesystem accesses governed for a kernel ABI: every one it knows (ABI 5's, the
// last to add any, for a newer kernel).
inline std::uint64_t handled_access(int abi) noexcept { return access::from_all(abi); }

// What the domain is scoped to for a kernel ABI: from ABI 6, signals (a confined command
// cannot signal a process outside its domain: not confinectl, not the caller's other
// processes), and with the network confined, abstract unix sockets (none bound outside
// the domain can be connected or sent to, whatever socket the command holds, one handed
// in included). Below that, nothing: signals stay open, and the README says so; the
// network filter still refuses every connect and every unix datagram socket the command
// would make, so only a datagram socket handed in could reach a host's abstract socket.
inline std::uint64_t scopes(int abi, bool network_none) noexcept {
    return scope::from_all(abi) & (scope::signal | (network_none ? scope::abstract_unix_socket : 0));
}

// Whether the network, when confined, is confined whole for a kernel ABI: from ABI 6,
// where abstract unix sockets are scoped.
inline bool network_fully_confined(int abi) noexcept { return (scopes(abi, true) & scope::abstract_unix_socket) != 0; }

// What is left open of a confined network below that, said wherever the runner reports
// what it enforces.
inline constexpr std::string_view network_left_open =
    "abstract unix sockets are not scoped (Landlock ABI below 6): a unix datagram socket handed in from outside can still send to a "
    "host's abstract socket";

// The network accesses governed when the network is confined, for a kernel ABI: from
// ABI 4, binding and connecting TCP sockets, with no rule granting either (the network
// filter already refuses every socket but a unix stream or sequenced-packet one; this
// holds even for a socket passed in from outside).
inline std::uint64_t handled_network(int abi, bool network_none) noexcept {
    return network_none ? net_access::from_all(abi) : 0;
}

// Everything below ABI 5 leaves some filesystem access ungoverned (ioctl on devices, and
// below that truncate and refer).
inline bool fully_enforced(int abi) noexcept { return abi >= Abi::v5; }

// The one line every Landlock path prints on stderr, just before the command, where the
// kernel does not enforce fully (docs/landlock-run.md): informational, never evidence
// of a runner failure, so the plugin lists it in its failure rule as it is printed.
inline constexpr char partial_notice_line[] = "landlock-run: partial enforcement (older Landlock ABI)\n";
inline constexpr std::string_view partial_notice{partial_notice_line, sizeof partial_notice_line - 2};  // without the newline

// Writes partial_notice_line to stderr, in one write; nothing else (between fork and exec).
inline void print_partial_notice() noexcept {
    ssize_t ignored = ::write(2, partial_notice_line, sizeof partial_notice_line - 1);
    (void)ignored;
}

// The line landlock-run writes on its status descriptor (--status-fd) once it is
// confined, just before it executes the command; no fatal line contains its text.
inline constexpr char status_confined_line[] = "confined: executing the command\n";
inline constexpr std::string_view status_marker{"confined: executing the command"};

enum class Grant { read_only, read_write };

// What a grant allows beneath a path. A path that is not a directory keeps only the
// accesses that make sense on a file (this is how `--rw /dev/null` works).
inline std::uint64_t allowed_access(Grant grant, std::uint64_t handled, bool is_directory) noexcept {
    std::uint64_t allowed = grant == Grant::read_only ? access::from_read(Abi::v1) : handled;
    if (!is_directory) allowed &= access::file;
    return allowed & handled;
}

// A new ruleset descriptor, or -errno. The kernel is given only the fields it needs, so
// that an older kernel is not asked about what it does not know.
inline int create_ruleset(std::uint64_t handled, std::uint64_t scoped = 0, std::uint64_t handled_net = 0) noexcept {
    RulesetAttr attr{handled, handled_net, scoped};
    const std::size_t size = scoped ? sizeof attr : handled_net ? offsetof(RulesetAttr, scoped) : sizeof attr.handled_access_fs;
    long fd = ::syscall(__NR_landlock_create_ruleset, &attr, size, 0u);
    return fd < 0 ? -errno : static_cast<int>(fd);
}

// Allows a TCP connect to `port` on any address (ABI 4): what the network through the
// run's proxy grants, the proxy's port on the host's loopback (Landlock's rules name ports,
// not addresses). 0 or -errno.
inline int add_connect_port_rule(int ruleset_fd, std::uint16_t port) noexcept {
    NetPortAttr rule{net_access::connect_tcp, port};
    return ::syscall(__NR_landlock_add_rule, ruleset_fd, rule_net_port, &rule, 0u) == 0 ? 0 : -errno;
}

// What a TCP connect rule for the proxy's port leaves open, said wherever the runner
// reports the network through the proxy.
inline constexpr std::string_view proxy_port_left_open =
    "TCP connections to the proxy's port are allowed to every address, not only to the proxy on the host's loopback (Landlock's rules "
    "name ports, not hosts): a service on that port of another host, or of this one's other addresses, is reachable";

// Adds `grant` beneath the already opened `path_fd` (an O_PATH descriptor), a directory
// or not as `is_directory` says (read from that descriptor). 0 or -errno.
inline int add_rule_of_type(int ruleset_fd, int path_fd, Grant grant, std::uint64_t handled, bool is_directory) noexcept {
    PathBeneathAttr rule{allowed_access(grant, handled, is_directory), path_fd};
    if (rule.allowed_access == 0) return 0;
    return ::syscall(__NR_landlock_add_rule, ruleset_fd, rule_path_beneath, &rule, 0u) == 0 ? 0 : -errno;
}

// The same, the type read from the descriptor itself.
inline int add_rule(int ruleset_fd, int path_fd, Grant grant, std::uint64_t handled) noexcept {
    struct stat st {};
    if (::fstat(path_fd, &st) != 0) return -errno;
    return add_rule_of_type(ruleset_fd, path_fd, grant, handled, S_ISDIR(st.st_mode));
}

namespace detail {

// Whether `path` (length `len`) is `denied` or lies beneath it (`beneath`: strictly), or
// `denied` lies strictly beneath `path` (`above`). Both absolute and canonical.
inline bool is_prefix_dir(const char* dir, std::size_t dir_len, const char* path) noexcept {
    if (dir_len == 1 && dir[0] == '/') return path[0] == '/' && path[1] != '\0';
    return std::strncmp(dir, path, dir_len) == 0 && path[dir_len] == '/';
}

// The denial `path` meets: 1 when it is one of `denied`, 2 when one lies beneath it, 0
// when neither.
inline int denial_of(const char* path, std::size_t len, const char* const* denied, std::size_t count) noexcept {
    int found = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (std::strlen(denied[i]) == len && std::strncmp(denied[i], path, len) == 0) return 1;
        if (is_prefix_dir(path, len, denied[i])) found = 2;
    }
    return found;
}

struct LinuxDirent64 {
    std::uint64_t d_ino;
    std::int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];
};

// Grants `grant` on each entry of the directory `dir_fd` (whose path is path[0..len]),
// but on a denied one nothing, and into one a denied path lies beneath, again entry by
// entry. A link is granted nothing: what it leads to is judged by its own place. 0 or
// -errno; an entry that vanishes meanwhile is skipped.
inline int grant_entries_around(int ruleset_fd, int dir_fd, char* path, std::size_t len, const char* const* denied, std::size_t count,
                                Grant grant, std::uint64_t handled, int depth) noexcept {
    if (depth > 64) return -ELOOP;
    alignas(8) char buffer[2048];
    for (;;) {
        const long n = ::syscall(SYS_getdents64, dir_fd, buffer, sizeof buffer);
        if (n < 0) return -errno;
        if (n == 0) return 0;
        for (long at = 0; at < n;) {
            const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer + at);
            at += entry->d_reclen;
            const char* name = entry->d_name;
            if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
            const std::size_t name_len = std::strlen(name);
            const std::size_t child_len = (len == 1 ? 0 : len) + 1 + name_len;
            if (child_len >= 4096) return -ENAMETOOLONG;
            path[len == 1 ? 0 : len] = '/';
            std::memcpy(path + (len == 1 ? 1 : len + 1), name, name_len + 1);
            const int denial = denial_of(path, child_len, denied, count);
            int rc = 0;
            if (denial == 2) {
                const int child = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (child >= 0) {
                    rc = grant_entries_around(ruleset_fd, child, path, child_len, denied, count, grant, handled, depth + 1);
                    ::close(child);
                } else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP) {
                    rc = -errno;
                }
            } else if (denial == 0 && entry->d_type != DT_LNK) {
                // A link the directory entry names as one is not even opened; any other
                // entry is opened without following a link. Its type is the entry's, or,
                // where the file system does not say (DT_UNKNOWN), what was opened. One
                // swapped since the listing costs nothing: a link opened so is granted
                // only itself, which leads nowhere; a directory taken for a file gets a
                // file's rights, and a file taken for a directory makes the kernel refuse
                // the rule, and the run.
                const int child = ::openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (child >= 0) {
                    struct stat st {};
                    if (entry->d_type != DT_UNKNOWN) rc = add_rule_of_type(ruleset_fd, child, grant, handled, entry->d_type == DT_DIR);
                    else if (::fstat(child, &st) != 0) rc = -errno;
                    else if (!S_ISLNK(st.st_mode)) rc = add_rule_of_type(ruleset_fd, child, grant, handled, S_ISDIR(st.st_mode));
                    ::close(child);
                } else if (errno != ENOENT && errno != ELOOP) {
                    rc = -errno;
                }  // one that cannot be looked at (gone, or a link) is granted nothing
            }
            path[len] = '\0';
            if (rc < 0) return rc;
        }
    }
}

// Drops every capability for good: the securebits that would give capabilities back
// to a uid 0 exec or keep them across setuid are set and locked, the bounding set is
// emptied, then the ambient, inheritable, permitted and effective sets. Landlock does
// not govern what capabilities allow (device nodes, chown, the network...), so a
// command run by root must hold none. 0 or -errno.
inline int drop_capabilities() noexcept {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3]{};
    if (::syscall(SYS_capget, &header, caps) != 0) return -errno;
    bool holds = false;
    for (const auto& c : caps) holds = holds || c.effective != 0 || c.permitted != 0;

    // Setting the securebits and shrinking the bounding set need CAP_SETPCAP. A process
    // holding no capability may not be able to, and need not: with no_new_privs it
    // cannot gain any. One that holds some and cannot drop them all must not go on.
    if (holds) {
        // What it is permitted, made effective, so that CAP_SETPCAP is usable if held.
        for (auto& c : caps) c.effective = c.permitted;
        if (::syscall(SYS_capset, &header, caps) != 0) return -errno;
        const int current = ::prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
        if (current < 0) return -errno;
        const unsigned long bits = static_cast<unsigned long>(current) | SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                   SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                                   SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return -errno;
        // Up to the kernel's last capability, past which the drop says EINVAL: its number
        // is in /proc, which must not be read here.
        for (unsigned long cap = 0; cap < 64; ++cap) {
            if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
            if (errno == EINVAL && cap > 0) break;
            return -errno;
        }
    }
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return -errno;
    __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3]{};
    if (::syscall(SYS_capset, &header, none) != 0) return -errno;
    return 0;
}

}  // namespace detail

// Whether a path of `denied` lies strictly beneath `root`: its grant must go around it.
inline bool holds_denied(const char* root, const char* const* denied, std::size_t count) noexcept {
    return detail::denial_of(root, std::strlen(root), denied, count) == 2;
}

// Adds `grant` beneath `root` (an absolute canonical path), or, where paths of `denied`
// lie beneath it, around them (docs/design.md §12): each entry of each directory on the
// way to a denied path is granted, the denied path and the way to it are not. What is
// created later at those levels is granted nothing, and the directories on the way
// cannot be listed. A `root` that is itself denied, or lies beneath a denied path, is
// granted nothing. 0 or -errno. Allocates nothing.
inline int add_rule_around(int ruleset_fd, const char* root, Grant grant, std::uint64_t handled, const char* const* denied,
                           std::size_t count) noexcept {
    const std::size_t len = std::strlen(root);
    if (len == 0 || len >= 4096 || root[0] != '/') return -EINVAL;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t dl = std::strlen(denied[i]);
        if ((dl == len && std::strcmp(denied[i], root) == 0) || detail::is_prefix_dir(denied[i], dl, root)) return 0;
    }
    if (detail::denial_of(root, len, denied, count) != 2) {
        const int fd = ::open(root, O_PATH | O_CLOEXEC);
        if (fd < 0) return -errno;
        const int rc = add_rule(ruleset_fd, fd, grant, handled);
        ::close(fd);
        return rc;
    }
    const int fd = ::open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    char path[4096];
    std::memcpy(path, root, len + 1);
    const int rc = detail::grant_entries_around(ruleset_fd, fd, path, len, denied, count, grant, handled, 0);
    ::close(fd);
    return rc;
}

// A network namespace of this process's own, its loopback brought up (IPv4's 127.0.0.1
// and, where the kernel has IPv6, ::1): what a command confined with the network none
// gets where the process holds CAP_SYS_ADMIN and CAP_NET_ADMIN (root). Nothing else is
// in it, so TCP and UDP reach only the run's own processes. 0 or -errno.
inline int own_loopback() noexcept {
    if (::unshare(CLONE_NEWNET) != 0) return -errno;
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    ifreq request{};
    std::memcpy(request.ifr_name, "lo", 3);
    int rc = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0 ? 0 : -errno;
    if (rc == 0) {
        request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
        if (::ioctl(fd, SIOCSIFFLAGS, &request) != 0) rc = -errno;
    }
    ::close(fd);
    return rc;
}

// Why confine_self() stopped: `what` (nullptr when it did not) is the start of the
// report line, to be followed by the error's text.
struct Failure {
    const char* what = nullptr;
    int error = 0;
};

// The irreversible steps, in this order: every capability dropped and the securebits
// locked (while the process may still hold CAP_SETPCAP); no_new_privs, which the
// kernel requires of the unprivileged for what follows and which keeps a
// set-user-ID program from giving anything back; the terminal filter, with the network
// confined together with the network filter in one program; then the ruleset. From here on this process and
// everything it executes is confined.
// With the network confined, `filter` says which program the network filter is
// (network_filter_linux.hpp): the proxy program through the run's proxy, the loopback
// program in a network namespace of the run's own (own_loopback()).
inline Failure confine_self(int ruleset_fd, bool network_none, network::Filter filter = network::Filter::closed) noexcept {
    if (int rc = detail::drop_capabilities(); rc < 0) return {"cannot drop capabilities: ", -rc};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return {"landlock ruleset error: ", errno};
#if defined(CONFINE_NETWORK_FILTER_PROGRAM) && !defined(CONFINE_PORTABLE_POSIX) && !defined(CONFINE_NO_TERMINAL_FILTER)
    // Both filters as one program: the kernel runs one filter on each system call.
    if (network_none) {
        if (int rc = network::install_filter_with_terminal(filter); rc < 0) return {"cannot install the terminal and network filter: ", -rc};
    } else if (int rc = terminal::install_injection_filter(); rc < 0) {
        return {"cannot install the terminal filter: ", -rc};
    }
#else
    if (int rc = terminal::install_injection_filter(); rc < 0) return {"cannot install the terminal filter: ", -rc};
    if (network_none)
        if (int rc = network::install_filter(filter); rc < 0) return {"cannot install the network filter: ", -rc};
#endif
    if (::syscall(__NR_landlock_restrict_self, ruleset_fd, 0u) != 0) return {"landlock ruleset error: ", errno};
    return {};
}

}  // namespace confine::landlock
