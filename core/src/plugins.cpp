#include <confine/sdk/abi.h>
#include <confine/plugins.hpp>

#include "elf_symbol.hpp"
#include "log.hpp"
#include "plugins/results.hpp"
#include "executor.hpp"
#include "process.hpp"
#include "trust.hpp"

#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS
#endif
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#if defined(_WIN32)
#include <windows.h>
#else
#include <confine/sdk/trust_posix.hpp>

#include <dlfcn.h>
#include <sys/auxv.h>
#include <climits>
#include <sys/stat.h>
#include <unistd.h>
#endif

#ifndef CONFINE_RELATIVE_PLUGIN_DIR
#define CONFINE_RELATIVE_PLUGIN_DIR "../lib/confine/plugins"
#endif

namespace fs = std::filesystem;

namespace confine {
namespace {

#if defined(_WIN32)
constexpr std::string_view plugin_suffix = ".dll";
#elif defined(__APPLE__)
constexpr std::string_view plugin_suffix = ".dylib";
#else
constexpr std::string_view plugin_suffix = ".so";
#endif
constexpr std::string_view plugin_prefix = "confine-runner-";

// The exact descriptor size defined by each minor version of this major, by index.
constexpr std::uint32_t descriptor_size_by_minor[] = {
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.0
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.1: the wrap result grew
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.2: the wrap result grew again
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.3: status-descriptor attestation
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.4: the command's process ID on it
};
static_assert(std::size(descriptor_size_by_minor) == CONFINE_ABI_MINOR + 1);

constexpr std::size_t probe_capture_bytes = 64 * 1024;
// How long past its time limit a probe that hangs inside the plugin itself is waited for.
constexpr std::chrono::milliseconds probe_grace{250};

char* dup_c(const std::string& s) {
    char* p = static_cast<char*>(std::malloc(s.size() + 1));
    if (p) std::memcpy(p, s.data(), s.size() + 1);
    return p;
}

Error plugin_error(ErrorCode code, const fs::path& file, const std::string& what) {
    return Error{code, file.string() + ": " + what};
}

}  // namespace

std::string plugin_file_name(std::string_view runner) {
    return std::string(plugin_prefix) + std::string(runner) + std::string(plugin_suffix);
}

std::string runner_name_from_file(const fs::path& file) {
    const std::string name = file.filename().string();
    if (name.size() <= plugin_prefix.size() + plugin_suffix.size()) return {};
    if (!name.starts_with(plugin_prefix) || !name.ends_with(plugin_suffix)) return {};
    std::string runner = name.substr(plugin_prefix.size(), name.size() - plugin_prefix.size() - plugin_suffix.size());
    return is_valid_runner_name(runner) ? runner : std::string();
}

// ---------------------------------------------------------------- host services

namespace {

// One per runner instance: what the services need to know about their caller.
struct HostContext {
    std::string runner;
    confine_host host{};
    std::mutex mutex;
    std::chrono::steady_clock::time_point probe_deadline = std::chrono::steady_clock::time_point::max();
    std::atomic<bool> probe_timed_out{false};
    std::vector<std::filesystem::path> probe_programs;  // what the last probe ran (guarded by mutex)
};

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

void host_release_probe_run(void*, confine_probe_run* run) noexcept;

confine_status host_run_probe(void* context, const char* const* argv, std::size_t argc,
                              std::uint32_t timeout_ms, confine_probe_run* out) noexcept {
    try {
        auto* ctx = static_cast<HostContext*>(context);
        if (!ctx || !out || !argv || argc == 0 || argc > detail::max_list_items || out->struct_size < sizeof(confine_probe_run))
            return CONFINE_E_INVALID_ARGUMENT;
        std::vector<std::string> args;
        for (std::size_t i = 0; i < argc; ++i) {
            if (!argv[i]) return CONFINE_E_INVALID_ARGUMENT;
            args.emplace_back(argv[i]);
        }
        auto limit = std::chrono::milliseconds(timeout_ms);
        std::chrono::steady_clock::time_point deadline;
        {
            std::lock_guard lock(ctx->mutex);
            deadline = ctx->probe_deadline;
        }
        if (deadline != std::chrono::steady_clock::time_point::max()) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            limit = std::clamp(left, std::chrono::milliseconds(0), limit);
        }
        detail::log_debug("{}: probe runs {} (limit {} ms)", ctx->runner, args.front(), limit.count());
        {
            // What the verdict rests on: the program as it will be found.
            int error = 0;
            auto program = detail::find_program(args.front(), std::nullopt, {}, error);
            std::lock_guard lock(ctx->mutex);
            ctx->probe_programs.emplace_back(program ? *program : args.front());
        }
        detail::BoundedRun run = detail::run_bounded(args, limit, probe_capture_bytes);
        if (run.timed_out) ctx->probe_timed_out = true;
        *out = confine_probe_run{};
        out->struct_size = sizeof(confine_probe_run);
        out->spawned = run.spawned;
        out->spawn_errno = run.spawn_errno;
        out->exited = run.exited;
        out->exit_code = run.exit_code;
        out->signal = run.signal;
        out->timed_out = run.timed_out;
        out->stdout_data = dup_c(run.out);
        out->stdout_size = run.out.size();
        out->stderr_data = dup_c(run.err);
        out->stderr_size = run.err.size();
        if (!out->stdout_data || !out->stderr_data) {
            host_release_probe_run(context, out);
            return CONFINE_E_NO_MEMORY;
        }
        return CONFINE_OK;
    } catch (const std::bad_alloc&) {
        return CONFINE_E_NO_MEMORY;
    } catch (...) {
        return CONFINE_E_FAILED;
    }
}

void host_release_probe_run(void*, confine_probe_run* run) noexcept {
    if (!run) return;
    std::free(const_cast<char*>(run->stdout_data));
    std::free(const_cast<char*>(run->stderr_data));
    run->stdout_data = run->stderr_data = nullptr;
    run->stdout_size = run->stderr_size = 0;
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
    return ctx;
}

// Takes ownership of a plugin-allocated string.
std::string take_string(const confine_plugin_descriptor* desc, char* s) {
    if (!s) return {};
    std::string out(s);
    try {
        desc->free_string(s);
    } catch (...) {
    }
    return out;
}

std::string status_text(confine_status st) {
    switch (st) {
    case CONFINE_E_INVALID_ARGUMENT: return "invalid argument";
    case CONFINE_E_UNSUPPORTED: return "unsupported";
    case CONFINE_E_NO_MEMORY: return "out of memory";
    case CONFINE_E_INTERNAL: return "internal error";
    default: return "failed (status " + std::to_string(st) + ")";
    }
}

}  // namespace

// ---------------------------------------------------------------- Plugin

struct Plugin::Impl {
    boost::dll::shared_library library;
    const confine_plugin_descriptor* descriptor = nullptr;
    PluginInfo info;
};

struct Runner::Impl {
    std::shared_ptr<Plugin> plugin;  // keeps the shared object mapped
    const confine_plugin_descriptor* descriptor = nullptr;
    std::unique_ptr<HostContext> host;
    void* instance = nullptr;

    ~Impl() {
        if (instance && descriptor->destroy) {
            try {
                descriptor->destroy(instance);
            } catch (...) {
            }
        }
    }
};

Plugin::Plugin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plugin::~Plugin() = default;
const PluginInfo& Plugin::info() const noexcept { return impl_->info; }

std::expected<std::unique_ptr<Runner>, Error> Plugin::create_runner(const RunnerTable* table) {
    const PluginInfo& info = impl_->info;
    auto where = [&](const std::string& message) {
        std::string prefix = table ? to_string(table->where) + ": runner." + info.runner_name + ": " : "";
        return prefix + message + " (plugin " + info.file.string() + ")";
    };
    std::vector<confine_setting> settings;
    std::vector<std::vector<const char*>> arrays;
    if (table) {
        arrays.reserve(table->settings.size());
        for (const RunnerSetting& s : table->settings) {
            confine_setting c{};
            c.key = s.key.c_str();
            switch (s.kind) {
            case RunnerSetting::Kind::string: c.kind = CONFINE_SETTING_STRING; c.string_value = s.string_value.c_str(); break;
            case RunnerSetting::Kind::integer: c.kind = CONFINE_SETTING_INTEGER; c.integer_value = s.integer_value; break;
            case RunnerSetting::Kind::boolean: c.kind = CONFINE_SETTING_BOOLEAN; c.boolean_value = s.boolean_value; break;
            case RunnerSetting::Kind::string_array: {
                c.kind = CONFINE_SETTING_STRING_ARRAY;
                auto& ptrs = arrays.emplace_back();
                for (const auto& v : s.array_value) ptrs.push_back(v.c_str());
                c.array_value = {ptrs.data(), ptrs.size()};
                break;
            }
            }
            settings.push_back(c);
        }
    }
    const std::string plugin_dir = info.file.parent_path().string();
    confine_runner_config config{};
    config.struct_size = sizeof config;
    config.runner_name = info.runner_name.c_str();
    config.plugin_dir = plugin_dir.c_str();
    config.settings = settings.data();
    config.settings_count = settings.size();

    auto runner = std::make_shared<Runner::Impl>();
    runner->plugin = shared_from_this();
    runner->descriptor = impl_->descriptor;
    runner->host = make_host_context(info.runner_name);
    char* err = nullptr;
    confine_status st = CONFINE_E_FAILED;
    try {
        st = impl_->descriptor->create(&runner->host->host, &config, &runner->instance, &err);
    } catch (...) {
        return std::unexpected(Error{ErrorCode::plugin_create_failed, where("plugin threw an exception across the ABI boundary while creating its runner")});
    }
    std::string message = take_string(impl_->descriptor, err);
    if (st != CONFINE_OK || !runner->instance) {
        runner->instance = nullptr;
        return std::unexpected(Error{ErrorCode::plugin_create_failed,
                                     where(message.empty() ? "cannot create runner: " + status_text(st) : message)});
    }
    return std::make_unique<Runner>(std::move(runner));
}

// ---------------------------------------------------------------- Runner

Runner::Runner(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runner::~Runner() = default;
const std::string& Runner::name() const noexcept { return impl_->plugin->info().runner_name; }

std::vector<fs::path> Runner::probed_programs() const {
    std::lock_guard lock(impl_->host->mutex);
    return impl_->host->probe_programs;
}
const PluginInfo& Runner::plugin() const noexcept { return impl_->plugin->info(); }

namespace {

Verdict call_probe(Runner::Impl& r, std::uint32_t timeout_ms) {
    confine_verdict* v = nullptr;
    char* err = nullptr;
    confine_status st = CONFINE_E_FAILED;
    try {
        st = r.descriptor->probe(r.instance, timeout_ms, &v, &err);
    } catch (...) {
        return {Verdict::Kind::unusable, "plugin threw an exception across the ABI boundary during its probe"};
    }
    std::string message = take_string(r.descriptor, err);
    if (st != CONFINE_OK) {
        if (v) r.descriptor->free_verdict(v);
        return {Verdict::Kind::unusable, "probe failed: " + (message.empty() ? status_text(st) : message)};
    }
    Verdict out = detail::read_verdict(v);
    if (v) r.descriptor->free_verdict(v);
    return out;
}

}  // namespace

Verdict Runner::probe(std::uint32_t timeout_ms) {
    const auto timed_out = Verdict{Verdict::Kind::unusable, "probe timed out after " + std::to_string(timeout_ms) + " ms"};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    {
        std::lock_guard lock(impl_->host->mutex);
        impl_->host->probe_deadline = deadline;
        impl_->host->probe_programs.clear();
    }
    impl_->host->probe_timed_out = false;

    struct Shared {
        std::mutex mutex;
        std::condition_variable done_cv;
        bool done = false;
        Verdict verdict;
    };
    auto shared = std::make_shared<Shared>();
    // The probe runs on its own thread so that a plugin hanging in its own code still
    // cannot hold selection past the limit. A thread left behind keeps the plugin and
    // its runner alive (shared ownership) for as long as it runs.
    try {
        std::thread([impl = impl_, shared, timeout_ms] {
            Verdict v = call_probe(*impl, timeout_ms);
            std::lock_guard lock(shared->mutex);
            shared->verdict = std::move(v);
            shared->done = true;
            shared->done_cv.notify_all();
        }).detach();
    } catch (const std::system_error& e) {
        return {Verdict::Kind::unusable, std::string("cannot start the probe: ") + e.what()};
    }
    std::unique_lock lock(shared->mutex);
    if (!shared->done_cv.wait_until(lock, deadline + probe_grace, [&] { return shared->done; })) {
        detail::log_warn("{}: probe still running after {} ms; abandoned", name(), timeout_ms);
        return timed_out;
    }
    if (impl_->host->probe_timed_out) return timed_out;
    return shared->verdict;
}

std::expected<WrapResult, Error> Runner::wrap(const Policy& policy, std::span<const std::string> argv) {
    auto fail = [&](const Error& e) {
        return std::unexpected(Error{e.code, "runner '" + name() + "' (" + plugin().file.string() + "): " + e.message});
    };
    const std::string workspace = policy.workspace.string();
    std::vector<std::string> writable;
    for (const auto& w : policy.writable) writable.push_back(w.string());
    std::vector<const char*> writable_ptrs, argv_ptrs;
    for (const auto& w : writable) writable_ptrs.push_back(w.c_str());
    for (const auto& a : argv) argv_ptrs.push_back(a.c_str());
    confine_policy p{};
    p.struct_size = sizeof p;
    p.mode = policy.mode == Mode::workspace_write ? CONFINE_MODE_WORKSPACE_WRITE : CONFINE_MODE_READ_ONLY;
    p.workspace = policy.mode == Mode::workspace_write ? workspace.c_str() : nullptr;
    p.writable = {writable_ptrs.data(), writable_ptrs.size()};

    confine_wrap_result* r = nullptr;
    char* err = nullptr;
    confine_status st = CONFINE_E_FAILED;
    try {
        st = impl_->descriptor->wrap(impl_->instance, &p, argv_ptrs.data(), argv_ptrs.size(), &r, &err);
    } catch (...) {
        return fail({ErrorCode::plugin_call_failed, "plugin threw an exception across the ABI boundary during wrap"});
    }
    std::string message = take_string(impl_->descriptor, err);
    if (st != CONFINE_OK) {
        if (r) impl_->descriptor->free_wrap_result(r);
        return fail({ErrorCode::plugin_call_failed, "wrap failed: " + (message.empty() ? status_text(st) : message)});
    }
    // Shared: an in-process confinement's state lives in the result, and the result
    // (and the plugin's code) must outlive every use of it.
    std::shared_ptr<confine_wrap_result> owned;
    if (r) owned.reset(r, [plugin = impl_->plugin, release = impl_->descriptor->free_wrap_result](confine_wrap_result* p) { release(p); });
    auto out = detail::read_wrap_result(r, argv);
    if (!out) return fail(out.error());
    out->runner = name();
    out->keep_alive = std::move(owned);
    return out;
}

// ---------------------------------------------------------------- loading

namespace {

Error missing_exports(const fs::path& file, bool has_abi, bool has_descriptor) {
    std::string missing;
    if (!has_abi) missing = CONFINE_PLUGIN_ABI_SYMBOL;
    if (!has_descriptor) missing += (missing.empty() ? "" : ", ") + std::string(CONFINE_PLUGIN_DESCRIPTOR_SYMBOL);
    return plugin_error(ErrorCode::plugin_missing_export, file, "missing exported symbol(s): " + missing);
}

std::string version_text(unsigned major, unsigned minor) {
    return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<Error> check_abi(const fs::path& file, const confine_plugin_abi_info& abi, std::uint32_t descriptor_size) {
    const std::string host = version_text(CONFINE_ABI_MAJOR, CONFINE_ABI_MINOR);
    const std::string plugin = version_text(abi.major, abi.minor);
    if (abi.magic != CONFINE_ABI_MAGIC)
        return plugin_error(ErrorCode::plugin_missing_export, file, "exports confine_plugin_abi without the confine ABI marker");
    if (abi.major != CONFINE_ABI_MAJOR)
        return plugin_error(ErrorCode::plugin_abi_major_mismatch, file,
                            "plugin ABI " + plugin + " has a different major version than this host's " + host);
    if (abi.minor > CONFINE_ABI_MINOR)
        return plugin_error(ErrorCode::plugin_abi_minor_newer, file, "plugin ABI " + plugin + " is newer than this host's " + host);
    const std::uint32_t known = descriptor_size_by_minor[abi.minor];
    if (abi.descriptor_size != known || descriptor_size != known)
        return plugin_error(ErrorCode::plugin_descriptor_size_unknown, file,
                            "descriptor size " + std::to_string(descriptor_size) + " (declared " + std::to_string(abi.descriptor_size) +
                                ") is not the size " + std::to_string(known) + " of ABI " + plugin);
    return std::nullopt;
}

}  // namespace

#if !defined(_WIN32)
namespace {

// The descriptor a plugin file is loaded through, one per file for the life of the
// process. The dynamic loader knows a library by the name it was opened by, and would
// hand back the library already loaded as "/proc/self/fd/N" for another file that got
// the same number once the first descriptor was closed; a descriptor kept open also
// keeps its file's identity from passing to another file.
int pinned_descriptor(trust::Descriptor fd, const struct stat& st) {
    static std::mutex mutex;
    static std::map<std::pair<dev_t, ino_t>, int> pinned;
    std::lock_guard lock(mutex);
    auto [it, added] = pinned.try_emplace({st.st_dev, st.st_ino}, fd.get());
    if (added) fd.release();
    return it->second;
}

}  // namespace
#endif

std::expected<std::shared_ptr<Plugin>, Error> load_plugin(const fs::path& file, std::string_view expected_runner) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
        return std::unexpected(plugin_error(ErrorCode::plugin_not_found, file, "not a regular file"));
#if defined(_WIN32)
    if (auto bad = detail::untrusted_reason(file))
        return std::unexpected(plugin_error(ErrorCode::plugin_untrusted, file, "refusing plugin: " + *bad));
    const fs::path load_path = file;
#else
    // Judged on the descriptor the walk opened, and loaded through that same descriptor
    // (/proc/self/fd/N): no other file can be put in its place between the two.
    const fs::path absolute = fs::absolute(file, ec);
    auto opened = trust::open_trusted(absolute.string(), O_RDONLY);
    if (!opened) return std::unexpected(plugin_error(ErrorCode::plugin_untrusted, file, "refusing plugin: " + opened.error()));
    // Code is installed executable; a plugin file without the permission was not.
    if ((opened->status.st_mode & 0111) == 0)
        return std::unexpected(plugin_error(ErrorCode::plugin_not_executable, file, "refusing plugin: it is not executable (mode " +
                                                                                        trust::detail::mode_text(opened->status.st_mode) + ")"));
    const fs::path load_path = "/proc/self/fd/" + std::to_string(pinned_descriptor(std::move(opened->fd), opened->status));
#endif

#if defined(__ELF__)
    // Read the ABI record from the file itself: a plugin of another ABI is refused
    // before the dynamic loader runs any of its code (static constructors included).
    {
        const detail::ElfSymbolRequest wanted[] = {{CONFINE_PLUGIN_ABI_SYMBOL, sizeof(confine_plugin_abi_info)},
                                                   {CONFINE_PLUGIN_DESCRIPTOR_SYMBOL, sizeof(std::uint32_t)}};
        auto symbols = detail::read_elf_symbols(load_path, wanted);
        if (!symbols) return std::unexpected(plugin_error(ErrorCode::plugin_load_failed, file, "cannot load: " + symbols.error()));
        const auto& abi_bytes = (*symbols)[0];
        const auto& desc_bytes = (*symbols)[1];
        if (!abi_bytes || !desc_bytes) return std::unexpected(missing_exports(file, abi_bytes.has_value(), desc_bytes.has_value()));
        confine_plugin_abi_info abi{};
        std::uint32_t desc_size = 0;
        std::memcpy(&abi, abi_bytes->data(), sizeof abi);
        std::memcpy(&desc_size, desc_bytes->data(), sizeof desc_size);
        if (auto bad = check_abi(file, abi, desc_size)) return std::unexpected(*bad);
    }
#endif
    auto impl = std::make_unique<Plugin::Impl>();
#if defined(_WIN32)
    impl->library.load(load_path, boost::dll::load_mode::default_mode, ec);
    if (ec) return std::unexpected(plugin_error(ErrorCode::plugin_load_failed, file, "cannot load: " + ec.message()));
#else
    ::dlerror();
    impl->library.load(load_path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
    if (ec) {
        const char* why = ::dlerror();
        return std::unexpected(plugin_error(ErrorCode::plugin_load_failed, file,
                                            std::string("cannot load: ") + (why ? why : ec.message())));
    }
#endif
    const bool has_abi = impl->library.has(CONFINE_PLUGIN_ABI_SYMBOL);
    const bool has_desc = impl->library.has(CONFINE_PLUGIN_DESCRIPTOR_SYMBOL);
    if (!has_abi || !has_desc) return std::unexpected(missing_exports(file, has_abi, has_desc));
    const auto& abi = impl->library.get<const confine_plugin_abi_info>(CONFINE_PLUGIN_ABI_SYMBOL);
    const auto& desc = impl->library.get<const confine_plugin_descriptor>(CONFINE_PLUGIN_DESCRIPTOR_SYMBOL);
    if (auto bad = check_abi(file, abi, desc.struct_size)) return std::unexpected(*bad);
    if (!desc.runner_name || !desc.create || !desc.destroy || !desc.probe || !desc.wrap || !desc.free_verdict ||
        !desc.free_wrap_result || !desc.free_string)
        return std::unexpected(plugin_error(ErrorCode::plugin_missing_export, file, "descriptor lacks a runner name or an entry point"));
    if (expected_runner != desc.runner_name)
        return std::unexpected(plugin_error(ErrorCode::plugin_name_mismatch, file,
                                            "descriptor names runner '" + std::string(desc.runner_name) +
                                                "' but the file name says '" + std::string(expected_runner) + "'"));
    impl->descriptor = &desc;
    impl->info.file = file;
    impl->info.runner_name = desc.runner_name;
    impl->info.version = desc.plugin_version ? desc.plugin_version : "";
    impl->info.summary = desc.summary ? desc.summary : "";
    impl->info.abi_major = abi.major;
    impl->info.abi_minor = abi.minor;
    detail::log_debug("loaded plugin {} (runner {}, ABI {}.{})", file.string(), impl->info.runner_name, abi.major, abi.minor);
    return std::make_shared<Plugin>(std::move(impl));
}

// ---------------------------------------------------------------- search

namespace {

// The directories, each once (two spellings of one directory count once).
std::vector<fs::path> unique_dirs(const std::vector<fs::path>& dirs) {
    if (dirs.size() < 2) return dirs;
    std::vector<fs::path> out, seen;
    for (const auto& d : dirs) {
        std::error_code ec;
        fs::path key = fs::weakly_canonical(d, ec);
        if (ec) key = d;
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        out.push_back(d);
    }
    return out;
}

std::string join(const std::vector<fs::path>& dirs) {
    std::string s;
    for (const auto& d : dirs) s += (s.empty() ? "" : ", ") + d.string();
    return s.empty() ? "(no plugin directories)" : s;
}

}  // namespace

std::expected<fs::path, Error> PluginSearch::locate(std::string_view runner) const {
    const std::vector<fs::path> dirs = unique_dirs(dirs_);
    std::vector<fs::path> found;
    const std::string name = plugin_file_name(runner);
    for (const auto& d : dirs) {
        std::error_code ec;
        fs::path candidate = d / name;
        if (fs::symlink_status(candidate, ec).type() != fs::file_type::not_found && !ec) found.push_back(candidate);
    }
    if (found.empty())
        return std::unexpected(Error{ErrorCode::plugin_not_found, "no plugin for runner '" + std::string(runner) +
                                                                      "': " + name + " is in none of " + join(dirs)});
    if (found.size() > 1)
        return std::unexpected(Error{ErrorCode::plugin_duplicate, "runner '" + std::string(runner) +
                                                                      "' is provided by more than one file: " + join(found)});
    return found.front();
}

std::vector<PluginSearch::Entry> PluginSearch::scan() const {
    std::vector<Entry> entries;
    std::map<std::string, std::vector<std::size_t>> by_name;
    for (const auto& d : unique_dirs(dirs_)) {
        std::error_code ec;
        fs::directory_iterator it(d, ec), end;
        if (ec) continue;
        std::vector<fs::path> files;
        for (; it != end; it.increment(ec)) {
            if (ec) break;
            if (!runner_name_from_file(it->path()).empty()) files.push_back(it->path());
        }
        std::sort(files.begin(), files.end());
        for (auto& f : files) {
            std::string n = runner_name_from_file(f);
            by_name[n].push_back(entries.size());
            entries.push_back(Entry{f, n, std::unexpected(Error{ErrorCode::plugin_not_found, ""})});
        }
    }
    for (auto& [name, indexes] : by_name) {
        if (indexes.size() > 1) {
            std::vector<fs::path> files;
            for (auto i : indexes) files.push_back(entries[i].file);
            for (auto i : indexes)
                entries[i].loaded = std::unexpected(Error{ErrorCode::plugin_duplicate, entries[i].file.string() + ": runner '" + name +
                                                                                           "' is provided by more than one file: " + join(files)});
            continue;
        }
        Entry& e = entries[indexes.front()];
        auto plugin = load_plugin(e.file, name);
        if (plugin) e.loaded = (*plugin)->info();
        else e.loaded = std::unexpected(plugin.error());
    }
    return entries;
}

fs::path builtin_plugin_dir() {
    fs::path self;
#if defined(_WIN32)
    std::wstring buf(32768, L'\0');
    const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n > 0 && n < buf.size()) {
        buf.resize(n);
        std::error_code ec;
        self = fs::canonical(fs::path(buf), ec);
        if (ec) self = fs::path(buf);
    }
#else
#if defined(__linux__)
    // The path this program was started by, resolved: cheaper than a look-up in /proc,
    // which is left for a relative start path (the working directory may have changed).
    char buf[PATH_MAX];
    if (const auto* started = reinterpret_cast<const char*>(::getauxval(AT_EXECFN)); started && *started == '/')
        if (::realpath(started, buf)) self = buf;
    if (self.empty()) {
        const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf);
        if (n > 0 && static_cast<std::size_t>(n) < sizeof buf) self.assign(buf, buf + n);
    }
#endif
    if (self.empty()) {
        Dl_info info{};
        if (::dladdr(reinterpret_cast<void*>(&builtin_plugin_dir), &info) && info.dli_fname && *info.dli_fname) {
            std::error_code ec2;
            self = fs::canonical(info.dli_fname, ec2);
        }
    }
#endif
    if (self.empty()) return {};
    return (self.parent_path() / CONFINE_RELATIVE_PLUGIN_DIR).lexically_normal();
}

}  // namespace confine
