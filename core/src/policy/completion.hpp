// What the completion of a policy shares with the wrap of a call. Internal to libconfine.
#pragma once

#include <confine/config.hpp>
#include <confine/policy.hpp>

#include <filesystem>
#include <vector>

namespace confine::detail {

// The unprotect entries of a call: the configuration's, then the request's.
std::vector<std::filesystem::path> unprotect_entries(const PolicyRequest& request, const Config& config);

}  // namespace confine::detail
