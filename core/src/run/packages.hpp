// The package managers' caches and settings in a run ([policy.packages]; README, "Package
// installs"). Internal to libconfine.
#pragma once

#include <confine/config.hpp>
#include <confine/wrap_result.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

// `text` (an npmrc) without its secrets, its lines as npm's reader ends them (at a line
// feed or a carriage return): each setting whose key names an auth setting, a token,
// password or secret anywhere in it (`_auth`, `_authToken`, `//host/:_password`, ...),
// whose key or value carries a URL's password, or whose key is quoted or escaped or
// whose quoted value holds an escape (npm reads those as JSON strings, whose escapes can
// spell any name) is replaced by a comment saying one was left out.
std::string sanitised_npmrc(std::string_view text);

// `text` (a cargo config.toml) without its secrets: every key naming a token, password
// or secret (`[registry] token`, `[registries.x] token`), in tables at any depth and in
// arrays of tables, and every value carrying a URL's password, left out. nullopt when it
// is not TOML, or when what is written of it would not read back as TOML.
std::optional<std::string> sanitised_cargo_config(std::string_view text);

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
