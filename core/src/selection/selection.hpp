// A provider's selection of its runner (docs/design.md §3): the configuration judged
// once against its plugins, the chain resolved (an asserted runner command, a chain of
// one, or probing in preference order with the verdict cache), each candidate held to the
// configuration's minimums by a wrap of a sample policy, and the later runners of the
// chain a call may need for an explicit ask. Provider::Impl, which the wrap of a call
// (provider.cpp) reads. Internal to libconfine.
#pragma once

#include <confine/provider.hpp>

#include "minimums.hpp"
#include "plugins/loader.hpp"
#include "verdict_cache.hpp"

#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace confine {

namespace detail {
// A runner created while its [runner.<name>] table was judged, kept for the provider.
struct Judged {
    std::filesystem::path file;
    std::unique_ptr<PluginRunner> runner;
};
}  // namespace detail

struct Provider::Impl {
    Config config;
    std::string platform;
    std::vector<std::filesystem::path> plugin_dirs;

    mutable std::once_flag once;
    mutable Selection selection;
    mutable std::unique_ptr<PluginRunner> selected;  // the selected runner's instance
    mutable std::mutex diagnose_mutex;         // one extra probe at a time
    mutable std::mutex loaded_mutex;
    mutable std::vector<std::string> loaded;

    std::optional<VerdictCacheOptions> cache_options;

    mutable std::once_flag judged_once;
    mutable std::optional<Error> misconfigured;  // the configuration error, if any
    mutable std::mutex judged_mutex;
    mutable std::map<std::string, detail::Judged> judged;  // runners created to judge their tables, not yet used

    // The configuration error that fails every use of this provider, judged once
    // (judge_runner_settings), or nullopt.
    const std::optional<Error>& configuration_error() const;

    // Locates, loads and creates one runner; an error says why it cannot be had.
    std::expected<std::unique_ptr<PluginRunner>, Error> open_runner(const std::string& name, std::filesystem::path& file) const;

    static Enforcement enforcement_of(const Verdict& v);

    void unavailable(Selection& s, std::string why) const;

    void resolve(Selection& s) const;

    // A chain of one: nothing to arbitrate, selected without probing. If it cannot be
    // loaded, there is nothing to run with either.
    void select_only(Selection& s) const;

    // A chain of several: the first usable runner in preference order; later ones are
    // neither loaded nor probed.
    void select_by_probing(Selection& s) const;

    // The sample policy below_minimums has a runner wrap, and its shape: what of the
    // configuration and the environment it is made of, under which the verdict cache
    // keeps the levels a wrap of it reported. `resolve`: the workspace resolved, as a
    // wrap needs it (the shape names it as the environment does).
    struct Sample {
        Policy policy;
        std::string shape;
    };
    Sample sample(bool resolve) const;

    // What `runner` reports of a wrap of the sample command for `s`, or nothing when it
    // cannot wrap it (a run's own wrap then says why, and runs nothing). A wrap is a pure
    // transformation: nothing runs.
    static std::optional<detail::SampleLevels> sample_levels(PluginRunner& runner, const Sample& s);

    // Why `runner` cannot be chosen for what the configuration asks (its network, its
    // minimums, docs/design.md §12), as a wrap of a sample command says what it enforces;
    // nullopt when it can, and then `weakest` becomes partial unless every dimension asked
    // is full.
    std::optional<std::string> below_minimums(PluginRunner& runner, std::optional<Enforcement>* weakest = nullptr) const;

    // The same from the levels a wrap of `sample` reported (a fresh wrap's, or the
    // verdict cache's): judged by the configuration as it is now.
    std::optional<std::string> below_minimums(const detail::SampleLevels& levels, const Policy& sample, std::optional<Enforcement>* weakest) const;

    // below_minimums for candidate `c` of a probing selection, whose verdict is kept in
    // `cache` under `key`: with a verdict from the cache, from the levels kept with it
    // for this sample, without a wrap; otherwise from a wrap, whose levels are kept.
    std::optional<std::string> below_minimums(PluginRunner& runner, const Candidate& c, const std::string& key,
                                              std::optional<detail::VerdictCache>& cache, std::optional<Enforcement>* weakest) const;

    // Why `runner`, whose wrap of the whole call is `wrapped`, cannot honour an explicit
    // ask of the call (docs/design.md §12), or nullopt. An explicit deny_read or protect
    // entry asks its dimension in full for its path, unless the configuration wrote a
    // lower minimum (Minimums::explicit_read). Where the whole wrap falls short, each
    // explicit entry is wrapped alone (with the call's roots) to find the one it cannot
    // honour: a default entry that the runner cannot enforce stays under the ordinary
    // minimum. A wrap is a pure transformation: nothing runs.
    std::optional<std::string> explicit_unmet(PluginRunner& runner, const WrapResult& wrapped, const Policy& policy, const detail::ExplicitAsks& asks,
                                              std::span<const std::string> argv) const;

    mutable std::mutex later_mutex;
    mutable std::map<std::string, std::unique_ptr<PluginRunner>> later;  // by name; null: cannot be used here

    // The runner `name` of the chain, past the selected one: loaded, probed usable and at the
    // configuration's minimums, or null (remembered either way).
    PluginRunner* later_runner(const std::string& name, std::filesystem::path& file) const;

    // The verdict on candidate `c`, whose runner is `runner`: from the cache if it holds
    // one, else probed (and a usable verdict kept). Its key in the cache.
    std::string verdict_for(Candidate& c, PluginRunner& runner, std::optional<detail::VerdictCache>& cache) const;
};

}  // namespace confine
