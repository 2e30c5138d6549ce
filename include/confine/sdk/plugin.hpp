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
    // Whether wrap() takes a policy with Network::proxy (ABI 1.11): one that lets the
    // command reach the run's proxy at Policy::proxy_port and nothing else. A runner that
    // leaves this false is never given such a policy (the SDK answers UNSUPPORTED for it).
    virtual bool handles_proxy() const { return false; }
};

}  // namespace confine::sdk

// The entry points CONFINE_RUNNER_PLUGIN exports, and the marshalling between the C ABI and
// the types above: not the author's API.
#include <confine/sdk/detail/entry.hpp>

// Exports the two symbols the host looks for. Use once per plugin, at namespace scope.
#define CONFINE_RUNNER_PLUGIN(RunnerClass, name, version, summary)                              \
    extern "C" CONFINE_PLUGIN_EXPORT const confine_plugin_abi_info confine_plugin_abi = {      \
        CONFINE_ABI_MAGIC, CONFINE_ABI_MAJOR, CONFINE_ABI_MINOR,                                \
        sizeof(confine_plugin_descriptor)};                                                     \
    extern "C" CONFINE_PLUGIN_EXPORT const confine_plugin_descriptor confine_plugin =          \
        ::confine::sdk::detail::make_descriptor<RunnerClass>(name, version, summary);
