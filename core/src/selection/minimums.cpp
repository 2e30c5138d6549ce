#include "minimums.hpp"

#include <confine/config.hpp>

#include "executor.hpp"
#include "roots.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace confine::detail {

namespace fs = std::filesystem;

std::string_view name_of(Minimum m) {
    return m == Minimum::full ? "full" : m == Minimum::partial ? "partial" : "best-effort";
}

bool meets(Level level, Minimum minimum) {
    return minimum == Minimum::best_effort || (minimum == Minimum::partial ? level != Level::none : level == Level::full);
}

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
static std::vector<std::string> denial_paths(const Policy& policy) {
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

}  // namespace confine::detail
