#include "plugins/host_services.hpp"

#include "executor.hpp"
#include "log.hpp"
#include "plugins/results.hpp"
#include "process.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace fs = std::filesystem;

namespace confine::detail {
namespace {

constexpr std::size_t probe_capture_bytes = 64 * 1024;

// A copy the plugin releases through the host (free_string, release_probe_run).
char* dup_c(const std::string& s) {
    char* p = static_cast<char*>(std::malloc(s.size() + 1));
    if (p) std::memcpy(p, s.data(), s.size() + 1);
    return p;
}

void host_log(void* context, std::int32_t level, const char* message) noexcept {
    try {
        auto* ctx = static_cast<HostContext*>(context);
        const spdlog::level::level_enum lv = level <= CONFINE_LOG_DEBUG  ? spdlog::level::debug
                                             : level == CONFINE_LOG_INFO ? spdlog::level::info
                                             : level == CONFINE_LOG_WARN ? spdlog::level::warn
                                                                         : spdlog::level::err;
        detail::log(lv, "{}: {}", ctx ? ctx->runner : std::string("?"), message ? message : "");
    } catch (...) {
    }
}

void host_release_probe_run(void*, confine_probe_run* run) noexcept {
    if (!run) return;
    std::free(const_cast<char*>(run->stdout_data));
    std::free(const_cast<char*>(run->stderr_data));
    run->stdout_data = run->stderr_data = nullptr;
    run->stdout_size = run->stderr_size = 0;
}

// The probe command's arguments, each checked: nullopt when one is missing.
std::optional<std::vector<std::string>> probe_arguments(const char* const* argv, std::size_t argc) {
    if (!argv || argc == 0 || argc > max_list_items) return std::nullopt;
    std::vector<std::string> args;
    for (std::size_t i = 0; i < argc; ++i) {
        if (!argv[i]) return std::nullopt;
        args.emplace_back(argv[i]);
    }
    return args;
}

// What is left of the probe's own limit, if less than the command asks for.
std::chrono::milliseconds probe_command_limit(HostContext& ctx, std::uint32_t timeout_ms) {
    auto limit = std::chrono::milliseconds(timeout_ms);
    std::chrono::steady_clock::time_point deadline;
    {
        std::lock_guard lock(ctx.mutex);
        deadline = ctx.probe_deadline;
    }
    if (deadline != std::chrono::steady_clock::time_point::max()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        limit = std::clamp(left, std::chrono::milliseconds(0), limit);
    }
    return limit;
}

// What the verdict rests on: the program as it will be found.
void note_probe_program(HostContext& ctx, const std::string& name) {
    int error = 0;
    auto program = detail::find_program(name, std::nullopt, {}, error);
    std::lock_guard lock(ctx.mutex);
    ctx.probe_programs.emplace_back(program ? *program : name);
}

confine_status fill_probe_run(void* context, const sdk::ProbeRun& run, confine_probe_run* out) {
    *out = confine_probe_run{};
    out->struct_size = sizeof(confine_probe_run);
    out->spawned = run.spawned;
    out->spawn_errno = run.spawn_errno;
    out->exited = run.exited;
    out->exit_code = run.exit_code;
    out->signal = run.signal;
    out->timed_out = run.timed_out;
    out->stdout_data = dup_c(run.stdout_text);
    out->stdout_size = run.stdout_text.size();
    out->stderr_data = dup_c(run.stderr_text);
    out->stderr_size = run.stderr_text.size();
    if (!out->stdout_data || !out->stderr_data) {
        host_release_probe_run(context, out);
        return CONFINE_E_NO_MEMORY;
    }
    return CONFINE_OK;
}

confine_status host_run_probe(void* context, const char* const* argv, std::size_t argc,
                              std::uint32_t timeout_ms, confine_probe_run* out) noexcept {
    try {
        auto* ctx = static_cast<HostContext*>(context);
        if (!ctx || !out || out->struct_size < sizeof(confine_probe_run)) return CONFINE_E_INVALID_ARGUMENT;
        const auto args = probe_arguments(argv, argc);
        if (!args) return CONFINE_E_INVALID_ARGUMENT;
        const auto limit = probe_command_limit(*ctx, timeout_ms);
        detail::log_debug("{}: probe runs {} (limit {} ms)", ctx->runner, args->front(), limit.count());
        note_probe_program(*ctx, args->front());
        sdk::ProbeRun run = run_bounded(*args, limit, probe_capture_bytes);
        if (run.timed_out) ctx->probe_timed_out = true;
        return fill_probe_run(context, run, out);
    } catch (const std::bad_alloc&) {
        return CONFINE_E_NO_MEMORY;
    } catch (...) {
        return CONFINE_E_FAILED;
    }
}

confine_status host_canonicalize(void*, const char* path, char** out_path, char** out_error) noexcept {
    try {
        if (out_path) *out_path = nullptr;
        if (out_error) *out_error = nullptr;
        if (!path || !out_path) return CONFINE_E_INVALID_ARGUMENT;
        std::error_code ec;
        fs::path resolved = fs::canonical(fs::path(path), ec);
        if (ec) {
            if (out_error) *out_error = dup_c(std::string(path) + ": " + ec.message());
            return CONFINE_E_FAILED;
        }
        *out_path = dup_c(resolved.string());
        return *out_path ? CONFINE_OK : CONFINE_E_NO_MEMORY;
    } catch (...) {
        return CONFINE_E_FAILED;
    }
}

void host_free_string(void*, char* s) noexcept { std::free(s); }

void host_setting_at_fault(void* context, const char* key) noexcept {
    try {
        auto* ctx = static_cast<HostContext*>(context);
        if (!ctx || !key) return;
        std::lock_guard lock(ctx->mutex);
        ctx->setting_at_fault = key;
    } catch (...) {
    }
}

}  // namespace

std::unique_ptr<HostContext> make_host_context(const std::string& runner) {
    auto ctx = std::make_unique<HostContext>();
    ctx->runner = runner;
    ctx->host.struct_size = sizeof(confine_host);
    ctx->host.abi_major = CONFINE_ABI_MAJOR;
    ctx->host.abi_minor = CONFINE_ABI_MINOR;
    ctx->host.context = ctx.get();
    ctx->host.log = &host_log;
    ctx->host.run_probe = &host_run_probe;
    ctx->host.release_probe_run = &host_release_probe_run;
    ctx->host.canonicalize_path = &host_canonicalize;
    ctx->host.free_string = &host_free_string;
    ctx->host.setting_at_fault = &host_setting_at_fault;
    return ctx;
}

}  // namespace confine::detail
