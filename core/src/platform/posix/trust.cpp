#include "trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace confine::detail {
namespace {

std::string describe_mode(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

// Judges one path from its status. `is_leaf_or_parent`: the file itself or the
// directory holding it, where even a sticky directory writable by others is refused.
std::optional<std::string> judge(const std::filesystem::path& p, const struct stat& st, uid_t me, bool is_leaf_or_parent) {
    if (st.st_uid != 0 && st.st_uid != me)
        return p.string() + " is owned by uid " + std::to_string(st.st_uid) + ", neither root nor the current user";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        // Above the file's own directory, a root-owned sticky directory (like /tmp)
        // is safe: others can add entries but cannot rename or remove ours.
        const bool sticky_root_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid == 0;
        if (is_leaf_or_parent || !sticky_root_dir)
            return p.string() + " is writable by " + ((st.st_mode & S_IWOTH) ? std::string("others") : std::string("its group")) +
                   " (mode " + describe_mode(st.st_mode) + ")";
    }
    return std::nullopt;
}

std::string cannot_stat(const std::filesystem::path& p) { return p.string() + ": cannot stat: " + std::strerror(errno); }

// Judges the file and every directory above it, for a path with no symbolic link in
// it: the verdict goes to `reason`. Returns false, judging nothing further, when a
// component is a symbolic link after all (the caller then resolves the path first).
bool walk_without_links(const std::filesystem::path& file, uid_t me, std::optional<std::string>& reason) {
    int level = 0;  // 0: the file, 1: its directory
    for (std::filesystem::path p = file;; p = p.parent_path(), ++level) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) {
            reason = cannot_stat(p);
            return true;
        }
        if (S_ISLNK(st.st_mode)) return false;
        if (auto bad = judge(p, st, me, level <= 1)) {
            reason = std::move(bad);
            return true;
        }
        if (p == p.root_path()) return true;
    }
}

// A path the walk above may take as it is: absolute, no ".", "..", or empty part
// (a ".." after a symbolic link means its target's parent, not the lexical one).
bool plain_absolute(const std::filesystem::path& file) {
    if (!file.is_absolute()) return false;
    for (const auto& part : file.relative_path())
        if (part.empty() || part == "." || part == "..") return false;
    return true;
}

}  // namespace

std::optional<std::string> untrusted_reason(const std::filesystem::path& file, TrustScope scope) {
    const uid_t me = ::geteuid();
    if (scope == TrustScope::file_only) {
        // stat follows links: what is judged is what would be opened.
        struct stat st {};
        if (::stat(file.c_str(), &st) != 0) return cannot_stat(file);
        return judge(file, st, me, true);
    }
    // Judge what would actually be opened: the resolved file and the directories it
    // lives in. A path without links is its own resolution, which the walk proves.
    std::optional<std::string> reason;
    if (plain_absolute(file) && walk_without_links(file, me, reason)) return reason;
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(file, ec);
    if (ec) return file.string() + ": " + ec.message();
    if (walk_without_links(real, me, reason)) return reason;
    return real.string() + ": changed while it was being checked";
}

}  // namespace confine::detail
