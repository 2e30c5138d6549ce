// confinectl: the command-line front end of libconfine. Everything it does goes
// through the library's public API.
//
// Exit status: 0 on success, 125 for confinectl's own failures (usage, configuration,
// a sandbox that is unavailable), like env, timeout and chroot.
#include <confine/allow_hosts.hpp>
#include <confine/managed.hpp>
#include <confine/absent_paths.hpp>
#include <confine/config.hpp>
#include <confine/execute.hpp>
#include <confine/loader_environment.hpp>
#include <confine/log.hpp>
#include <confine/plugins.hpp>
#include <confine/prove.hpp>
#include <confine/provider.hpp>

#include "arguments.hpp"
#include "effective_config.hpp"
#include "json_output.hpp"
#include "records.hpp"
#include "platform.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <expected>
#include <filesystem>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr int exit_failure = 125;
constexpr int exit_timed_out = 124;  // timeout(1)'s

// confinectl's own diagnostics: one line, prefixed, on stderr.
// Standard output, written when a command has finished composing it (no iostreams:
// their initialisation alone costs each confined command measurable time).
class Output {
public:
    Output& operator<<(std::string_view text) {
        text_ += text;
        return *this;
    }
    Output& operator<<(char c) {
        text_ += c;
        return *this;
    }
    ~Output() { flush(); }
    void flush() {
        if (text_.empty()) return;
        std::fwrite(text_.data(), 1, text_.size(), stdout);
        std::fflush(stdout);
        text_.clear();
    }

private:
    std::string text_;
};

int fail(const std::string& message) {
    // One line, and one a terminal or a log can take whole.
    constexpr std::size_t max_line = 4096;
    std::string line = message.size() <= max_line ? message
                                                  : message.substr(0, max_line) + "... (" + std::to_string(message.size() - max_line) + " more bytes)";
    for (char& c : line)
        if (c == '\n' || c == '\r') c = ' ';
    std::fprintf(stderr, "confinectl: %s\n", line.c_str());
    return exit_failure;
}

// Verdicts are kept per user between invocations; `probe` always asks afresh.
confine::ProviderOptions provider_options(bool refresh_verdicts) {
    confine::ProviderOptions options;
    if (auto file = confine::default_verdict_cache_file())
        options.verdict_cache = confine::VerdictCacheOptions{*file, std::chrono::seconds(3600), refresh_verdicts};
    return options;
}

// `--plugin FILE`: the runner its file name names, and the file's directory.
struct PluginOnly {
    std::string runner;
    std::filesystem::path dir;
};

// Where a command's runners come from: the configuration in effect (--config,
// CONFINE_CONFIG, the system file, the default), or with --plugin one plugin file's
// runner as the platform's whole chain.
struct Source {
    std::string config_path;
    std::optional<PluginOnly> plugin;
};

// --plugin's file, named as a plugin file is and there; what the loader checks of any
// plugin (trust, ABI, descriptor) it checks when the runner is loaded.
std::expected<PluginOnly, std::string> plugin_only(const std::string& file) {
    namespace fs = std::filesystem;
    const std::string runner = confine::runner_name_from_file(file);
    if (runner.empty())
        return std::unexpected("--plugin " + file + ": not a plugin file name (" + confine::plugin_file_name("NAME") + ")");
    std::error_code ec;
    const fs::path absolute = fs::absolute(file, ec).lexically_normal();
    if (ec) return std::unexpected("--plugin " + file + ": " + ec.message());
    const auto status = fs::symlink_status(absolute, ec);
    if (ec || status.type() == fs::file_type::not_found) return std::unexpected("--plugin " + file + ": no such file");
    return PluginOnly{runner, absolute.parent_path()};
}

// The configuration in effect, and a provider over it. With --plugin the chain is that
// file's runner alone, looked up in the file's directory alone, so that exactly that
// file is loaded, with every check of a plugin from plugin_dirs; its [runner.<name>]
// settings still apply.
std::expected<std::unique_ptr<confine::Provider>, confine::Error> provider_for(const Source& source,
                                                                               confine::ProviderOptions options = {}) {
    confine::ConfigLookup lookup;
    if (!source.config_path.empty()) lookup.explicit_path = source.config_path;
    auto config = confine::load_config(lookup);
    if (!config) return std::unexpected(config.error());
    if (source.plugin) {
        const confine::Managed& managed = config->managed;
        if (!managed.plugins)
            return std::unexpected(confine::Error{confine::ErrorCode::config_managed,
                                                  "--plugin crosses a managed bound: " + confine::describe_bound(managed, "plugins")});
        if (managed.runners && std::find(managed.runners->begin(), managed.runners->end(), source.plugin->runner) == managed.runners->end())
            return std::unexpected(confine::Error{confine::ErrorCode::config_managed, "--plugin " + source.plugin->runner +
                                                                                          " crosses a managed bound: " + confine::describe_bound(managed, "runners")});
        confine::PlatformConfig& platform = config->platforms[std::string(confine::current_platform())];
        platform.chain = {source.plugin->runner};
        platform.runner_command.clear();
        platform.runner_failure_signatures.clear();
        config->plugin_dirs = {source.plugin->dir};
        options.builtin_plugin_dirs = std::vector<std::filesystem::path>{};
    }
    return confine::Provider::create(std::move(*config), std::move(options));
}

// Why nothing can run, as one line: a configuration error as check-config says it, any
// other failure as a sandbox that is unavailable.
std::string unavailable_line(const confine::Error& failure) {
    return confine::is_configuration_error(failure.code) ? failure.message : "sandbox unavailable: " + failure.message;
}

// With --plugin, the runner must pass its probe before it is used: it is not one a
// configuration chose. The reason it does not, or nullopt.
std::optional<std::string> plugin_unusable(const Source& source, const confine::Provider& provider) {
    if (!source.plugin) return std::nullopt;
    const confine::Selection s = provider.diagnose();
    if (s.usable()) return std::nullopt;
    return unavailable_line(*s.failure);
}

std::unique_ptr<confine::Provider> open_provider(const Source& source, confine::ProviderOptions options = {}) {
    auto provider = provider_for(source, std::move(options));
    if (!provider) {
        fail(provider.error().message);
        return nullptr;
    }
    return std::move(*provider);
}

// Each dimension asked that `w` enforces below full, as "write partial, lifetime none";
// empty when every one is full.
std::string enforced_less(const confine::WrapResult& w) {
    const auto& d = w.dimensions;
    const std::pair<const char*, std::optional<confine::Level>> levels[] = {
        {"write", d.write},
        {"network", w.network_asked ? std::optional(d.network) : std::nullopt},
        {"processes", d.processes},
        {"read", w.read_asked ? std::optional(d.read) : std::nullopt},
        {"read scope", w.read_scoped ? std::optional(d.read_scope) : std::nullopt},
        {"protect", w.protect_asked ? std::optional(d.protect) : std::nullopt},
        {"lifetime", d.lifetime},
        {"limits", w.limits_asked ? std::optional(d.limits) : std::nullopt},
    };
    std::string weaker;
    for (const auto& [name, level] : levels)
        if (level && *level != confine::Level::full) weaker += (weaker.empty() ? "" : ", ") + std::string(name) + " " + std::string(confine::to_string(*level));
    return weaker;
}

// Each runner's line says what its probe found of its mechanism here ("available (its
// probe: full)"); the selected line, what a run of the policy gets of it: `weaker`, from
// a wrap of that run, names each dimension below full (none: full); without one (the
// wrap refused), the selection's own enforcement. A runner whose mechanism is full still
// leaves dimensions partial (Landlock governs no metadata, ...).
void print_probe(Output& out, const confine::Selection& s, const std::string& config_source, const std::optional<std::string>& weaker) {
    out << "platform: " << s.platform << '\n' << "config: " << config_source << '\n';
    if (s.asserted) {
        out << "runner_command:";
        for (const auto& a : s.runner_command) out << ' ' << a;
        out << " (asserted by the operator, not probed)\n";
    } else {
        out << "chain:";
        for (const auto& r : s.chain) out << ' ' << r;
        out << (s.chain.empty() ? " (none)\n" : "\n");
    }
    for (const auto& c : s.candidates) {
        out << "  " << c.runner << ": ";
        if (c.verdict && c.verdict->usable()) out << "available (its probe: " << confine::to_string(c.verdict->kind) << ')';
        else if (c.verdict) out << confine::to_string(c.verdict->kind);
        else out << "selected without probing";
        if (c.verdict && !c.verdict->reason.empty()) out << ": " << c.verdict->reason;
        if (!c.plugin_file.empty()) out << " [" << c.plugin_file.string() << ']';
        out << '\n';
    }
    if (s.runner) {
        out << "selected: " << *s.runner;
        if (weaker) out << " (enforcement " << (weaker->empty() ? "full" : "partial: " + *weaker) << ')';
        else if (s.enforcement) out << " (enforcement " << confine::to_string(*s.enforcement) << ')';
        out << '\n';
    } else {
        out << "selected: none\n";
    }
}

#if !defined(_WIN32)
// A proof's line for one check: what came of it, what was expected and observed, and
// for one that did not hold, what the runner reported of its dimension.
std::string proof_line(const confine::ProofCheck& c) {
    const confine::ProofOutcome outcome = c.outcome();
    std::string line = std::string(outcome == confine::ProofOutcome::held   ? "held  "
                                   : outcome == confine::ProofOutcome::open ? "open  "
                                   : outcome == confine::ProofOutcome::cost ? "cost  "
                                                                               : "FAILED") +
                       "  " + c.dimension + ": " + c.check + " — expected " + c.expected + ", observed " + c.observed;
    if (outcome == confine::ProofOutcome::cost) return line + " (the runner names it as a cost)";
    if (outcome == confine::ProofOutcome::held || c.reported.empty()) return line;
    line += " (the runner reports " + c.dimension + ": " + c.reported;
    if (c.reported == "partial") line += outcome == confine::ProofOutcome::open ? ", naming it" : ", without naming it";
    return line + ")";
}
#endif

// `probe --prove`: the canaries' matrix. 1 when a check over-claimed (the runner's report
// says more than the check saw), or with `strict` when one was left open as the runner
// reports; else 0.
int prove(Output& out, const confine::Provider& provider, bool as_json, bool strict) {
#if defined(_WIN32)
    (void)out, (void)provider, (void)as_json, (void)strict;
    return fail("probe --prove is not available on Windows");
#else
    const confine::Proof proof = confine::prove(provider, {confinectl::own_program(), "__canary"});
    if (!proof.error.empty()) return fail("probe --prove: " + proof.error);
    std::size_t counted[4] = {0, 0, 0, 0};
    for (const auto& c : proof.checks) ++counted[static_cast<int>(c.outcome())];
    const std::size_t open = counted[static_cast<int>(confine::ProofOutcome::open)];
    const std::size_t over = counted[static_cast<int>(confine::ProofOutcome::over_claim)];
    if (as_json) {
        out << confinectl::proof_json(proof);
    } else {
        out << "proof under " << proof.runner << ", network " << proof.network << ":\n";
        for (const auto& c : proof.checks) out << "  " << proof_line(c) << '\n';
        out << std::to_string(counted[0]) << " held, " << std::to_string(open) << " open as the runner reports, " << std::to_string(over)
            << " over-claimed" << (counted[3] ? ", " + std::to_string(counted[3]) + " costs named by the runner" : std::string()) << '\n';
    }
    return over || (strict && open) ? 1 : 0;
#endif
}

void print_plugins(Output& out, const std::vector<std::filesystem::path>& dirs, const std::vector<confine::PluginSearch::Entry>& entries) {
    for (const auto& e : entries) {
        if (e.loaded)
            out << e.runner_name << "  " << e.loaded->version << "  ABI " << std::to_string(e.loaded->abi_major) << '.'
                << std::to_string(e.loaded->abi_minor) << "  " << e.file.string() << "  " << e.loaded->summary << '\n';
        else
            out << e.runner_name << "  REFUSED  " << confine::error_code_name(e.loaded.error().code) << ": " << e.loaded.error().message
                << '\n';
    }
    if (entries.empty()) out << "no plugins found\n";
    out << "searched:";
    for (const auto& d : dirs) out << ' ' << d.string();
    out << '\n';
}

int cmd_plugins(const std::string& config_path, bool as_json) {
    Output out;
    auto provider = open_provider(Source{config_path, std::nullopt});
    if (!provider) return exit_failure;
    const auto& dirs = provider->plugin_dirs();
    const auto entries = confine::PluginSearch(dirs).scan();
    if (as_json) out << confinectl::plugins_json(dirs, entries);
    else print_plugins(out, dirs, entries);
    out.flush();
    const auto refused = std::count_if(entries.begin(), entries.end(), [](const auto& e) { return !e.loaded; });
    if (refused) return fail(std::to_string(refused) + " plugin file(s) refused");
    return 0;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

// Each path to deny or protect that names nothing here, given by a flag (as typed:
// `deny_read_flags`, `protect_flags`) or added in the configuration (not the
// built-in lists, which name stores most machines lack): one line each, naming it and
// where it came from. The run goes on without it.
void warn_absent_paths(const confine::PolicyRequest& request, const confine::Config& config,
                       const std::vector<std::string>& deny_read_flags = {}, const std::vector<std::string>& protect_flags = {}) {
    for (const auto& a : confine::absent_policy_paths(request, config)) {
        const bool denied = a.key == "deny_read";
        std::string named;
        if (a.where) named = confine::to_string(*a.where) + ": " + a.key + " entry '" + a.entry + "'";
        else named = std::string(denied ? "--deny-read " : "--protect ") + (denied ? deny_read_flags : protect_flags).at(a.index);
        std::string roots;
        for (const auto& r : a.roots) roots += (roots.empty() ? "" : ", ") + r;
        const std::string what = roots.empty() ? " does not exist" : " is in no writable root (" + roots + ")";
        std::fprintf(stderr, "confinectl: warning: %s%s: nothing is %s there\n", named.c_str(), what.c_str(), denied ? "denied" : "protected");
    }
}

// `config`: the configuration in effect, as run would read it, with origins.
int cmd_config(const std::string& config_path, bool as_json) {
    confine::ConfigLookup lookup;
    if (!config_path.empty()) lookup.explicit_path = config_path;
    auto config = confine::load_config(lookup);
    if (!config) return fail(config.error().message);
    Output out;
    out << (as_json ? confinectl::effective_json(*config) : confinectl::effective_text(*config));
    return 0;
}

int cmd_check_config(const std::string& file) {
    Output out;
    std::expected<confine::Config, confine::Error> config =
        file.empty() ? confine::load_config() : confine::load_config_file(file);
    if (!config) return fail(config.error().message);
    if (auto bad = confine::untrusted_runner_command(*config)) return fail(bad->message);
    const std::string source = config->source;
    // What this platform will run with, once every default is applied, and where it was said.
    const std::string platform(confine::current_platform());
    std::string effective;
    if (const auto it = config->platforms.find(platform); it == config->platforms.end()) {
        std::fprintf(stderr, "confinectl: warning: no chain is configured for platform '%s': every run fails closed\n", platform.c_str());
    } else if (!it->second.runner_command.empty()) {
        effective = "platform " + platform + ": runner_command " + join(it->second.runner_command, " ") + " (" + confine::to_string(it->second.where) + ")\n";
    } else if (it->second.chain.empty()) {
        std::fprintf(stderr, "confinectl: warning: %s: the chain for platform '%s' is empty: every run fails closed\n",
                     confine::to_string(it->second.where).c_str(), platform.c_str());
    } else {
        effective = "platform " + platform + ": chain " + join(it->second.chain, " ") + " (" + confine::to_string(it->second.where) + ")\n";
    }
    // A plugin directory that is not there is searched in vain: valid, but likely a mistake.
    for (std::size_t i = 0; i < config->plugin_dirs.size(); ++i) {
        const auto& dir = config->plugin_dirs[i];
        std::error_code ec;
        const auto status = std::filesystem::status(dir, ec);
        std::string problem;
        if (status.type() == std::filesystem::file_type::not_found) problem = "does not exist";
        else if (ec) problem = "cannot be examined: " + ec.message();
        else if (!std::filesystem::is_directory(status)) problem = "is not a directory";
        if (!problem.empty())
            std::fprintf(stderr, "confinectl: warning: %s: plugin_dirs entry '%s' %s\n", confine::to_string(config->plugin_dirs_where[i]).c_str(),
                         dir.string().c_str(), problem.c_str());
    }
    // The policy's paths, as a read-only run would judge them (no writable root here: a
    // relative protect entry is judged by each run).
    warn_absent_paths(confine::PolicyRequest(confine::Mode::read_only, {}), *config);
    auto provider = confine::Provider::create(std::move(*config));
    if (!provider) return fail(provider.error().message);
    // Runner settings are judged by their own plugins, where this machine has them, as
    // every run judges them: what fails here fails a run, with this line.
    const auto judged = confine::judge_runner_settings((*provider)->config(), (*provider)->plugin_dirs());
    if (judged.error) return fail(judged.error->message);
    for (const auto& line : judged.unchecked) out << "note: " << line << '\n';
    out << effective << source << ": valid\n";
    return 0;
}

// The policy flags shared by `run` and `wrap`.
struct PolicyFlags {
    std::string mode = "workspace-write";
    std::string workspace;
    std::vector<std::string> writable;
    std::optional<std::string> network;
    std::vector<std::string> allow_hosts;
    std::optional<std::string> tmp;
    std::vector<std::string> deny_read;
    std::vector<std::string> protect;
    std::vector<std::string> unprotect;
    std::optional<std::string> read_scope;
    std::vector<std::string> read_roots;
    std::vector<std::string> env;  // --env NAME or NAME=VALUE, in order

    void read(const confine::cli::Parsed& p) {
        env = p.all("--env");
        deny_read = p.all("--deny-read");
        protect = p.all("--protect");
        unprotect = p.all("--unprotect");
        read_scope = p.value("--read");
        read_roots = p.all("--read-root");
        mode = p.value("--mode").value_or(mode);
        workspace = p.value("--workspace").value_or("");
        writable = p.all("--writable");
        network = p.value("--network");
        allow_hosts = p.all("--allow-host");
        tmp = p.value("--tmp");
    }

    // Why an --env cannot be used, or nullopt.
    std::optional<std::string> env_problem() const {
        for (const auto& e : env) {
            const std::string name = e.substr(0, e.find('='));
            if (auto why = confine::invalid_environment_name(name)) return "--env '" + e.substr(0, e.find('\0')) + "': " + *why;
            if (name.size() < e.size() && name.find('*') != std::string::npos)
                return "--env '" + e.substr(0, e.find('\0')) + "': a pattern cannot be set; name one variable";
        }
        return std::nullopt;
    }

    // What the flags say of the policy, or a one-line reason why they say nothing valid.
    // What they leave unsaid the provider completes, as for every host (confine/policy.hpp).
    std::expected<confine::PolicyRequest, std::string> request() const {
        namespace fs = std::filesystem;
        confine::PolicyRequest p;
        if (mode != "read-only" && mode != "workspace-write")
            return std::unexpected("--mode: " + mode + " is not one of read-only, workspace-write");
        if (network && *network != "none" && *network != "allow")
            return std::unexpected("--network: " + *network + " is not one of none, allow");
        if (network) p.network = *network == "none" ? confine::Network::none : confine::Network::allow;
        if (network && !allow_hosts.empty())
            return std::unexpected("--network " + *network + " and --allow-host exclude each other: --allow-host alone lets the command reach the "
                                   "hosts it names, through the run's proxy, and nothing else");
        for (const auto& host : allow_hosts) {
            auto pattern = confine::parse_host_pattern(host);
            if (!pattern) return std::unexpected("--allow-host: " + pattern.error());
            if (std::find(p.allow_hosts.begin(), p.allow_hosts.end(), pattern->text()) == p.allow_hosts.end()) p.allow_hosts.push_back(pattern->text());
        }
        if (tmp && *tmp != "private" && *tmp != "host") return std::unexpected("--tmp: " + *tmp + " is not one of private, host");
        if (tmp) p.tmp = *tmp == "private" ? confine::Tmp::private_ : confine::Tmp::host;
        p.mode = mode == "read-only" ? confine::Mode::read_only : confine::Mode::workspace_write;
        std::error_code ec;
        if (p.mode == confine::Mode::read_only) {
            if (!workspace.empty()) return std::unexpected(std::string("--workspace needs --mode workspace-write"));
        } else {
            p.workspace = workspace.empty() ? fs::current_path(ec) : fs::absolute(workspace, ec);
            if (ec) return std::unexpected("cannot resolve the workspace: " + ec.message());
            p.workspace = p.workspace.lexically_normal();
        }
        for (const auto& w : writable) {
            fs::path abs = fs::absolute(w, ec).lexically_normal();
            if (ec) return std::unexpected("cannot resolve --writable " + w + ": " + ec.message());
            // Required: the command was asked to write there.
            if (!fs::exists(abs, ec)) return std::unexpected("--writable " + w + " does not exist (a writable root must be an existing directory)");
            // A relative root names something of the workspace's: one that resolves
            // outside it (`build -> /etc`, `../..`) is not what it says.
            if (fs::path(w).is_relative() && !p.workspace.empty()) {
                std::error_code real_ec, ws_ec;
                const fs::path real = fs::canonical(abs, real_ec), ws = fs::canonical(p.workspace, ws_ec);
                // One that does not resolve is said by the policy check, which names it.
                if (!real_ec && !ws_ec && std::mismatch(ws.begin(), ws.end(), real.begin(), real.end()).first != ws.end())
                    return std::unexpected("refusing --writable " + w + ": it resolves to " + real.string() + ", outside the workspace " +
                                           p.workspace.string());
            }
            p.writable.push_back(abs);
        }
        // Relative to the current directory, as a user means them; the configuration's
        // are added by the provider.
        for (const auto& [flag, values, into] : {std::tuple{"--deny-read", &deny_read, &p.deny_read}, std::tuple{"--protect", &protect, &p.protect}})
            for (const auto& v : *values) {
                if (v.empty()) return std::unexpected(std::string(flag) + ": an empty path");
                fs::path abs = fs::absolute(v, ec).lexically_normal();
                if (ec) return std::unexpected("cannot resolve " + std::string(flag) + " " + v + ": " + ec.message());
                into->push_back(abs);
            }
        if (read_scope) {
            if (*read_scope != "scoped" && *read_scope != "all") return std::unexpected("--read must be scoped or all, not '" + *read_scope + "'");
            p.read_scoped = *read_scope == "scoped";
        }
        for (const auto& v : read_roots) {
            if (v == "~" || v.starts_with("~/")) {
                p.read_roots.emplace_back(v);
                continue;
            }
            fs::path abs = fs::absolute(v, ec).lexically_normal();
            if (ec) return std::unexpected("cannot resolve --read-root " + v + ": " + ec.message());
            p.read_roots.push_back(abs);
        }
        // As a protect entry is written: relative to each writable root, absolute, or "~/...".
        for (const auto& v : unprotect) {
            const fs::path entry(v);
            if (!entry.is_absolute() && v != "~" && !v.starts_with("~/"))
                for (const auto& part : entry)
                    if (part == "..") return std::unexpected("--unprotect " + v + ": a path relative to the writable roots must not climb out of them with '..'");
            p.unprotect.push_back(entry);
        }
        return p;
    }
};

// Where --report or --report-fd asks the run report to go; neither, nowhere.
struct ReportRequest {
    std::string file;
    std::optional<int> fd;
};

// Why what the flags ask crosses the managed layer of `config`, as one line naming the
// flag, or nullopt. `timeout` and `limits` are run's.
std::optional<std::string> crosses_managed(const confine::Config& config, const PolicyFlags& flags, const confine::PolicyRequest& request,
                                           std::optional<std::chrono::milliseconds> timeout = std::nullopt, const confine::Limits& limits = {}) {
    confine::ManagedAsk ask;
    ask.network = request.network;
    ask.allow_hosts = request.allow_hosts;
    ask.tmp = request.tmp;
    ask.read_scoped = request.read_scoped;
    ask.timeout = timeout;
    ask.limits = limits;
    ask.env = flags.env;
    ask.unprotect = flags.unprotect;
    for (const auto& r : request.read_roots) ask.read_roots.push_back(r.string());
    static const std::map<std::string, std::string> named{
        {"network", "--network"}, {"allow_hosts", "--allow-host"}, {"tmp", "--tmp"},      {"read", "--read"},          {"read_roots", "--read-root"},
        {"timeout", "--timeout"}, {"limits", "--limit"},           {"env", "--env"},      {"unprotect", "--unprotect"}};
    return confine::managed_crossing(config, ask, named);
}

// The run report's destination, made ready before the command runs, so that a report
// that could not be written stops the run before it starts.
class Report {
public:
    static std::expected<Report, std::string> prepare(const ReportRequest& request) {
        Report report;
        if (request.fd) {
            // The command must never inherit the report's descriptor.
            if (auto bad = confinectl::prepare_report_descriptor(*request.fd)) return std::unexpected(*bad);
            report.fd_ = request.fd;
        }
        if (!request.file.empty()) {
            auto opened = confinectl::ReportFile::open(request.file);
            if (!opened) return std::unexpected("--report " + opened.error());
            report.file_.emplace(std::move(*opened));
        }
        return report;
    }

    bool wanted() const { return file_ || fd_; }

    // A report that cannot be written is said, and does not change the exit status.
    // The text: the run's report, or that of a run refused before it started
    // ({"schema_version", "error"}).
    void write_text(const std::string& text) {
        if (!wanted()) return;
        const std::optional<std::string> error = file_ ? file_->write(text) : confinectl::write_to_descriptor(*fd_, text);
        if (error) std::fprintf(stderr, "confinectl: cannot write the report: %s\n", error->c_str());
    }

private:
    std::optional<confinectl::ReportFile> file_;
    std::optional<int> fd_;
};

std::atomic<int> g_child_pid{0};

// The time limit `run` is given (--timeout, --kill-after), each unset where not given.
struct TimeLimit {
    std::optional<std::chrono::milliseconds> timeout, kill_after;
};

std::expected<TimeLimit, std::string> time_limit(const confine::cli::Parsed& p, const confine::Config& config) {
    TimeLimit limit;
    for (const auto& [flag, into] : {std::pair{"--timeout", &limit.timeout}, std::pair{"--kill-after", &limit.kill_after}})
        if (const auto text = p.value(flag)) {
            auto duration = confine::parse_duration(*text);
            if (!duration) return std::unexpected(std::string(flag) + ": " + duration.error());
            *into = *duration;
        }
    if (limit.kill_after && !limit.timeout && !config.timeout)
        return std::unexpected(std::string("--kill-after: there is no time limit to follow (--timeout, or [policy] timeout)"));
    return limit;
}

// A run under a runner that is not the chain's first choice, because that one cannot be
// used here, is said in one line (docs/design.md §12): what was passed over and why, and
// each dimension asked that the runner used enforces below full.
void say_fallback(const confine::Selection& s, const confine::WrapResult& w) {
    if (s.asserted || s.chain.empty() || w.runner == s.chain.front()) return;
    const auto first = std::find_if(s.candidates.begin(), s.candidates.end(), [&](const confine::Candidate& c) { return c.runner == s.chain.front(); });
    if (first == s.candidates.end() || !first->verdict || first->verdict->usable()) return;
    const std::string weaker = enforced_less(w);
    // What the command gets less, too: a loopback the first choice gives and this one not.
    const char* loopback = w.loopback == confine::Loopback::none ? "; no loopback here: every TCP and UDP socket is refused, 127.0.0.1's too" : "";
    std::fprintf(stderr, "confinectl: warning: running under %s, not %s, the first choice, which cannot be used here (%s)%s%s%s\n", w.runner.c_str(),
                 first->runner.c_str(), first->verdict->reason.c_str(), weaker.empty() ? "" : "; enforced less here: ", weaker.c_str(), loopback);
}

// The run itself, with the signals sent to confinectl passed on to the command.
// Without a report, no denial hint is looked for, so that an attesting runner's command
// writes to stderr directly; and where the configuration accepts a run whose processes
// may outlive it ([policy.enforcement] lifetime = "best-effort") and no time limit is set,
// a runner that confines in-process turns confinectl into the command itself.
std::expected<confine::Outcome, confine::Error> run_forwarding_signals(const confine::Provider& provider, const confine::PolicyRequest& policy,
                                                                        const std::vector<std::string>& command, bool reporting,
                                                                        const std::vector<std::string>& env, const std::vector<int>& pass_fds,
                                                                        const TimeLimit& limit, const confine::Limits& limits, bool own_terminal) {
    confinectl::forward_signals(g_child_pid);
    confine::RunOptions options;
    options.timeout = limit.timeout;
    options.kill_after = limit.kill_after;
    options.limits = limits;
    options.environment_overrides = env;
    options.pass_fds = pass_fds;
    options.working_directory = policy.working_directory;  // empty: here
    options.on_command_awaited = [] { confinectl::await_command(); };
    options.on_started = [](int pid) {
        g_child_pid = pid;
        confinectl::child_changed();
    };
    options.on_wrapped = [&provider](const confine::WrapResult& w) { say_fallback(provider.selection(), w); };
    options.exec_in_place = !reporting;
    options.denial_hint = reporting;
    // At a terminal, the command gets a terminal of its own, which confinectl relays
    // (docs/design.md §7), unless --no-tty.
    options.own_terminal = own_terminal;
    auto outcome = confine::run(provider, policy, command, options);
    g_child_pid = 0;
    return outcome;
}

// Whether a limit ended the command, or may have: its signal then ends confinectl's
// status (128 + it), never confinectl itself.
bool ended_at_limit(const confine::Outcome& outcome) { return outcome.limit || !outcome.limit_possible.empty(); }

// Ends confinectl the way the command ended: its exit status, or its signal.
[[noreturn]] void end_as(const confine::Outcome& outcome) {
    int status = exit_failure;
    if (outcome.kind == confine::OutcomeKind::sandbox_unavailable)
        status = fail("sandbox unavailable: " + outcome.evidence);
    else if (outcome.timed_out)
        status = exit_timed_out;  // as timeout(1) does, however the command then ended
    else if (const auto interrupted = confinectl::interrupted_by())
        confinectl::die_by(*interrupted);  // does not return
    else if (outcome.signal && ended_at_limit(outcome))
        status = 128 + *outcome.signal;  // a limit's signal was for the run, never for confinectl
    else if (outcome.signal && outcome.own_terminal)
        status = 128 + *outcome.signal;  // as a terminal's program (ssh, script): the command's signal was its terminal's business
    else if (outcome.signal)
        confinectl::die_by(*outcome.signal);  // does not return
    else
        status = outcome.exit_code.value_or(exit_failure);
    // The command has ended and everything is said. Unloading the plugins and destroying
    // the provider would only keep the caller waiting for the status.
    std::fflush(nullptr);
    std::_Exit(status);
}

// confinectl was loaded with its caller's LD_PRELOAD, LD_LIBRARY_PATH and LD_AUDIT before
// main() ran: nothing here can undo that. What it can do is refuse, before it has loaded
// or started anything more, to run a command that could rewrite such a library, which
// the next confinectl would then run unconfined (docs/design.md §11). Judged against the
// roots the flags name; the configuration adds none.
std::optional<std::string> own_loader_problem(const PolicyFlags& flags) {
    if (!confine::sets_loader_variable()) return std::nullopt;
    const auto own = confine::current_environment();
    const auto request = flags.request();
    if (!request) return std::nullopt;  // said once the configuration is read
    const std::string_view who = "confinectl itself loads it, unconfined, at every start (this one included, before it could look)";
    if (auto bad = confine::loader_environment_problem(own, confine::complete_policy(*request, confine::Config{}), {}, who)) return bad->message;
    return std::nullopt;
}

// What `probe` says of a run where it stands: the workspace judged (empty in read-only
// mode) and, when `run` with the same --mode, --workspace and --writable would refuse to
// start there, the one line it would say.
struct RunJudgement {
    std::string workspace;
    std::optional<std::string> refusal;
};

// Judged as `run` judges before it starts anything (its loader check, then the library's
// preparation of the run: roots, the files it relies on, minimums, limits), with
// confinectl itself standing for the command.
RunJudgement judge_run(const confine::Provider& provider, const confine::Selection& s, const PolicyFlags& flags,
                       const confine::PolicyRequest& request) {
    RunJudgement judged{request.workspace.string(), std::nullopt};
    if (!s.usable()) {
        judged.refusal = unavailable_line(*s.failure);
        return judged;
    }
    if (auto bad = own_loader_problem(flags)) {
        judged.refusal = *bad;
        return judged;
    }
    if (auto bad = crosses_managed(provider.config(), flags, request)) {
        judged.refusal = *bad;
        return judged;
    }
    const std::vector<std::string> stand_in{confinectl::own_program()};
    if (auto bad = confine::check_run(provider, request, stand_in))
        judged.refusal = bad->code == confine::ErrorCode::sandbox_unavailable ? "sandbox unavailable: " + bad->message : bad->message;
    return judged;
}

// What a run of `request` would get below full, from a wrap of it (pure: nothing runs);
// nullopt where the wrap is refused.
std::optional<std::string> enforced_less_here(const confine::Provider& provider, const confine::PolicyRequest& request) {
    const std::vector<std::string> stand_in{confinectl::own_program()};
    auto wrapped = provider.wrap(request, stand_in);
    if (!wrapped) return std::nullopt;
    std::string weaker = enforced_less(*wrapped);
    // Partial for a reason no dimension names: the selection's word alone.
    if (weaker.empty() && wrapped->enforcement != confine::Enforcement::full) return std::nullopt;
    return weaker;
}

void print_judgement(Output& out, const RunJudgement& judged) {
    out << "workspace: " << (judged.workspace.empty() ? std::string("none (read-only mode)") : judged.workspace) << '\n';
    if (judged.refusal) out << "run: would refuse: " << *judged.refusal << '\n';
    else out << "run: would start\n";
}

// `probe`: the selection, and whether `run` would start where it stands (exit 125, with
// run's line, when it would not); with --prove, the canaries' matrix instead.
int cmd_probe(const Source& runners, const PolicyFlags& flags, bool as_json, bool proving, bool strict) {
    Output out;
    if (strict && !proving) return fail("probe: --strict applies to --prove");
    auto request = flags.request();
    if (!request) return fail(request.error());
    auto provider = open_provider(runners, provider_options(true));
    if (!provider) return exit_failure;
    const std::string source = provider->config().source;
    const confine::Selection s = provider->diagnose();
    const RunJudgement judged = judge_run(*provider, s, flags, *request);
    if (!proving) {
        if (as_json) {
            out << confinectl::probe_json(s, provider->config(), judged.workspace, judged.refusal);
        } else {
            print_probe(out, s, source, judged.refusal ? std::nullopt : enforced_less_here(*provider, *request));
            print_judgement(out, judged);
        }
        out.flush();
    }
    if (judged.refusal) return fail(*judged.refusal);
    return proving ? prove(out, *provider, as_json, strict) : 0;
}

// What the run-end check moved aside, and what it put back: a line each (docs/design.md §11).
void say_set_aside(const confine::Outcome& outcome) {
    std::string planted_line, restored_line;
    for (const auto& m : outcome.set_aside) {
        std::string& line = m.restored ? restored_line : planted_line;
        line += (line.empty() ? " " : "; ") + m.path.string();
        if (m.restored)
            line += m.error.empty() ? (m.moved_to.empty() ? std::string(" (it was removed)") : " (the command's left at " + m.moved_to.string() + ")")
                                    : " (NOT put back: " + m.error + ")";
        else
            line += m.error.empty() ? " -> " + m.moved_to.string() : " (NOT moved: " + m.error + "; remove it before running git or the tool there)";
    }
    if (!planted_line.empty()) fail("moved aside what the command planted where git or another tool would read it on the host:" + planted_line);
    if (!restored_line.empty()) fail("put back the protected paths the command changed:" + restored_line);
}

// The exit status end_as() gives `outcome` (128 + the signal for one that dies by it).
int status_of(const confine::Outcome& outcome) {
    if (outcome.kind == confine::OutcomeKind::sandbox_unavailable) return exit_failure;
    if (outcome.timed_out) return exit_timed_out;
    if (const auto interrupted = confinectl::interrupted_by()) return 128 + *interrupted;
    if (outcome.signal) return 128 + *outcome.signal;
    return outcome.exit_code.value_or(exit_failure);
}

// What a run says of itself when it ends or is refused: the report (--report,
// --report-fd) and the run record ([report] records, journal), a refusal included.
class RunAccount {
public:
    RunAccount(Report& report, const std::vector<std::string>& command) : report_(report) { context_.command = command; }

    // Once the configuration is in force: its records, opened before anything runs.
    std::optional<std::string> open_records(const confine::Config& config, const std::string& workspace) {
        config_ = &config;
        context_.workspace = workspace;
        auto opened = confinectl::Records::open(config.records);
        if (!opened) return opened.error();
        records_ = std::move(*opened);
        return std::nullopt;
    }

    // The run refused with `line`: said, reported and recorded; the status.
    int refuse(confine::ErrorCode code, const std::string& line, int status = exit_failure) {
        fail(line);
        const nlohmann::json body{{"outcome", "refused"}, {"error", {{"code", std::string(confine::error_code_name(code))}, {"message", line}}}};
        report_.write_text(confinectl::error_json(code, line));
        // Without a configuration in force, the managed layer alone says where records go.
        if (!records_ && !config_)
            if (auto managed = confine::load_managed(); managed)
                if (auto opened = confinectl::Records::open(managed->records); opened) records_ = std::move(*opened);
        if (records_) records_->write(context_, config_, body, status);
        return status;
    }

    void ended(const confine::Outcome& outcome, const std::vector<confine::Candidate>& skipped) {
        // The report's text made once, and only for a report or a record that is kept.
        const bool recorded = records_ && records_->wanted();
        if (!report_.wanted() && !recorded) return;
        const std::string text = confinectl::run_report_json(outcome, skipped);
        report_.write_text(text);
        if (recorded) records_->write(context_, config_, nlohmann::json::parse(text), status_of(outcome));
    }

private:
    Report& report_;
    confinectl::RecordContext context_;
    const confine::Config* config_ = nullptr;
    std::optional<confinectl::Records> records_;
};

// Where a run given --workspace DIR starts: DIR, when the current directory is not DIR or
// beneath it (`run --workspace app -- touch here.txt` from app's parent writes app/here.txt);
// else, or without --workspace, the current directory (empty). One that is not a
// directory is left for the policy check, which names it.
std::filesystem::path start_directory(const PolicyFlags& flags, const confine::PolicyRequest& policy) {
    namespace fs = std::filesystem;
    if (flags.workspace.empty() || policy.workspace.empty()) return {};
    std::error_code here_ec, ws_ec;
    const fs::path here = fs::canonical(fs::current_path(here_ec), here_ec), ws = fs::canonical(policy.workspace, ws_ec);
    if (here_ec || ws_ec || !fs::is_directory(ws, ws_ec)) return {};
    if (std::mismatch(ws.begin(), ws.end(), here.begin(), here.end()).first == ws.end()) return {};
    return ws;
}

int cmd_run(const Source& source, const PolicyFlags& flags, const std::vector<std::string>& command,
            const ReportRequest& report_request, const std::vector<int>& pass_fds, const confine::cli::Parsed& parsed,
            const confine::Limits& limits) {
    if (command.empty()) return fail("run: no command given (confinectl run [options] -- command [args...])");
    auto report = Report::prepare(report_request);
    if (!report) return fail(report.error());
    RunAccount account(*report, command);
    using Code = confine::ErrorCode;
    if (auto bad = own_loader_problem(flags)) return account.refuse(Code::invalid_policy, *bad);
    auto opened = provider_for(source, provider_options(false));
    if (!opened) return account.refuse(opened.error().code, opened.error().message);
    auto& provider = *opened;
    auto policy = flags.request();
    if (auto bad = account.open_records(provider->config(), policy ? policy->workspace.string() : std::string())) return account.refuse(Code::usage, *bad);
    if (auto bad = plugin_unusable(source, *provider)) return account.refuse(Code::sandbox_unavailable, *bad);
    if (!policy) return account.refuse(Code::usage, policy.error());
    if (auto bad = flags.env_problem()) return account.refuse(Code::usage, *bad);
    policy->working_directory = start_directory(flags, *policy);
    warn_absent_paths(*policy, provider->config(), flags.deny_read, flags.protect);
    const auto limit = time_limit(parsed, provider->config());
    if (!limit) return account.refuse(Code::usage, limit.error());
    if (auto bad = crosses_managed(provider->config(), flags, *policy, limit->timeout, limits)) return account.refuse(Code::config_managed, *bad);
    // Probing happens here, before any signal is forwarded: a signal now ends confinectl
    // by its default action, and the command never starts.
    provider->selection();
    auto outcome = run_forwarding_signals(*provider, *policy, command, report->wanted(), flags.env, pass_fds, *limit, limits, !parsed.has("--no-tty"));
    if (!outcome) {
        const auto& e = outcome.error();
        const int status = e.code == Code::command_not_found ? 127 : e.code == Code::command_not_executable ? 126 : exit_failure;
        return account.refuse(e.code, e.message, status);
    }
    say_set_aside(*outcome);
    // A run the time limit or a limit ended says so, in one line, whatever -v.
    if (!outcome->limit_note.empty()) fail(outcome->limit_note);
    // What a denial hint means, and a host the run's proxy refused (known without a report;
    // the rest only with one, as no hint is looked for without it).
    if (outcome->denial_advice) fail(*outcome->denial_advice);
    // The runners the chain passed over, as unusable here, stay visible in the report.
    std::vector<confine::Candidate> skipped;
    for (const auto& c : provider->selection().candidates)
        if (c.verdict && !c.verdict->usable()) skipped.push_back(c);
    account.ended(*outcome, skipped);
    end_as(*outcome);
}

// `wrap --json`: the wrap result, or — for a host that reads only stdout — an error
// object there too ({"schema_version", "error": {"code", "message"}}), with the one
// stderr line and the exit status run would give (125; 126 or 127 for the command).
int cmd_wrap(const Source& source, const PolicyFlags& flags, const std::vector<std::string>& command,
             const std::optional<std::string>& runner, const std::vector<int>& pass_fds) {
    Output out;
    auto failed = [&out](confine::ErrorCode code, const std::string& line) {
        out << confinectl::error_json(code, line);
        out.flush();
        fail(line);
        if (code == confine::ErrorCode::command_not_found) return 127;
        if (code == confine::ErrorCode::command_not_executable) return 126;
        return exit_failure;
    };
    if (command.empty()) return failed(confine::ErrorCode::usage, "wrap: no command given (confinectl wrap --json [options] -- command [args...])");
    if (runner && source.plugin) return failed(confine::ErrorCode::usage, "wrap: --runner and --plugin cannot be used together");
    // A named runner needs no selection, and no verdict of anyone's.
    auto provider = provider_for(source, runner ? confine::ProviderOptions{} : provider_options(false));
    if (!provider) return failed(provider.error().code, provider.error().message);
    if (auto bad = plugin_unusable(source, **provider)) return failed(confine::ErrorCode::sandbox_unavailable, *bad);
    auto policy = flags.request();
    if (!policy) return failed(confine::ErrorCode::usage, policy.error());
    if (auto bad = flags.env_problem()) return failed(confine::ErrorCode::usage, *bad);
    if (auto bad = crosses_managed((*provider)->config(), flags, *policy)) return failed(confine::ErrorCode::config_managed, *bad);
    const auto& allowed = (*provider)->config().managed.runners;
    if (runner && allowed && std::find(allowed->begin(), allowed->end(), *runner) == allowed->end())
        return failed(confine::ErrorCode::config_managed,
                      "--runner " + *runner + " crosses a managed bound: " + confine::describe_bound((*provider)->config().managed, "runners"));
    warn_absent_paths(*policy, (*provider)->config(), flags.deny_read, flags.protect);
    // The environment run would give the runner: the host gives it exactly that.
    confine::RunOptions options;
    options.environment_overrides = flags.env;
    auto env = confine::run_environment(**provider, options);
    if (!env) return failed(env.error().code, env.error().message);
    options.environment = env->variables;
    // The host starts the runner with this environment, before the sandbox exists.
    if (auto bad = confine::loader_environment_problem(env->variables, (*provider)->complete(*policy))) return failed(bad->code, bad->message);
    // Looked up as run does it: a typo is the caller's error, never a sandbox failure;
    // on Windows the wrap names the file found, as run's does.
    auto resolved = confine::resolve_command(command, options);
    if (!resolved) return failed(resolved.error().code, resolved.error().message);
    auto wrapped = runner ? (*provider)->wrap_with(*runner, *policy, *resolved) : (*provider)->wrap(*policy, *resolved);
    if (!wrapped) {
        const auto& e = wrapped.error();
        return failed(e.code, e.code == confine::ErrorCode::sandbox_unavailable ? "sandbox unavailable: " + e.message : e.message);
    }
    // The package managers' caches of the run, as run's: the host gives the runner these too.
    confine::prepare_packages(**provider, *wrapped, flags.env, env->variables);
    const auto text = confinectl::wrap_json(*wrapped, *env, pass_fds);
    if (!text) return failed(confine::ErrorCode::invalid_policy, text.error());
    out << *text;
    return 0;
}

const confine::cli::OptionSpec pass_fd_option{"--pass-fd", "N", true,
                                              "Hand descriptor N on to the command (it gets 0, 1, 2 and these, no other)"};

const std::vector<confine::cli::OptionSpec> policy_options{
    {"--mode", "MODE", false, "read-only or workspace-write (default)"},
    {"--workspace", "DIR", false, "Writable workspace directory (default: the current directory)"},
    {"--writable", "PATH", true, "An extra writable directory"},
    {"--network", "NET", false, "none (no socket reaches outside the sandbox) or allow (default: [policy] network, else none)"},
    {"--allow-host", "HOST", true,
     "Let the command reach HOST (example.org, *.example.org, host:port) through the run's proxy, and nothing else (default: [policy] allow_hosts)"},
    {"--tmp", "TMP", false, "private (the run's own /tmp) or host (the host's); a runner that cannot give it fails closed (default: [policy] tmp, else either)"},
    {"--deny-read", "PATH", true, "A path the command may neither read nor list, besides [policy] deny_read"},
    {"--protect", "PATH", true, "A path inside a writable root that stays read-only, besides [policy] protect"},
    {"--read", "SCOPE", false,
     "scoped (the system's directories, the writable roots, where the command runs and [policy] read_roots; nothing else of the home) or all "
     "(default: [policy] read, else all)"},
    {"--read-root", "PATH", true, "A path a scoped run may read too, besides [policy] read_roots"},
    {"--unprotect", "ENTRY", true,
     "Lift a protect entry, as [policy] protect writes it (.git/config, .vscode: relative to each writable root), besides [policy] unprotect"},
    {"--env", "NAME[=VALUE]", true, "Pass the variable NAME (a pattern: every one it matches, 'AWS_*') through whatever [policy.env] says, or set it to VALUE"},
};

std::vector<confine::cli::CommandSpec> command_specs() {
    using confine::cli::OptionSpec;
    using confine::cli::Operands;
    const OptionSpec config{"--config", "FILE", false, "Configuration file"};
    std::vector<OptionSpec> wrap_options{config, {"--json", "", false, "JSON output (the only format)"},
                                         {"--runner", "NAME", false, "Wrap with this runner, whatever the chain (not probed; for review)"}};
    // Not --allow-host: its proxy lives with a run, in confinectl; a wrap has none to give.
    std::copy_if(policy_options.begin(), policy_options.end(), std::back_inserter(wrap_options),
                 [](const OptionSpec& o) { return std::string_view(o.name) != "--allow-host"; });
    wrap_options.push_back(pass_fd_option);
    std::vector<OptionSpec> run_options{config};
    run_options.insert(run_options.end(), policy_options.begin(), policy_options.end());
    run_options.push_back(pass_fd_option);
    run_options.push_back({"--timeout", "DURATION", false,
                           "End the run after DURATION (500ms, 30s, 5m): SIGTERM to every process of it, then SIGKILL; exit 124 (default: [policy] timeout)"});
    run_options.push_back({"--kill-after", "DURATION", false, "How long after the time limit's SIGTERM the run gets SIGKILL (default: [policy] kill_after, else 5s)"});
    run_options.push_back({"--limit", "NAME=VALUE", true,
                           "Limit the run: memory (bytes, K/M/G), processes, cpu (seconds), file-size (bytes, K/M/G), open-files; over [policy.limits]"});
    run_options.push_back({"--report", "FILE", false, "Write a JSON report of the outcome to FILE"});
    run_options.push_back({"--report-fd", "N", false, "Write the JSON report to descriptor N (not inherited by the command)"});
    run_options.push_back({"--no-tty", "", false, "At a terminal, give the command this terminal itself rather than a pseudo-terminal of its own"});
    return {
        {"probe", "Show the platform's runner chain, each probed runner's verdict, the selection, and whether run would start here", "",
         Operands::none,
         {config, {"--json", "", false, "Machine-readable output"},
          {"--prove", "", false, "Run canaries under the selected runner and say, per dimension, what held"},
          {"--strict", "", false, "With --prove: exit 1 on a check left open as the runner reports, too"}, policy_options[0], policy_options[1],
          policy_options[2]}},
        {"plugins", "List the plugins found, where, their ABI, and why any was refused", "", Operands::none,
         {config, {"--json", "", false, "Machine-readable output"}}},
        {"check-config", "Validate a configuration file (default: the one confine would use)", "[FILE]", Operands::optional, {}},
        {"config", "Show the configuration in effect, each value with the file and line it comes from, and the managed layer's bounds", "",
         Operands::none, {config, {"--json", "", false, "Machine-readable output"}}},
        {"run", "Run a command confined", "[--] COMMAND [ARG...]", Operands::command, std::move(run_options)},
        {"wrap", "Print, as JSON, how a command would be wrapped, for hosts that spawn it themselves", "[--] COMMAND [ARG...]",
         Operands::command, std::move(wrap_options)},
    };
}

// --report-fd's or --pass-fd's value: a descriptor number, or a reason why not.
std::expected<int, std::string> descriptor_number(const std::string& text, const std::string& option = "--report-fd") {
    int fd = 0;
    for (char c : text) {
        if (c < '0' || c > '9' || fd > 100000000) return std::unexpected(option + ": '" + text + "' is not a descriptor number");
        fd = fd * 10 + (c - '0');
    }
    if (text.empty()) return std::unexpected(option + ": '' is not a descriptor number");
    return fd;
}

// --pass-fd's values: descriptors handed on to the command, each a number above 2, named
// once, not one confinectl uses itself (--report-fd's), and — for `run`, whose command
// inherits them from confinectl — open now, before confinectl has opened anything of its
// own that could take a free number. Or one line saying which is wrong.
std::expected<std::vector<int>, std::string> pass_fds(const confine::cli::Parsed& p, bool open_here, std::optional<int> report_fd) {
    std::vector<int> fds;
    for (const auto& text : p.all("--pass-fd")) {
#if defined(_WIN32)
        (void)open_here, (void)report_fd;
        return std::unexpected("--pass-fd " + text + ": passing descriptors on is not available on Windows");
#endif
        auto fd = descriptor_number(text, "--pass-fd");
        if (!fd) return std::unexpected(fd.error());
        const std::string named = "--pass-fd " + std::to_string(*fd) + ": ";
        if (*fd <= 2) return std::unexpected(named + "descriptors 0, 1 and 2 are the command's anyway");
        if (std::find(fds.begin(), fds.end(), *fd) != fds.end()) return std::unexpected(named + "named twice");
        if (report_fd && *fd == *report_fd) return std::unexpected(named + "it is --report-fd's, which the command never gets");
        if (auto bad = confine::check_pass_fds(std::span<const int>(&*fd, 1), open_here)) return std::unexpected(named + "not an open descriptor");
        fds.push_back(*fd);
    }
    return fds;
}

// --limit's values, each NAME=VALUE, a name at most once; or one line saying which is wrong.
std::expected<confine::Limits, std::string> limits(const confine::cli::Parsed& p) {
    confine::Limits out;
    for (const auto& text : p.all("--limit")) {
        const std::size_t eq = text.find('=');
        if (eq == std::string::npos) return std::unexpected("run: --limit " + text + ": expected NAME=VALUE (" + std::string(confine::limit_names) + ")");
        if (auto why = confine::set_limit(out, text.substr(0, eq), text.substr(eq + 1))) return std::unexpected("run: --limit " + text + ": " + *why);
    }
    return out;
}

// --report and --report-fd, read; or why they cannot be used.
std::expected<ReportRequest, std::string> report_request(const confine::cli::Parsed& p) {
    ReportRequest request;
    if (auto text = p.value("--report-fd")) {
        auto fd = descriptor_number(*text);
        if (!fd) return std::unexpected(fd.error());
        request.fd = *fd;
    }
    request.file = p.value("--report").value_or("");
    if (request.fd && !request.file.empty()) return std::unexpected(std::string("run: --report and --report-fd cannot be used together"));
    return request;
}

int run_command(const confine::cli::Parsed& p) {
    const std::string name(p.command->name);
    const std::string config_path = p.value("--config").value_or("");
    const bool as_json = p.has("--json");
    Source source{config_path, std::nullopt};
    if (p.plugin) {
        if (name != "run" && name != "wrap" && name != "probe") return fail("--plugin applies to run, wrap and probe, not " + name);
        auto only = plugin_only(*p.plugin);
        if (!only) {
            if (name == "wrap") Output() << confinectl::error_json(confine::ErrorCode::usage, only.error());
            return fail(only.error());
        }
        source.plugin = std::move(*only);
    }
    PolicyFlags policy;
    policy.read(p);
    if (name == "probe") return cmd_probe(source, policy, as_json, p.has("--prove"), p.has("--strict"));
    if (name == "plugins") return cmd_plugins(config_path, as_json);
    if (name == "check-config") return cmd_check_config(p.operands.empty() ? std::string() : p.operands.front());
    if (name == "config") return cmd_config(config_path, as_json);
    if (name == "wrap") {
        auto passed = pass_fds(p, false, std::nullopt);
        if (!passed) {
            Output() << confinectl::error_json(confine::ErrorCode::usage, passed.error());
            return fail(passed.error());
        }
        return cmd_wrap(source, policy, p.operands, p.value("--runner"), *passed);
    }
    auto report = report_request(p);
    if (!report) return fail(report.error());
    auto passed = pass_fds(p, true, report->fd);
    if (!passed) return fail(passed.error());
    auto limited = limits(p);
    if (!limited) return fail(limited.error());
    return cmd_run(source, policy, p.operands, *report, *passed, p, *limited);
}

}  // namespace

int main(int argc, char** argv) {
#if !defined(_WIN32)
    // What a canary of `probe --prove` does inside the sandbox, before anything else.
    if (argc >= 2 && std::strcmp(argv[1], "__canary") == 0) return confine::canary_main(argc - 2, argv + 2);
#endif
    confinectl::make_undumpable();
    confine::set_log_program_name("confinectl");
    const auto commands = command_specs();
    auto parsed = confine::cli::parse(std::span<const char* const>(argv + 1, static_cast<std::size_t>(argc > 0 ? argc - 1 : 0)), commands);
    if (!parsed) return fail(parsed.error());
    const auto& p = *parsed;
    if (p.action == confine::cli::Parsed::Action::version) {
        Output() << "confinectl " << CONFINE_VERSION << '\n';
        return 0;
    }
    if (p.action == confine::cli::Parsed::Action::help) {
        Output() << (p.command ? confine::cli::command_help("confinectl", *p.command)
                               : confine::cli::global_help("confinectl", "Runs commands confined by the platform's sandbox, failing closed.", commands));
        return 0;
    }
    confine::set_log_level(p.verbose ? confine::LogLevel::debug : confine::LogLevel::warn);
    try {
        return run_command(p);
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    }
}
