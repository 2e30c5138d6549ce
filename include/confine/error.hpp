// Errors of the confine library: a stable, append-only code and a message that
// names the file, runner or path involved.
#pragma once

#include <string>
#include <string_view>

namespace confine {

// Append-only: a code's number and name never change once released.
enum class ErrorCode : int {
    usage = 1,                    // bad flag or argument from the caller
    invalid_policy = 2,           // a policy that cannot be honoured as given
    command_not_found = 3,        // the command to confine does not exist (not on PATH)
    command_not_executable = 4,   // the command exists but cannot be executed
    config_not_found = 10,        // --config / CONFINE_CONFIG names no file
    config_unreadable = 11,       // the file exists but cannot be read
    config_syntax = 12,           // not TOML
    config_invalid = 13,          // TOML, but not a valid confine.toml
    config_untrusted = 14,        // writable by others, or owned by another user
    config_managed = 15,          // a setting or flag crosses a bound of the managed layer
    plugin_not_found = 20,        // no plugin file for a runner name
    plugin_untrusted = 21,        // file or directory writable by others / foreign owner
    plugin_load_failed = 22,      // the dynamic loader refused the file
    plugin_missing_export = 23,   // a required symbol is absent
    plugin_abi_major_mismatch = 24,
    plugin_abi_minor_newer = 25,
    plugin_descriptor_size_unknown = 26,
    plugin_name_mismatch = 27,    // descriptor's runner name differs from the file name
    plugin_duplicate = 28,        // one runner name provided by two files
    plugin_create_failed = 29,    // the plugin rejected its settings (or failed to create its runner)
    plugin_call_failed = 30,      // probe or wrap returned an error or threw
    plugin_bad_result = 31,       // a malformed result crossed the boundary
    plugin_not_executable = 32,   // the file lacks its execute permission: not installed as code
    plugin_create_unsupported = 33,  // the runner cannot work here: its create said CONFINE_E_UNSUPPORTED
    sandbox_unavailable = 40,     // no runner can confine here: fail closed
};

// Stable upper-case name, e.g. "SANDBOX_UNAVAILABLE".
std::string_view error_code_name(ErrorCode code) noexcept;

// Whether `code` says that the configuration in effect is wrong — as opposed to a runner
// that cannot work on this machine (not installed, a plugin built for another host, a
// kernel without the feature, a create that says CONFINE_E_UNSUPPORTED), which a chain
// skips. A configuration error is never a fallback (docs/design.md §3): the file itself
// (CONFIG_*), a plugin refused as untrusted, a runner provided by two files, a runner
// that rejects its [runner.<name>] settings (PLUGIN_CREATE_FAILED) — each fails the run
// closed with the line `confinectl check-config` prints.
bool is_configuration_error(ErrorCode code) noexcept;

struct Error {
    ErrorCode code;
    std::string message;
};

}  // namespace confine
