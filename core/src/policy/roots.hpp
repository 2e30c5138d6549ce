// Writable roots: what a policy may make writable, resolved once. Internal to libconfine.
#pragma once

#include <confine/error.hpp>
#include <confine/wrap_result.hpp>

#include <expected>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

// Why granting `real` (resolved: absolute, no link, no "." or "..") as writable would
// let a confined command change the system or the user's own start-up files, or
// nullopt. Refused: "/", the system directories and anything beneath those that hold
// programs, libraries, configuration or devices, the directories that hold homes, and
// the caller's home directory itself or anything above it. `home` is the caller's home
// directory, resolved (empty when there is none).
std::optional<std::string> refused_writable_root(const std::filesystem::path& real, const std::filesystem::path& home);

// Whether `path` is `root` or lies beneath it: the SDK's rule, the one of host and runners.
using sdk::is_within;

// The caller's home directories, resolved, each once: $HOME, and the account's home
// from the user database (getpwuid(geteuid())) when it differs; one that does not exist,
// or is the root directory, is left out. On Windows, %USERPROFILE%.
std::vector<std::filesystem::path> caller_homes();

// The home directory of user `uid` as the user database gives it when the database is
// the files, read here from the texts of /etc/nsswitch.conf and /etc/passwd: when the
// first source nsswitch.conf names for passwd (on its one passwd line) is "files", the
// sixth field of the first passwd line whose third is `uid`. Otherwise (another source
// first, no such line, a line of the compat syntax's "+" or "-"): nullopt, and the
// caller asks getpwuid(), which then goes through every source as configured.
std::optional<std::string> files_home(std::string_view nsswitch, std::string_view passwd, unsigned long uid);

// `entries` with each "~" and "~/..." entry replaced by one beneath every home of
// `homes` (none when `homes` is empty); the other entries as they are, in order.
std::vector<std::filesystem::path> with_homes(const std::vector<std::filesystem::path>& entries, const std::vector<std::filesystem::path>& homes);

// The policy with every root resolved (links followed once, here) and checked: each an
// existing directory that refused_writable_root() accepts for every home of the caller;
// duplicates dropped. deny_read and protect entries beginning with "~" stand for that
// path beneath each of caller_homes(). What a runner is given is what was checked.
// `kept`: where the scan of the repositories the protect entries ask for is kept for the
// run-end check of the same wrap (git_guard.hpp), if any.
struct KeptGitScan;
std::expected<Policy, Error> resolve_policy(const Policy& policy, KeptGitScan* kept = nullptr);

// Whether `p` is absolute and plain: no empty, "." or ".." component, no '/' at its end
// (POSIX; never on Windows). Such a path's directories are its prefixes before each '/'.
bool plain_absolute(const std::filesystem::path& p);

// Whether `p` is relative and plain: not empty, no root, no empty, "." or ".."
// component, no '/' at its end (POSIX; never on Windows). Such a path is its own
// lexically_normal().
bool plain_relative(const std::filesystem::path& p);

// `dir` / `relative`, made as one text where that is the same path (a path's operator/
// takes both apart again, and a path made of a std::string is taken apart once more).
std::filesystem::path joined(const std::filesystem::path& dir, std::string_view relative);
std::filesystem::path joined(const std::filesystem::path& dir, const std::filesystem::path& relative);

// The names in directories, each directory listed once: whether a path is surely
// missing, from the listing of the directory that would hold it (one listing in place of
// a look at each of the many paths there: the workspace's protected names). A directory
// that cannot be listed, or holds more than `most` names (4096 unless said), says nothing;
// one that does not exist says that nothing is beneath it. What is created after the
// listing is not seen: one object is for one moment (a check before the run, or one
// after it).
class DirectoryNames {
public:
    explicit DirectoryNames(std::size_t most = 4096) : most_(most) {}
    bool surely_missing(const std::filesystem::path& p);
#if !defined(_WIN32)
    // The same, for a path given by its text.
    bool surely_missing(std::string_view p);
#endif

private:
    struct Listing {
        enum { unknown, listed, gone } state = unknown;
        std::set<std::filesystem::path::string_type, std::less<>> names;
    };
    static Listing list(const std::filesystem::path& dir, std::size_t most);
    std::size_t most_;
    // Keyed by the directory's text: a path's own comparison walks its components.
    std::map<std::filesystem::path::string_type, Listing, std::less<>> listed_;
};

// Where paths lead, as std::filesystem::canonical says, with fewer system calls: a path
// with no ".", ".." or empty component is looked at with one lstat of itself and of each
// directory above it, each once for every path this resolver is asked (none for the
// directories named known_directory()): one resolver is for one moment. A path that is
// a link, or beneath one, is resolved by std::filesystem::canonical; one that does not
// exist gives nullopt.
class PathResolver {
public:
    std::optional<std::filesystem::path> canonical(const std::filesystem::path& p);
    // `real` (resolved: no link on its way) and every directory above it are directories.
    void known_directory(const std::filesystem::path& real);

private:
    enum class Kind { directory, link, other, missing };
    static Kind look(const char* path);   // one lstat
    Kind kind_of(std::string_view path);  // a directory's, looked at once
    std::map<std::string, Kind, std::less<>> seen_;
};

// Resolves `entries` (absolute, or "~/..." beneath `home`) into out.deny_read: each where
// it leads, one that does not exist skipped, one within another dropped. An error when one
// is a writable root of `out` or holds one (out's roots resolved already).
// `resolver` (optional) is the one to resolve them with.
std::optional<Error> resolve_denied(const std::vector<std::filesystem::path>& entries, const std::filesystem::path& home, Policy& out,
                                    PathResolver* resolver = nullptr);

// Resolves `entries` into out.protect: an absolute or "~/..." entry where it leads; a
// relative one inside each writable root of `out`, refused where a component is a link
// the command could replace; `.git/...` under a root whose `.git` is a file: that file and
// what its `gitdir:` (and the repository's `commondir`) name. What does not exist, or lies
// outside every place the command may write, is dropped.
std::optional<Error> resolve_protected(const std::vector<std::filesystem::path>& entries, const std::filesystem::path& home, Policy& out,
                                      KeptGitScan* kept = nullptr);

// The places a scoped call (Config::read_scoped) may read: the system's directories
// (/usr, /etc, /bin, /sbin, /lib*, /opt, /var/lib, /proc, /dev, /sys,
// /run/systemd/resolve), the writable places (the roots, /tmp, /dev/shm), where the
// command runs (unless that is a home or above one), and `read_roots` ("~/..." beneath
// each of caller_homes()); each canonical and existing (one that is not is skipped), none
// beneath another, sorted (Policy::read_scope).
std::vector<std::filesystem::path> read_scope_places(const Policy& resolved, const std::vector<std::filesystem::path>& read_roots);

// The read scope `places` as deny_read entries, added to `resolved.deny_read`, for a
// runner that does not apply Policy::read_scope: from `/` down, each entry that is not
// readable and holds nothing readable, while each directory on the way to a readable
// place is walked in turn. A symbolic link is never hidden: what it leads to is judged
// where it is. The hidden paths, sorted.
std::vector<std::filesystem::path> hide_outside_read_scope(Policy& resolved, const std::vector<std::filesystem::path>& places);

// `resolved.protect` without what the unprotect `entries` (lexically normal) name: a
// relative entry in each writable root, an absolute or "~/..." one where it leads; each
// such path and what lies beneath it.
void drop_unprotected(Policy& resolved, const std::vector<std::filesystem::path>& entries);

// The places a confined command may write under `policy` (resolved), beyond those every
// sandbox may write (sdk::always_writable_places()).
std::vector<std::string> writable_places(const Policy& resolved);

}  // namespace confine::detail
