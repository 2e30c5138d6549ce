#include "protect_watch.hpp"

#include "git_guard.hpp"
#include "roots.hpp"

#include <algorithm>
#include <map>
#include <set>

#if !defined(_WIN32)
#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace fs = std::filesystem;

namespace confine::detail {
namespace {

constexpr std::size_t max_bytes = std::size_t{64} << 20;
constexpr std::size_t max_nodes = 20000;

// Whether `relative` begins with `.git` (git's own check holds it).
bool under_git(const fs::path& relative) { return relative.begin() != relative.end() && *relative.begin() == ".git"; }

#if !defined(_WIN32)

// What a walk may still take.
struct Budget {
    std::size_t bytes = max_bytes, nodes = max_nodes;
};

// The link's target, or nullopt.
std::optional<std::string> link_target(const fs::path& p) {
    std::string target(4096, '\0');
    const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n < 0 || static_cast<std::size_t>(n) >= target.size()) return std::nullopt;
    target.resize(static_cast<std::size_t>(n));
    return target;
}

// When `node`'s data last changed, as utimensat takes it.
std::timespec modified_time(const KeptNode& node) {
    std::timespec t{};
    t.tv_sec = static_cast<std::time_t>(node.modified_seconds);
    t.tv_nsec = static_cast<long>(node.modified_nanoseconds);
    return t;
}

// `top` and everything beneath it into `out`, names in order, links not followed; a git
// directory's objects/ left out (what it holds is named by its hash, and runs nothing).
// False when something cannot be read, or the budget runs out.
bool walk(const fs::path& top, const fs::path& relative, bool in_git, Budget& budget, std::vector<KeptNode>& out) {
    const fs::path p = relative.empty() ? top : top / relative;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || budget.nodes == 0) return false;
    --budget.nodes;
    KeptNode node;
    node.relative = relative;
    node.mode = st.st_mode & 07777;
    node.uid = st.st_uid;
    node.gid = st.st_gid;
    node.modified_seconds = st.st_mtim.tv_sec;
    node.modified_nanoseconds = st.st_mtim.tv_nsec;
    if (S_ISREG(st.st_mode)) {
        node.kind = KeptNode::Kind::file;
        if (static_cast<std::size_t>(st.st_size) > budget.bytes) return false;
        auto bytes = read_regular(p);
        if (!bytes || bytes->size() > budget.bytes) return false;
        budget.bytes -= bytes->size();
        node.data = std::move(*bytes);
        out.push_back(std::move(node));
        return true;
    }
    if (S_ISLNK(st.st_mode)) {
        node.kind = KeptNode::Kind::link;
        auto target = link_target(p);
        if (!target) return false;
        node.data = std::move(*target);
        out.push_back(std::move(node));
        return true;
    }
    if (!S_ISDIR(st.st_mode)) {
        node.kind = S_ISFIFO(st.st_mode) ? KeptNode::Kind::fifo : KeptNode::Kind::other;
        out.push_back(std::move(node));
        return true;
    }
    node.kind = KeptNode::Kind::directory;
    out.push_back(std::move(node));
    DIR* dir = ::opendir(p.c_str());
    if (!dir) return false;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(dir))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
        if (in_git && name == "objects") continue;
        if (!walk(top, relative / name, in_git, budget, out)) return false;
    }
    return true;
}

bool same(const std::vector<KeptNode>& a, const std::vector<KeptNode>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const KeptNode& x, const KeptNode& y) {
        return x.relative == y.relative && x.kind == y.kind && x.mode == y.mode && x.data == y.data;
    });
}

// Makes `node` beneath `top` as it was. An error's text, or empty.
std::string make(const fs::path& top, const KeptNode& node) {
    const fs::path p = node.relative.empty() ? top : top / node.relative;
    int rc = 0;
    switch (node.kind) {
    case KeptNode::Kind::directory: rc = ::mkdir(p.c_str(), 0700); break;
    case KeptNode::Kind::link: rc = ::symlink(node.data.c_str(), p.c_str()); break;
    case KeptNode::Kind::fifo: rc = ::mkfifo(p.c_str(), 0600); break;
    case KeptNode::Kind::other: return p.string() + ": a socket or a device is not made again";
    case KeptNode::Kind::file: {
        const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            rc = -1;
            break;
        }
        std::size_t done = 0;
        while (done < node.data.size()) {
            const ssize_t n = ::write(fd, node.data.data() + done, node.data.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        const int err = errno;
        ::close(fd);
        if (done != node.data.size()) return p.string() + ": " + std::strerror(err);
        break;
    }
    }
    if (rc != 0) return p.string() + ": " + std::strerror(errno);
    // As it was: its owner where this process may give it, its mode (a directory's once
    // what it holds is made), its time.
    if (::geteuid() == 0 && ::lchown(p.c_str(), node.uid, node.gid) != 0) return p.string() + ": " + std::strerror(errno);
    if (node.kind == KeptNode::Kind::directory) return {};
    if (node.kind != KeptNode::Kind::link && ::chmod(p.c_str(), node.mode) != 0) return p.string() + ": " + std::strerror(errno);
    const std::timespec times[2] = {{0, UTIME_OMIT}, modified_time(node)};
    ::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW);
    return {};
}

// The directories on the way from `root` down to `path`, and `path` itself where it is a
// directory, with their identities; false when one above it is not a directory.
bool record_way(KeptPath& k) {
    fs::path dir = k.root;
    for (const auto& part : k.path.lexically_relative(k.root)) {
        if (part.empty() || part == ".") continue;
        dir /= part;
        struct stat st {};
        const bool there = ::lstat(dir.c_str(), &st) == 0;
        if (dir == k.path) {
            if (there && S_ISDIR(st.st_mode)) k.way.push_back({dir, static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)});
            break;
        }
        if (!there || !S_ISDIR(st.st_mode)) return false;
        k.way.push_back({dir, static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)});
    }
    return true;
}

// Each directory on the way (and the kept directory itself) that is not the one that was
// there, where the command renamed it within its own directory (`mv .git .git.m`, a new
// .git made in its place): what stands there now moved aside, and the directory moved
// back (SetAside::restored).
void bring_back_way(const KeptPath& k, std::vector<SetAside>& out) {
    for (const auto& step : k.way) {
        struct stat st {};
        const bool there = ::lstat(step.dir.c_str(), &st) == 0;
        if (there && static_cast<std::uint64_t>(st.st_dev) == step.device && static_cast<std::uint64_t>(st.st_ino) == step.inode) continue;
        DIR* parent = ::opendir(step.dir.parent_path().c_str());
        if (!parent) return;
        fs::path found;
        while (const dirent* e = ::readdir(parent)) {
            // Never what a check moved aside (NAME.confine-blocked-N): that is the command's.
            if (static_cast<std::uint64_t>(e->d_ino) != step.inode || std::strstr(e->d_name, ".confine-blocked-")) continue;
            const fs::path candidate = step.dir.parent_path() / e->d_name;
            struct stat cs {};
            if (::lstat(candidate.c_str(), &cs) == 0 && S_ISDIR(cs.st_mode) && static_cast<std::uint64_t>(cs.st_dev) == step.device) found = candidate;
        }
        ::closedir(parent);
        if (found.empty()) return;  // moved elsewhere: what is put back goes where it stood
        SetAside r{step.dir, {}, {}, true};
        if (there) {
            SetAside moved = move_aside(step.dir);
            if (!moved.error.empty()) return;
            r.moved_to = moved.moved_to;
        }
#if defined(__linux__)
        if (::renameat2(AT_FDCWD, found.c_str(), AT_FDCWD, step.dir.c_str(), RENAME_NOREPLACE) != 0) r.error = std::strerror(errno);
#else
        if (::rename(found.c_str(), step.dir.c_str()) != 0) r.error = std::strerror(errno);
#endif
        out.push_back(std::move(r));
        if (!out.back().error.empty()) return;
    }
}

// The directories from `root` down to the parent of `path`, each as it should be: what
// stands where one stood that is not a directory (a link, a file the command put there)
// moved aside into `out` and the directory made again. False when one is missing (the
// command moved it: nothing git or another tool reads is at `path` then).
bool way_down(const fs::path& root, const fs::path& path, std::vector<SetAside>& out) {
    fs::path dir = root;
    const fs::path relative = path.parent_path().lexically_relative(root);
    for (const auto& part : relative) {
        if (part.empty() || part == ".") continue;
        dir /= part;
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0) return false;
        if (S_ISDIR(st.st_mode)) continue;
        SetAside moved = move_aside(dir);
        const bool ok = moved.error.empty();
        out.push_back(std::move(moved));
        if (!ok || ::mkdir(dir.c_str(), 0755) != 0) return false;
    }
    return true;
}

SetAside restore(const KeptPath& kept, std::vector<SetAside>& out) {
    SetAside r{kept.path, {}, {}, true};
    if (!way_down(kept.root, kept.path, out)) {
        r.error = "a directory on its way is gone; nothing was put back";
        return r;
    }
    if (struct stat st {}; ::lstat(kept.path.c_str(), &st) == 0) {
        SetAside moved = move_aside(kept.path);
        if (!moved.error.empty()) {
            r.error = moved.error;
            return r;
        }
        r.moved_to = moved.moved_to;
    }
    for (const auto& node : kept.nodes)
        if (std::string bad = make(kept.path, node); !bad.empty()) {
            r.error = "cannot put back " + bad;
            return r;
        }
    // The directories' modes and times last, deepest first: what was made in them changed
    // their times, and a mode without write would have kept it from being made.
    for (auto it = kept.nodes.rbegin(); it != kept.nodes.rend(); ++it)
        if (it->kind == KeptNode::Kind::directory) {
            const fs::path p = it->relative.empty() ? kept.path : kept.path / it->relative;
            if (::chmod(p.c_str(), it->mode) != 0 && r.error.empty()) r.error = "cannot put back the mode of " + p.string() + ": " + std::strerror(errno);
            const std::timespec times[2] = {{0, UTIME_OMIT}, modified_time(*it)};
            ::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW);
        }
    return r;
}

#endif

}  // namespace

std::vector<fs::path> absent_protected(const Policy& resolved, const std::vector<fs::path>& entries) {
    std::vector<fs::path> absent;
    std::set<fs::path::string_type, std::less<>> listed;  // each once, by its text
    const auto texts = writable_places(resolved);
    const std::vector<fs::path> places(texts.begin(), texts.end());
    DirectoryNames names;
    for (const auto& entry : entries) {
        if (entry.is_absolute() || entry.empty() || entry.native().front() == '~' || under_git(entry)) continue;
        fs::path normal;
        const fs::path& relative = plain_relative(entry) ? entry : (normal = entry.lexically_normal());
        for (const auto& place : places) {
            fs::path p = joined(place, relative);
            std::error_code ec;
            if (!names.surely_missing(p) && fs::symlink_status(p, ec).type() != fs::file_type::not_found) continue;
            if (listed.insert(p.native()).second) absent.push_back(std::move(p));
        }
    }
    return absent;
}

std::expected<std::vector<KeptPath>, std::string> keep_protected(const Policy& resolved) {
#if defined(_WIN32)
    if (resolved.protect.empty()) return std::vector<KeptPath>{};
    return std::unexpected("putting protected paths back after a run is not done on this platform");
#else
    std::vector<KeptPath> kept;
    const auto places = writable_places(resolved);
    Budget budget;
    for (const auto& p : resolved.protect) {
        const auto place = std::find_if(places.begin(), places.end(), [&](const std::string& r) { return is_within(p, r) && p != fs::path(r); });
        if (place == places.end()) continue;  // outside every writable root: read-only already
        KeptPath k{p, *place, {}, {}};
        const bool in_git = std::any_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".git"; });
        if (!record_way(k) || !walk(p, {}, in_git, budget, k.nodes))
            return std::unexpected(p.string() + " cannot be recorded to be put back after the run (more than 64 MiB or 20,000 entries " +
                                   "in all, or something in it cannot be read)");
        kept.push_back(std::move(k));
    }
    return kept;
#endif
}

std::vector<SetAside> settle_protected(const ProtectWatch& watch) {
    std::vector<SetAside> out;
#if !defined(_WIN32)
    // Whether each directory on the ways is a link now, each looked at once: the absent
    // paths share their ways (the workspace and the directories above it). Each by its
    // text: the directories above a plain path are its prefixes before each '/'.
    std::map<std::string, bool, std::less<>> link_now;
    DirectoryNames names;
    const auto is_link = [&](std::string_view dir) {
        auto at = link_now.find(dir);
        if (at == link_now.end()) {
            std::string key(dir);
            struct stat st {};
            const bool link = ::lstat(key.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
            at = link_now.emplace(std::move(key), link).first;
        }
        return at->second;
    };
    for (const auto& p : watch.absent) {
        // A link on the way (none was there at the start: the policy refuses one) sends
        // a tool elsewhere: it is what was planted; the one nearest the root, if several.
        const fs::path normal = plain_absolute(p) ? p : p.lexically_normal();
        const std::string& text = normal.native();
        std::size_t planted_length = text.size();
        for (std::size_t end = text.rfind('/'); end != std::string::npos && end > 0; end = text.rfind('/', end - 1))
            if (is_link(std::string_view(text).substr(0, end))) planted_length = end;
        const bool on_its_way = planted_length != text.size();
        if (!on_its_way && (names.surely_missing(p) || !planted(p) || through_a_link(p))) continue;
        const fs::path planted_at = on_its_way ? fs::path(text.substr(0, planted_length)) : p;
        if (std::any_of(out.begin(), out.end(), [&](const SetAside& s) { return s.path == planted_at; })) continue;
        out.push_back(move_aside(planted_at));
    }
    for (const auto& kept : watch.kept) {
        bring_back_way(kept, out);
        std::vector<KeptNode> now;
        Budget budget;
        const bool in_git = std::any_of(kept.path.begin(), kept.path.end(), [](const fs::path& part) { return part == ".git"; });
        if (!through_a_link(kept.path) && walk(kept.path, {}, in_git, budget, now) && same(now, kept.nodes)) continue;
        SetAside r = restore(kept, out);
        out.push_back(std::move(r));
    }
#else
    (void)watch;
#endif
    return out;
}

}  // namespace confine::detail
