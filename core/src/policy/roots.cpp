#include "roots.hpp"

#include "git_guard.hpp"
#include "trust.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <cerrno>
#include <cstring>

#if !defined(_WIN32)
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace fs = std::filesystem;

namespace confine::detail {

namespace {

// Whether `p` begins with '~' (as "~" and "~/..." do): one that does not needs no home.
bool begins_with_tilde(const fs::path& p) { return !p.empty() && *p.native().begin() == '~'; }

// Whether `p` lies in a place every sandbox may write (sdk::always_writable_places()).
bool always_writable(const fs::path& p) {
    const auto& places = sdk::always_writable_places();
    return std::any_of(places.begin(), places.end(), [&](const fs::path& place) { return is_within(p, place); });
}

#if !defined(_WIN32)
// The account's home: from the files when the user database is the files and both are
// regular files (no daemon asked, none of NSS's start-up), else from getpwuid().
std::optional<std::string> account_home() {
    const uid_t uid = ::geteuid();
    if (const auto nsswitch = read_regular("/etc/nsswitch.conf"))
        if (const auto passwd = read_regular("/etc/passwd"))
            if (auto home = files_home(*nsswitch, *passwd, uid)) return home;
    if (const passwd* pw = ::getpwuid(uid); pw && pw->pw_dir) return std::string(pw->pw_dir);
    return std::nullopt;
}
#endif

// The lines of `text`, each without its newline.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        if (!f(text.substr(0, end))) return;
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
}

}  // namespace

std::optional<std::string> files_home(std::string_view nsswitch, std::string_view passwd, unsigned long uid) {
    constexpr std::string_view blanks = " \t\r";
    int passwd_lines = 0;
    bool files_first = false;
    for_each_line(nsswitch, [&](std::string_view line) {
        line = line.substr(0, line.find('#'));
        const std::size_t start = line.find_first_not_of(blanks);
        if (start == std::string_view::npos) return true;
        line.remove_prefix(start);
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) return true;
        std::string_view database = line.substr(0, colon);
        database = database.substr(0, database.find_last_not_of(blanks) + 1);
        if (database != "passwd") return true;
        ++passwd_lines;
        std::string_view sources = line.substr(colon + 1);
        const std::size_t first = sources.find_first_not_of(blanks);
        sources = first == std::string_view::npos ? std::string_view() : sources.substr(first);
        const std::string_view source = sources.substr(0, sources.find_first_of(blanks));
        files_first = source == "files";
        return true;
    });
    if (passwd_lines != 1 || !files_first) return std::nullopt;
    const std::string wanted = std::to_string(uid);
    std::optional<std::string> home;
    bool compat = false;
    for_each_line(passwd, [&](std::string_view line) {
        if (line.starts_with('+') || line.starts_with('-')) {
            compat = true;
            return false;
        }
        std::string_view fields[7];
        std::size_t count = 0;
        for (std::string_view rest = line; count < 7;) {
            const std::size_t colon = rest.find(':');
            fields[count++] = rest.substr(0, colon);
            if (colon == std::string_view::npos) break;
            rest.remove_prefix(colon + 1);
        }
        if (count < 6 || fields[2] != wanted) return true;
        home = std::string(fields[5]);
        return false;
    });
    if (compat) return std::nullopt;
    return home;
}

std::optional<std::string> refused_writable_root(const fs::path& real, const fs::path& home) {
    if (real == real.root_path()) return std::string("it is the root of the file system");
    if (!home.empty() && is_within(home, real))
        return real == home ? "it is the home directory itself, whose start-up files would become writable"
                            : "it holds the home directory " + home.string() + ", whose start-up files would become writable";
#if !defined(_WIN32)
    // Programs, libraries, configuration, boot files, devices, kernel interfaces, and
    // the spools that cron and at run from: nothing beneath them may become writable.
    static constexpr std::string_view systems[] = {"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
                                                   "/sbin", "/sys", "/usr", "/var/spool"};
    // Directories that hold others: the homes, software, data, and state of the system.
    static constexpr std::string_view holders[] = {"/home", "/opt", "/srv", "/mnt", "/media", "/root", "/var", "/var/lib", "/var/log", "/var/cache"};
    // A plain path by its text (the directories above it are its prefixes before a '/');
    // any other as paths, component by component.
    const bool plain = plain_absolute(real);
    const std::string& text = real.native();
    for (const std::string_view system : systems) {
        const bool same = plain ? text == system : real == fs::path(system);
        const bool inside = plain ? same || (text.starts_with(system) && text[system.size()] == '/') : is_within(real, fs::path(system));
        if (inside && !always_writable(real)) return "it is " + std::string(same ? "" : "inside ") + "the system directory " + std::string(system);
    }
    for (const std::string_view holder : holders)
        if (plain ? text == holder : real == fs::path(holder)) return "it is the system directory " + std::string(holder);
#endif
    return std::nullopt;
}

namespace {

std::vector<fs::path> computed_caller_homes() {
    std::vector<fs::path> homes;
    std::vector<std::string> asked;  // each given path resolved once: $HOME is the account's home most often
    auto add = [&homes, &asked](const char* given) {
        if (!given || !*given || std::find(asked.begin(), asked.end(), given) != asked.end()) return;
        asked.emplace_back(given);
        std::error_code ec;
        const fs::path real = fs::canonical(given, ec);
        // The root directory is no one's home (system accounts that have none say "/").
        if (!ec && real.is_absolute() && real != real.root_path() && std::find(homes.begin(), homes.end(), real) == homes.end())
            homes.push_back(real);
    };
#if defined(_WIN32)
    add(std::getenv("USERPROFILE"));
#else
    // $HOME says where the caller's files are today; the user database says where the
    // account's are whatever the environment says. A caller that points HOME elsewhere
    // (a build, a test, an attacker's wrapper) must not uncover the account's ~/.ssh.
    if (const char* home = std::getenv("HOME"); home && *home == '/') add(home);
    if (const auto home = account_home(); home && home->starts_with('/')) add(home->c_str());
#endif
    return homes;
}

#if !defined(_WIN32)
// What caller_homes() was computed from, each as it is now: the effective user, $HOME
// and the directory it leads to, the user database's two files (device:inode:size:
// modified) and each home found (device:inode), so that an answer kept is the one that
// would be computed again.
std::string homes_basis(const std::vector<fs::path>& homes) {
    std::string basis = std::to_string(::geteuid()) + '\n';
    if (const char* home = std::getenv("HOME")) {
        basis += home;
        if (struct stat st {}; ::stat(home, &st) == 0) basis += '\n' + std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino);
    }
    basis += '\n';
    for (const char* file : {"/etc/nsswitch.conf", "/etc/passwd"}) {
        struct stat st {};
        basis += ::stat(file, &st) == 0 ? file_identity(st) : "-";
        basis += '\n';
    }
    for (const auto& home : homes) {
        // $HOME's own directory is in the basis already.
        struct stat st {};
        if (const char* given = std::getenv("HOME"); (!given || home.native() != given) && ::stat(home.c_str(), &st) == 0)
            basis += std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino);
        basis += '\n';
    }
    return basis;
}
#endif

}  // namespace

// Asked several times in a run (the configuration's "~" entries, the policy's
// resolution, the run-end checks): kept with its basis, and computed again whenever the
// basis differs (a host that runs for days sees a changed $HOME or passwd at once).
std::vector<fs::path> caller_homes() {
#if defined(_WIN32)
    return computed_caller_homes();
#else
    static std::mutex lock;
    static std::vector<fs::path> kept;
    static std::string kept_basis;
    std::lock_guard guard(lock);
    if (!kept_basis.empty() && homes_basis(kept) == kept_basis) return kept;
    kept = computed_caller_homes();
    kept_basis = homes_basis(kept);
    return kept;
#endif
}

std::vector<fs::path> with_homes(const std::vector<fs::path>& entries, const std::vector<fs::path>& homes) {
    std::vector<fs::path> out;
    for (const auto& entry : entries) {
        const std::string s = entry.generic_string();
        if (s != "~" && !s.starts_with("~/")) {
            out.push_back(entry);
            continue;
        }
        for (const auto& home : homes) out.push_back(s == "~" ? home : joined(home, std::string_view(s).substr(2)));
    }
    return out;
}

namespace {

// with_homes(entries, homes), kept in `held`; `entries` themselves when none begins with
// '~' (the protect list's are relative): the same list, not copied.
const std::vector<fs::path>& beneath_homes(const std::vector<fs::path>& entries, const std::vector<fs::path>& homes, std::vector<fs::path>& held) {
    const bool tilde = std::any_of(entries.begin(), entries.end(), begins_with_tilde);
    if (!tilde) return entries;
    held = with_homes(entries, homes);
    return held;
}

}  // namespace

std::expected<Policy, Error> resolve_policy(const Policy& policy, KeptGitScan* kept) {
    auto bad = [](std::string m) { return std::unexpected(Error{ErrorCode::invalid_policy, std::move(m)}); };
    const std::vector<fs::path> homes = caller_homes();
    const fs::path home = homes.empty() ? fs::path() : homes.front();
    Policy out;
    out.mode = policy.mode;
    out.network = policy.network;
    out.proxy_port = policy.proxy_port;
    out.allow_hosts = policy.allow_hosts;
    out.tmp = policy.tmp;
    out.terminal = policy.terminal;
    out.own_terminal = policy.own_terminal;
    // The homes are resolved directories; each directory above the roots, the working
    // directory and the denied paths is looked at once (they share their ways).
    PathResolver resolver;
    for (const auto& h : homes) resolver.known_directory(h);
    // Resolved here, once: a root that is a symbolic link is judged, and granted, where
    // it leads (a repository's `build -> /etc` is /etc, and refused as such).
    auto resolve = [&](const fs::path& p, const std::string& what) -> std::expected<fs::path, Error> {
        if (!p.is_absolute()) return bad(what + " must be an absolute path: " + p.string());
        if (p.native().find(fs::path::value_type('\0')) != fs::path::string_type::npos) return bad(what + " path contains a NUL byte");
        std::error_code ec;
        const auto st = fs::status(p, ec);
        if (st.type() == fs::file_type::not_found) return bad(what + " does not exist: " + p.string());
        if (st.type() != fs::file_type::directory) return bad(what + " is not a directory: " + p.string());
        const auto resolved = resolver.canonical(p);
        if (!resolved) return bad("cannot resolve " + what + " " + p.string());
        const fs::path& real = *resolved;
        // Every home the caller has: the account's start-up files are as much its own as
        // those where $HOME points.
        for (const fs::path& h : homes.empty() ? std::vector<fs::path>{fs::path()} : homes)
            if (auto why = refused_writable_root(real, h)) {
                const std::string shown = real == p.lexically_normal() ? p.string() : p.string() + " (which resolves to " + real.string() + ")";
                return bad("refusing " + what + " " + shown + ": " + *why);
            }
        return real;
    };
    if (policy.mode == Mode::workspace_write) {
        if (policy.workspace.empty()) return bad("workspace-write mode needs a workspace");
        auto ws = resolve(policy.workspace, "workspace");
        if (!ws) return std::unexpected(ws.error());
        out.workspace = *ws;
    } else if (!policy.writable.empty()) {
        return bad("read-only mode cannot have writable roots");
    }
    for (const auto& w : policy.writable) {
        auto real = resolve(w, "writable root");
        if (!real) return std::unexpected(real.error());
        if (*real != out.workspace && std::find(out.writable.begin(), out.writable.end(), *real) == out.writable.end())
            out.writable.push_back(*real);
    }
    // Where the command runs: named, canonical, for a runner that must grant it (ABI 1.8).
    // Not a root: nothing is written there in read-only mode, so the refusals above do
    // not apply; a runner that grants it judges it.
    {
        std::error_code ec;
        const fs::path given = policy.working_directory.empty() ? fs::current_path(ec) : policy.working_directory;
        if (!ec && !given.empty()) {
            if (!given.is_absolute()) return bad("the working directory must be an absolute path: " + given.string());
            const auto real = resolver.canonical(given);
            if (!real || !fs::is_directory(*real, ec)) return bad("the working directory is not an existing directory: " + given.string());
            out.working_directory = *real;
        }
    }
    std::vector<fs::path> denied, protect;
    if (auto err = resolve_denied(beneath_homes(policy.deny_read, homes, denied), home, out, &resolver)) return std::unexpected(*err);
    if (auto err = resolve_protected(beneath_homes(policy.protect, homes, protect), home, out, kept)) return std::unexpected(*err);
    return out;
}

namespace {

Error bad_policy(std::string m) { return Error{ErrorCode::invalid_policy, std::move(m)}; }

// `p`, with `~` and `~/...` beneath `home` (made in `made`); null when the path needs a
// home and there is none. A path without a leading '~' is `p` itself, not a copy.
const fs::path* expand_home(const fs::path& p, const fs::path& home, std::optional<fs::path>& made) {
    if (!begins_with_tilde(p)) return &p;
    const std::string s = p.generic_string();
    if (s != "~" && !s.starts_with("~/")) return &p;
    if (home.empty()) return nullptr;
    made = s == "~" ? home : home / s.substr(2);
    return &*made;
}

bool has_nul(const fs::path& p) { return p.native().find(fs::path::value_type('\0')) != fs::path::string_type::npos; }

// "X" or "X (which resolves to Y)".
std::string shown(const fs::path& given, const fs::path& real) {
    return real == given.lexically_normal() ? given.string() : given.string() + " (which resolves to " + real.string() + ")";
}

// The first line of `file`, if it is a regular file (not a link, not a FIFO that would
// hold the run), read at most 4 KiB of it: what a previous run may have written there is
// read as little as it can be.
std::optional<std::string> first_line(const fs::path& file) {
    std::string text(4096, '\0');
#if defined(_WIN32)
    std::error_code ec;
    if (fs::symlink_status(file, ec).type() != fs::file_type::regular) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
#else
    const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    const ssize_t n = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? ::read(fd, text.data(), text.size()) : -1;
    ::close(fd);
    if (n < 0) return std::nullopt;
    text.resize(static_cast<std::size_t>(n));
#endif
    text = text.substr(0, text.find('\n'));
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
    if (text.empty() || text.find('\0') != std::string::npos) return std::nullopt;
    return text;
}

// What a `.git` file names ("gitdir: X", relative to `dir`).
std::optional<fs::path> read_gitdir(const fs::path& file, const fs::path& dir) {
    auto line = first_line(file);
    if (!line || !line->starts_with("gitdir:")) return std::nullopt;
    std::string target = line->substr(7);
    while (!target.empty() && (target.front() == ' ' || target.front() == '\t')) target.erase(0, 1);
    if (target.empty()) return std::nullopt;
    fs::path p(target);
    return p.is_absolute() ? p : dir / p;
}

// A worktree's repository: what `commondir` in its git directory names.
std::optional<fs::path> read_gitdir_common(const fs::path& gitdir) {
    auto line = first_line(gitdir / "commondir");
    if (!line) return std::nullopt;
    fs::path p(*line);
    return p.is_absolute() ? p : gitdir / p;
}

// What stands at paths (not following a link), each looked at once: each root's `.git`
// is the first component of several protect entries.
class LookedAt {
public:
    fs::file_type type(const fs::path& p) {
#if defined(_WIN32)
        if (const auto known = seen_.find(p.native()); known != seen_.end()) return known->second;
        if (names_.surely_missing(p)) return seen_.emplace(p.native(), fs::file_type::not_found).first->second;
        std::error_code ec;
        const auto st = fs::symlink_status(p, ec);
        const fs::file_type t = ec ? fs::file_type::not_found : st.type();
        seen_.emplace(p.native(), t);
        return t;
#else
        return type_of_text(p.native());
#endif
    }

    // `relative` inside `root`, walked component by component: nullopt when a component
    // does not exist; an error when one is a symbolic link, which the command could
    // replace with what it likes whatever happens to the link's target.
    std::expected<std::optional<fs::path>, Error> walk(const fs::path& root, const fs::path& relative) {
#if !defined(_WIN32)
        // A plain relative path by its text: each step one more component, no path made.
        if (plain_relative(relative) && !root.empty()) {
            std::string p = root.native();
            const std::string& r = relative.native();
            for (std::size_t at = 0; at < r.size();) {
                const std::size_t end = std::min(r.find('/', at), r.size());
                if (p.back() != '/') p.push_back('/');
                p.append(r, at, end - at);
                const fs::file_type t = type_of_text(p);
                if (t == fs::file_type::not_found) return std::nullopt;
                if (t == fs::file_type::symlink) return std::unexpected(link_on_the_way(root, relative, p));
                at = end + 1;
            }
            return std::optional<fs::path>(fs::path(std::move(p)));
        }
#endif
        fs::path p = root;
        for (const auto& part : relative) {
            if (part.empty() || part == ".") continue;
            p /= part;
            const fs::file_type t = type(p);
            if (t == fs::file_type::not_found) return std::nullopt;
            if (t == fs::file_type::symlink) return std::unexpected(link_on_the_way(root, relative, p.string()));
        }
        return std::optional<fs::path>(p);
    }

private:
    static Error link_on_the_way(const fs::path& root, const fs::path& relative, const std::string& link) {
        return bad_policy("cannot protect " + (root / relative).string() + ": " + link +
                          " is a symbolic link, which the command could replace; remove the link or the protect entry");
    }

#if !defined(_WIN32)
    // What stands at the path of this text: from the listing of its directory, else one
    // lstat (as symlink_status; any failure is "not found").
    fs::file_type type_of_text(const std::string& p) {
        if (const auto known = seen_.find(p); known != seen_.end()) return known->second;
        fs::file_type t = fs::file_type::not_found;
        struct stat st {};
        if (!names_.surely_missing(std::string_view(p)) && ::lstat(p.c_str(), &st) == 0)
            t = S_ISREG(st.st_mode)    ? fs::file_type::regular
                : S_ISDIR(st.st_mode)  ? fs::file_type::directory
                : S_ISLNK(st.st_mode)  ? fs::file_type::symlink
                : S_ISFIFO(st.st_mode) ? fs::file_type::fifo
                : S_ISSOCK(st.st_mode) ? fs::file_type::socket
                : S_ISBLK(st.st_mode)  ? fs::file_type::block
                : S_ISCHR(st.st_mode)  ? fs::file_type::character
                                       : fs::file_type::unknown;
        seen_.emplace(p, t);
        return t;
    }
#endif

    std::map<fs::path::string_type, fs::file_type, std::less<>> seen_;  // by the path's text
    DirectoryNames names_;
};

}  // namespace

bool DirectoryNames::surely_missing(const fs::path& p) {
#if defined(_WIN32)
    const fs::path parent = p.parent_path();
    if (parent.empty() || parent == p) return false;
    const fs::path::string_type& dir = parent.native();
    const fs::path::string_type name = p.filename().native();
#else
    return surely_missing(std::string_view(p.native()));
}

bool DirectoryNames::surely_missing(std::string_view s) {
    // The directory and the name by the last '/', without taking the path apart: a name
    // that is empty, "." or ".." is not one a listing holds.
    const std::size_t slash = s.rfind('/');
    if (slash == std::string::npos) return false;
    const std::string_view dir(s.data(), slash == 0 ? 1 : slash);
    const std::string_view name = s.substr(slash + 1);
    if (name.empty() || name == "." || name == "..") return false;
#endif
    auto at = listed_.find(dir);
    if (at == listed_.end()) {
        fs::path::string_type key(dir);
        Listing listing = list(fs::path(key), most_);
        at = listed_.emplace(std::move(key), std::move(listing)).first;
    }
    const Listing& l = at->second;
    return l.state == Listing::gone || (l.state == Listing::listed && !l.names.contains(name));
}

DirectoryNames::Listing DirectoryNames::list(const fs::path& dir, std::size_t most) {
    Listing l;
#if !defined(_WIN32)
    // The names as the directory gives them, without a path made of each.
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR) l.state = Listing::gone;
        return l;
    }
    bool complete = true;
    for (;;) {
        errno = 0;
        const dirent* e = ::readdir(d);
        if (!e) {
            complete = errno == 0;
            break;
        }
        const std::string_view name(e->d_name);
        if (name == "." || name == "..") continue;
        if (l.names.size() >= most) {
            complete = false;
            break;
        }
        l.names.emplace(name);
    }
    ::closedir(d);
    if (!complete) return {};
    l.state = Listing::listed;
    return l;
#else
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
        if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) l.state = Listing::gone;
        return l;
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (l.names.size() >= most) return {};
        l.names.insert(it->path().filename().native());
    }
    if (ec) return {};
    l.state = Listing::listed;
    return l;
#endif
}

std::optional<fs::path> PathResolver::canonical(const fs::path& p) {
    auto full = [&p]() -> std::optional<fs::path> {
        std::error_code ec;
        fs::path real = fs::canonical(p, ec);
        if (ec) return std::nullopt;
        return real;
    };
#if defined(_WIN32)
    return full();
#else
    const std::string& s = p.native();
    if (!plain_absolute(p)) return full();
    // What is known of the directories above it already: one missing (or not a
    // directory) means it does not exist either; one that is a link leads elsewhere.
    for (std::size_t at = s.find('/', 1); at != std::string::npos; at = s.find('/', at + 1)) {
        const auto known = seen_.find(std::string_view(s.data(), at));
        if (known == seen_.end()) continue;
        if (known->second == Kind::link) return full();
        if (known->second != Kind::directory) return std::nullopt;
    }
    // The path itself, its last component not followed: missing (with whatever links
    // above it followed, as fs::canonical would follow them) means skipped.
    const Kind last = kind_of(s);
    if (last == Kind::missing) return std::nullopt;
    if (last == Kind::link) return full();
    // There: it is itself unless a directory above it is a link.
    for (std::size_t at = s.find('/', 1); at != std::string::npos; at = s.find('/', at + 1))
        if (kind_of(std::string_view(s.data(), at)) != Kind::directory) return full();
    return p;
#endif
}

void PathResolver::known_directory(const fs::path& real) {
#if defined(_WIN32)
    (void)real;
#else
    const std::string& s = real.native();
    if (!plain_absolute(real)) return;
    for (std::size_t at = s.find('/', 1); at != std::string::npos; at = s.find('/', at + 1)) seen_.emplace(std::string(s, 0, at), Kind::directory);
    seen_.emplace(s, Kind::directory);
#endif
}

namespace {

// Whether `s` is one or more components joined by single '/', none empty, "." or "..".
[[maybe_unused]] bool plain_components(std::string_view s) {
    if (s.empty()) return false;
    for (std::size_t at = 0; at <= s.size();) {
        const std::size_t end = std::min(s.find('/', at), s.size());
        const std::string_view part = s.substr(at, end - at);
        if (part.empty() || part == "." || part == "..") return false;
        at = end + 1;
    }
    return true;
}

}  // namespace

bool plain_absolute(const fs::path& p) {
#if defined(_WIN32)
    (void)p;
    return false;
#else
    const std::string_view s(p.native());
    return s.size() >= 2 && s.front() == '/' && plain_components(s.substr(1));
#endif
}

bool plain_relative(const fs::path& p) {
#if defined(_WIN32)
    (void)p;
    return false;
#else
    const std::string_view s(p.native());
    return !s.empty() && s.front() != '/' && plain_components(s);
#endif
}

fs::path joined(const fs::path& dir, std::string_view r) {
#if defined(_WIN32)
    return dir / fs::path(std::string(r));
#else
    // Where operator/ would do more than put one '/' between them: as it does.
    const std::string& d = dir.native();
    if (d.empty() || r.empty() || r.front() == '/') return dir / fs::path(std::string(r));
    std::string text;
    text.reserve(d.size() + 1 + r.size());
    text.append(d);
    if (d.back() != '/') text.push_back('/');
    text.append(r);
    return fs::path(std::move(text));
#endif
}

fs::path joined(const fs::path& dir, const fs::path& relative) {
#if defined(_WIN32)
    return dir / relative;
#else
    return joined(dir, std::string_view(relative.native()));
#endif
}

PathResolver::Kind PathResolver::look(const char* path) {
#if defined(_WIN32)
    (void)path;
    return Kind::missing;
#else
    struct stat st {};
    if (::lstat(path, &st) != 0) return Kind::missing;
    return S_ISLNK(st.st_mode) ? Kind::link : S_ISDIR(st.st_mode) ? Kind::directory : Kind::other;
#endif
}

PathResolver::Kind PathResolver::kind_of(std::string_view path) {
    if (const auto known = seen_.find(path); known != seen_.end()) return known->second;
    std::string p(path);
    const Kind kind = look(p.c_str());
    seen_.emplace(std::move(p), kind);
    return kind;
}

namespace {

// Whether a list's plain path surely does not exist, from the listings of the directories
// that directly hold three or more of its paths (a home holds most of the default deny
// list's): each listed once, when first asked, and asked of the path's component beneath
// it, so that one listing of a home answers for `~/.config/gh/hosts.yml` too where it has
// no `.config`. A listing of more than 512 names says nothing.
class SeveralHeld {
public:
#if defined(_WIN32)
    explicit SeveralHeld(const std::vector<fs::path>&) {}
    bool surely_missing(const fs::path&) { return false; }
#else
    explicit SeveralHeld(const std::vector<fs::path>& entries) {
        for (const auto& e : entries)
            if (plain_absolute(e)) ++count_[e.native().substr(0, e.native().rfind('/'))];
    }
    bool surely_missing(const fs::path& p) {
        if (!plain_absolute(p)) return false;
        const std::string_view s(p.native());
        for (std::size_t at = s.find('/', 1); at != std::string_view::npos; at = s.find('/', at + 1)) {
            const auto held = count_.find(s.substr(0, at));
            if (held == count_.end() || held->second < 3) continue;
            if (names_.surely_missing(s.substr(0, s.find('/', at + 1)))) return true;
        }
        return false;
    }

private:
    std::map<std::string, int, std::less<>> count_;
    DirectoryNames names_{512};
#endif
};

}  // namespace

std::optional<Error> resolve_denied(const std::vector<fs::path>& entries, const fs::path& home, Policy& out, PathResolver* resolver) {
    const auto places = writable_places(out);
    PathResolver own;
    if (!resolver) resolver = &own;
    SeveralHeld held(entries);
    for (const auto& entry : entries) {
        std::optional<fs::path> made;
        const fs::path* at = expand_home(entry, home, made);
        if (!at) continue;  // "~/..." with no home: nothing of it to hide
        const fs::path& expanded = *at;
        if (has_nul(expanded)) return bad_policy("a deny_read path contains a NUL byte");
        if (!expanded.is_absolute()) return bad_policy("deny_read path must be absolute or begin with ~/: " + entry.string());
        // Judged where it resolves; one that does not exist (or a link to nothing) is skipped.
        // Most do not: a directory that would hold several is listed once, in place of a
        // look at each (one of many names is looked into entry by entry, as before).
        if (held.surely_missing(expanded)) continue;
        const auto resolved = resolver->canonical(expanded);
        if (!resolved) continue;
        const fs::path& real = *resolved;
        if (real == real.root_path()) return bad_policy("deny_read path " + shown(expanded, real) + " is the whole file system");
        for (const auto& place : places)
            if (is_within(place, real))
                return bad_policy("deny_read path " + shown(expanded, real) + (real == fs::path(place) ? " is" : " holds") + " the writable root " + place +
                                  ": denying it would hide the command's own workspace; remove it from deny_read or choose another workspace");
        if (std::any_of(out.deny_read.begin(), out.deny_read.end(), [&](const fs::path& d) { return is_within(real, d); })) continue;
        std::erase_if(out.deny_read, [&](const fs::path& d) { return is_within(d, real); });
        out.deny_read.push_back(real);
    }
    return std::nullopt;
}

std::optional<Error> resolve_protected(const std::vector<fs::path>& entries, const fs::path& home, Policy& out, KeptGitScan* kept) {
    const auto places = writable_places(out);
    auto add = [&](const fs::path& real) {
        if (std::find(out.protect.begin(), out.protect.end(), real) == out.protect.end()) out.protect.push_back(real);
    };
    LookedAt looked;
    // Each root, and its `.git`, made once for all the entries.
    const std::vector<fs::path> roots(places.begin(), places.end());
    std::vector<fs::path> gits;
    for (const auto& root : roots) gits.push_back(root / ".git");
    for (const auto& entry : entries) {
        std::optional<fs::path> made;
        const fs::path* at = expand_home(entry, home, made);
        if (!at) continue;
        const fs::path& expanded = *at;
        if (has_nul(expanded)) return bad_policy("a protect path contains a NUL byte");
        if (expanded.is_absolute()) {
            std::error_code ec;
            const fs::path real = fs::canonical(expanded, ec);
            if (!ec) add(real);
            continue;
        }
        for (const auto& part : expanded)
            if (part == "..") return bad_policy("protect path must not climb out of its root with '..': " + entry.string());
        fs::path normal;
        const fs::path& relative = plain_relative(expanded) ? expanded : (normal = expanded.lexically_normal());
        for (std::size_t i = 0; i < roots.size(); ++i) {
            const fs::path& root = roots[i];
            auto first = relative.begin();
            std::error_code ec;
            // `.git` as a file (a worktree, a submodule): the file itself, which names the
            // repository, and what it names.
            if (first != relative.end() && *first == ".git" && looked.type(gits[i]) == fs::file_type::regular) {
                add(gits[i]);
                const auto gitdir = read_gitdir(gits[i], root);
                if (!gitdir) continue;
                fs::path rest;
                for (auto it = std::next(first); it != relative.end(); ++it) rest /= *it;
                std::vector<fs::path> dirs{*gitdir};
                if (const auto common = read_gitdir_common(*gitdir)) dirs.push_back(*common);
                for (const auto& dir : dirs) {
                    const fs::path real = fs::canonical(dir / rest, ec);
                    if (!ec) add(real);
                }
                continue;
            }
            auto found = looked.walk(root, relative);
            if (!found) return found.error();
            if (*found) add(**found);
        }
    }
    // An entry under `.git` protects each root's repositories whole: everything through
    // which git runs programs or is sent elsewhere (git_guard.hpp), which the command
    // could otherwise plant beside the entry or redirect around it.
    if (protects_git(entries) && !places.empty()) {
        for (const auto& p : (kept ? scan_git_for_run(places, home, *kept) : scan_git(places, home, false)).present) {
            std::error_code ec;
            if (fs::symlink_status(p, ec).type() == fs::file_type::symlink)
                return bad_policy("cannot protect " + p.string() + ": it is a symbolic link, which the command could replace; remove the link or the protect entry");
            add(p);
        }
    }
    // What lies outside every writable place is read-only already.
    std::erase_if(out.protect, [&](const fs::path& p) {
        return std::none_of(places.begin(), places.end(), [&](const std::string& place) { return is_within(p, place); }) &&
               !always_writable(p);
    });
    return std::nullopt;
}

namespace {

// Each entry of `dir` that is not readable: hidden when it holds nothing readable either,
// walked when it is a directory on the way to a readable place.
void hide_beside(const fs::path& dir, const std::vector<fs::path>& readable, std::vector<fs::path>& hidden, int depth) {
#if defined(_WIN32)
    (void)dir, (void)readable, (void)hidden, (void)depth;
#else
    if (depth > 64) return;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    ::closedir(d);
    for (const auto& name : names) {
        const fs::path p = dir / name;
        if (std::any_of(readable.begin(), readable.end(), [&](const fs::path& r) { return is_within(p, r); })) continue;
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
        if (S_ISDIR(st.st_mode) && std::any_of(readable.begin(), readable.end(), [&](const fs::path& r) { return is_within(r, p); }))
            hide_beside(p, readable, hidden, depth + 1);
        else
            hidden.push_back(p);
    }
#endif
}

}  // namespace

std::vector<fs::path> read_scope_places(const Policy& resolved, const std::vector<fs::path>& read_roots) {
    std::vector<fs::path> wanted;
    for (const char* system : {"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/var/lib", "/proc", "/dev", "/sys",
                               "/run/systemd/resolve"})
        wanted.emplace_back(system);
    for (const auto& w : sdk::always_writable_places()) wanted.push_back(w);
    for (const auto& place : writable_places(resolved)) wanted.emplace_back(place);
    // Where the command runs, unless that is a home or above one: the scope is what keeps
    // the rest of the home unread.
    const auto homes = caller_homes();
    const fs::path& here = resolved.working_directory;
    if (!here.empty() && std::none_of(homes.begin(), homes.end(), [&](const fs::path& h) { return is_within(h, here); })) wanted.push_back(here);
    for (const auto& r : with_homes(read_roots, homes)) wanted.push_back(r);
    std::vector<fs::path> places;
    for (const auto& w : wanted) {
        std::error_code ec;
        const fs::path real = fs::canonical(w, ec);
        if (!ec) places.push_back(real);
    }
    std::sort(places.begin(), places.end());
    places.erase(std::unique(places.begin(), places.end()), places.end());
    std::vector<fs::path> outermost;
    for (const auto& p : places)
        if (std::none_of(places.begin(), places.end(), [&](const fs::path& q) { return q != p && is_within(p, q); })) outermost.push_back(p);
    return outermost;
}

std::vector<fs::path> hide_outside_read_scope(Policy& resolved, const std::vector<fs::path>& places) {
    std::vector<fs::path> hidden;
    hide_beside("/", places, hidden, 0);
    std::sort(hidden.begin(), hidden.end());
    for (const auto& h : hidden) {
        if (std::any_of(resolved.deny_read.begin(), resolved.deny_read.end(), [&](const fs::path& d) { return is_within(h, d); })) continue;
        std::erase_if(resolved.deny_read, [&](const fs::path& d) { return is_within(d, h); });
        resolved.deny_read.push_back(h);
    }
    return hidden;
}

void drop_unprotected(Policy& resolved, const std::vector<fs::path>& entries) {
    if (entries.empty() || resolved.protect.empty()) return;
    std::vector<fs::path> lifted;
    const auto homes = caller_homes();
    for (const auto& e : with_homes(entries, homes)) {
        if (e.is_absolute()) {
            std::error_code ec;
            const fs::path real = fs::weakly_canonical(e, ec);
            lifted.push_back(ec ? e : real);
            continue;
        }
        for (const auto& place : writable_places(resolved)) lifted.push_back(fs::path(place) / e);
    }
    std::erase_if(resolved.protect, [&](const fs::path& p) {
        return std::any_of(lifted.begin(), lifted.end(), [&](const fs::path& l) { return is_within(p, l); });
    });
}

std::vector<std::string> writable_places(const Policy& resolved) {
    std::vector<std::string> places;
    if (!resolved.workspace.empty()) places.push_back(resolved.workspace.string());
    for (const auto& w : resolved.writable) places.push_back(w.string());
    return places;
}

}  // namespace confine::detail
