// The wrap of one call (docs/design.md §3, §4): the completed policy checked and resolved,
// the selected runner's wrap (or the asserted runner command's), held to the minimums and
// the call's explicit asks, a later runner of the chain where the selected one cannot honour
// them, and the run-end checks taken before the run.
#include <confine/provider.hpp>
#include <confine/managed.hpp>
#include <confine/allow_hosts.hpp>

#include "completion.hpp"
#include "executor.hpp"
#include "selection.hpp"
#include "placeholders.hpp"
#include "plugins/loader.hpp"
#include "git_guard.hpp"
#include "protect_watch.hpp"
#include "log.hpp"
#include "roots.hpp"
#include "trust.hpp"

#include <confine/sdk/bwrap_profile.hpp>
#include <confine/sdk/program_trust.hpp>

#include <algorithm>
#include <cstdlib>

#if !defined(_WIN32)
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#endif

namespace fs = std::filesystem;

namespace confine {

using detail::explicit_asks;
using detail::ExplicitAsks;
using detail::meets_minimums;
using detail::reported;
using detail::without_about;

namespace {

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
    detail::drop_unprotected(*resolved, detail::unprotect_entries(policy, impl_->config));
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
    detail::drop_unprotected(*resolved, detail::unprotect_entries(request, impl_->config));
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
