// The host's side of a runner's C ABI calls: create, probe, wrap and the frees, with
// no exception let through and every result read by plugins/results.hpp.
#include "plugins/host_services.hpp"
#include "plugins/loader.hpp"
#include "plugins/results.hpp"

#include "log.hpp"

#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

namespace fs = std::filesystem;

namespace confine {

struct PluginRunner::Impl {
    std::shared_ptr<Plugin> plugin;  // keeps the shared object mapped
    const confine_plugin_descriptor* descriptor = nullptr;
    std::unique_ptr<detail::HostContext> host;
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

namespace {

// How long past its time limit a probe that hangs inside the plugin itself is waited for.
constexpr std::chrono::milliseconds probe_grace{250};

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

// A runner's `[runner.<name>]` table as the C ABI passes it: views into the table, which
// must outlive this.
class SettingsView {
public:
    explicit SettingsView(const RunnerTable* table) {
        if (!table) return;
        arrays_.reserve(table->settings.size());
        for (const RunnerSetting& s : table->settings) settings_.push_back(convert(s));
    }
    SettingsView(const SettingsView&) = delete;
    SettingsView& operator=(const SettingsView&) = delete;
    const confine_setting* data() const { return settings_.data(); }
    std::size_t size() const { return settings_.size(); }

private:
    confine_setting convert(const RunnerSetting& s) {
        confine_setting c{};
        c.key = s.key.c_str();
        switch (s.kind) {
        case RunnerSetting::Kind::string: c.kind = CONFINE_SETTING_STRING; c.string_value = s.string_value.c_str(); break;
        case RunnerSetting::Kind::integer: c.kind = CONFINE_SETTING_INTEGER; c.integer_value = s.integer_value; break;
        case RunnerSetting::Kind::boolean: c.kind = CONFINE_SETTING_BOOLEAN; c.boolean_value = s.boolean_value; break;
        case RunnerSetting::Kind::string_array: {
            c.kind = CONFINE_SETTING_STRING_ARRAY;
            auto& ptrs = arrays_.emplace_back();
            for (const auto& v : s.array_value) ptrs.push_back(v.c_str());
            c.array_value = {ptrs.data(), ptrs.size()};
            break;
        }
        }
        return c;
    }

    std::vector<confine_setting> settings_;
    std::vector<std::vector<const char*>> arrays_;  // reserved up front: settings_ points into them
};

Verdict call_probe(PluginRunner::Impl& r, std::uint32_t timeout_ms) {
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

std::expected<std::unique_ptr<PluginRunner>, Error> Plugin::create_runner(const RunnerTable* table) {
    const PluginInfo& info = impl_->info;
    // Where a failure is: at the key the runner named (ABI 1.9), else at its table.
    auto where = [&](const std::string& message, const std::string& key = {}) {
        const SourcePosition* at = table ? &table->where : nullptr;
        if (table && !key.empty())
            for (const RunnerSetting& s : table->settings)
                if (s.key == key) at = &s.where;
        std::string prefix = at ? to_string(*at) + ": runner." + info.runner_name + ": " : "";
        return prefix + message + " (plugin " + info.file.string() + ")";
    };
    const SettingsView settings(table);
    const std::string plugin_dir = info.file.parent_path().string();
    confine_runner_config config{};
    config.struct_size = sizeof config;
    config.runner_name = info.runner_name.c_str();
    config.plugin_dir = plugin_dir.c_str();
    config.settings = settings.data();
    config.settings_count = settings.size();

    auto runner = std::make_shared<PluginRunner::Impl>();
    runner->plugin = shared_from_this();
    runner->descriptor = impl_->descriptor;
    runner->host = detail::make_host_context(info.runner_name);
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
        std::string key;
        {
            std::lock_guard lock(runner->host->mutex);
            key = runner->host->setting_at_fault;
        }
        // A runner that says it cannot work here is unusable, and a chain skips it; any
        // other failure (its settings rejected above all) is the configuration's.
        return std::unexpected(Error{st == CONFINE_E_UNSUPPORTED ? ErrorCode::plugin_create_unsupported : ErrorCode::plugin_create_failed,
                                     where(message.empty() ? "cannot create runner: " + status_text(st) : message, key)});
    }
    return std::make_unique<PluginRunner>(std::move(runner));
}

PluginRunner::PluginRunner(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
PluginRunner::~PluginRunner() = default;
const std::string& PluginRunner::name() const noexcept { return impl_->plugin->info().runner_name; }

std::vector<fs::path> PluginRunner::probed_programs() const {
    std::lock_guard lock(impl_->host->mutex);
    return impl_->host->probe_programs;
}
const PluginInfo& PluginRunner::plugin() const noexcept { return impl_->plugin->info(); }

Verdict PluginRunner::probe(std::uint32_t timeout_ms) {
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

std::expected<WrapResult, Error> PluginRunner::wrap(const Policy& policy, std::span<const std::string> argv) {
    auto fail = [&](const Error& e) {
        return std::unexpected(Error{e.code, "runner '" + name() + "' (" + plugin().file.string() + "): " + e.message});
    };
    // A plugin older than ABI 1.5 would not know the network was asked of it.
    if (policy.network == Network::none && plugin().abi_minor < 5)
        return fail({ErrorCode::sandbox_unavailable, "plugin ABI " + std::to_string(plugin().abi_major) + "." + std::to_string(plugin().abi_minor) +
                                                         " cannot be asked to confine the network (ABI 1.5 can); with --network allow "
                                                         "(or [policy] network = \"allow\") it confines what it did"});
    // Nor one older than 1.11 that the network goes through the run's proxy.
    if (policy.network == Network::proxy && plugin().abi_minor < 11)
        return fail({ErrorCode::sandbox_unavailable, "plugin ABI " + std::to_string(plugin().abi_major) + "." + std::to_string(plugin().abi_minor) +
                                                         " cannot be asked to confine the network to the run's proxy (allow_hosts; ABI 1.11 can)"});
    const std::string workspace = policy.workspace.string();
    std::vector<std::string> writable;
    for (const auto& w : policy.writable) writable.push_back(w.string());
    std::vector<const char*> writable_ptrs, argv_ptrs;
    for (const auto& w : writable) writable_ptrs.push_back(w.c_str());
    for (const auto& a : argv) argv_ptrs.push_back(a.c_str());
    std::vector<std::string> deny_read, protect;
    for (const auto& d : policy.deny_read) deny_read.push_back(d.string());
    for (const auto& d : policy.protect) protect.push_back(d.string());
    std::vector<std::string> read_scope;
    for (const auto& d : policy.read_scope) read_scope.push_back(d.string());
    std::vector<const char*> deny_read_ptrs, protect_ptrs, read_scope_ptrs;
    for (const auto& d : deny_read) deny_read_ptrs.push_back(d.c_str());
    for (const auto& d : protect) protect_ptrs.push_back(d.c_str());
    for (const auto& d : read_scope) read_scope_ptrs.push_back(d.c_str());
    confine_policy p{};
    p.struct_size = sizeof p;
    p.mode = policy.mode == Mode::workspace_write ? CONFINE_MODE_WORKSPACE_WRITE : CONFINE_MODE_READ_ONLY;
    p.workspace = policy.mode == Mode::workspace_write ? workspace.c_str() : nullptr;
    p.writable = {writable_ptrs.data(), writable_ptrs.size()};
    p.network = policy.network == Network::none    ? CONFINE_NETWORK_NONE
                : policy.network == Network::proxy ? CONFINE_NETWORK_PROXY
                                                   : CONFINE_NETWORK_ALLOW;
    p.proxy_port = policy.network == Network::proxy ? policy.proxy_port : 0;
    p.tmp = policy.tmp == Tmp::private_ ? CONFINE_TMP_PRIVATE : policy.tmp == Tmp::host ? CONFINE_TMP_HOST : CONFINE_TMP_UNSAID;
    p.terminal = policy.terminal ? (policy.own_terminal ? 2 : 1) : 0;
    p.deny_read = {deny_read_ptrs.data(), deny_read_ptrs.size()};
    p.protect = {protect_ptrs.data(), protect_ptrs.size()};
    p.read_scope = {read_scope_ptrs.data(), read_scope_ptrs.size()};
    const std::string working_directory = policy.working_directory.string();
    p.working_directory = working_directory.empty() ? nullptr : working_directory.c_str();

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

}  // namespace confine
