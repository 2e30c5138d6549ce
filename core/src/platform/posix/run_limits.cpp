// A run's limits on POSIX (run_limits.hpp): resource limits set in the runner's process
// before its exec, inherited by every process of the run; on Linux, the run's memory and
// processes held as a whole by a cgroup of its own where this process can make one
// (platform/linux/run_cgroup.cpp).
#include "run_limits.hpp"
#include "log.hpp"

#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#include "run_cgroup.hpp"
#endif

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace confine::detail {
namespace {

std::uint64_t clamp(std::uint64_t v) { return v > static_cast<std::uint64_t>(RLIM_INFINITY - 1) ? RLIM_INFINITY - 1 : v; }

void add(ChildLimits& child, int resource, std::uint64_t value) {
    child.resources[child.resource_count++] = {resource, clamp(value)};
}

Level lower(Level a, Level b) { return a < b ? a : b; }

}  // namespace

int apply_child_limits(const ChildLimits& limits) noexcept {
    for (std::size_t i = 0; i < limits.cgroup_count; ++i)
        if (::write(limits.cgroup_procs[i], "0", 1) != 1) return errno;
    for (std::size_t i = 0; i < limits.resource_count; ++i) {
        const auto& r = limits.resources[i];
        // CPU time: SIGXCPU at the limit, which a command may catch; SIGKILL a second later.
        const rlim_t hard = static_cast<rlim_t>(r.resource == RLIMIT_CPU ? r.value + 1 : r.value);
        const rlimit value{static_cast<rlim_t>(r.value), hard};
        if (::setrlimit(limits.resources[i].resource, &value) != 0) return errno;
    }
    return 0;
}

std::shared_ptr<RunLimits> prepare_run_limits(const Limits& limits) {
    if (!limits.any()) return nullptr;
    auto run = std::make_shared<RunLimits>();
    run->limits = limits;
    std::string why_not_group;
#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
    if (limits.memory || limits.processes || limits.cpu) run->group = make_run_cgroup(limits, run->child, why_not_group);
#else
    why_not_group = "no cgroup in this build";
#endif
    const bool grouped = run->group != nullptr;
    const bool cpu_watched = grouped && run->group->watches_cpu();
    const bool root = ::geteuid() == 0;
    // Each limit the group does not hold is a resource limit of each process, which the
    // run's processes inherit. Root could raise its own again (CAP_SYS_RESOURCE).
    std::vector<std::string> gaps;
    Level level = Level::full;
    if (limits.memory && !grouped) {
        add(run->child, RLIMIT_AS, *limits.memory);
        level = lower(level, Level::partial);
        gaps.push_back("memory is each process's address space (RLIMIT_AS), not the run's memory");
    }
    if (limits.processes && !grouped) {
#if defined(RLIMIT_NPROC)
        add(run->child, RLIMIT_NPROC, *limits.processes);
        level = lower(level, root ? Level::none : Level::partial);
        gaps.push_back(root ? "processes is not held: RLIMIT_NPROC does not hold root"
                            : "processes counts every process of the user (RLIMIT_NPROC), not the run's");
#else
        level = Level::none;
        gaps.push_back("processes is not held: no RLIMIT_NPROC here");
#endif
    }
    if (limits.cpu && !cpu_watched) {
        add(run->child, RLIMIT_CPU, *limits.cpu);
        level = lower(level, Level::partial);
        gaps.push_back("cpu is each process's CPU time (RLIMIT_CPU), not the run's");
    }
    if (limits.file_size) add(run->child, RLIMIT_FSIZE, *limits.file_size);
    if (limits.open_files) add(run->child, RLIMIT_NOFILE, *limits.open_files);
    if (root && (limits.file_size || limits.open_files || (limits.cpu && !cpu_watched) || (limits.memory && !grouped))) {
        level = lower(level, Level::partial);
        gaps.push_back("root may raise its resource limits again (CAP_SYS_RESOURCE)");
    }
    run->level = level;
    if (level != Level::full) {
        run->open = "limits:";
        for (std::size_t i = 0; i < gaps.size(); ++i) run->open += (i ? "; " : " ") + gaps[i];
        if (!grouped && (limits.memory || limits.processes || limits.cpu) && !why_not_group.empty())
            run->open += " (no cgroup for the run: " + why_not_group + ")";
    }
    log_debug("limits {}: {}{}", to_string(level), describe(limits),
              grouped ? std::string(" (memory, processes") + (cpu_watched ? " and CPU time" : "") + " by a cgroup of the run)"
              : why_not_group.empty() ? "" : " (resource limits; no cgroup: " + why_not_group + ")");
    return run;
}

namespace {

// The limits held by each process's resource limit whose refusal the command sees as an
// error of its own (an allocation, a fork, an open failing): never a kill, so that
// confinectl cannot tell whether one ended a command that failed.
std::vector<std::string> untold(const RunLimits& run) {
    std::vector<std::string> out;
    if (run.limits.memory && !run.group) out.emplace_back("memory");
#if defined(RLIMIT_NPROC)
    if (run.limits.processes && !run.group && ::geteuid() != 0) out.emplace_back("processes");
#endif
    if (run.limits.open_files) out.emplace_back("open-files");
    return out;
}

}  // namespace

void RunLimits::judge_end(Observation& o, bool exit_as_signal, std::chrono::steady_clock::duration elapsed) const {
    auto said = [&o](const char* name, const char* how) {
        o.limit = name;
        o.limit_how = how;
    };
    std::optional<int> signal = o.signal;
    if (!signal && exit_as_signal && o.exit_code && *o.exit_code > 128 && *o.exit_code < 128 + NSIG) signal = *o.exit_code - 128;
    // SIGXCPU and SIGXFSZ, which only these limits send, also from a command that gives a
    // child's end as 128 + its signal, as a shell does.
    const bool shell_said = o.exit_code && (*o.exit_code == 128 + SIGXCPU || *o.exit_code == 128 + SIGXFSZ);
    if (!signal && shell_said) signal = *o.exit_code - 128;
    const bool failed = o.signal || (o.exit_code && *o.exit_code != 0);
    // RLIMIT_CPU's hard limit, a second past the soft one, is SIGKILL: taken for it when
    // the run lasted long enough to use that much CPU time on every CPU of the machine.
    const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
    const bool cpu_time_passed = limits.cpu && elapsed >= std::chrono::seconds(*limits.cpu + 1) / cpus;
    if (group && limits.memory && group->out_of_memory()) said("memory", "the kernel killed a process of the run, out of memory in the run's cgroup");
    else if (group && limits.cpu && group->cpu_exceeded()) said("cpu", "the run's CPU time passed it, and every process of the run was killed");
    else if (signal == SIGXCPU && limits.cpu) said("cpu", "a process passed its CPU time (RLIMIT_CPU) and got SIGXCPU");
    else if (signal == SIGKILL && limits.cpu && !(group && group->watches_cpu()) && cpu_time_passed)
        said("cpu", "a process passed its CPU time (RLIMIT_CPU) by a second and got SIGKILL");
    else if (signal == SIGXFSZ && limits.file_size) said("file-size", "a process wrote a file past it (RLIMIT_FSIZE) and got SIGXFSZ");
    else if (group && limits.processes && failed && group->processes_refused()) said("processes", "the run's cgroup refused it a process");
    if (o.limit || !failed || o.timed_out) return;
    o.limit_possible = untold(*this);
}

}  // namespace confine::detail
