// The classifier and what it reads (design.md §5, §13): internal to libconfine. run() and
// spawn() classify every run with it; the tests reach it directly, with observations of
// their own. A host that runs a wrap itself classifies by design.md §5 (as
// examples/python-host does); it is not the library's API.
#pragma once

#include <confine/execute.hpp>
#include <confine/wrap_result.hpp>

#include "observation.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

// The findings of a whole stderr text at once, for a host that classifies what it
// observed itself; the executor finds the same while the stream passes, in bounded memory.
StderrFindings scan_stderr(const WrapResult& wrap, std::string_view stderr_text);

// The one classifier, for foreground and background runs alike. Pure.
Outcome classify(const WrapResult& wrap, const Observation& observed);

// What `outcome`'s denial hint means under `wrap`'s policy, and what to do, in one line
// (Outcome::denial_advice); nullopt where confine cannot say more than the line. Read
// after the run's proxy has reported (Outcome::network_requests). Pure.
std::optional<std::string> denial_advice(const WrapResult& wrap, const Outcome& outcome);

}  // namespace confine
