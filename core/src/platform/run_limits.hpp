// How a run's limits are held (limits.hpp, docs/design.md §12): decided once per run,
// before anything runs, by prepare_run_limits(); applied by the runner's process between
// fork and exec (apply_child_limits); after the run, which limit ended the command.
// Internal to libconfine; one implementation per OS under platform/.
#pragma once

#include <confine/execute.hpp>

#include "observation.hpp"
#include <confine/limits.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace confine::detail {

// What the runner's process applies before its exec: plain data, made before the fork.
struct ChildLimits {
    struct Resource {
        int resource;         // RLIMIT_*
        std::uint64_t value;  // soft and hard alike
    };
    Resource resources[5] = {};
    std::size_t resource_count = 0;
    // The run's cgroup(s): descriptors of their cgroup.procs, the process writes "0" to each.
    int cgroup_procs[3] = {-1, -1, -1};
    std::size_t cgroup_count = 0;
};

// In the child, from fork to exec: system calls only. 0, or the errno of what failed.
int apply_child_limits(const ChildLimits& limits) noexcept;

// A group of the run's processes the host made and removes (a cgroup of the run).
class RunGroup {
public:
    virtual ~RunGroup() = default;  // ends what is left in it, and removes it
    virtual bool out_of_memory() const = 0;       // the kernel killed a process of it for its memory limit
    virtual bool processes_refused() const = 0;   // a fork of it was refused at its processes limit
    virtual bool watches_cpu() const = 0;         // it holds the run's CPU time as a whole
    virtual bool cpu_exceeded() const = 0;        // and ended the run for it
};

struct RunLimits {
    Limits limits;
    Level level = Level::none;
    std::string open;  // "limits: ..." for a level below full
    ChildLimits child;
    std::unique_ptr<RunGroup> group;  // nullptr: resource limits alone
    // Which limit ended the command, after the run, into `o` (limit, limit_possible,
    // limit_how): `o` as observed; `exit_as_signal` for a runner that is a process of its
    // own in front of the command, whose end it gives as 128 + the signal that killed the
    // command (bubblewrap, a shell); `elapsed` how long the run lasted.
    void judge_end(Observation& o, bool exit_as_signal, std::chrono::steady_clock::duration elapsed) const;
};

// How `limits` are held on this machine for a run of this process: by a cgroup of the
// run's own where one can be made, else by resource limits. nullptr when none is set.
std::shared_ptr<RunLimits> prepare_run_limits(const Limits& limits);

// Outcome::limit_note for a run of `command` (its name) that was observed as `o` and
// classified as `outcome`, with `limits` (those in force, none where none) and its time
// limit; "" when no limit ended it, nor may have.
std::string limit_note(const Outcome& outcome, const Observation& o, const Limits& limits, std::optional<std::chrono::milliseconds> timeout,
                       std::chrono::milliseconds kill_after, std::string_view command);

}  // namespace confine::detail
