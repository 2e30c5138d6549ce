// Running a short command with a hard time limit (probes). Internal to libconfine;
// one implementation per OS under platform/.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace confine::detail {

struct BoundedRun {
    bool spawned = false;
    int spawn_errno = 0;
    bool exited = false;
    int exit_code = -1;
    int signal = 0;
    bool timed_out = false;
    std::string out;
    std::string err;
};

// Runs argv (argv[0] absolute, or a bare name looked up on PATH) in a new process
// group with stdin on /dev/null and stdout/stderr captured up to `capture_limit`
// bytes each. When `timeout` passes, the whole process group is killed.
BoundedRun run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       std::size_t capture_limit);

}  // namespace confine::detail
