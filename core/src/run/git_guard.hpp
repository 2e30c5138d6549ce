// What git reads that a confined command could turn against the user (docs/design.md §11,
// "think past the run"): the set of files and directories through which git runs
// programs or is sent elsewhere, for every repository a writable root holds, and the
// run-end check that moves aside what the command planted where nothing stood at the
// start. Internal to libconfine.
#pragma once

#include <confine/execute.hpp>
#include <confine/wrap_result.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

// What one scan of the writable roots' repositories found.
struct GitScan {
    // What exists at the start and must stay as it is: each repository's `.git` file (a
    // worktree's, a submodule's), and in its git directory and common directory `config`,
    // `config.worktree`, `hooks`, `commondir`, `gitdir`, `worktrees`, `modules`, and the
    // files its configuration includes and its `core.hooksPath`, where they lie in a
    // writable root.
    std::vector<std::filesystem::path> present;
    // What does not exist at the start and must not exist after the run: the files above
    // that are missing (`commondir`, `config.worktree`, an included file, ...), a `.git`
    // in a root that sits inside a parent repository or in a directory the index tracks,
    // a submodule's `.git` that is not there.
    std::vector<std::filesystem::path> absent;
    // Each repository entered: its top (where its `.git` is) and its git directory, whose
    // index names the submodules git enters from it.
    struct Repository {
        std::filesystem::path top, git_dir;
    };
    std::vector<Repository> repositories;
    // The `.git` entries (files or directories) of the repositories entered, as they were.
    std::vector<std::filesystem::path> entered;
};

// A regular file's bytes (not through a link, not a FIFO), at most 64 MiB of them, judged
// on the opened descriptor; nullopt otherwise. What the scan reads of a repository, and
// the user database's files (roots.cpp).
std::optional<std::string> read_regular(const std::filesystem::path& file);

// What the scan reads in a repository's files, each from the file's bytes:
// - the path that the first line of a `.git` file (`gitdir: PATH`, with `gitdir_line`)
//   or of a `commondir` (the path alone) names, relative to `dir`, normalized; nullopt
//   when it names none;
// - a git configuration file's values that name files git reads or runs from: each
//   `include.path` and `includeIf.*.path`, and `core.hooksPath` (a simple reading of
//   git's syntax: sections, `key = value`, quotes, comments);
// - the gitlinks (submodules) an index lists, their paths relative to the worktree's
//   top, and with `directories` the directories that hold its entries. Index versions 2,
//   3 and 4; anything else, or a damaged index, gives what was read.
std::optional<std::filesystem::path> git_named_path(std::string_view text, const std::filesystem::path& dir, bool gitdir_line);
struct GitConfigPaths {
    std::vector<std::string> includes;
    std::vector<std::string> hooks_paths;
};
GitConfigPaths git_config_paths(std::string_view text);
std::vector<std::string> index_gitlinks(std::string_view data, std::vector<std::string>* directories = nullptr);

// The repositories of the writable places (`places`, resolved), and what of them git
// reads. `home` expands `~/` in an include path. Without `with_absent`, the tracked
// directories' `.git` (a stat each) are left out of `absent`.
GitScan scan_git(const std::vector<std::string>& places, const std::filesystem::path& home, bool with_absent);

// A scan made while a run's policy was resolved, with the tracked directories it left
// out: the watch_git() of the same wrap, for the same places, takes it instead of
// scanning again, and looks only at those directories.
struct KeptGitScan {
    bool valid = false;
    std::vector<std::string> places;
    std::filesystem::path home;
    GitScan scan;
    std::vector<std::filesystem::path> tracked;
};

// scan_git() without `with_absent`, for a resolution that a run's watch_git() follows:
// kept in `kept` for it.
GitScan scan_git_for_run(const std::vector<std::string>& places, const std::filesystem::path& home, KeptGitScan& kept);

// Whether protect `entries` (as asked, before resolution) protect repositories: one is
// relative and under `.git`.
bool protects_git(const std::vector<std::filesystem::path>& entries);

// The run-end check of one run: what was absent at the start, and the repositories whose
// submodules git would enter. Taken when the run is wrapped; nullptr when the protect
// `entries` asked (before resolution) name nothing under `.git`.
struct GitWatch;
// `kept`: the resolution's own scan, if it made one (taken, and left invalid).
std::shared_ptr<const GitWatch> watch_git(const Policy& resolved, const std::vector<std::filesystem::path>& entries, KeptGitScan* kept = nullptr);

// After the run (nothing of it alive: under bubblewrap its PID namespace is gone), what
// the command planted where git would read it, moved aside beside itself under a name git
// ignores (`NAME.confine-blocked-N`), never removed. Each entry: the path, and where it
// went (empty, with `error`, when it could not be moved).
std::vector<SetAside> settle_git(const GitWatch& watch);

// What the run-end checks use: whether what stands at `p` is planted (anything but an
// empty directory: the mount point of an empty read-only tmpfs left behind is harmless);
// whether a directory above `p` is not a directory (a link the command made); and `p`
// moved aside beside itself, `NAME.confine-blocked-N`, without replacing anything.
bool planted(const std::filesystem::path& p);
bool through_a_link(const std::filesystem::path& p);
SetAside move_aside(const std::filesystem::path& p);

}  // namespace confine::detail
