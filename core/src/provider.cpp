#include <confine/provider.hpp>
#include <confine/managed.hpp>
#include <confine/allow_hosts.hpp>

#include "executor.hpp"
#include "placeholders.hpp"
#include "plugins/loader.hpp"
#include "git_guard.hpp"
#include "protect_watch.hpp"
#include "log.hpp"
#include "roots.hpp"
#include "trust.hpp"
#include "verdict_cache.hpp"

#include <confine/sdk/bwrap_profile.hpp>
#include <confine/sdk/program_trust.hpp>

#include <algorithm>
#include <cstdlib>

#if !defined(_WIN32)
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#endif

#include <map>
#include <mutex>

namespace fs = std::filesystem;

namespace confine {

std::string_view current_platform() noexcept {
#if defined(__linux__)
    return "linux";
#elif defined(__APPLE__)
    return "darwin";
#elif defined(_WIN32)
    return "windows";
#elif defined(__FreeBSD__)
    return "freebsd";
#elif defined(__NetBSD__)
    return "netbsd";
#elif defined(__OpenBSD__)
    return "openbsd";
#else
    return "unknown";
#endif
}

std::string_view to_string(Mode mode) noexcept {
    return mode == Mode::read_only ? "read-only" : "workspace-write";
}
std::string_view to_string(Enforcement e) noexcept { return e == Enforcement::full ? "full" : "partial"; }
std::string_view to_string(Level l) noexcept { return l == Level::full ? "full" : l == Level::partial ? "partial" : "none"; }
std::string_view to_string(Network network) noexcept {
    return network == Network::none ? "none" : network == Network::proxy ? "proxy" : "allow";
}
std::string_view to_string(Tmp tmp) noexcept { return tmp == Tmp::private_ ? "private" : tmp == Tmp::host ? "host" : "unsaid"; }
std::string_view to_string(Loopback loopback) noexcept { return loopback == Loopback::own ? "own" : loopback == Loopback::none ? "none" : "unsaid"; }
std::string_view to_string(Verdict::Kind kind) noexcept {
    switch (kind) {
    case Verdict::Kind::full: return "full";
    case Verdict::Kind::partial: return "partial";
    case Verdict::Kind::unusable: break;
    }
    return "unusable";
}

std::string open_about(const std::string& open, std::string_view dimension) {
    const std::string head = std::string(dimension) + ": ";
    std::size_t at = open.find(head);
    while (at != std::string::npos && at != 0 && (at < 2 || open.compare(at - 2, 2, "; ") != 0)) at = open.find(head, at + 1);
    if (at == std::string::npos) return {};
    // Up to the next part: "; <known dimension>: ", or the carve's "; cost: ".
    std::size_t end = std::string::npos;
    for (const char* next : {"; write: ", "; network: ", "; processes: ", "; read: ", "; protect: ", "; metadata: ", "; lifetime: ", "; limits: ", "; cost: "}) {
        const std::size_t found = open.find(next, at + head.size());
        if (found != std::string::npos && found < end) end = found;
    }
    return open.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

namespace {

std::string_view name_of(Minimum m) {
    return m == Minimum::full ? "full" : m == Minimum::partial ? "partial" : "best-effort";
}

bool meets(Level level, Minimum minimum) {
    return minimum == Minimum::best_effort || (minimum == Minimum::partial ? level != Level::none : level == Level::full);
}

// The deny_read and protect entries of a call that are explicit asks (docs/design.md
// §12): every entry of the call's policy (--deny-read, --protect, a host's Policy), and
// each entry a configuration file writes; not the embedded default's, nor the ssh agent's
// socket that deny_read adds. Each with where it was said, for the line that refuses it.
struct ExplicitAsk {
    fs::path entry;
    std::string said;  // "file:line:column: policy.deny_read", or the call's
};
struct ExplicitAsks {
    std::vector<ExplicitAsk> read, protect;
};

ExplicitAsks explicit_asks(const PolicyRequest& policy, const Config& config) {
    ExplicitAsks out;
    for (const auto& p : policy.deny_read) out.read.push_back({p, "the run's deny_read (--deny-read)"});
    for (const auto& p : policy.protect) out.protect.push_back({p, "the run's protect (--protect)"});
    auto from_config = [](const std::vector<std::string>& entries, const std::vector<SourcePosition>& where, const char* key,
                          std::vector<ExplicitAsk>& into) {
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (i < where.size() && where[i].file == embedded_config_name) continue;  // a default
            into.push_back({entries[i], i < where.size() ? to_string(where[i]) + ": policy." + key : std::string("policy.") + key});
        }
    };
    from_config(config.deny_read, config.deny_read_where, "deny_read", out.read);
    from_config(config.protect, config.protect_where, "protect", out.protect);
    return out;
}

// `open` without its part about `dimension`.
std::string without_about(const std::string& open, std::string_view dimension) {
    const std::string part = open_about(open, dimension);
    if (part.empty()) return open;
    std::string out = open;
    const std::size_t at = out.find(part);
    std::size_t from = at, to = at + part.size();
    if (to < out.size()) to += 2;          // its "; " after
    else if (from >= 2) from -= 2;         // or the one before it
    out.erase(from, to - from);
    return out;
}

// The paths a stderr line names when it says that a path `policy` (resolved) denies or
// protects was refused (WrapResult::denial_paths): each of them, the git directory a
// protected path lies in (bubblewrap holds it as a mount point: `mv .git` is EBUSY), and
// each relative to where the command runs, as a command there names it.
std::vector<std::string> denial_paths(const Policy& policy) {
    std::vector<fs::path> named(policy.deny_read.begin(), policy.deny_read.end());
    for (const auto& p : policy.protect) {
        named.push_back(p);
        fs::path git;
        for (const auto& part : p) {
            git /= part;
            if (part == ".git" && git != p) {
                named.push_back(git);
                break;
            }
        }
    }
    std::vector<std::string> out;
    auto add = [&out](std::string s) {
        if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    };
    const fs::path& here = policy.working_directory;
    for (const auto& p : named) {
        add(p.string());
        if (!here.empty() && p != here && sdk::is_within(p, here)) add(p.lexically_relative(here).string());
    }
    return out;
}

// The wrap as the host reports it: whether the network was asked, and `enforcement` the
// weakest of the dimensions asked; the paths its denial hints may name.
WrapResult reported(WrapResult wrapped, const Policy& policy) {
    wrapped.denial_paths = denial_paths(policy);
    wrapped.network_asked = policy.network != Network::allow;
    wrapped.read_asked = !policy.deny_read.empty();
    wrapped.protect_asked = !policy.protect.empty();
    // The host's own supervision of the run (docs/design.md §7): the higher of it and
    // what the runner's mechanism ends by itself.
    const detail::Supervision supervision = detail::run_supervision(wrapped);
    auto& d = wrapped.dimensions;
    wrapped.own_lifetime = d.lifetime;
    if (supervision.lifetime > d.lifetime) {
        d.lifetime = supervision.lifetime;
        wrapped.host_supervised = true;
        if (d.lifetime == Level::full) d.open = without_about(d.open, "lifetime");
    }
    if (d.lifetime != Level::full && open_about(d.open, "lifetime").empty() && !supervision.open.empty()) {
        d.open += (d.open.empty() ? "" : "; ") + supervision.open;
        wrapped.supervision_open = supervision.open;
    }
    // Protected paths the runner cannot keep read-only (Landlock where it cannot make a
    // mount namespace): the host records them before the run and puts back what the
    // command changed once no process of the run is left (protect_watch.hpp).
    if (wrapped.protect_asked && d.protect != Level::full && policy.mode == Mode::workspace_write && d.lifetime != Level::none) {
        wrapped.protect_restored = true;
        wrapped.own_protect = d.protect;
        wrapped.own_protect_open = open_about(d.open, "protect");
        wrapped.restore_open =
            "protect: the protected paths are put back after the run, not kept read-only during it (" + wrapped.runner +
            " cannot keep a path inside a writable root read-only here): while the run lasts the command can change, rename or remove "
            "them, and a program of the host that reads them meanwhile (an editor's background `git status`) sees the change; once the "
            "run's processes are ended, what it changed is moved aside (NAME.confine-blocked-N) and each path put back as it was, a .git "
            "renamed within its directory moved back (one moved further stays there, and a new .git made in its place gets the protected "
            "paths put back)";
        d.protect = Level::partial;
        d.open = without_about(d.open, "protect");
        d.open += (d.open.empty() ? "" : "; ") + wrapped.restore_open;
    }
    const bool all_full = d.write == Level::full && d.processes == Level::full && (!wrapped.network_asked || d.network == Level::full) &&
                          (!wrapped.read_asked || d.read == Level::full) && (!wrapped.read_scoped || d.read_scope == Level::full) &&
                          (!wrapped.protect_asked || d.protect == Level::full) &&
                          d.lifetime == Level::full && (!wrapped.limits_asked || d.limits == Level::full);
    if (!all_full) wrapped.enforcement = Enforcement::partial;
    return wrapped;
}

// The wrap, if each dimension the policy asks is enforced at least at the level the
// configuration requires (docs/design.md §12): otherwise nothing runs. The network is
// asked only when it is to be confined.
std::expected<WrapResult, Error> meets_minimums(WrapResult wrapped, const Policy& policy, const Config& config) {
    wrapped = reported(std::move(wrapped), policy);
    // The /tmp the policy asks for, or nothing runs (docs/design.md §4).
    if (policy.tmp != Tmp::unsaid && wrapped.tmp != policy.tmp)
        return std::unexpected(Error{ErrorCode::sandbox_unavailable,
                                     "runner '" + wrapped.runner + "' " +
                                         (wrapped.tmp == Tmp::unsaid ? std::string("does not say which /tmp it gives (plugin ABI older than 1.6)")
                                                                     : "gives " + std::string(wrapped.tmp == Tmp::host ? "the host's /tmp" : "a private /tmp")) +
                                         ", and the policy asks for " + (policy.tmp == Tmp::host ? "the host's" : "a private one") +
                                         " ([policy] tmp, --tmp)"});
    const std::pair<const char*, std::pair<Level, Minimum>> asked[] = {
        {"write", {wrapped.dimensions.write, config.minimums.write}},
        {"network", {wrapped.network_asked ? wrapped.dimensions.network : Level::full, config.minimums.network}},
        {"processes", {wrapped.dimensions.processes, config.minimums.processes}},
        {"read", {std::min(wrapped.read_asked ? wrapped.dimensions.read : Level::full, wrapped.read_scoped ? wrapped.dimensions.read_scope : Level::full),
                  config.minimums.read}},
        {"protect", {wrapped.protect_asked ? wrapped.dimensions.protect : Level::full, config.minimums.protect}},
        {"lifetime", {wrapped.dimensions.lifetime, config.minimums.lifetime}},
        {"limits", {wrapped.limits_asked ? wrapped.dimensions.limits : Level::full, config.minimums.limits}},
    };
    for (const auto& [dimension, levels] : asked) {
        const auto [level, minimum] = levels;
        if (!meets(level, minimum))
            return std::unexpected(Error{ErrorCode::sandbox_unavailable,
                                         "runner '" + wrapped.runner + "' enforces " + dimension + " at level " + std::string(to_string(level)) +
                                             ", below the minimum " + std::string(name_of(minimum)) + " ([policy.enforcement] " + dimension + ")"});
    }
    return wrapped;
}

// A runner created while its [runner.<name>] table was judged, kept for the provider.
struct Judged {
    fs::path file;
    std::unique_ptr<PluginRunner> runner;
};

// judge_runner_settings, keeping in `keep` (when given) the runners it created.
SettingsJudgement judge(const Config& config, const std::vector<fs::path>& plugin_dirs, std::string_view platform,
                        std::map<std::string, Judged>* keep) {
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
        if (keep) keep->insert_or_assign(name, Judged{*located, std::move(*runner)});
    }
    return out;
}

}  // namespace

SettingsJudgement judge_runner_settings(const Config& config, const std::vector<fs::path>& plugin_dirs, std::string_view platform) {
    return judge(config, plugin_dirs, platform, nullptr);
}

struct Provider::Impl {
    Config config;
    std::string platform;
    std::vector<fs::path> plugin_dirs;

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
    mutable std::map<std::string, Judged> judged;  // runners created to judge their tables, not yet used

    // The configuration error that fails every use of this provider, judged once
    // (judge_runner_settings), or nullopt.
    const std::optional<Error>& configuration_error() const {
        std::call_once(judged_once, [this] {
            std::map<std::string, Judged> kept;
            auto judgement = judge(config, plugin_dirs, platform, &kept);
            misconfigured = std::move(judgement.error);
            std::lock_guard lock(loaded_mutex);
            for (const auto& [name, j] : kept) loaded.push_back(name);
            std::lock_guard held(judged_mutex);
            judged = std::move(kept);
        });
        return misconfigured;
    }

    // Locates, loads and creates one runner; an error says why it cannot be had.
    std::expected<std::unique_ptr<PluginRunner>, Error> open_runner(const std::string& name, fs::path& file) const {
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

    static Enforcement enforcement_of(const Verdict& v) {
        return v.kind == Verdict::Kind::partial ? Enforcement::partial : Enforcement::full;
    }

    void unavailable(Selection& s, std::string why) const {
        s.failure = Error{ErrorCode::sandbox_unavailable, std::move(why)};
    }

    void resolve(Selection& s) const {
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

    // A chain of one: nothing to arbitrate, selected without probing. If it cannot be
    // loaded, there is nothing to run with either.
    void select_only(Selection& s) const {
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

    // A chain of several: the first usable runner in preference order; later ones are
    // neither loaded nor probed.
    void select_by_probing(Selection& s) const {
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

    // The sample policy below_minimums has a runner wrap, and its shape: what of the
    // configuration and the environment it is made of, under which the verdict cache
    // keeps the levels a wrap of it reported. `resolve`: the workspace resolved, as a
    // wrap needs it (the shape names it as the environment does).
    struct Sample {
        Policy policy;
        std::string shape;
    };
    Sample sample(bool resolve) const {
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

    // What `runner` reports of a wrap of the sample command for `s`, or nothing when it
    // cannot wrap it (a run's own wrap then says why, and runs nothing). A wrap is a pure
    // transformation: nothing runs.
    static std::optional<detail::SampleLevels> sample_levels(PluginRunner& runner, const Sample& s) {
        const std::vector<std::string> argv{"true"};
        auto wrapped = runner.wrap(s.policy, argv);
        if (!wrapped) return std::nullopt;
        return detail::SampleLevels{s.shape, wrapped->runner, wrapped->enforcement, wrapped->dimensions, wrapped->tmp, wrapped->attestation.kind};
    }

    // Why `runner` cannot be chosen for what the configuration asks (its network, its
    // minimums, docs/design.md §12), as a wrap of a sample command says what it enforces;
    // nullopt when it can, and then `weakest` becomes partial unless every dimension asked
    // is full.
    std::optional<std::string> below_minimums(PluginRunner& runner, std::optional<Enforcement>* weakest = nullptr) const {
        const Sample s = sample(true);
        const auto levels = sample_levels(runner, s);
        if (!levels) return std::nullopt;
        return below_minimums(*levels, s.policy, weakest);
    }

    // The same from the levels a wrap of `sample` reported (a fresh wrap's, or the
    // verdict cache's): judged by the configuration as it is now.
    std::optional<std::string> below_minimums(const detail::SampleLevels& levels, const Policy& sample, std::optional<Enforcement>* weakest) const {
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

    // below_minimums for candidate `c` of a probing selection, whose verdict is kept in
    // `cache` under `key`: with a verdict from the cache, from the levels kept with it
    // for this sample, without a wrap; otherwise from a wrap, whose levels are kept.
    std::optional<std::string> below_minimums(PluginRunner& runner, const Candidate& c, const std::string& key,
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

    // Why `runner`, whose wrap of the whole call is `wrapped`, cannot honour an explicit
    // ask of the call (docs/design.md §12), or nullopt. An explicit deny_read or protect
    // entry asks its dimension in full for its path, unless the configuration wrote a
    // lower minimum (Minimums::explicit_read). Where the whole wrap falls short, each
    // explicit entry is wrapped alone (with the call's roots) to find the one it cannot
    // honour: a default entry that the runner cannot enforce stays under the ordinary
    // minimum. A wrap is a pure transformation: nothing runs.
    std::optional<std::string> explicit_unmet(PluginRunner& runner, const WrapResult& wrapped, const Policy& policy, const ExplicitAsks& asks,
                                              std::span<const std::string> argv) const {
        struct Asked {
            const char* dimension;
            Level level;
            Minimum need;
            const std::vector<ExplicitAsk>& entries;
            bool read;
        };
        const Asked dimensions[] = {
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

    mutable std::mutex later_mutex;
    mutable std::map<std::string, std::unique_ptr<PluginRunner>> later;  // by name; null: cannot be used here

    // The runner `name` of the chain, past the selected one: loaded, probed usable and at the
    // configuration's minimums, or null (remembered either way).
    PluginRunner* later_runner(const std::string& name, fs::path& file) const {
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

    // The verdict on candidate `c`, whose runner is `runner`: from the cache if it holds
    // one, else probed (and a usable verdict kept). Its key in the cache.
    std::string verdict_for(Candidate& c, PluginRunner& runner, std::optional<detail::VerdictCache>& cache) const {
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
};

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

// What -v says of what a wrap gives: each dimension's level, which /tmp, and what the
// runner says is left open.
std::expected<WrapResult, Error> logged(std::expected<WrapResult, Error> wrapped) {
    if (!wrapped || !detail::log_enabled(spdlog::level::debug)) return wrapped;
    const auto& d = wrapped->dimensions;
    auto asked = [](bool is, Level l) { return is ? std::string(to_string(l)) : std::string("not asked"); };
    detail::log_debug("wrapped by {}: write {}, network {}{}, processes {}, read {}{}, protect {}, lifetime {}, limits {}; /tmp {}", wrapped->runner,
                      to_string(d.write), asked(wrapped->network_asked, d.network),
                      wrapped->loopback == Loopback::own    ? " (a loopback of the run's own)"
                      : wrapped->loopback == Loopback::none ? " (no loopback: every TCP and UDP socket refused)"
                                                            : "",
                      to_string(d.processes), asked(wrapped->read_asked, d.read),
                      wrapped->read_scoped ? ", read scope " + std::string(to_string(d.read_scope)) : std::string(),
                      asked(wrapped->protect_asked, d.protect), to_string(d.lifetime), asked(wrapped->limits_asked, d.limits),
                      wrapped->tmp == Tmp::private_ ? "private (the run's own, gone after it)"
                      : wrapped->tmp == Tmp::host   ? "the host's"
                                                    : "not said by the runner");
    if (!d.open.empty()) detail::log_debug("left open by {}: {}", wrapped->runner, d.open);
    return wrapped;
}

// The wrap with its run-end checks (git_guard.hpp, protect_watch.hpp): what must still be
// absent after the run, and the protected paths to put back, as they are now, before the
// run. `entries`: the protect entries as asked, before resolution.
std::expected<WrapResult, Error> watched(std::expected<WrapResult, Error> wrapped, const Policy& resolved, const std::vector<fs::path>& entries,
                                         const Config& config, detail::KeptGitScan& kept) {
    if (!wrapped) return wrapped;
    wrapped->policy = resolved;
    wrapped->git_watch = detail::watch_git(resolved, entries, &kept);  // null when it has nothing to hold
    auto watch = std::make_shared<detail::ProtectWatch>();
    if (resolved.mode == Mode::workspace_write) watch->absent = detail::absent_protected(resolved, entries);
    if (wrapped->protect_restored) {
        auto kept_paths = detail::keep_protected(resolved);
        if (kept_paths) {
            watch->kept = std::move(*kept_paths);
        } else if (config.minimums.protect == Minimum::best_effort) {
            // What the operator accepts: the runner's own level, and why no more.
            auto& d = wrapped->dimensions;
            wrapped->protect_restored = false;
            d.protect = wrapped->own_protect;
            d.open = without_about(d.open, "protect");
            d.open += (d.open.empty() ? "" : "; ") + (wrapped->own_protect_open.empty() ? "protect: " : wrapped->own_protect_open + "; ") + kept_paths.error();
        } else {
            return std::unexpected(Error{ErrorCode::sandbox_unavailable, "runner '" + wrapped->runner +
                                                                             "' cannot keep the protected paths read-only, and " + kept_paths.error() +
                                                                             " ([policy.enforcement] protect)"});
        }
    }
    if (!watch->absent.empty() || !watch->kept.empty()) wrapped->protect_watch = std::move(watch);
    return wrapped;
}

// What -v says of the policy a run gets, its roots resolved.
void log_policy(const Policy& p) {
    if (!detail::log_enabled(spdlog::level::debug)) return;
    std::string roots;
    for (const auto& w : p.writable) roots.append(roots.empty() ? "" : " ").append(w.string());
    detail::log_debug("policy: mode {}, workspace {}, writable roots {}, network {}", to_string(p.mode),
                      p.workspace.empty() ? "(none)" : p.workspace.string(), roots.empty() ? "(none)" : roots,
                      to_string(p.network));
    auto listed = [](const std::vector<fs::path>& paths) {
        std::string s;
        for (const auto& x : paths) s.append(s.empty() ? "" : " ").append(x.string());
        return s.empty() ? std::string("(none)") : s;
    };
    detail::log_debug("policy: deny_read {}", listed(p.deny_read));
    detail::log_debug("policy: protect {}", listed(p.protect));
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

namespace {

// What is wrong with the completed policy's network through the proxy, or nullopt: hosts
// with a network that is not the proxy's, the proxy's without hosts or without a run to
// hold it (a wrap alone has no proxy), a host that is no host pattern.
std::optional<std::string> proxy_problem(const Policy& completed) {
    if (completed.network != Network::proxy) {
        if (completed.allow_hosts.empty()) return std::nullopt;
        return std::string("allow_hosts lets a command reach hosts through the run's proxy, and the network is ") +
               (completed.network == Network::allow ? "allowed whole" : "none") + ": give one or the other";
    }
    if (completed.allow_hosts.empty()) return "the network through the run's proxy needs at least one host in allow_hosts";
    for (const auto& host : completed.allow_hosts)
        if (auto parsed = parse_host_pattern(host); !parsed) return "allow_hosts: " + parsed.error();
    if (completed.proxy_port == 0)
        return "the network through the run's proxy (allow_hosts) needs a run that holds the proxy (confinectl run, confine::run, "
               "confine::spawn); a wrap alone has none";
    return std::nullopt;
}

// The completed policy as a runner may be given it (see resolve_policy), for a command
// it can run; `kept`, where its repositories' scan is kept for the wrap's run-end check.
std::expected<Policy, Error> checked_policy(const Policy& completed, std::span<const std::string> argv, detail::KeptGitScan* kept = nullptr) {
    auto bad = [](std::string m) { return std::unexpected(Error{ErrorCode::invalid_policy, std::move(m)}); };
    if (argv.empty()) return bad("no command to run");
    for (const auto& a : argv)
        if (a.find('\0') != std::string::npos) return bad("a command argument contains a NUL byte");
    if (auto wrong = proxy_problem(completed)) return bad(std::move(*wrong));
    return detail::resolve_policy(completed, kept);
}

// Nothing confine loads or reads as configuration may lie where this run's command
// could write: it would be the next run's plugin or configuration (docs/design.md §11). /tmp and
// /dev/shm were refused when they were opened; these are the run's own roots.
std::optional<Error> writable_by_the_run(const Policy& resolved, const std::vector<std::pair<std::string, fs::path>>& files) {
    const auto places = detail::writable_places(resolved);
    for (const auto& [what, file] : files) {
        if (file.empty()) continue;
        // Where the file read or loaded really was (the trust walk found it), else where
        // its path leads now.
        std::error_code ec;
        const auto judged = detail::judged_file(file);
        const fs::path real = judged ? judged->real_path : fs::canonical(file, ec);
        if (ec) continue;  // gone since it was read: nothing of it is used again
        for (const auto& place : places)
            if (detail::is_within(real, place))
                return Error{ErrorCode::sandbox_unavailable, "refusing to run: " + what + " " + real.string() + " lies in " + place +
                                                                  ", which the confined command may write"};
    }
    return std::nullopt;
}

// What of this provider a run relies on that a file holds: the configuration, if read
// from a file, and the plugin.
std::vector<std::pair<std::string, fs::path>> relied_on(const Config& config, const fs::path& plugin) {
    std::vector<std::pair<std::string, fs::path>> files{{"the plugin", plugin}};
    for (const auto& f : config.files) files.emplace_back("the configuration", f);
    if (config.files.empty() && config.source != embedded_config_name) files.emplace_back("the configuration", config.source);
    for (const auto& f : config.managed.files) files.emplace_back("the managed configuration", f);
    return files;
}

// Why the asserted runner command's program cannot be trusted to confine, or nullopt:
// the rule every runner program is judged by (confine/sdk/program_trust.hpp).
std::optional<std::string> untrusted_runner_program(const std::string& program, const Policy& resolved) {
#if !defined(_WIN32)
    if (program.empty() || program.front() != '/') return std::string("its program must be an absolute path");
    // A program that is not there is said plainly, as the spawn would have.
    if (struct stat st {}; ::stat(program.c_str(), &st) != 0) return std::string(std::strerror(errno));
#endif
    return sdk::untrusted_program(program, detail::writable_places(resolved));
}

// The bwrap-shaped wrap of an asserted runner command (docs/design.md §3, §4): the
// bwrap runner's profile, after the operator's command.
WrapResult asserted_wrap(const Selection& s, const PlatformConfig& pc, const Policy& resolved,
                         std::span<const std::string> argv, const std::string& loopback, const std::vector<fs::path>& scope) {
    Policy policy = resolved;
    policy.read_scope = scope;  // bubblewrap-shaped: binds only what the scope names
    // A terminal of the run's own is the runner's controlling terminal, not handed on
    // inside (no loopback program there to take it): the command has none, as ever.
    policy.own_terminal = false;
    WrapResult r;
    r.runner = std::string(asserted_runner_name);
    r.read_scoped = !scope.empty();
    r.argv = sdk::bwrap_profile(s.runner_command, policy);
    for (auto& a : sdk::bwrap_proxy_arguments(loopback, policy)) r.argv.push_back(std::move(a));
    r.argv.emplace_back("--");
    r.command_index = r.argv.size();
    r.argv.insert(r.argv.end(), argv.begin(), argv.end());
    r.enforcement = Enforcement::full;
    // The mechanism behind the command is unknown: both Linux dialects (bubblewrap's, the
    // bwrap runner's, and Landlock's).
    r.denial_signatures = {"read-only file system", "permission denied", "operation not permitted", "no such process", "erofs", "eacces", "eperm"};
    if (policy.network != Network::allow)
        for (auto& s : sdk::network_denial_signatures()) r.denial_signatures.push_back(std::move(s));
    r.failure_rule.fatal_signatures = pc.runner_failure_signatures;
    r.dimensions = sdk::bwrap_dimensions(policy, r.argv);  // what its bubblewrap-shaped arguments ask for
    r.tmp = sdk::bwrap_tmp(policy);
    r.loopback = sdk::bwrap_loopback(policy, r.argv);
    // Its placeholders are confine's own (the profile's, the proxy's): well formed.
    if (auto found = detail::runner_placeholders(r.argv, r.command_index, r.attestation)) r.placeholders = std::move(*found);
    return r;
}

}  // namespace

// The places a scoped call may read ([policy] read, PolicyRequest::read_scoped;
// detail::read_scope_places), or none for a call that is not scoped. confine's own plugin
// directories stay readable: a runner may start a program of its own inside the sandbox
// (bubblewrap's confine-loopback).
static std::vector<fs::path> read_scope(const Policy& resolved, const PolicyRequest& request, const Config& config,
                                        const std::vector<fs::path>& plugin_dirs) {
    if (!request.read_scoped.value_or(config.read_scoped)) return {};
    std::vector<fs::path> roots(config.read_roots.begin(), config.read_roots.end());
    roots.insert(roots.end(), request.read_roots.begin(), request.read_roots.end());
    roots.insert(roots.end(), plugin_dirs.begin(), plugin_dirs.end());
    return detail::read_scope_places(resolved, roots);
}

// `runner`'s wrap of `resolved` with the read scope `scope` (empty: reads not scoped):
// given to the runner (Policy::read_scope), or — where it says it did not apply it, as a
// plugin older than ABI 1.12 says — given again as deny_read entries for everything
// outside it (detail::hide_outside_read_scope), whose level is then the runner's read level.
static std::expected<WrapResult, Error> wrap_scoped(PluginRunner& runner, const Policy& resolved, std::span<const std::string> argv,
                                                    const std::vector<fs::path>& scope) {
    if (scope.empty()) return runner.wrap(resolved, argv);
    Policy given = resolved;
    given.read_scope = scope;
    auto wrapped = runner.wrap(given, argv);
    if (wrapped && wrapped->dimensions.read_scope == Level::none) {
        Policy hidden = resolved;
        detail::hide_outside_read_scope(hidden, scope);
        wrapped = runner.wrap(hidden, argv);
        if (wrapped) wrapped->dimensions.read_scope = wrapped->dimensions.read;
    }
    if (wrapped) wrapped->read_scoped = true;
    return wrapped;
}

// The unprotect entries of a call: the configuration's, then the request's.
static std::vector<fs::path> unprotect_entries(const PolicyRequest& request, const Config& config) {
    std::vector<fs::path> out;
    for (const auto& u : config.unprotect) out.push_back(fs::path(u).lexically_normal());
    for (const auto& u : request.unprotect) out.push_back(u.lexically_normal());
    return out;
}

PolicyRequest::PolicyRequest(const Policy& policy)
    : mode(policy.mode), workspace(policy.workspace), writable(policy.writable), network(policy.network),
      allow_hosts(policy.allow_hosts), deny_read(policy.deny_read), protect(policy.protect), working_directory(policy.working_directory) {
    if (policy.tmp != Tmp::unsaid) tmp = policy.tmp;
    if (policy.terminal) terminal = true;
}

Policy complete_policy(const PolicyRequest& request, const Config& config, const RunContext& context) {
    Policy p;
    p.mode = request.mode;
    p.workspace = request.workspace;
    p.writable = request.writable;
    p.network = request.network.value_or(config.network);
    // The request's hosts make the network the proxy's; the configuration's go with its
    // network (checked_policy refuses hosts with any other network, and none with it).
    if (!request.allow_hosts.empty()) {
        p.allow_hosts = request.allow_hosts;
        if (!request.network) p.network = Network::proxy;
    } else if (p.network == Network::proxy && !request.network) {
        p.allow_hosts = config.allow_hosts;
    }
    if (p.network == Network::proxy) p.proxy_port = context.proxy_port;
    p.tmp = request.tmp.value_or(config.tmp);
    p.terminal = request.terminal.value_or(context.terminal);
    p.own_terminal = p.terminal && context.own_terminal;
    p.working_directory = request.working_directory.empty() ? context.working_directory : request.working_directory;
    p.deny_read.assign(config.deny_read.begin(), config.deny_read.end());
    p.deny_read.insert(p.deny_read.end(), request.deny_read.begin(), request.deny_read.end());
    // The caller's ssh agent: taking SSH_AUTH_SOCK out of the environment does not stop a
    // command that finds the socket, so its file is denied as well (while deny_read asks
    // anything at all: an operator who empties the list asks for nothing to be hidden).
    if (!config.deny_read.empty())
        if (const char* agent = std::getenv("SSH_AUTH_SOCK"); agent && *agent == '/') p.deny_read.emplace_back(agent);
    p.protect.assign(config.protect.begin(), config.protect.end());
    p.protect.insert(p.protect.end(), request.protect.begin(), request.protect.end());
    const auto lifted = unprotect_entries(request, config);
    std::erase_if(p.protect, [&](const fs::path& entry) {
        return std::any_of(lifted.begin(), lifted.end(), [&](const fs::path& u) { return sdk::is_within(entry.lexically_normal(), u); });
    });
    return p;
}

Policy Provider::complete(const PolicyRequest& request, const RunContext& context) const {
    return complete_policy(request, impl_->config, context);
}

namespace {

// Why `request` crosses the managed layer of `config` (confine/managed.hpp), or nullopt.
std::optional<Error> crosses_managed(const Config& config, const PolicyRequest& request) {
    ManagedAsk ask;
    ask.network = request.network;
    ask.allow_hosts = request.allow_hosts;
    ask.tmp = request.tmp;
    ask.read_scoped = request.read_scoped;
    for (const auto& u : request.unprotect) ask.unprotect.push_back(u.string());
    for (const auto& r : request.read_roots) ask.read_roots.push_back(r.string());
    if (auto why = managed_crossing(config, ask, {{"network", "network"}, {"allow_hosts", "allow_hosts"}, {"unprotect", "unprotect"}, {"read_roots", "read_roots"}}))
        return Error{ErrorCode::config_managed, *why};
    return std::nullopt;
}

}  // namespace

std::expected<WrapResult, Error> Provider::wrap(const PolicyRequest& request, std::span<const std::string> argv,
                                                const RunContext& context) const {
    return wrap_completed(request, complete(request, context), argv);
}

std::expected<WrapResult, Error> Provider::wrap_completed(const PolicyRequest& policy, const Policy& completed,
                                                          std::span<const std::string> argv) const {
    if (auto bad = crosses_managed(impl_->config, policy)) return std::unexpected(*bad);
    detail::KeptGitScan kept;
    auto resolved = checked_policy(completed, argv, &kept);
    if (!resolved) return std::unexpected(resolved.error());
    detail::drop_unprotected(*resolved, unprotect_entries(policy, impl_->config));
    const auto scope = read_scope(*resolved, policy, impl_->config, impl_->plugin_dirs);
    const Selection& s = selection();
    if (!s.usable()) return std::unexpected(*s.failure);
    log_policy(*resolved);
    const fs::path plugin = s.asserted || s.candidates.empty() ? fs::path() : s.candidates.back().plugin_file;
    if (auto bad = writable_by_the_run(*resolved, relied_on(impl_->config, plugin))) return std::unexpected(*bad);
    if (s.asserted) {
        // The operator's program is judged like any runner program: one the command, a
        // previous run or another user could have replaced would confine nothing.
        if (auto bad = untrusted_runner_program(s.runner_command.front(), *resolved))
            return std::unexpected(Error{ErrorCode::sandbox_unavailable,
                                         "cannot start runner '" + std::string(asserted_runner_name) + "' (" + s.runner_command.front() + "): " + *bad});
        // Through the proxy, the command starts behind confine's loopback program, judged
        // as the runner's own program is.
        std::string loopback;
        if (resolved->network == Network::proxy) {
            loopback = detail::confine_program(impl_->plugin_dirs, "confine-loopback").string();
            if (auto bad = loopback.empty() ? std::optional<std::string>("confine-loopback is in none of the plugin directories")
                                            : untrusted_runner_program(loopback, *resolved))
                return std::unexpected(Error{ErrorCode::sandbox_unavailable, "cannot take the network through the run's proxy: " + *bad});
        }
        return watched(logged(meets_minimums(asserted_wrap(s, impl_->config.platforms.at(impl_->platform), *resolved, argv, loopback, scope),
                                             *resolved, impl_->config)),
                       *resolved, completed.protect, impl_->config, kept);
    }
    auto wrapped = wrap_scoped(*impl_->selected, *resolved, argv, scope);
    if (!wrapped) {
        // Whatever stopped the runner from wrapping, nothing may run unconfined.
        return std::unexpected(Error{ErrorCode::sandbox_unavailable, wrapped.error().message});
    }
    auto checked = meets_minimums(std::move(*wrapped), *resolved, impl_->config);
    if (!checked) return checked;
    // What the caller or the operator asked explicitly, the runner must honour; in a
    // chain of several, a later runner that can is used for this call instead, as a
    // runner below a minimum is skipped (docs/design.md §12).
    const ExplicitAsks asks = explicit_asks(policy, impl_->config);
    auto unmet = impl_->explicit_unmet(*impl_->selected, *checked, completed, asks, argv);
    if (!unmet) return watched(logged(std::move(checked)), *resolved, completed.protect, impl_->config, kept);
    if (!s.selected_without_probe && s.runner) {
        const auto selected = std::find(s.chain.begin(), s.chain.end(), *s.runner);
        for (auto it = selected == s.chain.end() ? selected : selected + 1; it != s.chain.end(); ++it) {
            fs::path file;
            PluginRunner* runner = impl_->later_runner(*it, file);
            if (!runner || writable_by_the_run(*resolved, relied_on(impl_->config, file))) continue;
            auto other = wrap_scoped(*runner, *resolved, argv, scope);
            if (!other) continue;
            auto other_checked = meets_minimums(std::move(*other), *resolved, impl_->config);
            if (!other_checked || impl_->explicit_unmet(*runner, *other_checked, completed, asks, argv)) continue;
            detail::log_debug("runner {} wraps this call instead: {}", *it, *unmet);
            return watched(logged(std::move(other_checked)), *resolved, completed.protect, impl_->config, kept);
        }
    }
    return std::unexpected(Error{ErrorCode::sandbox_unavailable, std::move(*unmet)});
}

std::expected<WrapResult, Error> Provider::wrap_with(std::string_view runner, const PolicyRequest& request,
                                                     std::span<const std::string> argv, const RunContext& context) const {
    if (auto bad = crosses_managed(impl_->config, request)) return std::unexpected(*bad);
    const auto& allowed = impl_->config.managed.runners;
    if (allowed && std::find(allowed->begin(), allowed->end(), runner) == allowed->end())
        return std::unexpected(Error{ErrorCode::config_managed,
                                     "the runner " + std::string(runner) + " crosses a managed bound: " + describe_bound(impl_->config.managed, "runners")});
    auto resolved = checked_policy(complete(request, context), argv);
    if (!resolved) return std::unexpected(resolved.error());
    detail::drop_unprotected(*resolved, unprotect_entries(request, impl_->config));
    const auto scope = read_scope(*resolved, request, impl_->config, impl_->plugin_dirs);
    if (const auto& bad = impl_->configuration_error()) return std::unexpected(*bad);
    fs::path file;
    auto opened = impl_->open_runner(std::string(runner), file);
    if (!opened && is_configuration_error(opened.error().code)) return std::unexpected(opened.error());
    if (!opened) return std::unexpected(Error{ErrorCode::sandbox_unavailable, "runner '" + std::string(runner) + "' cannot be used: " + opened.error().message});
    if (auto bad = writable_by_the_run(*resolved, relied_on(impl_->config, file))) return std::unexpected(*bad);
    auto wrapped = wrap_scoped(**opened, *resolved, argv, scope);
    if (!wrapped) return std::unexpected(Error{ErrorCode::sandbox_unavailable, wrapped.error().message});
    // For review: reported as a run would get it, minimums not applied.
    return reported(std::move(*wrapped), *resolved);
}

std::optional<Error> untrusted_runner_command(const Config& config, std::string_view platform) {
    const auto pit = config.platforms.find(std::string(platform));
    if (pit == config.platforms.end() || pit->second.runner_command.empty()) return std::nullopt;
    const std::string& program = pit->second.runner_command.front();
    // One not there is a runner that cannot be started: said when a run tries (docs/design.md §3).
    std::error_code ec;
    if (!fs::exists(program, ec)) return std::nullopt;
    if (auto bad = untrusted_runner_program(program, Policy{Mode::read_only, {}, {}}))
        return Error{ErrorCode::config_invalid, to_string(pit->second.where) + ": platform." + std::string(platform) +
                                                         ".runner_command: refusing " + program + ": " + *bad};
    return std::nullopt;
}

const Config& Provider::config() const noexcept { return impl_->config; }
const std::vector<fs::path>& Provider::plugin_dirs() const noexcept { return impl_->plugin_dirs; }
std::vector<std::string> Provider::loaded_plugins() const {
    std::lock_guard lock(impl_->loaded_mutex);
    return impl_->loaded;
}

}  // namespace confine
