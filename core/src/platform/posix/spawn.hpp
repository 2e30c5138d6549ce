// Starting a runner: the descriptors it gets, the fork, and the child's few steps before
// it executes the runner (docs/design.md §7, §11). Internal to libconfine.
#pragma once

#include "child_memory.hpp"
#include "executor.hpp"
#include "fd.hpp"

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <string>

namespace confine::detail {

// The signals this process has handlers for (bit s-1 for signal s, 1 to 64), as
// sigaction says of each: for the child that resets them before its exec. One query a
// signal costs less than reading the kernel's account of them (/proc/self/status's
// SigCgt) in a process just made, whose /proc entries do not exist yet. Async-signal-safe.
std::uint64_t caught_signals() noexcept;

// Why a run could not be started: the classifier's spawn error.
struct SpawnRefusal {
    int error = 0;
    std::string detail;
};

// The memory a supervisor that shares this process's runs on (child_memory.hpp): given
// back only once the supervisor is gone (which the destructor waits for, killing it if
// it must).
struct SupervisorMemory {
    SupervisorMemory() = default;
    SupervisorMemory(ChildMemory m, pid_t p) : memory(std::move(m)), pid(p) {}
    SupervisorMemory(SupervisorMemory&&) noexcept = default;
    SupervisorMemory& operator=(SupervisorMemory&&) noexcept = default;
    ~SupervisorMemory();
    ChildMemory memory;
    pid_t pid = -1;
};

// A started runner process, as its parent holds it.
struct StartedRunner {
    pid_t pid = -1;          // the runner, or its supervisor when `supervised`
    bool own_group = false;  // in a process group of its own
    Fd report;               // the child's error pipe (child_report.hpp)
    Fd out, err, status;     // what is read of it; -1 where nothing is
    // A supervised run (ExecSpec::supervised): `pid` is the supervisor, which writes the
    // runner's wait status on `reaped` before it exits; `lifeline` is the write end of a
    // pipe whose other end the supervisor holds, closed when the host is gone.
    bool supervised = false;
    Fd reaped, lifeline;
    SupervisorMemory supervisor_memory;
};

// Whether the runner names its command's process ID on its status descriptor
// (bubblewrap's): its command then has a session of its own, and signals go to it.
bool reports_command(const ExecSpec& spec);

// The runner's wait status: `waited`, the status of the process waited for, unless that
// was the supervisor and it said the runner's.
int runner_status(const StartedRunner& runner, int waited);

// Starts `program` (spec.argv's first, as found) with spec.argv, its placeholders filled
// in (spec.placeholders): the status descriptor's number (status_fd attestation), the
// directories' descriptors, the network filter's.
// The child takes /dev/null as stdin and pipes as stdout and stderr when spec says,
// resets the host's signal handlers, enters the working directory, and before its exec
// either applies spec.in_process or gets the terminal filter; with exec attestation it
// is traced from its exec on. Whatever the child cannot do it reports on its error pipe.
// The child's ends of every descriptor are closed in the parent before this returns.
std::expected<StartedRunner, SpawnRefusal> spawn_runner(const ExecSpec& spec, const std::string& program);

}  // namespace confine::detail
