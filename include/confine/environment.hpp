// The environment a confined command gets (design.md §12): the caller's, less the
// variables whose names look like secrets, as the configuration's [policy.env] says.
//
//   auto env = confine::filter_environment(config.environment, confine::current_environment(),
//                                          {"GITHUB_TOKEN", "MODE=ci"});
//   if (!env) ...                    // a bad pattern, name or override: env.error().message
//   env->variables                   // "NAME=VALUE" entries: exactly what the command gets
//   env->removed                     // the names left out (never their values)
//
// run() and spawn() apply it themselves (RunOptions::environment_overrides); a host that
// spawns a wrap itself asks run_environment() (execute.hpp) for the same list.
#pragma once

#include <confine/error.hpp>

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace confine {

// [policy.env] inherit: what of the caller's environment is the starting point.
enum class EnvInherit {
    all,   // every variable, less what `exclude` names
    core,  // only the core set (core_environment_patterns()), less what `exclude` names
    none,  // nothing: only `include`d and `set` variables
};

std::string_view to_string(EnvInherit inherit) noexcept;  // "all", "core", "none"

// [policy.env]. Patterns are globs on a variable's NAME, compared case-insensitively
// (ASCII): `*` matches any run of characters, empty included; every other character
// matches itself. Precedence, highest first: a name held (`held`), a value set (`set`, then an override
// NAME=VALUE over it), a name passed through (an override NAME or pattern, then
// `include`), a name excluded (`exclude`) or a value that carries a URL's password
// (`exclude_url_passwords`), then `inherit`.
struct EnvironmentPolicy {
    EnvInherit inherit = EnvInherit::all;
    // Removed even where `inherit` keeps them. The embedded default (config/confine.toml)
    // lists the names that look like secrets; a Config built by hand has none.
    std::vector<std::string> exclude;
    // Passed through even when excluded or outside the core set.
    std::vector<std::string> include;
    // Removed above all: no override, `include` or `set` passes or sets them (the managed
    // layer's env_exclude, confine/managed.hpp).
    std::vector<std::string> held;
    // Given to the command with these values, whatever the caller's environment says.
    std::vector<std::pair<std::string, std::string>> set;
    // Removed even where `inherit` keeps them, whatever their names: the variables whose
    // value holds a URL with a password (url_carries_password()), such as
    // DATABASE_URL=postgres://user:password@host/db or HTTPS_PROXY=http://u:p@proxy:3128.
    bool exclude_url_passwords = true;

    bool operator==(const EnvironmentPolicy&) const = default;
};

// Whether `value` holds, anywhere, a URL whose authority carries a password:
// "scheme://user:password@host" (the user may be empty: "redis://:password@host"). A
// user alone ("ssh://git@host") is not a password.
bool url_carries_password(std::string_view value) noexcept;

// The core set of `inherit = "core"`, as patterns, for the platform confine was built
// for: on POSIX HOME, LOGNAME, USER, PATH, SHELL, TERM, COLORTERM, LANG, LANGUAGE, LC_*,
// TZ, TMPDIR, PWD; on Windows also SystemRoot, windir, ComSpec, PATHEXT, TEMP, TMP,
// USERPROFILE, USERNAME, USERDOMAIN, HOMEDRIVE, HOMEPATH, APPDATA, LOCALAPPDATA,
// ProgramData, ProgramFiles*, ProgramW6432, CommonProgramFiles*, SystemDrive, OS,
// NUMBER_OF_PROCESSORS, PROCESSOR_*.
std::span<const std::string_view> core_environment_patterns() noexcept;

// Whether `name` matches the glob `pattern` (see EnvironmentPolicy), case-insensitively.
bool environment_pattern_matches(std::string_view pattern, std::string_view name) noexcept;

// Why `name` cannot be a variable's name (empty, or holding '=' or NUL), or nullopt.
std::optional<std::string> invalid_environment_name(std::string_view name);
// Why `pattern` cannot be a name pattern (the same rules), or nullopt.
std::optional<std::string> invalid_environment_pattern(std::string_view pattern);

// This process's environment, as "NAME=VALUE" entries in its order (UTF-8 on Windows).
std::vector<std::string> current_environment();

struct FilteredEnvironment {
    std::vector<std::string> variables;  // "NAME=VALUE", the starting environment's order, set ones last
    std::vector<std::string> removed;    // names of the starting environment left out, sorted, once each
    std::vector<std::string> set;        // names given a value by `set` or an override, sorted
};

// The environment a command gets from `environment` ("NAME=VALUE" entries) under
// `policy`, with `overrides` on top: "NAME" passes the starting environment's NAME
// through whatever the policy says, a pattern ("AWS_*", a name holding `*`) every name it
// matches, "NAME=VALUE" sets it (a pattern cannot be set). Names are compared exactly on
// POSIX and case-insensitively on Windows, as the platform's own environment does; a
// name's entries are kept or removed together. INVALID_POLICY, naming what is wrong,
// for a bad pattern, name, value (NUL) or override.
std::expected<FilteredEnvironment, Error> filter_environment(const EnvironmentPolicy& policy, std::span<const std::string> environment,
                                                             std::span<const std::string> overrides = {});

}  // namespace confine
