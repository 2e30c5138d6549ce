// Reading what a runner plugin hands back through the C ABI (docs/design.md §2, §4).
// A plugin is third-party code: every length, pointer and value it returns is checked
// here before the host uses it. Pure functions of the C struct. Internal to libconfine.
//
//   auto wrapped = detail::read_wrap_result(plugin_result, argv);
//   if (!wrapped) ...  // wrapped.error().code == ErrorCode::plugin_bad_result
#pragma once

#include <confine/error.hpp>
#include <confine/sdk/abi.h>
#include <confine/sdk/wrap_check.hpp>
#include <confine/wrap_result.hpp>

#include <cstddef>
#include <expected>
#include <span>
#include <string>

namespace confine::detail {

// The most items accepted in any list from a plugin (and in a probe command's argv): a
// malformed result must not make the host walk arbitrary memory.
inline constexpr std::size_t max_list_items = sdk::max_result_list_items;

// The result of a plugin's wrap of `argv`, read once into the host's vocabulary.
// `result` may be of any ABI 1.x layout: only the bytes its struct_size covers are
// read, and what an older layout lacks reads as absent (no attestation, no in-process
// apply, no process-ID key). The in-process apply and state, if any, point into the
// plugin's result, which the caller keeps alive; `runner` and `keep_alive` are the
// caller's to fill. Every refusal is ErrorCode::plugin_bad_result, with what is wrong:
// "wrap returned no result", "malformed wrap result (lists)", and every refusal of
// sdk::wrap_result_refusal (confine/sdk/wrap_check.hpp): "wrap result does not end with
// "--" and the command verbatim", ...
std::expected<WrapResult, Error> read_wrap_result(const confine_wrap_result* result, std::span<const std::string> argv);

// A plugin's probe verdict. A missing or malformed one is an unusable verdict saying
// so; an unusable one without a reason gets "unusable (no reason given)".
Verdict read_verdict(const confine_verdict* verdict);

}  // namespace confine::detail
