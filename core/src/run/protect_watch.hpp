// The run-end check of the protected paths (docs/design.md §11, "think past the run"),
// beside git's (git_guard.hpp): what a protect entry names that is missing at the start
// must still be missing after the run (what the command planted there is moved aside);
// and, where the runner cannot keep the protected paths read-only (Landlock without a
// mount namespace of its own), each is recorded before the run and put back after it,
// once no process of the run is left. Internal to libconfine.
#pragma once

#include <confine/execute.hpp>
#include <confine/wrap_result.hpp>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>
#include <vector>

namespace confine::detail {

// One thing of a protected path as it was: the path itself (`relative` empty) or what
// lies beneath it.
struct KeptNode {
    // other: a socket or a device, which is compared by kind and mode, never put back.
    enum class Kind { file, directory, link, fifo, other };
    std::filesystem::path relative;
    Kind kind = Kind::file;
    unsigned mode = 0;  // the permission bits
    unsigned uid = 0, gid = 0;
    std::string data;  // a file's bytes, a link's target
    std::int64_t modified_seconds = 0, modified_nanoseconds = 0;  // the last change of its data
};

// A protected path (resolved, in the writable root `root`) as it was at the start.
struct KeptPath {
    std::filesystem::path path, root;
    std::vector<KeptNode> nodes;  // the path first, then what lies beneath it, in order
    // The directories on the way from the root down to it (`.git`), and it where it is a
    // directory, each with its identity: one the command renamed within its directory is
    // moved back.
    struct Step {
        std::filesystem::path dir;
        std::uint64_t device = 0, inode = 0;
    };
    std::vector<Step> way;
};

struct ProtectWatch {
    // What a relative protect entry names in a writable root that was missing at the start
    // (entries under `.git` are git's check's).
    std::vector<std::filesystem::path> absent;
    // The protected paths to put back after the run.
    std::vector<KeptPath> kept;
};

// The places of `resolved` where the relative `entries` (as asked, before resolution)
// name nothing.
std::vector<std::filesystem::path> absent_protected(const Policy& resolved, const std::vector<std::filesystem::path>& entries);

// Each of `resolved.protect` as it is now, to put back after the run; an error naming the
// path that cannot be kept (too large: more than 64 MiB or 20,000 entries in all, a
// git directory's objects/ left out; unreadable; or a platform without this check). A
// FIFO is kept as one, never read.
std::expected<std::vector<KeptPath>, std::string> keep_protected(const Policy& resolved);

// After the run (nothing of it alive): what was planted where nothing stood moved aside;
// each kept path that changed moved aside and put back as it was (SetAside::restored).
std::vector<SetAside> settle_protected(const ProtectWatch& watch);

}  // namespace confine::detail
