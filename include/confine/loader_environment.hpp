// Libraries the dynamic loader would take from where a confined command may write
// (docs/design.md §11: nothing confine starts outside the sandbox loads code from a
// writable root).
//
// A runner program or launcher (bubblewrap, landlock-run, an operator's runner_command)
// starts before its sandbox exists, with the environment the command is to get. The
// loader reads LD_PRELOAD, LD_LIBRARY_PATH and LD_AUDIT from it and loads what they name
// into that program, unconfined. An entry that lies where a confined command may write
// (the workspace, every writable root, /tmp, /dev/shm) is code the command can rewrite,
// to run on the host at the next run. run() and spawn() refuse such an environment
// (INVALID_POLICY) before anything starts, on every runner and path; a host that runs a
// wrap itself asks the same of the environment it gives the runner.
//
//   if (auto bad = confine::loader_environment_problem(env->variables, policy)) ...
#pragma once

#include <confine/error.hpp>
#include <confine/wrap_result.hpp>

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace confine {

// Why `environment` ("NAME=VALUE" entries) cannot be given to a program started before
// the sandbox of `policy`, or nullopt: the first LD_PRELOAD, LD_LIBRARY_PATH or LD_AUDIT
// entry that lies in one of the policy's writable roots (workspace, writable), in /tmp or
// in /dev/shm — judged as the loader would reach it: every link on the way followed and
// each place passed through judged, so that a link the command could replace counts. An
// empty or relative LD_LIBRARY_PATH entry is the loader's working directory
// (`working_directory`; empty: this process's) or beneath it. An entry without a slash in
// LD_PRELOAD or LD_AUDIT is looked up on the library path, which LD_LIBRARY_PATH's own
// entries are judged for. An entry holding $ORIGIN, which the loader expands to each
// program's own directory, is refused: it cannot be judged here. One line naming the
// variable, the entry and the place, then `who`: who loads it (default: "a program started
// before the sandbox would load it unconfined"). Always nullopt on Windows.
std::optional<Error> loader_environment_problem(std::span<const std::string> environment, const Policy& policy,
                                                const std::filesystem::path& working_directory = {},
                                                std::string_view who = {});

// Whether `environment` sets LD_PRELOAD, LD_LIBRARY_PATH or LD_AUDIT at all: without one,
// loader_environment_problem() has nothing to judge, and the policy it would be given
// need not be completed. Always false on Windows.
bool sets_loader_variable(std::span<const std::string> environment) noexcept;

// The same of this process's own environment, without copying it.
bool sets_loader_variable() noexcept;

}  // namespace confine
