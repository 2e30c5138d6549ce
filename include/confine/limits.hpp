// What a run may take: its memory, processes, CPU time, file size and open files
// (`--limit NAME=VALUE`, [policy.limits], RunOptions::limits; docs/design.md §12).
//
//   confine::Limits limits;
//   if (auto bad = confine::set_limit(limits, "memory", "512M")) ...  // one line: why not
//
// The host enforces them, whatever the runner: by a cgroup of the run's own where it can
// make one (the run's memory, processes and CPU time as a whole), else by resource limits
// set in the runner's process before its exec, which each process of the run inherits
// (per process).
// The outcome's dimensions.limits says which, and `limit` which one ended the command.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace confine {

struct Limits {
    std::optional<std::uint64_t> memory;      // bytes
    std::optional<std::uint64_t> processes;   // processes (and threads) at once
    std::optional<std::uint64_t> cpu;         // seconds of CPU time
    std::optional<std::uint64_t> file_size;   // bytes: the largest file a process writes
    std::optional<std::uint64_t> open_files;  // descriptors a process holds open

    bool any() const noexcept { return memory || processes || cpu || file_size || open_files; }
    // `this`, with `under`'s entries where this one has none: a call's limits over the
    // configuration's.
    Limits over(const Limits& under) const;

    bool operator==(const Limits&) const = default;
};

// The names, as --limit and [policy.limits] spell them.
inline constexpr std::string_view limit_names = "memory, processes, cpu, file-size, open-files";

// Sets the limit `name` from `value`: a positive whole number; memory and file-size
// may end in K, M or G (binary: 1K = 1024 bytes), cpu is seconds. The reason it cannot,
// one sentence about `subject` (default: the name) without saying where (the caller
// names the flag or the key): an unknown name, a value that is not a positive number, or
// a limit already set.
std::optional<std::string> set_limit(Limits& limits, std::string_view name, std::string_view value, std::string_view subject = {});

// "memory=128M processes=64": the limits set, as --limit takes them (empty when none).
std::string describe(const Limits& limits);

}  // namespace confine
