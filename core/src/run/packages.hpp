// The package managers' caches and settings in a run ([policy.packages]; README, "Package
// installs"). Internal to libconfine.
#pragma once

#include <confine/config.hpp>
#include <confine/wrap_result.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

// The user's package manager settings reach a run as copies of the settings a confined
// install needs, and only those (README, "Package installs"): an allow-list, so that a
// setting that authenticates, or one no list of secrets' names foresaw, stays behind.

// The npmrc settings copied, by name; and `@scope:registry` for any scope.
std::span<const std::string_view> npm_settings_copied();
bool npm_setting_copied(std::string_view key);

// A cargo setting copied: `key` in `table` ("source.*": in each table of [source]).
struct CargoSetting {
    std::string_view table, key;
};
std::span<const CargoSetting> cargo_settings_copied();

// Whether `value` holds a URL with a password (url_carries_password()), or an http(s)
// URL with a user (a token is often given as one).
bool carries_credentials(std::string_view value);

// `text` (an npmrc) as a copy for a run: its lines, as npm's reader ends them (at a line
// feed or a carriage return), that set a setting npm_setting_copied() names to a value
// npm reads as written (no quote, escape or comment; a `ca` certificate as a JSON string)
// without credentials, each as `key=value`, until a section starts; then one comment
// counting the lines left out.
std::string npmrc_copy(std::string_view text);

// `text` (a cargo config.toml) as a copy for a run: the settings cargo_settings_copied()
// names whose value is a string without credentials, an integer, a boolean or an array
// of such strings, written anew (tables in the list's order, their names sorted).
// nullopt when it is not TOML.
std::optional<std::string> cargo_config_copy(std::string_view text);

// What `packages` gives a run of `resolved` (a wrap's policy) that starts `command`: in
// workspace-write mode, `environment` ("NAME=VALUE") with npm's cache (npm_config_cache),
// pip's (PIP_CACHE_DIR) and cargo's home (CARGO_HOME) beneath the workspace's
// `packages.dir`. The directory, and the copies of the user's settings the tools need
// there (an npmrc the policy denies, given as npm_config_userconfig; cargo's config.toml),
// are written only when `command` is one of the tools (npm, npx, pip, pip3, python -m
// pip, cargo) or the directory is there already: any other run leaves the workspace as
// it is. A variable named by `explicit_names` (the caller's overrides, the operator's
// [policy.env] set) stays as it is; so does a tool whose host cache lies in one of the
// run's extra writable roots (the caller granted it). What cannot be prepared is logged
// as a warning, and left as it was.
void apply_packages(const PackageCaches& packages, const Policy& resolved, std::span<const std::string> command,
                    std::span<const std::string> explicit_names, std::vector<std::string>& environment);

}  // namespace confine::detail
