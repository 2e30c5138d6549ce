// Running a short command with a hard time limit (probes). Internal to libconfine;
// one implementation per OS under platform/.
#pragma once

#include <confine/sdk/vocabulary.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace confine::detail {

// Runs argv (argv[0] absolute, or a bare name looked up on PATH) in a new process
// group with stdin on /dev/null and stdout/stderr captured up to `capture_limit`
// bytes each. When `timeout` passes, the whole process group is killed. What it did is
// what a runner's probe is told of its command (sdk::ProbeRun), one type for both.
sdk::ProbeRun run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       std::size_t capture_limit);

}  // namespace confine::detail
