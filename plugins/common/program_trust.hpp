// Whether a runner program may be trusted to confine: a program that someone else, or
// a confined command, could have replaced is no sandbox at all. POSIX only.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace confine::builtin {

// The resolved path of an existing file, or nullopt with errno set.
inline std::optional<std::string> real_path(const std::string& path) {
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf)) return std::nullopt;
    return std::string(buf);
}

// Whether `path` is `root` or lies beneath it (both resolved).
inline bool is_within(const std::string& path, const std::string& root) {
    if (root == "/") return true;
    return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

// Why `program` cannot be trusted, or nullopt. Checked on the resolved file and every
// directory above it: each must be owned by root or the current user and writable by
// neither group nor others (a root-owned sticky directory such as /var/tmp is accepted
// above the program's own directory). `writable_roots` are places the confined command
// may write: a program there is refused whoever owns it.
inline std::optional<std::string> untrusted_program(const std::string& program, const std::vector<std::string>& writable_roots = {}) {
    auto real = real_path(program);
    if (!real) return program + ": " + std::strerror(errno);
    struct stat st {};
    if (::stat(real->c_str(), &st) != 0) return *real + ": " + std::strerror(errno);
    if (!S_ISREG(st.st_mode)) return *real + " is not a regular file";
    if (::access(real->c_str(), X_OK) != 0) return *real + " is not executable";
    for (const auto& root : writable_roots) {
        auto resolved_root = real_path(root);
        if (resolved_root && is_within(*real, *resolved_root))
            return *real + " lies in " + root + ", which the confined command may write";
    }
    const uid_t me = ::geteuid();
    std::string at = *real;
    for (bool own_dir = true;; ) {
        if (::stat(at.c_str(), &st) != 0) return at + ": " + std::strerror(errno);
        if (st.st_uid != 0 && st.st_uid != me)
            return at + " is owned by uid " + std::to_string(st.st_uid) + ", neither root nor the current user";
        const bool sticky_root_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid == 0;
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && (own_dir || !sticky_root_dir)) {
            char mode[8];
            std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
            return at + " is writable by " + ((st.st_mode & S_IWOTH) ? "others" : "its group") + " (mode " + mode + ")";
        }
        if (at == "/") break;
        const std::size_t slash = at.find_last_of('/');
        own_dir = S_ISREG(st.st_mode);  // the file, then its own directory, then the rest
        at = slash == 0 ? "/" : at.substr(0, slash);
    }
    return std::nullopt;
}

}  // namespace confine::builtin
