#include "git_guard.hpp"

#include "roots.hpp"

#include <confine/sdk/bwrap_profile.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>

#if !defined(_WIN32)
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace fs = std::filesystem;

namespace confine::detail {

struct GitWatch {
    std::vector<fs::path> absent;
    std::vector<GitScan::Repository> repositories;
    std::vector<fs::path> entered;
};

namespace {

constexpr int max_depth = 4;          // submodules within submodules
constexpr std::size_t max_repositories = 256;
constexpr std::size_t max_tracked_directories = 200000;
constexpr std::uintmax_t max_read = std::uintmax_t{64} << 20;  // an index, a configuration

fs::file_type type_of(const fs::path& p) {
    std::error_code ec;
    return fs::symlink_status(p, ec).type();
}

bool present_at(const fs::path& p) {
    const auto t = type_of(p);
    return t != fs::file_type::not_found && t != fs::file_type::none;
}

}  // namespace

// A regular file's bytes (not through a link, not a FIFO), at most max_read of them.
// Judged on the opened descriptor: a file swapped for a FIFO or a link since it was
// looked at (by a process of an earlier run) is not read, and holds nothing up.
std::optional<std::string> read_regular(const fs::path& file) {
#if !defined(_WIN32)
    const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uintmax_t>(st.st_size) > max_read) {
        ::close(fd);
        return std::nullopt;
    }
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    text.resize(got);
    return text;
#else
    if (type_of(file) != fs::file_type::regular) return std::nullopt;
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec || size > max_read) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text(static_cast<std::size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
#endif
}

namespace {

std::string trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// What the first line of a `.git` file or a `commondir` names, relative to `dir`.
std::optional<fs::path> named_path(const fs::path& file, const fs::path& dir, bool gitdir_line) {
    auto text = read_regular(file);
    if (!text) return std::nullopt;
    return git_named_path(*text, dir, gitdir_line);
}

}  // namespace

std::optional<fs::path> git_named_path(std::string_view text, const fs::path& dir, bool gitdir_line) {
    std::string line = trimmed(text.substr(0, text.find('\n')));
    if (gitdir_line) {
        if (!line.starts_with("gitdir:")) return std::nullopt;
        line = trimmed(std::string_view(line).substr(7));
    }
    if (line.empty() || line.find('\0') != std::string::npos) return std::nullopt;
    fs::path p(line);
    return (p.is_absolute() ? p : dir / p).lexically_normal();
}

namespace {

// A value as git reads one (its config.c), from `at` (just after the '=') to the end of
// its line: whitespace outside quotes dropped at both ends and each character of it
// inside read as a space, a comment (# or ;) outside quotes ending it, the escapes \n
// \t \b \\ and \", and a backslash at the end of a line joining the next line. `at`
// is left at the start of the line after it.
std::string config_value(std::string_view text, std::size_t& at) {
    std::string value;
    std::size_t spaces = 0;
    bool quoted = false, comment = false;
    while (at < text.size()) {
        const char c = text[at++];
        if (c == '\n') break;
        if (comment) continue;
        if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
            if (!value.empty()) ++spaces;
            continue;
        }
        if (!quoted && (c == '#' || c == ';')) {
            comment = true;
            continue;
        }
        value.append(spaces, ' ');
        spaces = 0;
        if (c == '\\' && at < text.size()) {
            const char e = text[at++];
            if (e != '\n') value += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'b' ? '\b' : e;
        } else if (c == '"') {
            quoted = !quoted;
        } else {
            value += c;
        }
    }
    return value;
}

}  // namespace

GitConfigPaths git_config_paths(std::string_view text) {
    GitConfigPaths out;
    std::string section;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string line = trimmed(text.substr(at, end - at));
        std::size_t from = at;  // where a key would start
        if (!line.empty() && line.front() == '[') {
            const std::size_t open = text.find('[', at), close = text.find(']', open);
            if (close < end) {
                const std::string head = trimmed(text.substr(open + 1, close - open - 1));
                section = lower(head.substr(0, head.find_first_of(" \t\".")));
                from = close + 1;
            }
        }
        const std::size_t eq = text.find('=', from);
        if (line.empty() || line.front() == '#' || line.front() == ';' || (from == at && line.front() == '[') || eq >= end) {
            at = end + 1;
            continue;
        }
        const std::string key = lower(trimmed(text.substr(from, eq - from)));
        at = eq + 1;
        const std::string value = config_value(text, at);
        if (value.empty()) continue;
        if ((section == "include" || section == "includeif") && key == "path") out.includes.push_back(value);
        else if (section == "core" && key == "hookspath") out.hooks_paths.push_back(value);
    }
    return out;
}

std::vector<std::string> index_gitlinks(std::string_view data, std::vector<std::string>* directories) {
    std::vector<std::string> out;
    if (data.size() < 12 || data.compare(0, 4, "DIRC") != 0) return out;
    const auto* b = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t size = data.size();
    auto u32 = [&](std::size_t at) { return (std::uint32_t(b[at]) << 24) | (std::uint32_t(b[at + 1]) << 16) | (std::uint32_t(b[at + 2]) << 8) | b[at + 3]; };
    const std::uint32_t version = u32(4), count = u32(8);
    if (version < 2 || version > 4) return out;
    // SHA-1 or SHA-256: the hash length is the one that makes the first entry's layout fit;
    // tried both ways, the one that reads every entry wins.
    for (const std::size_t hash : {std::size_t{20}, std::size_t{32}}) {
        std::vector<std::string> found, dirs;
        std::string previous, previous_dir;
        std::size_t at = 12;
        bool ok = true;
        for (std::uint32_t i = 0; i < count && ok; ++i) {
            const std::size_t start = at;
            const std::size_t fixed = 40 + hash + 2;
            if (at + fixed > size) { ok = false; break; }
            const std::uint32_t mode = u32(at + 24);
            const std::uint16_t flags = static_cast<std::uint16_t>((b[at + 40 + hash] << 8) | b[at + 40 + hash + 1]);
            at += fixed;
            if (version >= 3 && (flags & 0x4000)) at += 2;
            if (at > size) { ok = false; break; }
            std::string name;
            if (version == 4) {
                std::uint64_t strip = 0;
                unsigned char c = 0;
                do {  // git's offset varint
                    if (at >= size) { ok = false; break; }
                    c = b[at++];
                    strip = (strip << 7) | (c & 0x7f);
                    if (c & 0x80) ++strip;
                } while (c & 0x80);
                if (!ok || strip > previous.size()) { ok = false; break; }
                const auto nul = data.find('\0', at);
                if (nul == std::string::npos) { ok = false; break; }
                name = previous.substr(0, previous.size() - strip) + std::string(data.substr(at, nul - at));
                at = nul + 1;
            } else {
                const auto nul = data.find('\0', at);
                if (nul == std::string::npos) { ok = false; break; }
                name = std::string(data.substr(at, nul - at));
                // Padded with NULs to a multiple of 8 bytes from the entry's start.
                at = start + ((nul + 1 - start + 7) / 8) * 8;
                if (at > size) { ok = false; break; }
            }
            if ((mode & 0170000) == 0160000) found.push_back(name);
            // The directories that hold it; the index is sorted, so those the previous
            // entry's directory lies in are in already.
            if (directories) {
                const auto slash = name.rfind('/');
                const std::string dir = slash == std::string::npos ? std::string() : name.substr(0, slash);
                if (dir != previous_dir) {
                    auto within_previous = [&](std::size_t length) {
                        return previous_dir.size() >= length && previous_dir.compare(0, length, dir, 0, length) == 0 &&
                               (previous_dir.size() == length || previous_dir[length] == '/');
                    };
                    for (std::size_t end = dir.find('/'); !dir.empty(); end = dir.find('/', end + 1)) {
                        const std::size_t length = end == std::string::npos ? dir.size() : end;
                        if (length > 0 && !within_previous(length)) dirs.push_back(dir.substr(0, length));
                        if (end == std::string::npos) break;
                    }
                    previous_dir = dir;
                }
            }
            previous = std::move(name);
        }
        if (ok) {
            if (directories) *directories = std::move(dirs);
            return found;
        }
    }
    return out;
}

namespace {

// The gitlinks of the index file `index_file` (index_gitlinks); none when it cannot be read.
std::vector<std::string> gitlinks(const fs::path& index_file, std::vector<std::string>* directories = nullptr) {
    const auto data = read_regular(index_file);
    return data ? index_gitlinks(*data, directories) : std::vector<std::string>{};
}

// Everything in the index files of `git_dir` (its index, and a split index's shared ones).
std::vector<std::string> all_gitlinks(const fs::path& git_dir, std::vector<std::string>* directories = nullptr) {
    auto out = gitlinks(git_dir / "index", directories);
    std::error_code ec;
    for (fs::directory_iterator it(git_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.starts_with("sharedindex.")) {
            auto more = gitlinks(it->path());
            out.insert(out.end(), more.begin(), more.end());
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

bool safe_relative(const std::string& p) {
    if (p.empty() || p.front() == '/') return false;
    for (const auto& part : fs::path(p))
        if (part == ".." || part == ".git") return false;
    return true;
}

// When the directories the index tracks are held absent: not at all, as they are found,
// or later (kept in tracked() for complete()).
enum class Tracked { ignored, held, kept };

class Scanner {
public:
    Scanner(const std::vector<std::string>& places, const fs::path& home, Tracked tracked)
        : places_(places), home_(home), tracked_mode_(tracked) {}

    const std::vector<fs::path>& tracked() const { return tracked_; }

    // `scan` (a scan of these places that kept its tracked directories) as a scan that
    // held them would have given: each held free now.
    GitScan complete(GitScan scan, const std::vector<fs::path>& tracked) {
        out_ = std::move(scan);
        for (const auto& dir : tracked) held_free(dir);
        sort_out();
        return std::move(out_);
    }

    GitScan scan() {
        for (const auto& place : places_) {
            const fs::path root(place);
            if (present_at(root / ".git")) repository(root, 0);
            else if (inside_a_repository(root)) held_free(root);
        }
        sort_out();
        return std::move(out_);
    }

private:
    void sort_out() {
        // By their text (cheaper than path comparison, and the same order for these).
        for (auto* list : {&out_.present, &out_.absent}) {
            std::sort(list->begin(), list->end(), [](const fs::path& a, const fs::path& b) { return a.native() < b.native(); });
            list->erase(std::unique(list->begin(), list->end(), [](const fs::path& a, const fs::path& b) { return a.native() == b.native(); }),
                        list->end());
        }
    }

    bool writable(const fs::path& p) const {
        return std::any_of(places_.begin(), places_.end(), [&](const std::string& place) { return is_within(p, place); });
    }

    void present(const fs::path& p) {
        if (writable(p)) out_.present.push_back(p);
    }
    void absent(const fs::path& p) {
        if (writable(p)) out_.absent.push_back(p);
    }
    // `p` kept as it is where it exists, held absent where it does not.
    void hold(const fs::path& p) {
        if (present_at(p)) present(p);
        else absent(p);
    }

    // A directory where git run there would find a repository the command planted: its
    // `.git`, or the directory itself made a repository (git takes a directory with a
    // HEAD, objects and refs for one, and a `core.worktree` in its config gives it a work
    // tree): held absent, a HEAD as the `.git`, where they are not there at the start.
    void held_free(const fs::path& dir) {
        for (const char* name : {".git", "HEAD"})
            if (!present_at(dir / name)) absent(dir / name);
    }

    // Whether a directory above `root` holds a `.git`: git run at the root uses that
    // repository until the root has a `.git` of its own.
    static bool inside_a_repository(const fs::path& root) {
        for (fs::path p = root.parent_path(); !p.empty(); p = p.parent_path()) {
            if (present_at(p / ".git")) return true;
            if (p == p.root_path()) break;
        }
        return false;
    }

    // The repository whose `.git` is in `top`.
    void repository(const fs::path& top, int depth) {
        if (depth > max_depth || out_.repositories.size() >= max_repositories) return;
        const fs::path dot_git = top / ".git";
        fs::path git_dir;
        const auto t = type_of(dot_git);
        if (t == fs::file_type::regular) {
            present(dot_git);  // names the git directory: a worktree's, a submodule's
            auto named = named_path(dot_git, top, true);
            if (!named) return;
            std::error_code ec;
            git_dir = fs::canonical(*named, ec);
            if (ec) return;
        } else if (t == fs::file_type::directory) {
            git_dir = dot_git;
        } else {
            return;  // a link: nothing the scan follows
        }
        out_.entered.push_back(dot_git);
        out_.repositories.push_back({top, git_dir});
        fs::path common = git_dir;
        if (auto named = named_path(git_dir / "commondir", git_dir, false)) {
            std::error_code ec;
            if (fs::path real = fs::canonical(*named, ec); !ec) common = real;
        }
        for (const fs::path& dir : common == git_dir ? std::vector<fs::path>{git_dir} : std::vector<fs::path>{git_dir, common}) {
            const bool is_common = dir == common;
            for (const char* name : {"config", "config.worktree"}) {
                hold(dir / name);
                configuration(dir / name, top, 0);
            }
            // A git directory with no commondir is the common one; one planted sends git elsewhere.
            hold(dir / "commondir");
            if (present_at(dir / "gitdir")) present(dir / "gitdir");
            if (!is_common) continue;
            for (const char* name : {"hooks", "worktrees", "modules"}) hold(dir / name);
            // The `.git` file of each linked worktree, where the user runs git too.
            std::error_code ec;
            for (fs::directory_iterator it(dir / "worktrees", ec), end; !ec && it != end; it.increment(ec))
                if (auto file = named_path(it->path() / "gitdir", it->path(), false); file && type_of(*file) == fs::file_type::regular)
                    present(*file);
        }
        // The submodules git enters from here: each gitlink's `.git` as it is now, or held
        // absent (checked again at the end against what the index then lists).
        // Each directory the index tracks, where the user runs git too: a `.git` planted
        // there would be the repository git finds first (one created in a directory of the
        // command's own, as `git init` does, is its own). Only for the run-end check.
        std::vector<std::string> tracked;
        for (const auto& link : all_gitlinks(git_dir, tracked_mode_ != Tracked::ignored ? &tracked : nullptr)) {
            if (!safe_relative(link)) continue;
            const fs::path sub = top / link;
            if (present_at(sub / ".git")) repository(sub, depth + 1);
            else absent(sub / ".git");
        }
        if (tracked.size() > max_tracked_directories) tracked.resize(max_tracked_directories);
        for (const auto& dir : tracked)
            if (safe_relative(dir)) {
                if (tracked_mode_ == Tracked::held) held_free(top / dir);
                else tracked_.push_back(top / dir);
            }
    }

    // What a configuration file names: its included files, and a hooks directory.
    void configuration(const fs::path& file, const fs::path& top, int depth) {
        if (depth > 3) return;
        auto text = read_regular(file);
        if (!text) return;
        const auto paths = git_config_paths(*text);
        auto where = [&](const std::string& value, const fs::path& relative_to) -> std::optional<fs::path> {
            if (value == "~" || value.starts_with("~/")) {
                if (home_.empty()) return std::nullopt;
                return (value == "~" ? home_ : home_ / value.substr(2)).lexically_normal();
            }
            if (value.front() == '~' || value.find('\0') != std::string::npos) return std::nullopt;
            fs::path p(value);
            return (p.is_absolute() ? p : relative_to / p).lexically_normal();
        };
        for (const auto& include : paths.includes)
            if (auto p = where(include, file.parent_path())) {
                hold(*p);
                configuration(*p, top, depth + 1);
            }
        for (const auto& hooks : paths.hooks_paths)
            if (auto p = where(hooks, top)) hold(*p);
    }

    const std::vector<std::string>& places_;
    fs::path home_;
    Tracked tracked_mode_;
    std::vector<fs::path> tracked_;
    GitScan out_;
};

#if !defined(_WIN32)
struct Identity {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const Identity&) const = default;
};
std::optional<Identity> identity(const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return std::nullopt;
    return Identity{st.st_dev, st.st_ino};
}
#endif

}  // namespace

// Whether what stands at `p` now is planted: anything but an empty directory (the mount
// point of an empty read-only tmpfs that bubblewrap left behind is harmless: git reads
// nothing from an empty hooks, worktrees or modules directory).
bool planted(const fs::path& p) {
    const auto t = type_of(p);
    if (t == fs::file_type::not_found || t == fs::file_type::none) return false;
    if (t != fs::file_type::directory) return true;
    std::error_code ec;
    return !fs::is_empty(p, ec) || ec;
}

// Whether a directory above `p` is a symbolic link. Every path the check looks at is a
// writable root (resolved: no link above it) with a relative path below, so a link there
// is the command's, and what lies beyond it is not the root's: never moved (it may be
// the user's own repository elsewhere, which git would find through the link anyway).
bool through_a_link(const fs::path& p) {
    for (fs::path dir = p.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
        if (type_of(dir) != fs::file_type::directory) return true;
    return false;
}

SetAside move_aside(const fs::path& p) {
    SetAside out{p, {}, {}};
    for (int n = 1; n <= 1000; ++n) {
        fs::path to = p;
        to += ".confine-blocked-" + std::to_string(n);
        if (present_at(to)) continue;
#if defined(__linux__)
        // Without replacing anything that appeared in between.
        if (::renameat2(AT_FDCWD, p.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
            out.moved_to = to;
            return out;
        }
        if (errno == EEXIST) continue;
        out.error = std::strerror(errno);
        return out;
#else
        std::error_code ec;
        fs::rename(p, to, ec);
        if (!ec) {
            out.moved_to = to;
            return out;
        }
        out.error = ec.message();
        return out;
#endif
    }
    out.error = "no free name beside it";
    return out;
}

GitScan scan_git(const std::vector<std::string>& places, const fs::path& home, bool with_absent) {
    return Scanner(places, home, with_absent ? Tracked::held : Tracked::ignored).scan();
}

GitScan scan_git_for_run(const std::vector<std::string>& places, const fs::path& home, KeptGitScan& kept) {
    Scanner scanner(places, home, Tracked::kept);
    GitScan scan = scanner.scan();
    kept = KeptGitScan{true, places, home, scan, scanner.tracked()};
    return scan;
}

bool protects_git(const std::vector<fs::path>& entries) {
    return std::any_of(entries.begin(), entries.end(), [](const fs::path& e) { return !e.is_absolute() && e.begin() != e.end() && *e.begin() == ".git"; });
}

std::shared_ptr<const GitWatch> watch_git(const Policy& resolved, const std::vector<fs::path>& entries, KeptGitScan* kept) {
    const auto places = writable_places(resolved);
    if (!protects_git(entries) || places.empty()) return nullptr;
    GitScan scan;
    if (kept && kept->valid && kept->places == places) {
        // The resolution's own scan, moments old, nothing run since: what it left for
        // later (the tracked directories' `.git` and HEAD) looked at now.
        KeptGitScan r = std::move(*kept);
        *kept = KeptGitScan{};
        scan = Scanner(places, r.home, Tracked::held).complete(std::move(r.scan), r.tracked);
    } else {
        // git takes `~` in an include path as $HOME, the first of the caller's homes.
        const auto homes = caller_homes();
        scan = scan_git(places, homes.empty() ? fs::path() : homes.front(), true);
    }
    auto watch = std::make_shared<GitWatch>();
    watch->absent = std::move(scan.absent);
    watch->repositories = std::move(scan.repositories);
    watch->entered = std::move(scan.entered);
    if (watch->absent.empty() && watch->repositories.empty()) return nullptr;
    return watch;
}

std::vector<SetAside> settle_git(const GitWatch& watch) {
    std::vector<SetAside> out;
    for (const auto& p : watch.absent)
        if (planted(p) && !through_a_link(p)) out.push_back(move_aside(p));
#if !defined(_WIN32)
    // A submodule git would now enter that was not entered at the start: a gitlink the
    // command added to an index (with a repository of its own behind it), or a `.git`
    // put where a submodule had none.
    std::vector<Identity> known;
    for (const auto& e : watch.entered)
        if (auto id = identity(e)) known.push_back(*id);
    for (const auto& repo : watch.repositories)
        for (const auto& link : all_gitlinks(repo.git_dir)) {
            if (!safe_relative(link)) continue;
            const fs::path dot_git = repo.top / link / ".git";
            if (!planted(dot_git) || through_a_link(dot_git)) continue;
            if (std::any_of(out.begin(), out.end(), [&](const SetAside& s) { return s.path == dot_git; })) continue;
            const auto id = identity(dot_git);
            if (id && std::find(known.begin(), known.end(), *id) != known.end()) continue;
            out.push_back(move_aside(dot_git));
        }
#endif
    return out;
}

}  // namespace confine::detail
