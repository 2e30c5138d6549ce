// A cgroup of the run's own (docs/design.md §12): the run's memory and processes held as
// a whole. cgroup v2 where this process's cgroup can hand the memory and pids controllers
// to a child; else the v1 memory and pids hierarchies, where the machine has those; else
// none (the caller falls back to resource limits). Made before anything runs; the runner's
// process joins it before its exec (apply_child_limits, through the descriptors of its
// cgroup.procs); removed by the host after the run, once whatever is left in it has
// been killed. Internal to libconfine.
#pragma once

#include "run_limits.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace confine::detail {

// Where this process's own cgroups are, below `root` (normally /sys/fs/cgroup), as
// `self` (the text of /proc/self/cgroup) names them; an empty path where there is none.
struct CgroupPlaces {
    std::filesystem::path v2;         // its cgroup v2 directory, where that has the memory and pids controllers
    std::filesystem::path v1_memory;  // its cgroup of the v1 memory hierarchy
    std::filesystem::path v1_pids;    // its cgroup of the v1 pids hierarchy
    std::filesystem::path v1_cpuacct; // its cgroup of the v1 cpuacct hierarchy
};
CgroupPlaces find_cgroup_places(const std::filesystem::path& root, std::string_view self);

// Makes the run's cgroup (v2 in `places.v2`, else v1 in the memory, pids and cpuacct
// places) with `limits`' memory and processes, and puts the descriptors of its
// cgroup.procs in `child`. With `limits.cpu`, it watches the run's CPU time (v2
// cpu.stat usage_usec, v1 cpuacct.usage) and kills every process of it past the limit.
// nullptr and `why` when it cannot (the first step that failed); nothing is left behind
// then. A run cgroup
// there whose host process is gone (killed, SIGKILL included, before it removed it) is
// removed first, what was left in it killed.
std::unique_ptr<RunGroup> make_run_cgroup(const CgroupPlaces& places, const Limits& limits, ChildLimits& child, std::string& why);
// The same, for this process's own places under /sys/fs/cgroup.
std::unique_ptr<RunGroup> make_run_cgroup(const Limits& limits, ChildLimits& child, std::string& why);

// The run's limits held in `dir`, a cgroup v2 directory made for the run, the kernel's
// files in it (what make_run_cgroup does once it has made one): as make_run_cgroup, and
// `dir` is the group's to remove, whatever comes.
std::unique_ptr<RunGroup> hold_in_v2_cgroup(const std::filesystem::path& dir, const Limits& limits, ChildLimits& child, std::string& why);

// A number that follows `key` and a space at the start of a line of `text` (memory.events'
// "oom_kill 1", pids.events' "max 3"); 0 where there is none.
std::uint64_t event_count(std::string_view text, std::string_view key);

}  // namespace confine::detail
