// The paths a caller or an operator named to deny or to protect that name nothing on this
// machine. A run goes on without them (there is nothing there to deny, and nothing made
// there later is protected), and a host says each one, naming where it came from, so
// that a typo is not skipped without a word:
//
//   for (const auto& a : confine::absent_policy_paths(request, provider->config()))
//       std::fprintf(stderr, "warning: %s %s: does not exist\n", a.key.c_str(), a.entry.c_str());
//
// The built-in default lists (config/confine.toml's deny_read and protect: credential
// stores and git's files, absent from most machines) are left out, wherever they are
// written: only what someone chose to add is said.
#pragma once

#include <confine/config.hpp>
#include <confine/policy.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace confine {

struct AbsentPath {
    std::string key;    // "deny_read" or "protect"
    std::string entry;  // as given in the request, or as written in the configuration
    // Its position in the request's list of that key (request.deny_read or request.protect),
    // or in the configuration's.
    std::size_t index = 0;
    // The configuration's entry: where it is written. nullopt: the request's.
    std::optional<SourcePosition> where;
    // For a protect path relative to the writable roots: the roots it is in none of.
    std::vector<std::string> roots;
};

// The configuration's deny_read and protect entries that are not among the built-in
// defaults, then the request's, each that does not exist: an absolute path (or one a link
// leads from) that is not there; a "~/" path in none of the caller's homes ($HOME and the
// account's); a relative protect entry in none of the request's writable roots (the
// workspace and `writable`; a read-only request has none, and nothing to protect).
std::vector<AbsentPath> absent_policy_paths(const PolicyRequest& request, const Config& config);

}  // namespace confine
