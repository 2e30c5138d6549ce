// A plugin written against the C ABI alone, with deliberate defects chosen by
// compile definitions:
//   RAW_NAME             runner name in the descriptor
//   RAW_MAJOR/RAW_MINOR  ABI version it claims
//   RAW_SIZE_DELTA       added to the descriptor size it declares (oversized descriptor)
//   RAW_MAGIC            the ABI marker it carries
//   RAW_NO_ABI_EXPORT    do not export confine_plugin_abi
//   RAW_NO_DESC_EXPORT   do not export confine_plugin
//   RAW_THROW            its probe throws a C++ exception straight through the C ABI
// It appends "load <name>" to CONFINE_FAKE_LOG when the loader maps it.
#include <confine/sdk/abi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#ifndef RAW_MAJOR
#define RAW_MAJOR CONFINE_ABI_MAJOR
#endif
#ifndef RAW_MINOR
#define RAW_MINOR CONFINE_ABI_MINOR
#endif
#ifndef RAW_SIZE_DELTA
#define RAW_SIZE_DELTA 0
#endif
#ifndef RAW_MAGIC
#define RAW_MAGIC CONFINE_ABI_MAGIC
#endif

// Entry points are unused in the variants that export no descriptor.
#pragma GCC diagnostic ignored "-Wunused-function"

namespace {

[[gnu::constructor]] void on_load() {
    const char* log = std::getenv("CONFINE_FAKE_LOG");
    if (!log || !*log) return;
    if (FILE* f = std::fopen(log, "a")) {
        std::fprintf(f, "load %s\n", RAW_NAME);
        std::fclose(f);
    }
}

int instance_token;

// A setting `refuse` is refused as a plugin older than ABI 1.9 refuses one: without
// naming the key to the host.
confine_status raw_create(const confine_host*, const confine_runner_config* config, void** out, char** error) {
    for (size_t i = 0; config && i < config->settings_count; ++i)
        if (config->settings[i].key && std::strcmp(config->settings[i].key, "refuse") == 0) {
            if (error) *error = strdup("setting 'refuse' refused");
            return CONFINE_E_INVALID_ARGUMENT;
        }
    *out = &instance_token;
    return CONFINE_OK;
}
void raw_destroy(void*) {}
confine_status raw_probe(void*, uint32_t, confine_verdict** out, char**) {
#ifdef RAW_THROW
    throw std::runtime_error("raw plugin threw through the C ABI");
#endif
    static confine_verdict verdict{sizeof(confine_verdict), CONFINE_VERDICT_FULL, "raw ok"};
    *out = &verdict;
    return CONFINE_OK;
}
confine_status raw_wrap(void*, const confine_policy*, const char* const* argv, size_t argc, confine_wrap_result** out, char** err) {
#ifdef RAW_WRAP_1_0
    // A result as an ABI 1.0 plugin lays it out: it ends before the attestation fields.
    static const char* args[8] = {"/usr/bin/env", "--"};
    size_t n = 2;
    for (size_t i = 0; i < argc && n < 8; ++i) args[n++] = argv[i];
    static confine_wrap_result result;
    std::memset(&result, 0xAB, sizeof result);  // what lies past a 1.0 result must not be read
    result.struct_size = static_cast<uint32_t>(CONFINE_WRAP_RESULT_SIZE_1_0);
    result.argv = {args, n};
    result.enforcement = CONFINE_ENFORCEMENT_FULL;
    result.denial_signatures = {nullptr, 0};
    result.failure_rule = confine_failure_rule{sizeof(confine_failure_rule), nullptr, 0, {nullptr, 0}, {nullptr, 0}};
    *out = &result;
    return CONFINE_OK;
#endif
#ifdef RAW_WRAP_1_5
    // A result as an ABI 1.5 plugin lays it out: every dimension said, nothing of /tmp
    // (what lies past it is garbage, and must not be read).
    static const char* args[8] = {"/usr/bin/env", "--"};
    size_t n = 2;
    for (size_t i = 0; i < argc && n < 8; ++i) args[n++] = argv[i];
    static confine_wrap_result result;
    std::memset(&result, 0xAB, sizeof result);
    result.struct_size = static_cast<uint32_t>(CONFINE_WRAP_RESULT_SIZE_1_5);
    result.argv = {args, n};
    result.enforcement = CONFINE_ENFORCEMENT_FULL;
    result.denial_signatures = {nullptr, 0};
    result.failure_rule = confine_failure_rule{sizeof(confine_failure_rule), nullptr, 0, {nullptr, 0}, {nullptr, 0}};
    result.attestation = CONFINE_ATTESTATION_NONE;
    result.attestation_exec_index = 0;
    result.in_process_apply = nullptr;
    result.in_process_state = nullptr;
    result.attestation_status_argument = 0;
    result.attestation_status_marker = nullptr;
    result.attestation_status_pid_key = nullptr;
    result.write_level = CONFINE_LEVEL_FULL;
    result.network_level = CONFINE_LEVEL_FULL;
    result.processes_level = CONFINE_LEVEL_FULL;
    result.dimensions_open = nullptr;
    *out = &result;
    return CONFINE_OK;
#endif
#if defined(RAW_WRAP_1_3) || defined(RAW_WRAP_BAD_PID_KEY)
    // Status-descriptor attestation, as an ABI 1.3 plugin lays it out (it ends before
    // the process-ID key), or as a 1.4 one whose key is not one line.
    static const char* args[8] = {"/usr/bin/env", "{status}", "--"};
    size_t n = 3;
    for (size_t i = 0; i < argc && n < 8; ++i) args[n++] = argv[i];
    static confine_wrap_result result;
    std::memset(&result, 0xAB, sizeof result);
#ifdef RAW_WRAP_1_3
    result.struct_size = static_cast<uint32_t>(CONFINE_WRAP_RESULT_SIZE_1_3);
#else
    result.struct_size = sizeof result;
    result.attestation_status_pid_key = "child\npid";
#endif
    result.argv = {args, n};
    result.enforcement = CONFINE_ENFORCEMENT_FULL;
    result.denial_signatures = {nullptr, 0};
    result.failure_rule = confine_failure_rule{sizeof(confine_failure_rule), nullptr, 0, {nullptr, 0}, {nullptr, 0}};
    result.attestation = CONFINE_ATTESTATION_STATUS_FD;
    result.attestation_exec_index = 0;
    result.in_process_apply = nullptr;
    result.in_process_state = nullptr;
    result.attestation_status_argument = 1;
    result.attestation_status_marker = "done";
    *out = &result;
    return CONFINE_OK;
#endif
    (void)argv;
    (void)argc;
    (void)out;
    *err = static_cast<char*>(std::malloc(16));
    std::strcpy(*err, "raw cannot wrap");
    return CONFINE_E_UNSUPPORTED;
}
void raw_free_verdict(confine_verdict*) {}
void raw_free_wrap(confine_wrap_result*) {}
void raw_free_string(char* s) { std::free(s); }

}  // namespace

#ifndef RAW_NO_ABI_EXPORT
extern "C" CONFINE_PLUGIN_EXPORT const confine_plugin_abi_info confine_plugin_abi = {
    RAW_MAGIC, RAW_MAJOR, RAW_MINOR, static_cast<uint32_t>(sizeof(confine_plugin_descriptor) + RAW_SIZE_DELTA)};
#endif

#ifndef RAW_NO_DESC_EXPORT
extern "C" CONFINE_PLUGIN_EXPORT const confine_plugin_descriptor confine_plugin = {
    static_cast<uint32_t>(sizeof(confine_plugin_descriptor) + RAW_SIZE_DELTA),
    RAW_NAME, "0.0.1", "raw test plugin",
    raw_create, raw_destroy, raw_probe, raw_wrap, raw_free_verdict, raw_free_wrap, raw_free_string};
#endif

// Something to export when both symbols are left out, so the file is still a plugin-shaped library.
extern "C" {
CONFINE_PLUGIN_EXPORT int confine_raw_placeholder = 1;
}
