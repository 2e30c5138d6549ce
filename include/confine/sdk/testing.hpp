// Unit-testing a runner without confine: a fake host that hands a runner the same C
// services confine does (confine_host), records what the runner asks of it, and answers
// run_probe and canonicalize_path as the test scripts them.
//
//   #include <confine/sdk/testing.hpp>
//   namespace sdk = confine::sdk;
//
//   sdk::testing::FakeHost host;
//   host.answer_probes(sdk::testing::exited(1, "bwrap: No permissions to create new namespace\n"));
//   auto runner = sdk::testing::create<MyRunner>(host, {sdk::testing::string_setting("program", "/usr/bin/x")});
//   REQUIRE(runner);
//   auto verdict = (*runner)->probe(1000);
//   CHECK(verdict.reason == "bwrap: No permissions to create new namespace");
//   CHECK(host.probes().at(0).argv.front() == "/usr/bin/x");
//
//   const std::vector<std::string> command{"make", "test"};
//   auto wrapped = (*runner)->wrap(policy, command);
//   REQUIRE(wrapped);
//   CHECK_FALSE(sdk::testing::check_wrap_result(*wrapped, command));  // confine would run it
//
// create<R>() goes through the plugin's own C entry point (what CONFINE_RUNNER_PLUGIN
// exports), so a test sees what confine would: the settings as the C ABI carries them,
// and the setting an error names (FakeHost::setting_at_fault). The runner's probe() and
// wrap() are then called directly, or wrap() through the C entry point with a policy laid
// out as an older host lays it out (wrap_through_abi). check_wrap_result() refuses a wrap
// result as confine does, with confine's own check. Nothing here spawns a process.
#pragma once

#include <confine/sdk/plugin.hpp>
#include <confine/sdk/wrap_check.hpp>

#include <cerrno>
#include <functional>
#include <map>

namespace confine::sdk::testing {

// One call of run_probe, as the runner made it.
struct ProbeCall {
    std::vector<std::string> argv;
    std::uint32_t timeout_ms = 0;
};

// One line the runner logged.
struct LogLine {
    std::int32_t level = CONFINE_LOG_INFO;  // CONFINE_LOG_*
    std::string message;
};

// What a probe command did, for FakeHost::answer_probes: it exited with `code`, having
// written `stderr_text` (and `stdout_text`).
inline ProbeRun exited(int code, std::string stderr_text = {}, std::string stdout_text = {}) {
    ProbeRun run;
    run.spawned = true;
    run.exited = true;
    run.exit_code = code;
    run.stderr_text = std::move(stderr_text);
    run.stdout_text = std::move(stdout_text);
    return run;
}
// ... it was killed by `signal`.
inline ProbeRun killed(int signal) {
    ProbeRun run;
    run.spawned = true;
    run.signal = signal;
    return run;
}
// ... it could not be started (errno `error`, e.g. ENOENT).
inline ProbeRun not_started(int error = ENOENT) {
    ProbeRun run;
    run.spawn_errno = error;
    return run;
}
// ... the time limit killed it.
inline ProbeRun timed_out() {
    ProbeRun run;
    run.spawned = true;
    run.timed_out = true;
    return run;
}

// `[runner.<name>]` values, as confine passes them.
inline Setting string_setting(std::string key, std::string value) {
    Setting s;
    s.key = std::move(key);
    s.kind = CONFINE_SETTING_STRING;
    s.string_value = std::move(value);
    return s;
}
inline Setting int_setting(std::string key, std::int64_t value) {
    Setting s;
    s.key = std::move(key);
    s.kind = CONFINE_SETTING_INTEGER;
    s.integer_value = value;
    return s;
}
inline Setting bool_setting(std::string key, bool value) {
    Setting s;
    s.key = std::move(key);
    s.kind = CONFINE_SETTING_BOOLEAN;
    s.boolean_value = value;
    return s;
}
inline Setting strings_setting(std::string key, std::vector<std::string> value) {
    Setting s;
    s.key = std::move(key);
    s.kind = CONFINE_SETTING_STRING_ARRAY;
    s.array_value = std::move(value);
    return s;
}

// A confine_host for tests. Not copyable or movable: the runner keeps a pointer to it,
// so it must outlive every runner created with it.
class FakeHost {
public:
    // How run_probe answers: a run, or an Error when the host itself cannot run it.
    using ProbeAnswer = std::function<std::expected<ProbeRun, Error>(const ProbeCall&)>;
    using CanonicalAnswer = std::function<std::expected<std::string, Error>(const std::string&)>;

    FakeHost() {
        host_.struct_size = sizeof host_;
        host_.abi_major = CONFINE_ABI_MAJOR;
        host_.abi_minor = CONFINE_ABI_MINOR;
        host_.context = this;
        host_.log = &FakeHost::log_entry;
        host_.run_probe = &FakeHost::run_probe_entry;
        host_.release_probe_run = &FakeHost::release_entry;
        host_.canonicalize_path = &FakeHost::canonicalize_entry;
        host_.free_string = &FakeHost::free_entry;
        host_.setting_at_fault = &FakeHost::setting_entry;
    }
    FakeHost(const FakeHost&) = delete;
    FakeHost& operator=(const FakeHost&) = delete;

    // The host services, as the runner's create() receives them.
    Host host() const { return Host(&host_); }
    const confine_host* c_host() const { return &host_; }

    // Every probe command gets `run`. Until a test says, run_probe fails (the host
    // cannot run probes), as a probe must cope with.
    void answer_probes(ProbeRun run) {
        probe_answer_ = [run = std::move(run)](const ProbeCall&) -> std::expected<ProbeRun, Error> { return run; };
    }
    // Each probe command gets what `answer` says of it.
    void answer_probes(ProbeAnswer answer) { probe_answer_ = std::move(answer); }
    // canonicalize_path: `path` resolves to `canonical`; a path not named fails, as a
    // path that does not exist does.
    void canonical(std::string path, std::string canonical) { canonical_[std::move(path)] = std::move(canonical); }

    const std::vector<ProbeCall>& probes() const { return probes_; }
    const std::vector<LogLine>& log_lines() const { return log_; }
    const std::vector<std::string>& canonicalized() const { return canonicalized_; }
    // The key the runner's last failed create() named (empty: none).
    const std::string& setting_at_fault() const { return setting_at_fault_; }
    void forget_setting_at_fault() { setting_at_fault_.clear(); }

private:
    static FakeHost& self(void* context) { return *static_cast<FakeHost*>(context); }
    static char* copy(const std::string& s) { return detail::dup_string(s); }

    static void log_entry(void* context, std::int32_t level, const char* message) {
        self(context).log_.push_back({level, message ? message : ""});
    }
    static confine_status run_probe_entry(void* context, const char* const* argv, std::size_t argc, std::uint32_t timeout_ms,
                                          confine_probe_run* out) {
        FakeHost& h = self(context);
        if (!out || !argv || argc == 0) return CONFINE_E_INVALID_ARGUMENT;
        ProbeCall call{{}, timeout_ms};
        for (std::size_t i = 0; i < argc; ++i) call.argv.emplace_back(argv[i] ? argv[i] : "");
        h.probes_.push_back(call);
        if (!h.probe_answer_) return CONFINE_E_UNSUPPORTED;
        auto answer = h.probe_answer_(call);
        if (!answer) return answer.error().code;
        *out = confine_probe_run{};
        out->struct_size = sizeof *out;
        out->spawned = answer->spawned;
        out->spawn_errno = answer->spawn_errno;
        out->exited = answer->exited;
        out->exit_code = answer->exit_code;
        out->signal = answer->signal;
        out->timed_out = answer->timed_out;
        out->stdout_data = copy(answer->stdout_text);
        out->stdout_size = answer->stdout_text.size();
        out->stderr_data = copy(answer->stderr_text);
        out->stderr_size = answer->stderr_text.size();
        return CONFINE_OK;
    }
    static void release_entry(void*, confine_probe_run* run) {
        if (!run) return;
        std::free(const_cast<char*>(run->stdout_data));
        std::free(const_cast<char*>(run->stderr_data));
        run->stdout_data = run->stderr_data = nullptr;
    }
    static confine_status canonicalize_entry(void* context, const char* path, char** out_path, char** out_error) {
        FakeHost& h = self(context);
        if (out_path) *out_path = nullptr;
        if (out_error) *out_error = nullptr;
        if (!path || !out_path) return CONFINE_E_INVALID_ARGUMENT;
        h.canonicalized_.emplace_back(path);
        auto it = h.canonical_.find(path);
        if (it == h.canonical_.end()) {
            if (out_error) *out_error = copy(std::string(path) + ": No such file or directory");
            return CONFINE_E_FAILED;
        }
        *out_path = copy(it->second);
        return CONFINE_OK;
    }
    static void free_entry(void*, char* s) { std::free(s); }
    static void setting_entry(void* context, const char* key) { self(context).setting_at_fault_ = key ? key : ""; }

    confine_host host_{};
    ProbeAnswer probe_answer_;
    std::map<std::string, std::string> canonical_;
    std::vector<ProbeCall> probes_;
    std::vector<LogLine> log_;
    std::vector<std::string> canonicalized_;
    std::string setting_at_fault_;
};

// Creates an R through its C entry point, as confine does, with `settings` as its
// `[runner.<name>]` table. On failure, the error's `setting` is the key R named to the
// host (FakeHost::setting_at_fault).
template <class R>
std::expected<std::unique_ptr<Runner>, Error> create(FakeHost& host, const std::vector<Setting>& settings,
                                                     std::string runner_name = "test", std::string plugin_dir = {}) {
    std::vector<confine_setting> c_settings;
    std::vector<std::vector<const char*>> arrays;
    arrays.reserve(settings.size());
    for (const Setting& s : settings) {
        confine_setting c{};
        c.key = s.key.c_str();
        c.kind = s.kind;
        c.string_value = s.string_value.c_str();
        c.integer_value = s.integer_value;
        c.boolean_value = s.boolean_value ? 1 : 0;
        auto& items = arrays.emplace_back();
        for (const auto& v : s.array_value) items.push_back(v.c_str());
        c.array_value = {items.data(), items.size()};
        c_settings.push_back(c);
    }
    confine_runner_config config{};
    config.struct_size = sizeof config;
    config.runner_name = runner_name.c_str();
    config.plugin_dir = plugin_dir.c_str();
    config.settings = c_settings.data();
    config.settings_count = c_settings.size();
    void* instance = nullptr;
    char* error = nullptr;
    host.forget_setting_at_fault();
    const confine_status st = detail::Entry<R>::create(host.c_host(), &config, &instance, &error);
    if (st != CONFINE_OK || !instance) {
        Error e{error ? error : "create failed without a message", st == CONFINE_OK ? CONFINE_E_FAILED : st, host.setting_at_fault()};
        std::free(error);
        return std::unexpected(std::move(e));
    }
    return std::unique_ptr<Runner>(static_cast<Runner*>(instance));
}

// Why confine would refuse `result` as the wrap of `command` and run nothing
// (PLUGIN_BAD_RESULT), in the one line it says, or nullopt when it would accept it: the
// host's own check (sdk::wrap_result_refusal, confine/sdk/wrap_check.hpp) — the argv ends
// with "--" and the command verbatim, the attestation's exec index or status argument,
// marker and key are well formed, every placeholder is well formed and in its place, no
// list is longer than the host reads.
inline std::optional<std::string> check_wrap_result(const WrapResult& result, std::span<const std::string> command) {
    return wrap_result_refusal(result, command);
}

// Calls `runner`'s wrap through the plugin's C entry point, as confine does, with a host's
// `policy` in C, of any ABI 1.x layout: its struct_size says which (CONFINE_POLICY_SIZE_1_0,
// _1_5, _1_6, _1_7, or sizeof(confine_policy)), so that a test can hand the runner an older
// host's shorter policy and see that each field that host did not know reads as it meant
// it. The argv the host would run, or the error the entry point returned.
inline std::expected<std::vector<std::string>, Error> wrap_through_abi(Runner& runner, const confine_policy& policy,
                                                                       const std::vector<std::string>& argv) {
    std::vector<const char*> args;
    for (const auto& a : argv) args.push_back(a.c_str());
    confine_wrap_result* result = nullptr;
    char* error = nullptr;
    using C = detail::Entry<Runner>;
    const confine_status st = C::wrap(&runner, &policy, args.data(), args.size(), &result, &error);
    if (st != CONFINE_OK) {
        Error e{error ? error : "wrap failed without a message", st};
        C::free_string(error);
        if (result) C::free_wrap_result(result);
        return std::unexpected(std::move(e));
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; result && i < result->argv.count; ++i) out.emplace_back(result->argv.items[i]);
    if (result) C::free_wrap_result(result);
    return out;
}

}  // namespace confine::sdk::testing
