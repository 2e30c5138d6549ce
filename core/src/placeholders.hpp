// The placeholders of a runner's arguments as the host reads them: the SDK's parser
// (confine/sdk/placeholders.hpp) applied to the runner's own arguments, with where each
// kind may stand. Internal to libconfine.
#pragma once

#include <confine/wrap_result.hpp>

#include <cstddef>
#include <expected>
#include <span>
#include <string>
#include <vector>

namespace confine::detail {

// The placeholders among the runner's own arguments in `argv` (after its program, before
// the "--" at command_index - 1), in argument order: the status descriptor at the
// argument a status_fd `attestation` names, whatever its text (the ABI lets the runner
// choose it), and every other argument the SDK's parser reads as a placeholder. Why not,
// in one line: a malformed placeholder, {status-fd} where the attestation names no status
// descriptor, a placeholder of another kind where it does, a placeholder as the program.
std::expected<std::vector<Placeholder>, std::string> runner_placeholders(std::span<const std::string> argv, std::size_t command_index,
                                                                         const Attestation& attestation);

}  // namespace confine::detail
