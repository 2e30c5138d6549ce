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

std::optional<std::string> check_one(const std::filesystem::path& p, bool is_leaf_or_parent) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0)
        return p.string() + ": cannot stat: " + std::strerror(errno);
    const uid_t me = ::geteuid();
    if (st.st_uid != 0 && st.st_uid != me)
        return p.string() + " is owned by uid " + std::to_string(st.st_uid) +
               ", neither root nor the current user";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        // Above the file's own directory, a root-owned sticky directory (like /tmp)
        // is safe: others can add entries but cannot rename or remove ours.
        const bool sticky_root_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid == 0;
        if (is_leaf_or_parent || !sticky_root_dir)
            return p.string() + " is writable by " +
                   ((st.st_mode & S_IWOTH) ? std::string("others") : std::string("its group")) +
                   " (mode " + describe_mode(st.st_mode) + ")";
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> untrusted_reason(const std::filesystem::path& file, TrustScope scope) {
    std::error_code ec;
    // Judge what would actually be opened: the resolved file and the directories it lives in.
    std::filesystem::path real = std::filesystem::canonical(file, ec);
    if (ec) return file.string() + ": " + ec.message();
    if (auto bad = check_one(real, true)) return bad;
    if (scope == TrustScope::file_only) return std::nullopt;
    bool parent = true;
    for (std::filesystem::path dir = real.parent_path();; dir = dir.parent_path()) {
        if (auto bad = check_one(dir, parent)) return bad;
        parent = false;
        if (dir == dir.root_path() || dir.empty()) break;
    }
    return std::nullopt;
}

}  // namespace confine::detail
