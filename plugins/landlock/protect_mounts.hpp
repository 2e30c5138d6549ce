// What keeps the protected paths of a writable root read-only where Landlock cannot (a
// Landlock rule grants a directory with everything beneath it): a mount namespace of the
// run's own, made by a process that holds CAP_SYS_ADMIN (root) before it drops its
// capabilities, with the mounts sdk::bwrap_protect_mounts() plans — each protected path
// bound read-only onto itself, the git directory it lies in bound onto itself (a mount
// point no `mv .git` moves), an empty read-only tmpfs where a git directory lacks hooks/,
// worktrees/ or modules/. The host's mounts still reach the namespace; none of its own
// leave it, and it ends with the run's last process.
//
// System calls only: it runs between fork and exec, and in the launcher. Every path is
// opened without following a link on its way (openat2, RESOLVE_NO_SYMLINKS) and mounted
// through that descriptor (open_tree, mount_setattr, move_mount).
#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace confine::landlock {

// How one protected path is kept (sdk::ProtectMount, as a launcher argument names it).
enum class ProtectKind : char {
    held = 'h',       // --protect-held: a git directory bound onto itself, writable
    empty = 'e',      // --protect-empty: an empty read-only tmpfs, its directory made if missing
    read_only = 'r',  // --protect: bound read-only onto itself
};

namespace detail {

inline int open_unfollowed(const char* path, int flags) noexcept {
    struct open_how how {};
    how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    return fd < 0 ? -errno : static_cast<int>(fd);
}

struct Closing {
    int fd;
    ~Closing() {
        if (fd >= 0) ::close(fd);
    }
};

// The directory `path` names, made (mode 0755) beneath its parent if it is missing: the
// parent opened without following a link, the directory made there by name.
inline int make_directory(const char* path) noexcept {
    const char* slash = std::strrchr(path, '/');
    if (!slash || slash == path || slash[1] == '\0') return -EINVAL;
    char parent[4096];
    const auto length = static_cast<std::size_t>(slash - path);
    if (length >= sizeof parent) return -ENAMETOOLONG;
    std::memcpy(parent, path, length);
    parent[length] = '\0';
    const Closing dir{open_unfollowed(parent, O_PATH | O_DIRECTORY)};
    if (dir.fd < 0) return dir.fd;
    if (::mkdirat(dir.fd, slash + 1, 0755) != 0 && errno != EEXIST) return -errno;
    return 0;
}

}  // namespace detail

// This process's own mount namespace, into which the host's mounts still propagate and
// from which none of its own leave. 0, or -errno.
inline int own_mount_namespace() noexcept {
    if (::unshare(CLONE_NEWNS) != 0) return -errno;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return -errno;
    return 0;
}

// Keeps `path` (absolute, resolved) as `kind` says, in this process's mount namespace
// (own_mount_namespace() first; a directory before what lies beneath it). 0, or -errno.
inline int protect_mount(const char* path, ProtectKind kind) noexcept {
    if (kind == ProtectKind::empty)
        if (int rc = detail::make_directory(path); rc < 0) return rc;
    const detail::Closing target{detail::open_unfollowed(path, O_PATH)};
    if (target.fd < 0) return target.fd;
    detail::Closing tree{-1};
    if (kind == ProtectKind::empty) {
        const detail::Closing fs{static_cast<int>(::fsopen("tmpfs", FSOPEN_CLOEXEC))};
        if (fs.fd < 0) return -errno;
        if (::fsconfig(fs.fd, FSCONFIG_SET_STRING, "mode", "0755", 0) != 0 || ::fsconfig(fs.fd, FSCONFIG_SET_STRING, "size", "4k", 0) != 0 ||
            ::fsconfig(fs.fd, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
            return -errno;
        tree.fd = ::fsmount(fs.fd, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    } else {
        tree.fd = static_cast<int>(::open_tree(target.fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    }
    if (tree.fd < 0) return -errno;
    if (kind == ProtectKind::read_only) {
        struct mount_attr attr {};
        attr.attr_set = MOUNT_ATTR_RDONLY;
        if (::mount_setattr(tree.fd, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) return -errno;
    }
    if (::move_mount(tree.fd, "", target.fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) return -errno;
    return 0;
}

}  // namespace confine::landlock
