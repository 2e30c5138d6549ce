// Device nodes of confine's own for a bubblewrap sandbox run by root (Linux).
//
// bubblewrap's --dev gives the sandbox a /dev of its own, but null, zero, full, random,
// urandom and tty in it are bind mounts of the host's nodes. A command whose user is root
// owns them (root in its user namespace is the host's root): it needs no capability to
// chmod or touch them, and a `chmod 000 /dev/null` inside would break the host. A
// read-only remount would stop that, but bubblewrap remounts nodev with it, which makes
// the nodes unusable. So for root the profile binds, over each of them, a node of the same
// device made by confine, owned by a user and group no process runs as and that the
// sandbox's user namespace does not map ((uid_t)-2): the command may read and write it
// (mode 0666) but not change it, and nothing of the host's is reached.
//
// The nodes live in a directory only root may write, on a file system that allows device
// nodes; each wrap checks the directory and the path to it (root's, written by no one
// else, no link) and each node (a character device of the right number, owner, mode, one
// link), and makes again any that is not so (a new node renamed over it). Where that
// cannot be done (a read-only or nodev file system, a path another user may write), the
// profile keeps the host's nodes and the runner says write is partial, naming them.
#pragma once

#if defined(__linux__)

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>

namespace confine::sdk {

struct DeviceNode {
    const char* name;
    unsigned major;
    unsigned minor;
};

// The nodes bubblewrap's --dev binds from the host.
inline constexpr std::array<DeviceNode, 6> bwrap_device_nodes{
    {{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0}}};

// Where confine keeps its own nodes, and the owner they have.
inline constexpr const char* private_devices_dir = "/var/lib/confine/devices";
inline constexpr uid_t private_device_owner = static_cast<uid_t>(-2);

// What the write dimension leaves open where the host's nodes are given to root.
inline constexpr const char* host_devices_left_open =
    "write: the sandbox's root owns the host's /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom and /dev/tty, which "
    "bubblewrap binds from the host, and can change their mode and times";

namespace detail {

// `dir` (absolute) opened as a directory, each component without following a link and
// owned by root, written by no one else; made (0755) where missing when `make`. -1 when
// not so.
inline int open_root_directory(const std::string& dir, bool make) noexcept {
    int fd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (std::size_t at = 1; fd >= 0 && at < dir.size();) {
        const std::size_t end = dir.find('/', at);
        const std::string part = dir.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? dir.size() : end + 1;
        if (part.empty()) continue;
        if (make && ::mkdirat(fd, part.c_str(), 0755) != 0 && errno != EEXIST) {
            ::close(fd);
            return -1;
        }
        const int next = ::openat(fd, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        ::close(fd);
        fd = next;
        struct stat st {};
        if (fd >= 0 && (::fstat(fd, &st) != 0 || st.st_uid != 0 || (st.st_mode & 022) != 0)) {
            ::close(fd);
            fd = -1;
        }
    }
    return fd;
}

// Whether the entry `name` of `dir_fd` is the node `n` as confine makes it.
inline bool node_as_made(int dir_fd, const DeviceNode& n) noexcept {
    struct stat st {};
    return ::fstatat(dir_fd, n.name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(n.major, n.minor) &&
           st.st_uid == private_device_owner && st.st_gid == static_cast<gid_t>(private_device_owner) && (st.st_mode & 07777) == 0666 &&
           st.st_nlink == 1;
}

// Makes the node `n` in `dir_fd` afresh: under a name of this process's, then renamed over
// whatever is there. 0 or -errno.
inline int make_node(int dir_fd, const DeviceNode& n) noexcept {
    const std::string staged = std::string(".") + n.name + "." + std::to_string(::getpid());
    ::unlinkat(dir_fd, staged.c_str(), 0);
    if (::mknodat(dir_fd, staged.c_str(), S_IFCHR | 0600, makedev(n.major, n.minor)) != 0) return -errno;
    int rc = 0;
    if (::fchownat(dir_fd, staged.c_str(), private_device_owner, static_cast<gid_t>(private_device_owner), AT_SYMLINK_NOFOLLOW) != 0 ||
        ::fchmodat(dir_fd, staged.c_str(), 0666, 0) != 0 || ::renameat(dir_fd, staged.c_str(), dir_fd, n.name) != 0)
        rc = -errno;
    if (rc != 0) ::unlinkat(dir_fd, staged.c_str(), 0);
    return rc;
}

}  // namespace detail

// Whether `dir` holds every node of bwrap_device_nodes as confine makes them, made or
// made again here where not (only root can): a directory only root writes, on a file
// system that allows device nodes. False when any of it cannot be so.
inline bool private_devices_ready(const std::string& dir = private_devices_dir) noexcept {
    if (::geteuid() != 0 || dir.empty() || dir.front() != '/') return false;
    const int fd = detail::open_root_directory(dir, true);
    if (fd < 0) return false;
    struct statvfs vfs {};
    bool ready = ::fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & (ST_NODEV | ST_RDONLY)) == 0;
    for (const DeviceNode& n : bwrap_device_nodes)
        ready = ready && (detail::node_as_made(fd, n) || (detail::make_node(fd, n) == 0 && detail::node_as_made(fd, n)));
    ::close(fd);
    return ready;
}

}  // namespace confine::sdk

#endif
