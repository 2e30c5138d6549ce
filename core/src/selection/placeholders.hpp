// The placeholders of a runner's arguments as the host reads them: the SDK's parser
// (confine/sdk/placeholders.hpp) applied to the runner's own arguments, with where each
// kind may stand. Internal to libconfine.
#pragma once

#include <confine/sdk/wrap_check.hpp>
#include <confine/wrap_result.hpp>

namespace confine::detail {

// The placeholders among the runner's own arguments, or why not: the SDK's rule
// (confine/sdk/wrap_check.hpp), the one the host checks every wrap result with.
using sdk::runner_placeholders;

}  // namespace confine::detail
