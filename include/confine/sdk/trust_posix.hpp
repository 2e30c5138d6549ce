// The one trust rule of confine on POSIX systems, for the host and for runner plugins:
// nothing confine executes, loads or reads as configuration may be changeable by
// another user or writable by any sandbox confine creates.
//
//   auto file = confine::trust::open_trusted("/etc/confine/confine.toml", O_RDONLY);
//   if (!file) { report(file.error()); return; }      // one line naming the path
//   read(file->fd.get(), ...);                         // judged and read: one object
//
// A path is walked one component at a time from "/", each directory opened without
// following links and judged on its descriptor (fstat), the next component looked up
// beneath that descriptor; a symbolic link is followed only from a directory already
// judged. So what was judged is what is opened: nobody can swap a component between
// the check and the use, and a file is read, loaded or executed through the descriptor
// the walk ends on. Whether a runner program may be trusted is this rule too
// (program_trust.hpp). Header-only and allocation-light; POSIX only.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// How the walk opens what it judges. Linux names an object without opening it for
// reading (O_PATH), reads a link through that name, and resolves a path without links
// in one call (openat2). The portable build (CONFINE_PORTABLE_POSIX; every POSIX system
// but Linux) uses calls macOS has: a directory is opened to search it, a file to read
// it (without following a link, blocking or taking a terminal), and a link is told by
// fstatat and read by readlinkat beneath its judged directory before anything is
// opened. The rule is the same: what is judged is the opened descriptor's fstat, and a
// link swapped in after the fstatat is not followed (O_NOFOLLOW fails). Only stricter:
// the portable walk refuses a file, or a directory where O_SEARCH is missing, that the
// caller may not read, which O_PATH would have named.
#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#define CONFINE_TRUST_NAMES_WITHOUT_OPENING 1
#include <sys/syscall.h>
#endif

#include <confine/sdk/vocabulary.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace confine::trust {

// The flags that ask for a descriptor naming a file or directory rather than one to
// read it: to judge or run a file (open_trusted), to hand a directory to a runner
// (open_without_links). Linux: O_PATH. Portable: a read-only descriptor opened without
// blocking or taking a terminal (a directory: opened to search it).
#ifdef CONFINE_TRUST_NAMES_WITHOUT_OPENING
inline constexpr int path_only = O_PATH;
inline constexpr int directory_only = O_PATH | O_DIRECTORY;
#else
inline constexpr int path_only = O_RDONLY | O_NONBLOCK | O_NOCTTY;
#ifdef O_SEARCH
inline constexpr int directory_only = O_SEARCH | O_DIRECTORY;
#else
inline constexpr int directory_only = O_RDONLY | O_DIRECTORY;
#endif
#endif

// A descriptor that closes itself; moved, never copied.
class Descriptor {
public:
    Descriptor() = default;
    explicit Descriptor(int fd) : fd_(fd) {}
    Descriptor(Descriptor&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Descriptor& operator=(Descriptor&& o) noexcept {
        if (this != &o) reset(std::exchange(o.fd_, -1));
        return *this;
    }
    ~Descriptor() { reset(); }
    int get() const noexcept { return fd_; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

// What the walk ends on: the open file, where it really is, and its status.
struct TrustedFile {
    Descriptor fd;
    std::string real_path;  // absolute, no link, no "." or ".."
    struct stat status {};
};

namespace detail {

inline std::string mode_text(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

// Who may change the object: only root and the caller. `holds_the_file`: the file
// itself or the directory holding it, where even a sticky directory writable by others
// is refused (above that, a root-owned sticky directory such as /var/tmp lets nobody
// else rename or remove what lies beneath it).
inline std::string judge_owner(const std::string& path, const struct stat& st, bool holds_the_file, uid_t me = ::geteuid()) {
    if (st.st_uid != 0 && st.st_uid != me)
        return path + " is owned by uid " + std::to_string(st.st_uid) + ", neither root nor the current user";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !S_ISLNK(st.st_mode)) {
        const bool sticky_root_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid == 0;
        if (holds_the_file || !sticky_root_dir)
            return path + " is writable by " + ((st.st_mode & S_IWOTH) ? "others" : "its group") + " (mode " + mode_text(st.st_mode) + ")";
    }
    return {};
}

// The places a confined command may write (every sandbox's, sdk::always_writable_places(),
// then `writable`), each as given and as the text a plain directory beneath it starts
// with: separators doubled or at the end dropped ("/" for the root). One with a "." or
// ".." component holds no plain directory (sdk::is_within compares components as they
// are written) and is left out, as is an empty one.
struct WritablePlace {
    std::string given;
    std::string text;
};
inline std::vector<WritablePlace> sandbox_places(const std::vector<std::string>& writable) {
    std::vector<WritablePlace> out;
    auto add = [&out](const std::string& given) {
        if (given.empty() || given.front() != '/') return;
        std::string text = "/";
        for (std::size_t at = 0; at < given.size();) {
            const std::size_t end = std::min(given.find('/', at), given.size());
            const std::string_view part(given.data() + at, end - at);
            if (part == "." || part == "..") return;
            if (!part.empty()) text.append(text.size() > 1 ? "/" : "").append(part);
            at = end + 1;
        }
        out.push_back({given, std::move(text)});
    };
    for (const auto& place : sdk::always_writable_places()) add(place.string());
    for (const auto& root : writable) add(root);
    return out;
}

// The place of `places` that holds `dir` (absolute, with no empty, "." or ".." component,
// as the walk builds it), as it was given, or an empty string: sdk::is_within's answer
// for such a directory, by comparing texts.
inline std::string sandbox_writable_place(std::string_view dir, const std::vector<WritablePlace>& places) {
    for (const auto& place : places) {
        const std::string& t = place.text;
        if (t == "/" || dir == t || (dir.size() > t.size() && dir.starts_with(t) && dir[t.size()] == '/')) return place.given;
    }
    return {};
}

inline std::string join(const std::string& dir, std::string_view name) {
    std::string path = dir == "/" ? std::string() : dir;
    path += '/';
    path += name;
    return path;
}

// Whether open_trusted's `flags` ask for the walk's own descriptor (path_only).
inline bool names_only(int flags) {
#ifdef CONFINE_TRUST_NAMES_WITHOUT_OPENING
    return (flags & O_PATH) != 0;
#else
    return (flags & ~(O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) == path_only;
#endif
}

// "/" opened to walk from, or -1 with errno set.
inline int open_root_directory() { return ::open("/", directory_only | O_CLOEXEC); }

// One part of a path beneath the judged directory `dir`, not followed if it is a link:
// its descriptor (-1 for a link on a portable build) and the status judged.
struct Component {
    Descriptor fd;
    struct stat status {};
};
inline std::expected<Component, int> open_component(int dir, const std::string& name) {
    Component c;
#ifdef CONFINE_TRUST_NAMES_WITHOUT_OPENING
    c.fd = Descriptor(::openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (c.fd.get() < 0 || ::fstat(c.fd.get(), &c.status) != 0) return std::unexpected(errno);
#else
    if (::fstatat(dir, name.c_str(), &c.status, AT_SYMLINK_NOFOLLOW) != 0) return std::unexpected(errno);
    if (S_ISLNK(c.status.st_mode)) return c;
    const int how = S_ISDIR(c.status.st_mode) ? directory_only : path_only;
    c.fd = Descriptor(::openat(dir, name.c_str(), how | O_NOFOLLOW | O_CLOEXEC));
    if (c.fd.get() < 0 || ::fstat(c.fd.get(), &c.status) != 0) return std::unexpected(errno);
#endif
    return c;
}

// The target of the link `name` beneath `dir` (`fd`: open_component's descriptor of it);
// its length, or -1.
inline ssize_t read_component_link(int dir, const std::string& name, int fd, char* buf, std::size_t size) {
#ifdef CONFINE_TRUST_NAMES_WITHOUT_OPENING
    (void)dir, (void)name;
    return ::readlinkat(fd, "", buf, size);
#else
    (void)fd;
    return ::readlinkat(dir, name.c_str(), buf, size);
#endif
}

}  // namespace detail

// Opens `path` with `flags` without following a symbolic link in any part of it
// (openat2's RESOLVE_NO_SYMLINKS; before Linux 5.6, the last part only), or -1 with
// errno set. For a path resolved earlier: a link found now was swapped in since, and
// the open fails instead of following it.
inline int open_without_links(const std::string& path, int flags) {
#ifdef CONFINE_TRUST_NAMES_WITHOUT_OPENING
#ifdef SYS_openat2
    struct {
        std::uint64_t flags, mode, resolve;
    } how{static_cast<std::uint64_t>(flags | O_CLOEXEC), 0, 0x04 /* RESOLVE_NO_SYMLINKS */};
    const long fd = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
#endif
    return ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
#else
    // RESOLVE_NO_SYMLINKS by hand: each part opened beneath the one before, none followed.
    Descriptor at;
    std::size_t start = 0;
    if (!path.empty() && path.front() == '/') {
        at = Descriptor(detail::open_root_directory());
        if (at.get() < 0) return -1;
    }
    for (;;) {
        while (start < path.size() && path[start] == '/') ++start;
        const std::size_t end = path.find('/', start) == std::string::npos ? path.size() : path.find('/', start);
        std::size_t rest = end;
        while (rest < path.size() && path[rest] == '/') ++rest;
        const std::string name = start < end ? path.substr(start, end - start) : std::string(".");
        const int dir = at.get() >= 0 ? at.get() : AT_FDCWD;
        if (rest >= path.size()) return ::openat(dir, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
        Descriptor next(::openat(dir, name.c_str(), directory_only | O_NOFOLLOW | O_CLOEXEC));
        if (next.get() < 0) {
            // A link refused as not a directory is said as openat2 says it.
            struct stat st {};
            if (errno == ENOTDIR && ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) errno = ELOOP;
            return -1;
        }
        at = std::move(next);
        start = rest;
    }
#endif
}

namespace detail {

// Closes each of `fds` (distinct open descriptors): each run of consecutive numbers in
// one call where the system has it (close_range, Linux 5.9), else one by one.
inline void close_all(std::vector<int>& fds) {
    std::sort(fds.begin(), fds.end());
    for (std::size_t i = 0; i < fds.size();) {
        std::size_t end = i + 1;
        while (end < fds.size() && fds[end] == fds[end - 1] + 1) ++end;
#if defined(CONFINE_TRUST_NAMES_WITHOUT_OPENING) && defined(SYS_close_range)
        if (end - i > 1 && ::syscall(SYS_close_range, fds[i], fds[end - 1], 0) == 0) {
            i = end;
            continue;
        }
#endif
        for (; i < end; ++i) ::close(fds[i]);
    }
    fds.clear();
}

// A directory the walk has judged: its descriptor, its path and the status judged.
struct WalkedDirectory {
    Descriptor fd;
    std::string path;
    struct stat status {};
};

// open_trusted's walk: the components still to walk, last first (a link's target is
// pushed in front of the rest), and the directories walked so far, each judged (the last
// is where the walk is). What it opened on the way closes when it ends.
class TrustedWalk {
public:
    TrustedWalk(const std::string& path, int flags, const std::vector<std::string>& sandbox_writable)
        : path_(path), flags_(flags), sandbox_writable_(sandbox_places(sandbox_writable)) {
        push_components(path);
    }
    TrustedWalk(const TrustedWalk&) = delete;
    TrustedWalk& operator=(const TrustedWalk&) = delete;
    ~TrustedWalk() {
        for (auto& d : dirs_)
            if (d.fd.get() >= 0) done_.push_back(d.fd.release());
        close_all(done_);
    }

    std::expected<TrustedFile, std::string> run() {
        if (auto bad = open_root(); !bad.empty()) return std::unexpected(bad);
        while (!todo_.empty()) {
            const std::string name = std::move(todo_.back());
            todo_.pop_back();
            if (name == ".") continue;
            if (name == "..") {
                if (dirs_.size() > 1) dirs_.pop_back();
                continue;
            }
            auto ended = step(name);
            if (!ended) return std::unexpected(ended.error());
            if (*ended) return std::move(**ended);
        }
        return std::unexpected(path_ + " is not a regular file");
    }

private:
    void push_components(std::string_view p) {
        std::vector<std::string> parts;
        for (std::size_t at = 0; at <= p.size();) {
            std::size_t end = p.find('/', at);
            if (end == std::string_view::npos) end = p.size();
            if (end > at) parts.emplace_back(p.substr(at, end - at));
            at = end + 1;
        }
        todo_.insert(todo_.end(), parts.rbegin(), parts.rend());
    }

    // Starts again from "/", judged; why not, or an empty string.
    std::string open_root() {
        dirs_.clear();
        Descriptor root(open_root_directory());
        if (root.get() < 0) return std::string("/: cannot open: ") + std::strerror(errno);
        struct stat st {};
        if (::fstat(root.get(), &st) != 0) return std::string("/: cannot stat: ") + std::strerror(errno);
        if (auto bad = judge_owner("/", st, false, me_); !bad.empty()) return bad;
        dirs_.push_back({std::move(root), "/", st});
        return {};
    }

    // One component beneath the current directory: a link followed, a directory on the
    // way descended into, the last one opened (the walk's file, which ends it).
    std::expected<std::optional<TrustedFile>, std::string> step(const std::string& name) {
        const std::string& here = dirs_.back().path;
        const std::string next = join(here, name);
        // Anything in a directory a sandbox may write can be replaced by that sandbox.
        if (auto place = sandbox_writable_place(here, sandbox_writable_); !place.empty())
            return std::unexpected(next + " lies in " + place + ", which the confined command may write");
        const bool last = todo_.empty();
        auto component = open_component(dirs_.back().fd.get(), name);
        if (!component) {
            // A missing part means the path names nothing: say so of the path asked for.
            if (component.error() == ENOENT) return std::unexpected(path_ + ": " + std::strerror(ENOENT));
            return std::unexpected(next + ": " + std::strerror(component.error()));
        }
        if (S_ISLNK(component->status.st_mode)) {
            if (auto bad = follow_link(name, next, component->fd.get()); !bad.empty()) return std::unexpected(bad);
            return std::nullopt;
        }
        if (auto bad = judge_owner(next, component->status, last, me_); !bad.empty()) return std::unexpected(bad);
        if (!last) {
            if (!S_ISDIR(component->status.st_mode)) return std::unexpected(next + ": " + std::strerror(ENOTDIR));
            dirs_.push_back({std::move(component->fd), next, component->status});
            return std::nullopt;
        }
        auto file = open_last(name, next, std::move(*component));
        if (!file) return std::unexpected(file.error());
        return std::optional<TrustedFile>(std::move(*file));
    }

    // The link `name` (`fd`: its descriptor) read and its target pushed; why not, or "".
    // The link lies in a directory judged already: nobody else can have put it there.
    std::string follow_link(const std::string& name, const std::string& next, int fd) {
        if (++links_ > 40) return path_ + ": " + std::strerror(ELOOP);
        char target[4096];
        const ssize_t n = read_component_link(dirs_.back().fd.get(), name, fd, target, sizeof target - 1);
        if (n <= 0) return next + ": cannot read the link: " + std::strerror(errno);
        const std::string_view t(target, static_cast<std::size_t>(n));
        if (t.front() == '/')
            if (auto bad = open_root(); !bad.empty()) return bad;
        push_components(t);
        return {};
    }

    // The walk's file, `name` beneath the current directory, judged as `c`.
    std::expected<TrustedFile, std::string> open_last(const std::string& name, const std::string& next, Component c) {
        const WalkedDirectory& holder = dirs_.back();
        const bool wanted_directory = (flags_ & O_DIRECTORY) != 0 && S_ISDIR(c.status.st_mode);
        if (!S_ISREG(c.status.st_mode) && !wanted_directory) return std::unexpected(next + " is not a regular file");
        // The directory that holds the file is judged as strictly as the file itself,
        // wherever a link led (a sticky directory does not keep others from it): by the
        // status it was judged by on the way, on the descriptor the walk holds.
        if (auto bad = judge_owner(holder.path, holder.status, true, me_); !bad.empty()) return std::unexpected(bad);
        TrustedFile out;
        if (names_only(flags_)) {
            out.fd = std::move(c.fd);
        } else {
            // Opened again beneath the same judged directory, without following a link;
            // still the object judged, which the status below proves.
            out.fd = Descriptor(::openat(holder.fd.get(), name.c_str(), flags_ | O_NOFOLLOW | O_CLOEXEC));
            const int error = errno;
            if (c.fd.get() >= 0) done_.push_back(c.fd.release());  // closes with the walk's own
            if (out.fd.get() < 0) return std::unexpected(next + ": cannot open: " + std::strerror(error));
            struct stat again {};
            if (::fstat(out.fd.get(), &again) != 0 || again.st_dev != c.status.st_dev || again.st_ino != c.status.st_ino)
                return std::unexpected(next + ": changed while it was being checked");
        }
        out.real_path = next;
        out.status = c.status;
        return out;
    }

    const std::string& path_;
    const int flags_;
    const std::vector<WritablePlace> sandbox_writable_;
    const uid_t me_ = ::geteuid();
    std::vector<std::string> todo_;
    std::vector<WalkedDirectory> dirs_;
    std::vector<int> done_;  // descriptors to close when the walk ends
    int links_ = 0;
};

}  // namespace detail

// Opens `path` (absolute) with `flags` (O_RDONLY to read or load it, path_only to run it)
// after judging every directory on the way and the file itself, or says why not in one
// line. Refused: anything owned by a user other than root or the caller, or writable by
// group or others (see judge_owner), and anything looked up inside a place a confined
// command may write (sdk::always_writable_places() and `sandbox_writable`, given
// resolved). The file must be a regular file, or a directory when `flags` has O_DIRECTORY.
inline std::expected<TrustedFile, std::string> open_trusted(const std::string& path, int flags,
                                                            const std::vector<std::string>& sandbox_writable = {}) {
    if (path.empty() || path.front() != '/') return std::unexpected("'" + path + "' is not an absolute path");
    return detail::TrustedWalk(path, flags, sandbox_writable).run();
}

}  // namespace confine::trust
