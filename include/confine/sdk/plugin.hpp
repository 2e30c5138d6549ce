// C++ SDK for writing a confine runner plugin.
//
// A plugin is an ordinary class plus one export macro:
//
//   #include <confine/sdk/plugin.hpp>
//   namespace sdk = confine::sdk;
//
//   class MyRunner final : public sdk::Runner {
//   public:
//     MyRunner(sdk::Host host, std::vector<std::string> prefix) : host_(host), prefix_(std::move(prefix)) {}
//     // Each reader's error names its key: confine reports it at that key's file:line:column.
//     static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error>
//     create(sdk::Host host, const sdk::RunnerConfig& config) {
//       if (auto bad = config.settings.reject_unknown({"program", "options"})) return std::unexpected(*bad);
//       auto program = config.settings.absolute_path_or("program", "/usr/bin/x");
//       if (!program) return std::unexpected(program.error());
//       auto options = config.settings.strings_or("options", {});
//       if (!options) return std::unexpected(options.error());
//       std::vector<std::string> prefix{*program};
//       prefix.insert(prefix.end(), options->begin(), options->end());
//       return std::make_unique<MyRunner>(host, std::move(prefix));
//     }
//     sdk::Verdict probe(std::uint32_t timeout_ms) override {
//       std::vector<std::string> argv = prefix_;
//       argv.insert(argv.end(), {"--", "true"});
//       return sdk::verdict_of(host_.run_probe(argv, timeout_ms), "x");
//     }
//     std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy,
//                                                    std::span<const std::string> argv) override {
//       if (policy.mode != sdk::Mode::read_only) return std::unexpected(sdk::unsupported("read-only only"));
//       sdk::WrapResult r;
//       r.argv = prefix_;
//       r.argv.push_back("--");
//       r.argv.insert(r.argv.end(), argv.begin(), argv.end());
//       return r;
//     }
//   private:
//     sdk::Host host_;
//     std::vector<std::string> prefix_;
//   };
//   CONFINE_RUNNER_PLUGIN(MyRunner, "my", "1.0.0", "wraps commands in my mechanism")
//
// The file must be named `confine-runner-my.so`. Everything this header generates
// catches exceptions at the boundary and turns them into CONFINE_E_INTERNAL with the
// exception's message: nothing a plugin throws can crash its host.
#pragma once

#include <confine/sdk/abi.h>
#include <confine/sdk/vocabulary.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <expected>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace confine::sdk {

struct Error {
    std::string message;
    confine_status code = CONFINE_E_FAILED;
    // The `[runner.<name>]` key the error is about, or empty. When create() fails with
    // it, the host reports the error at that key's file:line:column (ABI 1.9; an older
    // host at the table's). Settings' readers set it.
    std::string setting = {};
};

inline Error invalid_argument(std::string message) {
    return Error{std::move(message), CONFINE_E_INVALID_ARGUMENT};
}
// A bad value of the setting `key`: the message is said as it is, the host adds where.
inline Error invalid_setting(std::string_view key, std::string message) {
    return Error{std::move(message), CONFINE_E_INVALID_ARGUMENT, std::string(key)};
}
inline Error unsupported(std::string message) {
    return Error{std::move(message), CONFINE_E_UNSUPPORTED};
}

// Whose rules say whether a path is absolute: this OS's (std::filesystem::path, so
// C:\... on Windows), or POSIX's (it begins with "/") wherever the plugin is built, for
// a runner of a POSIX system whose output can be reviewed on any OS.
enum class PathRules { this_os, posix };

// One `[runner.<name>]` value.
struct Setting {
    std::string key;
    std::int32_t kind = CONFINE_SETTING_STRING;
    std::string string_value;
    std::int64_t integer_value = 0;
    bool boolean_value = false;
    std::vector<std::string> array_value;
};

class Settings {
public:
    Settings() = default;
    explicit Settings(std::vector<Setting> items) : items_(std::move(items)) {}

    const Setting* find(std::string_view key) const {
        for (const auto& s : items_)
            if (s.key == key) return &s;
        return nullptr;
    }
    // Each reader gives the value of `key`, `fallback` when it is absent, or an error
    // naming the key (Error::setting) when it has another type ("setting 'in_process'
    // must be a boolean, not a string"), which the host reports at the key's place.
    std::expected<std::string, Error> string_or(std::string_view key, std::string fallback) const {
        auto s = of_kind(key, CONFINE_SETTING_STRING);
        if (!s) return std::unexpected(s.error());
        return *s ? (*s)->string_value : std::move(fallback);
    }
    std::expected<bool, Error> bool_or(std::string_view key, bool fallback) const {
        auto s = of_kind(key, CONFINE_SETTING_BOOLEAN);
        if (!s) return std::unexpected(s.error());
        return *s ? (*s)->boolean_value : fallback;
    }
    std::expected<std::int64_t, Error> int_or(std::string_view key, std::int64_t fallback) const {
        auto s = of_kind(key, CONFINE_SETTING_INTEGER);
        if (!s) return std::unexpected(s.error());
        return *s ? (*s)->integer_value : fallback;
    }
    std::expected<std::vector<std::string>, Error> strings_or(std::string_view key, std::vector<std::string> fallback) const {
        auto s = of_kind(key, CONFINE_SETTING_STRING_ARRAY);
        if (!s) return std::unexpected(s.error());
        return *s ? (*s)->array_value : std::move(fallback);
    }
    // Older spellings of int_or and strings_or.
    std::expected<std::int64_t, Error> integer_or(std::string_view key, std::int64_t fallback) const {
        return int_or(key, fallback);
    }
    std::expected<std::vector<std::string>, Error> string_list_or(std::string_view key, std::vector<std::string> fallback) const {
        return strings_or(key, std::move(fallback));
    }
    // A path to a program or a directory, set or the fallback: absolute, so that it is
    // never looked up on PATH nor taken relative to wherever a command runs. An empty
    // fallback stands for none and is returned as it is. `rules`: whose idea of absolute
    // (PathRules).
    std::expected<std::string, Error> absolute_path_or(std::string_view key, std::string fallback,
                                                       PathRules rules = PathRules::this_os) const {
        auto s = of_kind(key, CONFINE_SETTING_STRING);
        if (!s) return std::unexpected(s.error());
        if (!*s && fallback.empty()) return fallback;
        std::string path = *s ? (*s)->string_value : std::move(fallback);
        const bool absolute = rules == PathRules::posix ? path.starts_with('/') : std::filesystem::path(path).is_absolute();
        if (!absolute)
            return std::unexpected(invalid_setting(key, "setting '" + std::string(key) + "' must be an absolute path, got '" + path + "'"));
        return path;
    }
    // The first key not in `known`, as an error naming it; nullopt when every key is known.
    std::optional<Error> reject_unknown(std::initializer_list<std::string_view> known) const {
        return reject_unknown(std::span<const std::string_view>(known.begin(), known.size()));
    }
    std::optional<Error> reject_unknown(std::span<const std::string_view> known) const {
        for (const auto& s : items_) {
            bool ok = false;
            for (auto k : known) ok = ok || s.key == k;
            if (!ok) return invalid_setting(s.key, "unknown setting '" + s.key + "'");
        }
        return std::nullopt;
    }
    const std::vector<Setting>& items() const { return items_; }

private:
    static const char* kind_name(std::int32_t kind) {
        switch (kind) {
        case CONFINE_SETTING_STRING: return "a string";
        case CONFINE_SETTING_INTEGER: return "an integer";
        case CONFINE_SETTING_BOOLEAN: return "a boolean";
        case CONFINE_SETTING_STRING_ARRAY: return "an array of strings";
        default: return "a value of an unknown kind";
        }
    }
    // The setting `key` if it is of `kind`, nullptr when it is absent, else the error.
    std::expected<const Setting*, Error> of_kind(std::string_view key, std::int32_t kind) const {
        const Setting* s = find(key);
        if (s && s->kind != kind)
            return std::unexpected(invalid_setting(key, "setting '" + std::string(key) + "' must be " + kind_name(kind) + ", not " + kind_name(s->kind)));
        return s;
    }

    std::vector<Setting> items_;
};

struct RunnerConfig {
    std::string runner_name;
    std::string plugin_dir;
    Settings settings;
};

struct ProbeRun {
    bool spawned = false;
    int spawn_errno = 0;
    bool exited = false;
    int exit_code = -1;
    int signal = 0;
    bool timed_out = false;
    std::string stdout_text;
    std::string stderr_text;
};

// The verdict of the usual functional probe: the runner confined a harmless command,
// which must have ended with status 0. Otherwise unusable, with the reason: the
// runner's own first line on stderr, or what happened (`what` names the runner's
// program in those messages).
inline Verdict verdict_of(const std::expected<ProbeRun, Error>& run, std::string_view what) {
    if (!run) return Verdict::unusable(run.error().message);
    if (run->timed_out) return Verdict::unusable(std::string(what) + " probe timed out");
    if (!run->spawned) return Verdict::unusable("cannot start " + std::string(what) + ": " + std::strerror(run->spawn_errno));
    if (run->exited && run->exit_code == 0) return Verdict::full();
    std::string why = run->stderr_text.substr(0, run->stderr_text.find_first_of("\r\n"));
    if (why.empty())
        why = std::string(what) + (run->exited ? " ended with exit status " + std::to_string(run->exit_code)
                                               : " was killed by signal " + std::to_string(run->signal));
    return Verdict::unusable(why);
}

// The host's services, valid for the runner's lifetime.
class Host {
public:
    explicit Host(const confine_host* host) : host_(host) {}

    void log(std::int32_t level, const std::string& message) const {
        if (host_ && host_->log) host_->log(host_->context, level, message.c_str());
    }
    std::expected<ProbeRun, Error> run_probe(std::span<const std::string> argv,
                                             std::uint32_t timeout_ms) const {
        if (!host_ || !host_->run_probe) return std::unexpected(unsupported("host cannot run probes"));
        std::vector<const char*> ptrs;
        for (const auto& a : argv) ptrs.push_back(a.c_str());
        confine_probe_run run{};
        run.struct_size = sizeof run;
        confine_status st = host_->run_probe(host_->context, ptrs.data(), ptrs.size(), timeout_ms, &run);
        if (st != CONFINE_OK) return std::unexpected(Error{"host could not run the probe", st});
        ProbeRun out;
        out.spawned = run.spawned != 0;
        out.spawn_errno = run.spawn_errno;
        out.exited = run.exited != 0;
        out.exit_code = run.exit_code;
        out.signal = run.signal;
        out.timed_out = run.timed_out != 0;
        if (run.stdout_data) out.stdout_text.assign(run.stdout_data, run.stdout_size);
        if (run.stderr_data) out.stderr_text.assign(run.stderr_data, run.stderr_size);
        host_->release_probe_run(host_->context, &run);
        return out;
    }
    // Tells the host which setting the error create() is about to return is about, so
    // that it reports the error at that key (the SDK calls it for an Error with a
    // setting). A host older than ABI 1.9 does not ask, and is not told.
    void name_setting(const std::string& key) const {
        if (host_ && host_->struct_size >= offsetof(confine_host, setting_at_fault) + sizeof(host_->setting_at_fault) &&
            host_->setting_at_fault)
            host_->setting_at_fault(host_->context, key.c_str());
    }
    std::expected<std::string, Error> canonicalize(const std::string& path) const {
        if (!host_ || !host_->canonicalize_path) return std::unexpected(unsupported("host cannot canonicalise"));
        char* out = nullptr;
        char* err = nullptr;
        confine_status st = host_->canonicalize_path(host_->context, path.c_str(), &out, &err);
        std::string value = st == CONFINE_OK ? (out ? out : "") : (err ? err : "cannot canonicalise " + path);
        if (out) host_->free_string(host_->context, out);
        if (err) host_->free_string(host_->context, err);
        if (st != CONFINE_OK) return std::unexpected(Error{value, st});
        return value;
    }

private:
    const confine_host* host_;
};

// Base class of a runner. Implementations also provide
//   static std::expected<std::unique_ptr<Runner>, Error> create(Host, const RunnerConfig&);
class Runner {
public:
    virtual ~Runner() = default;
    virtual Verdict probe(std::uint32_t timeout_ms) = 0;
    virtual std::expected<WrapResult, Error> wrap(const Policy& policy,
                                                  std::span<const std::string> argv) = 0;
};

namespace detail {

inline char* dup_string(const std::string& s) noexcept {
    char* p = static_cast<char*>(std::malloc(s.size() + 1));
    if (p) std::memcpy(p, s.c_str(), s.size() + 1);
    return p;
}

inline void set_error(char** out_error, const std::string& message) noexcept {
    if (out_error) *out_error = dup_string(message);
}

// Keeps the strings a C view points into. The C struct is the base, so the free
// function recovers the owner with a static_cast.
class StringListHolder {
public:
    void assign(const std::vector<std::string>& values) {
        strings_ = values;
        pointers_.clear();
        for (const auto& s : strings_) pointers_.push_back(s.c_str());
    }
    confine_string_list view() const { return {pointers_.data(), pointers_.size()}; }

private:
    std::vector<std::string> strings_;
    std::vector<const char*> pointers_;
};

struct OwnedVerdict : confine_verdict {
    std::string reason_text;
};

struct OwnedWrapResult : confine_wrap_result {
    StringListHolder argv_holder, denial_holder, fatal_holder, info_holder;
    std::vector<std::int32_t> exit_codes;
    InProcess in_process;
    std::string status_marker, status_pid_key, dimensions_open;
    OwnedWrapResult() = default;
    OwnedWrapResult(const OwnedWrapResult&) = delete;
    OwnedWrapResult& operator=(const OwnedWrapResult&) = delete;
    ~OwnedWrapResult() {
        if (in_process.release) in_process.release(in_process.state);
    }
};

inline Settings settings_from(const confine_runner_config* config) {
    std::vector<Setting> items;
    for (std::size_t i = 0; config && i < config->settings_count; ++i) {
        const confine_setting& c = config->settings[i];
        Setting s;
        s.key = c.key ? c.key : "";
        s.kind = c.kind;
        if (c.string_value) s.string_value = c.string_value;
        s.integer_value = c.integer_value;
        s.boolean_value = c.boolean_value != 0;
        for (std::size_t j = 0; j < c.array_value.count; ++j)
            s.array_value.emplace_back(c.array_value.items[j] ? c.array_value.items[j] : "");
        items.push_back(std::move(s));
    }
    return Settings(std::move(items));
}

template <class F>
confine_status guarded(char** out_error, F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        set_error(out_error, "out of memory");
        return CONFINE_E_NO_MEMORY;
    } catch (const std::exception& e) {
        set_error(out_error, std::string("runner plugin threw an exception: ") + e.what());
        return CONFINE_E_INTERNAL;
    } catch (...) {
        set_error(out_error, "runner plugin threw an unknown exception");
        return CONFINE_E_INTERNAL;
    }
}

template <class R>
struct Entry {
    static confine_status create(const confine_host* host, const confine_runner_config* config,
                                 void** out_instance, char** out_error) noexcept {
        return guarded(out_error, [&]() -> confine_status {
            if (!out_instance) return CONFINE_E_INVALID_ARGUMENT;
            RunnerConfig rc;
            rc.runner_name = config && config->runner_name ? config->runner_name : "";
            rc.plugin_dir = config && config->plugin_dir ? config->plugin_dir : "";
            rc.settings = settings_from(config);
            auto made = R::create(Host(host), rc);
            if (!made) {
                if (!made.error().setting.empty()) Host(host).name_setting(made.error().setting);
                set_error(out_error, made.error().message);
                return made.error().code;
            }
            *out_instance = made->release();
            return CONFINE_OK;
        });
    }
    static void destroy(void* instance) noexcept {
        try {
            delete static_cast<Runner*>(instance);
        } catch (...) {
        }
    }
    static confine_status probe(void* instance, std::uint32_t timeout_ms, confine_verdict** out,
                                char** out_error) noexcept {
        return guarded(out_error, [&]() -> confine_status {
            if (!instance || !out) return CONFINE_E_INVALID_ARGUMENT;
            Verdict v = static_cast<Runner*>(instance)->probe(timeout_ms);
            auto owned = std::make_unique<OwnedVerdict>();
            owned->reason_text = std::move(v.reason);
            owned->struct_size = sizeof(confine_verdict);
            owned->kind = v.kind == Verdict::Kind::full      ? CONFINE_VERDICT_FULL
                          : v.kind == Verdict::Kind::partial ? CONFINE_VERDICT_PARTIAL
                                                             : CONFINE_VERDICT_UNUSABLE;
            owned->reason = owned->reason_text.c_str();
            *out = owned.release();
            return CONFINE_OK;
        });
    }
    static confine_status wrap(void* instance, const confine_policy* policy, const char* const* argv,
                               std::size_t argc, confine_wrap_result** out, char** out_error) noexcept {
        return guarded(out_error, [&]() -> confine_status {
            if (!instance || !policy || !out || (argc && !argv)) return CONFINE_E_INVALID_ARGUMENT;
            Policy p;
            p.mode = policy->mode == CONFINE_MODE_WORKSPACE_WRITE ? Mode::workspace_write : Mode::read_only;
            if (policy->workspace) p.workspace = policy->workspace;
            for (std::size_t i = 0; i < policy->writable.count; ++i)
                p.writable.emplace_back(policy->writable.items[i]);
            // A host older than ABI 1.5 asks nothing of the network.
            const bool says_network = policy->struct_size >= offsetof(confine_policy, network) + sizeof(policy->network);
            p.network = says_network && policy->network == CONFINE_NETWORK_NONE ? Network::none : Network::allow;
            // A host older than ABI 1.6 asks for neither kind of /tmp.
            const bool says_tmp = policy->struct_size >= offsetof(confine_policy, tmp) + sizeof(policy->tmp);
            p.tmp = !says_tmp ? Tmp::unsaid : policy->tmp == CONFINE_TMP_PRIVATE ? Tmp::private_ : policy->tmp == CONFINE_TMP_HOST ? Tmp::host : Tmp::unsaid;
            p.terminal = policy->struct_size >= offsetof(confine_policy, terminal) + sizeof(policy->terminal) && policy->terminal != 0;
            // A host older than ABI 1.7 asks for neither.
            if (policy->struct_size >= offsetof(confine_policy, protect) + sizeof(policy->protect)) {
                for (std::size_t i = 0; i < policy->deny_read.count; ++i) p.deny_read.emplace_back(policy->deny_read.items[i]);
                for (std::size_t i = 0; i < policy->protect.count; ++i) p.protect.emplace_back(policy->protect.items[i]);
            }
            // A host older than ABI 1.8 does not say where the command runs.
            if (policy->struct_size >= offsetof(confine_policy, working_directory) + sizeof(policy->working_directory) && policy->working_directory)
                p.working_directory = policy->working_directory;
            std::vector<std::string> args;
            for (std::size_t i = 0; i < argc; ++i) args.emplace_back(argv[i]);
            auto result = static_cast<Runner*>(instance)->wrap(p, args);
            if (!result) {
                set_error(out_error, result.error().message);
                return result.error().code;
            }
            auto owned = std::make_unique<OwnedWrapResult>();
            confine_wrap_result& c = *owned;
            c = confine_wrap_result{};
            c.struct_size = sizeof(confine_wrap_result);
            owned->argv_holder.assign(result->argv);
            owned->denial_holder.assign(result->denial_signatures);
            owned->fatal_holder.assign(result->failure_rule.fatal_signatures);
            owned->info_holder.assign(result->failure_rule.informational_lines);
            owned->exit_codes = result->failure_rule.evidence_exit_codes;
            c.argv = owned->argv_holder.view();
            c.enforcement = result->enforcement == Enforcement::partial ? CONFINE_ENFORCEMENT_PARTIAL
                                                                         : CONFINE_ENFORCEMENT_FULL;
            c.denial_signatures = owned->denial_holder.view();
            c.failure_rule.struct_size = sizeof(confine_failure_rule);
            c.failure_rule.evidence_exit_codes = owned->exit_codes.data();
            c.failure_rule.evidence_exit_codes_count = owned->exit_codes.size();
            c.failure_rule.fatal_signatures = owned->fatal_holder.view();
            c.failure_rule.informational_lines = owned->info_holder.view();
            switch (result->attestation.kind) {
            case Attestation::Kind::none: c.attestation = CONFINE_ATTESTATION_NONE; break;
            case Attestation::Kind::exec: c.attestation = CONFINE_ATTESTATION_EXEC; break;
            case Attestation::Kind::status_fd: c.attestation = CONFINE_ATTESTATION_STATUS_FD; break;
            }
            c.attestation_exec_index = result->attestation.exec_index;
            owned->status_marker = result->attestation.status_marker;
            c.attestation_status_argument = result->attestation.status_argument;
            c.attestation_status_marker = owned->status_marker.c_str();
            owned->status_pid_key = result->attestation.status_pid_key;
            c.attestation_status_pid_key = owned->status_pid_key.empty() ? nullptr : owned->status_pid_key.c_str();
            auto level = [](Level l) {
                return l == Level::full ? CONFINE_LEVEL_FULL : l == Level::partial ? CONFINE_LEVEL_PARTIAL : CONFINE_LEVEL_NONE;
            };
            // A partial enforcement is at best a partial write.
            const Level write = result->enforcement == Enforcement::partial && result->dimensions.write == Level::full ? Level::partial
                                                                                                              : result->dimensions.write;
            c.write_level = level(write);
            c.network_level = level(result->dimensions.network);
            c.processes_level = level(result->dimensions.processes);
            c.read_level = level(result->dimensions.read);
            c.protect_level = level(result->dimensions.protect);
            c.lifetime_level = level(result->dimensions.lifetime);
            owned->dimensions_open = result->dimensions.open;
            c.dimensions_open = owned->dimensions_open.c_str();
            c.tmp = result->tmp == Tmp::private_ ? CONFINE_TMP_PRIVATE : result->tmp == Tmp::host ? CONFINE_TMP_HOST : CONFINE_TMP_UNSAID;
            owned->in_process = result->in_process;
            c.in_process_apply = result->in_process.apply;
            c.in_process_state = result->in_process.state;
            *out = owned.release();
            return CONFINE_OK;
        });
    }
    static void free_verdict(confine_verdict* v) noexcept { delete static_cast<OwnedVerdict*>(v); }
    static void free_wrap_result(confine_wrap_result* r) noexcept {
        delete static_cast<OwnedWrapResult*>(r);
    }
    static void free_string(char* s) noexcept { std::free(s); }
};

template <class R>
constexpr confine_plugin_descriptor make_descriptor(const char* name, const char* version,
                                                    const char* summary) {
    return confine_plugin_descriptor{
        sizeof(confine_plugin_descriptor), name,          version,
        summary,                           &Entry<R>::create, &Entry<R>::destroy,
        &Entry<R>::probe,                  &Entry<R>::wrap,   &Entry<R>::free_verdict,
        &Entry<R>::free_wrap_result,       &Entry<R>::free_string,
    };
}

}  // namespace detail
}  // namespace confine::sdk

// Exports the two symbols the host looks for. Use once per plugin, at namespace scope.
#define CONFINE_RUNNER_PLUGIN(RunnerClass, name, version, summary)                              \
    extern "C" CONFINE_PLUGIN_EXPORT const confine_plugin_abi_info confine_plugin_abi = {      \
        CONFINE_ABI_MAGIC, CONFINE_ABI_MAJOR, CONFINE_ABI_MINOR,                                \
        sizeof(confine_plugin_descriptor)};                                                     \
    extern "C" CONFINE_PLUGIN_EXPORT const confine_plugin_descriptor confine_plugin =          \
        ::confine::sdk::detail::make_descriptor<RunnerClass>(name, version, summary);
