#include "selection.hpp"

#include <confine/config.hpp>

#include "log.hpp"
#include "roots.hpp"

#include <cstdlib>
#include <tuple>

namespace fs = std::filesystem;

namespace confine {

using detail::explicit_asks;
using detail::ExplicitAsk;
using detail::ExplicitAsks;
using detail::meets;
using detail::meets_minimums;
using detail::name_of;

namespace {

// judge_runner_settings, keeping in `keep` (when given) the runners it created.
SettingsJudgement judge(const Config& config, const std::vector<fs::path>& plugin_dirs, std::string_view platform,
                        std::map<std::string, detail::Judged>* keep) {
    SettingsJudgement out;
    std::vector<std::string> names;
    for (const auto& [name, table] : config.runners) names.push_back(name);
    if (const auto pit = config.platforms.find(std::string(platform)); pit != config.platforms.end())
        for (const auto& name : pit->second.chain)
            if (!config.runners.contains(name)) names.push_back(name);
    const PluginSearch search(plugin_dirs);
    for (const auto& name : names) {
        const auto table = config.runners.find(name);
        const bool has_table = table != config.runners.end();
        auto unchecked = [&](const std::string& why) {
            if (has_table) out.unchecked.push_back(to_string(table->second.where) + ": runner." + name + ": " + why);
        };
        // Not there is not installed here; found twice is the configuration's (its
        // plugin_dirs) fault, whichever runner the chain would pick.
        auto located = search.locate(name);
        if (!located) {
            if (is_configuration_error(located.error().code)) {
                out.error = located.error();
                return out;
            }
            unchecked("no plugin here to check its settings against");
            continue;
        }
        if (!has_table) continue;
        auto plugin = load_plugin(*located, name);
        if (!plugin) {
            if (is_configuration_error(plugin.error().code)) {
                out.error = plugin.error();
                return out;
            }
            unchecked("its plugin cannot be loaded here, so its settings are not checked: " + plugin.error().message);
            continue;
        }
        auto runner = (*plugin)->create_runner(&table->second);
        if (!runner) {
            if (is_configuration_error(runner.error().code)) {
                out.error = runner.error();
                return out;
            }
            unchecked("its runner cannot work here, so its settings are not checked: " + runner.error().message);
            continue;
        }
        if (keep) keep->insert_or_assign(name, detail::Judged{*located, std::move(*runner)});
    }
    return out;
}

}  // namespace

SettingsJudgement judge_runner_settings(const Config& config, const std::vector<fs::path>& plugin_dirs, std::string_view platform) {
    return judge(config, plugin_dirs, platform, nullptr);
}

const std::optional<Error>& Provider::Impl::configuration_error() const {
    std::call_once(judged_once, [this] {
        std::map<std::string, detail::Judged> kept;
        auto judgement = judge(config, plugin_dirs, platform, &kept);
        misconfigured = std::move(judgement.error);
        std::lock_guard lock(loaded_mutex);
        for (const auto& [name, j] : kept) loaded.push_back(name);
        std::lock_guard held(judged_mutex);
        judged = std::move(kept);
    });
    return misconfigured;
}

std::expected<std::unique_ptr<PluginRunner>, Error> Provider::Impl::open_runner(const std::string& name, fs::path& file) const {
    {
        std::lock_guard lock(judged_mutex);
        if (auto it = judged.find(name); it != judged.end()) {
            file = it->second.file;
            auto runner = std::move(it->second.runner);
            judged.erase(it);
            return runner;
        }
    }
    auto located = PluginSearch(plugin_dirs).locate(name);
    if (!located) return std::unexpected(located.error());
    file = *located;
    auto plugin = load_plugin(file, name);
    if (!plugin) return std::unexpected(plugin.error());
    {
        std::lock_guard lock(loaded_mutex);
        loaded.push_back(name);
    }
    const auto it = config.runners.find(name);
    return (*plugin)->create_runner(it == config.runners.end() ? nullptr : &it->second);
}

Enforcement Provider::Impl::enforcement_of(const Verdict& v) {
    return v.kind == Verdict::Kind::partial ? Enforcement::partial : Enforcement::full;
}

void Provider::Impl::unavailable(Selection& s, std::string why) const {
    s.failure = Error{ErrorCode::sandbox_unavailable, std::move(why)};
}

void Provider::Impl::resolve(Selection& s) const {
    s.platform = platform;
    const auto pit = config.platforms.find(platform);
    if (pit == config.platforms.end()) {
        unavailable(s, "no runner chain is configured for platform '" + platform + "' (" + config.source + ")");
        return;
    }
    const PlatformConfig& pc = pit->second;
    if (pc.runner_command.empty()) s.chain = pc.chain;
    // A configuration error is never a fallback: not to another runner, not to the
    // asserted command (docs/design.md §3).
    if (const auto& bad = configuration_error()) {
        s.failure = *bad;
        return;
    }
    if (!pc.runner_command.empty()) {
        // An operator's assertion: never probed, trusted to confine fully. A missing
        // command still fails closed when it is executed.
        s.asserted = true;
        s.runner_command = pc.runner_command;
        s.runner = std::string(asserted_runner_name);
        s.selected_without_probe = true;
        s.enforcement = Enforcement::full;
        if (auto bad = untrusted_runner_command(config, platform)) {
            s.failure = *bad;
            s.runner.reset();
        }
        return;
    }
    s.chain = pc.chain;
    if (s.chain.empty()) {
        unavailable(s, "the runner chain for platform '" + platform + "' is empty (" + config.source + ")");
        return;
    }
    if (s.chain.size() == 1) {
        select_only(s);
        return;
    }
    select_by_probing(s);
}

void Provider::Impl::select_only(Selection& s) const {
    Candidate c{s.chain.front(), {}, false, false, std::nullopt};
    auto runner = open_runner(c.runner, c.plugin_file);
    if (!runner) {
        c.verdict = Verdict{Verdict::Kind::unusable, runner.error().message};
        s.candidates.push_back(c);
        if (is_configuration_error(runner.error().code)) s.failure = runner.error();
        else unavailable(s, "runner '" + c.runner + "' cannot be used: " + runner.error().message);
        return;
    }
    s.candidates.push_back(c);
    s.runner = c.runner;
    s.selected_without_probe = true;
    selected = std::move(*runner);
}

void Provider::Impl::select_by_probing(Selection& s) const {
    std::optional<detail::VerdictCache> cache;
    if (cache_options) cache.emplace(cache_options->file, cache_options->max_age);
    std::string reasons;
    for (const std::string& name : s.chain) {
        Candidate c{name, {}, false, false, std::nullopt};
        auto runner = open_runner(name, c.plugin_file);
        if (!runner) {
            c.verdict = Verdict{Verdict::Kind::unusable, runner.error().message};
            // Only a runner that cannot work here is skipped; a configuration error
            // stops the chain where it is.
            if (is_configuration_error(runner.error().code)) {
                s.candidates.push_back(c);
                if (cache) cache->save();
                s.failure = runner.error();
                return;
            }
        }
        const std::string key = runner ? verdict_for(c, **runner, cache) : std::string();
        // Usable, but below a dimension's minimum: skipped, with that reason.
        std::optional<Enforcement> sampled;
        if (c.verdict->usable())
            if (auto below = below_minimums(**runner, c, key, cache, &sampled)) c.verdict = Verdict{Verdict::Kind::unusable, std::move(*below)};
        s.candidates.push_back(c);
        if (c.verdict->usable()) {
            s.runner = name;
            s.enforcement = sampled ? *sampled : enforcement_of(*c.verdict);
            selected = std::move(*runner);
            if (cache) cache->save();
            return;
        }
        reasons += (reasons.empty() ? "" : "; ") + name + ": " + c.verdict->reason;
    }
    if (cache) cache->save();
    unavailable(s, "no usable runner for platform '" + platform + "': " + reasons);
}

Provider::Impl::Sample Provider::Impl::sample(bool resolve) const {
    Sample s{Policy{Mode::read_only, {}, {}, config.network, config.tmp}, {}};
    Policy& sample = s.policy;
    // The proxy's port is a run's; a sample only needs one a runner would take.
    if (sample.network == Network::proxy) {
        sample.allow_hosts = config.allow_hosts;
        sample.proxy_port = 3128;
    }
    fs::path temp;
    // Paths to deny and to protect when the configuration has some: a workspace that
    // exists everywhere (a runner may open it to build its rules), and paths made up
    // beneath it, since a wrap only names those.
    if (!config.deny_read.empty() || !config.protect.empty()) {
        std::error_code ec;
        temp = fs::temp_directory_path(ec);
        if (!ec && temp.is_absolute()) {
            sample.mode = Mode::workspace_write;
            sample.workspace = resolve ? fs::canonical(temp, ec) : temp;
            if (ec) sample.workspace = temp;
        }
        if (!config.deny_read.empty()) sample.deny_read = {sample.workspace.empty() ? fs::path("/confine-sample-secrets") : sample.workspace.root_path() / "confine-sample-secrets"};
        if (!config.protect.empty()) sample.protect = {sample.workspace / "confine-sample" / ".git" / "hooks"};
    }
    s.shape = "network " + std::string(to_string(config.network)) + ", tmp " + std::string(to_string(config.tmp)) +
              ", workspace " + (sample.mode == Mode::workspace_write ? temp.string() : std::string("none")) + ", deny_read " +
              (sample.deny_read.empty() ? "no" : "yes") + ", protect " + (sample.protect.empty() ? "no" : "yes");
    return s;
}

std::optional<detail::SampleLevels> Provider::Impl::sample_levels(PluginRunner& runner, const Sample& s) {
    const std::vector<std::string> argv{"true"};
    auto wrapped = runner.wrap(s.policy, argv);
    if (!wrapped) return std::nullopt;
    return detail::SampleLevels{s.shape, wrapped->runner, wrapped->enforcement, wrapped->dimensions, wrapped->tmp, wrapped->attestation.kind};
}

std::optional<std::string> Provider::Impl::below_minimums(PluginRunner& runner, std::optional<Enforcement>* weakest) const {
    const Sample s = sample(true);
    const auto levels = sample_levels(runner, s);
    if (!levels) return std::nullopt;
    return below_minimums(*levels, s.policy, weakest);
}

std::optional<std::string> Provider::Impl::below_minimums(const detail::SampleLevels& levels, const Policy& sample, std::optional<Enforcement>* weakest) const {
    WrapResult wrapped;
    wrapped.runner = levels.runner;
    wrapped.enforcement = levels.enforcement;
    wrapped.dimensions = levels.dimensions;
    wrapped.tmp = levels.tmp;
    wrapped.attestation.kind = levels.attestation;
    auto checked = meets_minimums(std::move(wrapped), sample, config);
    if (!checked) return checked.error().message;
    // What the configuration file asks explicitly (docs/design.md §12): the sample's
    // paths stand for its entries, a protected one inside the workspace as its
    // relative entries are in every writable root.
    const ExplicitAsks asks = explicit_asks(PolicyRequest{}, config);
    for (const auto& [dimension, level, need, entries] :
         {std::tuple{"read", checked->dimensions.read, config.minimums.explicit_read.value_or(Minimum::full), &asks.read},
          std::tuple{"protect", checked->dimensions.protect, config.minimums.explicit_protect.value_or(Minimum::full), &asks.protect}})
        if (!entries->empty() && !meets(level, need))
            return "runner '" + checked->runner + "' enforces " + dimension + " at level " + std::string(to_string(level)) + ", and " +
                   entries->front().said + " asks " + dimension + " explicitly (at level " + std::string(name_of(need)) + ")";
    if (weakest && checked->enforcement == Enforcement::partial) *weakest = Enforcement::partial;
    return std::nullopt;
}

PluginRunner* Provider::Impl::later_runner(const std::string& name, fs::path& file) const {
    std::lock_guard lock(later_mutex);
    if (auto it = later.find(name); it != later.end()) {
        if (it->second) file = it->second->plugin().file;
        return it->second.get();
    }
    std::unique_ptr<PluginRunner> usable;
    if (auto opened = open_runner(name, file)) {
        const Verdict verdict = (*opened)->probe(config.probe_timeout_ms);
        if (verdict.usable() && !below_minimums(**opened)) usable = std::move(*opened);
        detail::log_debug("runner {}: {}{}{}", name, usable ? "usable" : "unusable", verdict.reason.empty() ? "" : ": ", verdict.reason);
    }
    PluginRunner* out = usable.get();
    later.insert_or_assign(name, std::move(usable));
    return out;
}

std::string Provider::Impl::verdict_for(Candidate& c, PluginRunner& runner, std::optional<detail::VerdictCache>& cache) const {
    const auto settings = config.runners.find(c.runner);
    const std::string key = cache ? detail::VerdictCache::key(c.runner, c.plugin_file,
                                                              settings == config.runners.end() ? nullptr : &settings->second,
                                                              config.probe_timeout_ms)
                                  : std::string();
    std::optional<Verdict> cached = cache && !cache_options->refresh ? cache->find(key) : std::nullopt;
    if (cached) {
        c.verdict = cached;
        c.from_cache = true;
        return key;
    }
    c.probed = true;
    c.verdict = runner.probe(config.probe_timeout_ms);
    // Only usable verdicts are kept: one that turns stale fails closed when the
    // runner runs, while a runner found unusable is simply asked again next time.
    if (cache && c.verdict->usable()) cache->store(key, *c.verdict, runner.probed_programs());
    return key;
}

std::optional<std::string> Provider::Impl::below_minimums(PluginRunner& runner, const Candidate& c, const std::string& key,
                                                          std::optional<detail::VerdictCache>& cache, std::optional<Enforcement>* weakest) const {
    if (!cache) return below_minimums(runner, weakest);
    if (c.from_cache) {
        const Sample named = sample(false);
        if (auto kept = cache->levels(key, named.shape)) return below_minimums(*kept, named.policy, weakest);
    }
    const Sample s = sample(true);
    const auto levels = sample_levels(runner, s);
    if (!levels) return std::nullopt;
    cache->store_levels(key, *levels);
    return below_minimums(*levels, s.policy, weakest);
}

std::optional<std::string> Provider::Impl::explicit_unmet(PluginRunner& runner, const WrapResult& wrapped, const Policy& policy, const ExplicitAsks& asks,
                                                          std::span<const std::string> argv) const {
    struct Dimension {
        const char* dimension;
        Level level;
        Minimum need;
        const std::vector<ExplicitAsk>& entries;
        bool read;
    };
    const Dimension dimensions[] = {
        {"read", wrapped.dimensions.read, config.minimums.explicit_read.value_or(Minimum::full), asks.read, true},
        {"protect", wrapped.dimensions.protect, config.minimums.explicit_protect.value_or(Minimum::full), asks.protect, false},
    };
    for (const auto& d : dimensions) {
        if (d.entries.empty() || meets(d.level, d.need)) continue;
        for (const auto& ask : d.entries) {
            Policy one = policy;
            one.deny_read.clear();
            one.protect.clear();
            (d.read ? one.deny_read : one.protect) = {ask.entry};
            auto resolved = detail::resolve_policy(one);
            if (!resolved) return resolved.error().message;
            const auto& paths = d.read ? resolved->deny_read : resolved->protect;
            if (paths.empty()) continue;  // nothing there to deny or protect
            auto alone = runner.wrap(*resolved, argv);
            if (!alone) return alone.error().message;
            const Level level = d.read ? alone->dimensions.read : alone->dimensions.protect;
            if (meets(level, d.need)) continue;
            std::string path;
            for (const auto& p : paths) path += (path.empty() ? "" : ", ") + p.string();
            const std::string open = open_about(alone->dimensions.open, d.dimension);
            return "runner '" + alone->runner + "' cannot " + (d.read ? "keep " + path + " unreadable" : "keep " + path + " read-only") +
                   ", which " + ask.said + " asks explicitly: it enforces " + d.dimension + " there at level " + std::string(to_string(level)) +
                   (open.empty() ? std::string() : " (" + open + ")") + " ([policy.enforcement] " + d.dimension + " = \"" +
                   std::string(name_of(level == Level::partial ? Minimum::partial : Minimum::best_effort)) + "\" would accept it)";
        }
    }
    return std::nullopt;
}

Provider::Provider(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Provider::~Provider() = default;

std::expected<std::unique_ptr<Provider>, Error> Provider::create(Config config, ProviderOptions options) {
    auto impl = std::make_unique<Impl>();
    impl->platform = options.platform ? *options.platform : std::string(current_platform());
    impl->plugin_dirs = config.plugin_dirs;
    if (options.builtin_plugin_dirs) {
        for (const auto& d : *options.builtin_plugin_dirs) impl->plugin_dirs.push_back(d);
    } else if (fs::path builtin = builtin_plugin_dir(); !builtin.empty()) {
        impl->plugin_dirs.push_back(builtin);
    }
    impl->config = std::move(config);
    impl->cache_options = std::move(options.verdict_cache);
    return std::unique_ptr<Provider>(new Provider(std::move(impl)));
}

std::optional<fs::path> default_verdict_cache_file() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg && *xdg == '/') return fs::path(xdg) / "confine" / "verdicts";
    const char* home = std::getenv("HOME");
    if (home && *home == '/') return fs::path(home) / ".cache" / "confine" / "verdicts";
    return std::nullopt;
}

namespace {

// What -v says of a selection, one line each: where the configuration came from, each
// runner's verdict and whence, and what was selected (or why nothing was).
void log_selection(const Selection& s, const Config& config) {
    std::string files;
    for (const auto& f : config.files) files += (files.empty() ? "" : ", ") + f.string();
    detail::log_debug("configuration: {}", files.empty() ? config.source : files);
    if (config.managed.any()) {
        std::string managed;
        for (const auto& f : config.managed.files) managed += (managed.empty() ? "" : ", ") + f.string();
        detail::log_debug("managed: {}", managed);
    }
    if (s.asserted) detail::log_debug("platform {}: asserted runner_command {} (not probed)", s.platform, s.runner_command.empty() ? "" : s.runner_command.front());
    for (const Candidate& c : s.candidates) {
        if (!c.verdict) {
            detail::log_debug("runner {}: selected without probing (a chain of one), plugin {}", c.runner, c.plugin_file.string());
            continue;
        }
        const char* whence = c.from_cache ? "verdict from the cache" : c.probed ? "probed" : "could not be loaded";
        detail::log_debug("runner {}: {} ({}){}{}", c.runner, to_string(c.verdict->kind), whence, c.verdict->reason.empty() ? "" : ": ",
                          c.verdict->reason);
    }
    if (s.usable())
        detail::log_debug("selected: {}{}", *s.runner, s.enforcement ? " (enforcement " + std::string(to_string(*s.enforcement)) + ")" : std::string());
    else if (s.failure)
        detail::log_debug("selected: none: {}", s.failure->message);
}

}  // namespace

const Selection& Provider::selection() const {
    std::call_once(impl_->once, [this] {
        impl_->resolve(impl_->selection);
        log_selection(impl_->selection, impl_->config);
    });
    return impl_->selection;
}

Selection Provider::diagnose() const {
    Selection s = selection();
    if (!s.usable() || !s.selected_without_probe || s.asserted) return s;
    Candidate& c = s.candidates.back();
    c.probed = true;
    {
        std::lock_guard lock(impl_->diagnose_mutex);
        c.verdict = impl_->selected->probe(impl_->config.probe_timeout_ms);
    }
    std::optional<Enforcement> sampled;
    if (c.verdict->usable())
        if (auto below = impl_->below_minimums(*impl_->selected, &sampled)) c.verdict = Verdict{Verdict::Kind::unusable, std::move(*below)};
    if (c.verdict->usable()) {
        s.enforcement = sampled ? *sampled : Impl::enforcement_of(*c.verdict);
    } else {
        s.failure = Error{ErrorCode::sandbox_unavailable,
                          "runner '" + c.runner + "', the only one in the chain, is unusable: " + c.verdict->reason};
        s.runner.reset();
    }
    return s;
}

}  // namespace confine
