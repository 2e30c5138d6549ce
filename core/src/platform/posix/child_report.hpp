// The child's report on its error pipe: why it stopped before, or instead of, executing
// the runner. The pipe is close-on-exec, so the successful exec closes it unread: a
// report read from it means the runner never ran (docs/design.md §5, §6). Internal to
// libconfine.
#pragma once

#include "executor.hpp"

#include <sys/types.h>

namespace confine::detail {

enum class ChildStage : int { chdir = 1, trace = 2, exec = 3, confine = 4, terminal = 5, descriptors = 6, supervise = 7, limits = 8, terminal_session = 9 };

struct ChildReport {
    int stage;
    int error;
    char message[256];  // from an in-process confinement that failed
};

// In the child: writes `report` whole to `fd` and ends the child with `code`. System
// calls only.
[[noreturn]] void report_and_exit(int fd, const ChildReport& report, int code) noexcept;
[[noreturn]] void report_and_exit(int fd, ChildStage stage, int error, int code) noexcept;

// In the parent: reads the error pipe `fd` to its end. When it carried a report, the
// runner never ran: the child `pid` is reaped, `o` says why, and the answer is true.
// `status_of` turns the wait status of `pid` into the runner's (a supervised run's, see
// spawn.hpp).
bool child_reported_failure(int fd, pid_t pid, const ExecSpec& spec, RunControl& control, Observation& o,
                            const std::function<int(int)>& status_of = {});

}  // namespace confine::detail
