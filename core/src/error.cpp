#include <confine/error.hpp>

namespace confine {

std::string_view error_code_name(ErrorCode code) noexcept {
    switch (code) {
    case ErrorCode::usage: return "USAGE";
    case ErrorCode::invalid_policy: return "INVALID_POLICY";
    case ErrorCode::command_not_found: return "COMMAND_NOT_FOUND";
    case ErrorCode::command_not_executable: return "COMMAND_NOT_EXECUTABLE";
    case ErrorCode::config_not_found: return "CONFIG_NOT_FOUND";
    case ErrorCode::config_unreadable: return "CONFIG_UNREADABLE";
    case ErrorCode::config_syntax: return "CONFIG_SYNTAX";
    case ErrorCode::config_invalid: return "CONFIG_INVALID";
    case ErrorCode::config_untrusted: return "CONFIG_UNTRUSTED";
    case ErrorCode::config_managed: return "CONFIG_MANAGED";
    case ErrorCode::plugin_not_found: return "PLUGIN_NOT_FOUND";
    case ErrorCode::plugin_untrusted: return "PLUGIN_UNTRUSTED";
    case ErrorCode::plugin_load_failed: return "PLUGIN_LOAD_FAILED";
    case ErrorCode::plugin_missing_export: return "PLUGIN_MISSING_EXPORT";
    case ErrorCode::plugin_abi_major_mismatch: return "PLUGIN_ABI_MAJOR_MISMATCH";
    case ErrorCode::plugin_abi_minor_newer: return "PLUGIN_ABI_MINOR_NEWER";
    case ErrorCode::plugin_descriptor_size_unknown: return "PLUGIN_DESCRIPTOR_SIZE_UNKNOWN";
    case ErrorCode::plugin_name_mismatch: return "PLUGIN_NAME_MISMATCH";
    case ErrorCode::plugin_duplicate: return "PLUGIN_DUPLICATE";
    case ErrorCode::plugin_create_failed: return "PLUGIN_CREATE_FAILED";
    case ErrorCode::plugin_call_failed: return "PLUGIN_CALL_FAILED";
    case ErrorCode::plugin_bad_result: return "PLUGIN_BAD_RESULT";
    case ErrorCode::plugin_not_executable: return "PLUGIN_NOT_EXECUTABLE";
    case ErrorCode::plugin_create_unsupported: return "PLUGIN_CREATE_UNSUPPORTED";
    case ErrorCode::sandbox_unavailable: return "SANDBOX_UNAVAILABLE";
    }
    return "UNKNOWN";
}

bool is_configuration_error(ErrorCode code) noexcept {
    switch (code) {
    case ErrorCode::config_not_found:
    case ErrorCode::config_unreadable:
    case ErrorCode::config_syntax:
    case ErrorCode::config_invalid:
    case ErrorCode::config_untrusted:
    case ErrorCode::config_managed:
    case ErrorCode::plugin_untrusted:
    case ErrorCode::plugin_duplicate:
    case ErrorCode::plugin_create_failed: return true;
    default: return false;
    }
}

}  // namespace confine
