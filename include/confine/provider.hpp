// The provider: resolves which runner confines on this platform, once, and wraps
// calls through it (design.md §3).
//
//   auto config = confine::load_config();                  // or parse_config(...)
//   auto provider = confine::Provider::create(std::move(*config));
//   const confine::Selection& s = (*provider)->selection();   // probed once, cached
//   if (!s.usable()) fail_closed(s.failure->message);         // SANDBOX_UNAVAILABLE
//   auto wrapped = (*provider)->wrap(request, argv);          // never unconfined
//
// The provider completes every call's policy (confine/policy.hpp): what the request leaves
// unsaid is the configuration's ([policy] network, tmp, deny_read, protect), for
// confinectl and library hosts alike.
//
// Failing closed is the rule on every path: no chain, an empty chain, no usable
// runner, a missing or refused plugin, a probe that times out — each yields
// SANDBOX_UNAVAILABLE, never a command run without confinement. A configuration error
// (a [runner.<name>] table its runner rejects, a plugin provided twice or refused as
// untrusted) is never a fallback: it is the failure, with its own code.
#pragma once

#include <confine/config.hpp>
#include <confine/error.hpp>
#include <confine/plugins.hpp>
#include <confine/policy.hpp>
#include <confine/wrap_result.hpp>

#include <chrono>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace confine {

// "linux", "darwin", "windows", "freebsd", … — the platform this binary runs on.
std::string_view current_platform() noexcept;

// The name a Selection gives the asserted runner command.
inline constexpr std::string_view asserted_runner_name = "runner_command";

// Usable probe verdicts kept across providers (and processes), per user, so that a
// chain's probes are not paid on every invocation. A verdict is reused only while the
// runner, its plugin file, its settings, the probe's time limit, the kernel and the
// user are unchanged, and for at most `max_age`. A stale verdict can only fail closed:
// the runner then fails when it runs. Unusable runners are always probed again.
struct VerdictCacheOptions {
    std::filesystem::path file;
    std::chrono::seconds max_age{3600};
    bool refresh = false;  // probe anyway, and keep what the probes say
};

// $XDG_CACHE_HOME/confine/verdicts, else $HOME/.cache/confine/verdicts; nullopt when
// neither variable is set.
std::optional<std::filesystem::path> default_verdict_cache_file();

// Why the asserted runner command that `config` sets for `platform`, if it sets one,
// cannot be trusted to confine (its program judged as every runner program is: see
// design.md §11), or nullopt. A run checks it again against its own writable roots.
std::optional<Error> untrusted_runner_command(const Config& config, std::string_view platform = current_platform());

// What of a configuration only its plugins can judge (docs/design.md §3), for `platform`:
// each runner that a [runner.<name>] table or the platform's chain names must be
// provided by one plugin file at most, and each table must be accepted by its runner
// (created with it). `error` is the first configuration error found
// (is_configuration_error(error->code)): the line `confinectl check-config` prints, and
// what fails every run closed. `unchecked` names, one line each, the tables that no
// plugin here could judge: a runner not installed here, or one that cannot work here —
// the same runner a chain would skip.
struct SettingsJudgement {
    std::optional<Error> error;
    std::vector<std::string> unchecked;
};
SettingsJudgement judge_runner_settings(const Config& config, const std::vector<std::filesystem::path>& plugin_dirs,
                                        std::string_view platform = current_platform());

struct ProviderOptions {
    std::optional<std::string> platform;  // default: current_platform()
    // Searched after the configuration's plugin_dirs, instead of the install's own
    // plugin directory. Default: builtin_plugin_dir(), the one beside the running binary.
    // A program built against an installed confine names that installation's here:
    // installed_plugin_dirs() (plugins.hpp).
    std::optional<std::vector<std::filesystem::path>> builtin_plugin_dirs;
    // Unset: every provider probes its chain afresh.
    std::optional<VerdictCacheOptions> verdict_cache;
};

// One runner of the chain, as selection saw it.
struct Candidate {
    std::string runner;
    std::filesystem::path plugin_file;  // empty when no file could be located
    bool probed = false;
    bool from_cache = false;            // the verdict came from the verdict cache, not a probe
    std::optional<Verdict> verdict;     // set when probed or cached, or unusable because it could not be loaded
};

struct Selection {
    std::string platform;
    std::vector<std::string> chain;
    bool asserted = false;                   // runner_command replaced the chain
    std::vector<std::string> runner_command;
    std::vector<Candidate> candidates;       // in chain order, up to the selected one
    std::optional<std::string> runner;       // the selected runner
    bool selected_without_probe = false;     // a chain of one, or an asserted command
    std::optional<Enforcement> enforcement;  // known when probed or asserted
    // Why nothing is selected: SANDBOX_UNAVAILABLE, or — when the configuration itself is
    // wrong (is_configuration_error) — that error, which no chain falls back from.
    std::optional<Error> failure;

    bool usable() const noexcept { return runner.has_value(); }
};

namespace detail {
struct CompletedWrap;  // run() and spawn()'s way to Provider::wrap_completed (libconfine's own)
}

class Provider {
public:
    static std::expected<std::unique_ptr<Provider>, Error> create(Config config, ProviderOptions options = {});
    ~Provider();
    Provider(const Provider&) = delete;
    Provider& operator=(const Provider&) = delete;

    // Resolved on first use and cached for the provider's lifetime (an unusable
    // outcome too). Safe to call from many threads; the chain is probed once.
    const Selection& selection() const;

    // Like selection(), but a runner that was selected without a probe (a chain of
    // one) is probed as well, so that the answer says whether a run would work.
    // Does not change the cached selection. For `confinectl probe`.
    Selection diagnose() const;

    // The policy a call of this provider gets: complete_policy() with its configuration.
    Policy complete(const PolicyRequest& request, const RunContext& context = {}) const;

    // The wrap of one call through the selected runner, its policy completed (complete()).
    // SANDBOX_UNAVAILABLE when nothing is selected, the runner cannot wrap, or cannot give
    // what the completed policy asks ([policy] tmp, an explicit deny_read or protect);
    // INVALID_POLICY for a bad policy.
    std::expected<WrapResult, Error> wrap(const PolicyRequest& request, std::span<const std::string> argv,
                                          const RunContext& context = {}) const;

    // The wrap a named runner would give, whatever the chain says and whether or not it
    // could run here: loaded with its [runner.<name>] settings, not probed. For review
    // (for example the Seatbelt profile a policy gets, printed on any OS); running the
    // result is the caller's responsibility.
    std::expected<WrapResult, Error> wrap_with(std::string_view runner, const PolicyRequest& request,
                                               std::span<const std::string> argv, const RunContext& context = {}) const;

    const Config& config() const noexcept;
    const std::vector<std::filesystem::path>& plugin_dirs() const noexcept;
    // Runner names whose plugin files were loaded so far, in load order.
    std::vector<std::string> loaded_plugins() const;

private:
    friend struct detail::CompletedWrap;
    // wrap() of `completed`, which complete() made of `request` (run() and spawn() place
    // their proxy's port in it first): the one completion of a run.
    std::expected<WrapResult, Error> wrap_completed(const PolicyRequest& request, const Policy& completed,
                                                    std::span<const std::string> argv) const;

    struct Impl;
    explicit Provider(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace confine
