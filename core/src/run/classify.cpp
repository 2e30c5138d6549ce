#include "classify.hpp"

#include <confine/allow_hosts.hpp>
#include <confine/execute.hpp>
#include <confine/sdk/vocabulary.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <initializer_list>
#include <string_view>

namespace confine {

std::string_view to_string(OutcomeKind kind) noexcept {
    switch (kind) {
    case OutcomeKind::completed: return "completed";
    case OutcomeKind::task_failed: return "task_failed";
    case OutcomeKind::sandbox_unavailable: break;
    }
    return "sandbox_unavailable";
}

std::string_view to_string(Basis basis) noexcept {
    switch (basis) {
    case Basis::attestation: return "attestation";
    case Basis::rule: return "rule";
    case Basis::spawn_error: return "spawn_error";
    case Basis::selection: break;
    }
    return "selection";
}

namespace {

// Whether a line of `text` contains `marker`.
bool line_with(std::string_view text, std::string_view marker) {
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        if (text.substr(0, nl).find(marker) != std::string_view::npos) return true;
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return false;
}

// Whether the runner reached the command, as far as anything out of band says
// (docs/design.md §6), and why not or how it stopped.
struct OutOfBand {
    Observation::Attested what;
    std::string detail;
};

// What the executor saw itself decides, or else what the runner said on its status
// descriptor: the command ran iff a line there contains the runner's marker. A runner
// that exited without saying so stopped before the command. A runner ended by a signal
// before saying anything proves nothing either way (docs/design.md §5: never a runner
// failure by that alone): the rule decides then.
OutOfBand out_of_band(const WrapResult& wrap, const Observation& o) {
    if (!o.status_text) return {o.attested, o.attestation_detail};
    if (line_with(*o.status_text, wrap.attestation.status_marker)) return {Observation::Attested::reached_command, {}};
    if (o.exit_code) return {Observation::Attested::runner_stopped, "its status descriptor never reported the command"};
    return {Observation::Attested::unavailable, "the runner was ended by a signal before it reported"};
}

std::string status_text(const Observation& o) {
    if (o.exit_code) return "exit status " + std::to_string(*o.exit_code);
#if defined(_WIN32)
    if (o.signal) return std::string("signal ") + std::to_string(*o.signal);
#else
    if (o.signal) return std::string("signal ") + std::to_string(*o.signal) + " (" + strsignal(*o.signal) + ")";
#endif
    return "unknown status";
}

// What the outcome says whatever it is: the wrap's claims, and how the command ended.
Outcome claimed(const WrapResult& wrap, const Observation& o) {
    Outcome out;
    static_cast<Asked&>(out) = wrap;
    out.runner = wrap.runner;
    out.enforcement = wrap.enforcement;
    out.dimensions = wrap.dimensions;
    out.tmp = wrap.tmp;
    out.loopback = wrap.loopback;
    out.exit_code = o.exit_code;
    out.signal = o.signal;
    out.limit = o.limit;
    out.limit_possible = o.limit_possible;
    out.timed_out = o.timed_out;
    return out;
}

}  // namespace

Outcome classify(const WrapResult& wrap, const Observation& o) {
    Outcome out = claimed(wrap, o);
    const std::string runner_program = wrap.argv.empty() ? std::string("?") : wrap.argv.front();

    if (!o.spawned) {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::spawn_error;
        out.evidence = "cannot start runner '" + wrap.runner + "' (" + runner_program + "): " + std::strerror(o.spawn_errno);
        if (!o.attestation_detail.empty()) out.evidence += " (" + o.attestation_detail + ")";
        return out;
    }
    auto task = [&](Basis basis) {
        out.basis = basis;
        out.kind = o.exit_code == 0 ? OutcomeKind::completed : OutcomeKind::task_failed;
        if (out.kind == OutcomeKind::task_failed && o.stderr_seen) out.denial_hint = o.stderr_findings.denial_line;
        return out;
    };
    const OutOfBand said = out_of_band(wrap, o);
    // The runner's declared exec was not the command's: it was ended before it went on,
    // whatever else happened (a time limit included).
    if (said.what == Observation::Attested::wrong_exec) {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::attestation;
        out.evidence = said.detail.empty() ? "runner '" + wrap.runner + "' did not exec the command it declared" : said.detail;
        return out;
    }
    // A run the executor killed at its time limit is the task's failure: the command
    // (or the runner, if it hung) took too long, and nothing claims otherwise.
    if (o.timed_out) return task(said.what == Observation::Attested::unavailable ? Basis::rule : Basis::attestation);

    switch (said.what) {
    case Observation::Attested::reached_command:
        // The command was started by the runner: whatever it printed or returned is its own.
        return task(Basis::attestation);
    case Observation::Attested::runner_stopped: {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::attestation;
        if (o.stderr_seen && o.stderr_findings.fatal_line) {
            out.evidence = *o.stderr_findings.fatal_line;
            out.matched_rule = o.stderr_findings.fatal_signature;
        } else if (!o.runner_message.empty()) {
            out.evidence = o.runner_message;
        } else {
            out.evidence = "runner '" + wrap.runner + "' ended with " + status_text(o) + " before starting the command" +
                           (said.detail.empty() ? "" : " (" + said.detail + ")");
        }
        return out;
    }
    case Observation::Attested::unavailable:
    case Observation::Attested::wrong_exec: break;
    }

    // Rule basis (docs/design.md §5): exit 0 or a signal is never a runner failure; otherwise the
    // status must be one the rule allows and a stderr line must carry a fatal signature.
    if (!o.exit_code || *o.exit_code == 0 || !o.stderr_seen) return task(Basis::rule);
    const auto& allowed = wrap.failure_rule.evidence_exit_codes;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *o.exit_code) == allowed.end()) return task(Basis::rule);
    if (const auto& found = o.stderr_findings; found.fatal_line) {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::rule;
        out.evidence = *found.fatal_line;
        out.matched_rule = found.fatal_signature;
        return out;
    }
    return task(Basis::rule);
}

}  // namespace confine

namespace confine {
namespace {

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// The host a resolver's failure names in `line` (lowered), as the tools word it: curl's,
// git's and cargo's "could not resolve host: H", node's (npm's) "getaddrinfo EAI_AGAIN H"
// and "getaddrinfo ENOTFOUND H", apt's "temporary failure resolving 'H'", urllib3's
// (pip's) "failed to resolve 'H'". Empty where the line names none (pip's own
// "[Errno -3] Temporary failure in name resolution" does not).
std::string host_named(std::string_view line) {
    for (const std::string_view before : {"could not resolve host: ", "getaddrinfo eai_again ", "getaddrinfo enotfound ",
                                          "temporary failure resolving '", "failed to resolve '"}) {
        const std::size_t at = line.find(before);
        if (at == std::string_view::npos) continue;
        std::string host;
        for (std::size_t i = at + before.size(); i < line.size() && host.size() < 253; ++i) {
            const char c = line[i];
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') break;
            host += c;
        }
        while (!host.empty() && host.back() == '.') host.pop_back();
        if (!host.empty()) return host;
    }
    return {};
}

std::string listed(const std::vector<std::string>& hosts) {
    std::string out;
    for (const auto& h : hosts) out += (out.empty() ? "" : ", ") + h;
    return out;
}

// A line in which the network was not there: one of the words network_denial_signatures() holds.
bool network_line(std::string_view lower) {
    const auto words = sdk::network_denial_signatures();
    return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return lower.find(w) != std::string_view::npos; });
}

bool has_any(std::string_view lower, std::initializer_list<std::string_view> words) {
    return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return lower.find(w) != std::string_view::npos; });
}

// Whether `lower` names the loopback: 127.0.0.1, ::1, or localhost as a host (not a part
// of a file's name such as /etc/localhost.conf).
bool names_loopback(std::string_view lower) {
    if (has_any(lower, {"127.0.0.1", "::1"})) return true;
    auto part_of_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '/'; };
    constexpr std::string_view host = "localhost";
    for (std::size_t at = lower.find(host); at != std::string_view::npos; at = lower.find(host, at + 1)) {
        const std::size_t end = at + host.size();
        if ((at == 0 || !part_of_name(lower[at - 1])) && (end == lower.size() || !part_of_name(lower[end]))) return true;
    }
    return false;
}

// A line in which a socket was refused (`lower`): one that names the loopback with a
// refusal's or the network's words, or a socket call refused as the tools say it (node's
// "listen EACCES", Go's "socket: permission denied", python's bare "[Errno 13] Permission
// denied", which a refused file never is: python names the file after it).
bool socket_refused(std::string_view lower) {
    const bool refusal = has_any(lower, {"permission denied", "eacces", "operation not permitted", "eperm"});
    if (names_loopback(lower)) return refusal || network_line(lower);
    if (!refusal) return false;
    std::string_view trimmed = lower;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '.' || trimmed.back() == '\r')) trimmed.remove_suffix(1);
    if (trimmed.ends_with("[errno 13] permission denied")) return true;
    return has_any(lower, {"listen eacces", "connect eacces", "bind eacces", "socket: permission denied", "listen: permission denied",
                           "bind: permission denied", "connect: permission denied", "socket: operation not permitted"});
}

// What the run's proxy refused, first one it would have let through had allow_hosts listed
// it: the host, and the --allow-host pattern for it (with the port, beyond 80 and 443);
// else one it refused for where the name leads, which listing the name would not change.
std::optional<std::string> proxy_refusal(const WrapResult& wrap, const Outcome& outcome) {
    const NetworkRequest* other = nullptr;
    for (const auto& r : outcome.network_requests) {
        if (r.allowed) continue;
        if (r.reason != "not in allow_hosts") {
            if (!other) other = &r;
            continue;
        }
        const bool ipv6 = r.host.find(':') != std::string::npos;
        std::string pattern = ipv6 ? "[" : "";
        pattern += r.host;
        if (ipv6) pattern += "]";
        if (r.port != 80 && r.port != 443) {
            pattern += ':';
            pattern += std::to_string(r.port);
        }
        return "the run's proxy refused " + r.host + ":" + std::to_string(r.port) + " (not in allow_hosts); the run's allow_hosts are " +
               listed(wrap.policy.allow_hosts) + ": add --allow-host " + pattern + " if the command may reach it";
    }
    if (other) return "the run's proxy refused " + other->host + ":" + std::to_string(other->port) + " (" + other->reason + ")";
    return std::nullopt;
}

// A name that did not resolve with the network through the run's proxy (which refused
// nothing): the command looked it up itself, having no DNS; whether allow_hosts has it.
std::optional<std::string> resolved_directly(const WrapResult& wrap, std::string_view line, const std::string& host) {
    if (host.empty() && line.find("name resolution") == std::string_view::npos && line.find("service not known") == std::string_view::npos)
        return std::nullopt;  // not a name that did not resolve: the proxy's 403 to a tool whose words are not known
    const std::string hosts = listed(wrap.policy.allow_hosts);
    const std::string command_dns = "the command has no DNS of its own and reaches hosts only through the run's proxy (HTTPS_PROXY, HTTP_PROXY)";
    if (host.empty()) return command_dns + ", for the run's allow_hosts " + hosts + ": add --allow-host HOST for the host it wanted";
    std::vector<HostPattern> patterns;
    for (const auto& h : wrap.policy.allow_hosts)
        if (auto p = parse_host_pattern(h)) patterns.push_back(*p);
    if (!host_allowed(patterns, host, 443) && !host_allowed(patterns, host, 80))
        return host + " is not among the run's allow_hosts (" + hosts + "), and " + command_dns + ": add --allow-host " + host +
               " if the command may reach it";
    return host + " is among the run's allow_hosts, but the command looked it up itself instead of asking the run's proxy, and " +
           command_dns + ": have the tool use HTTPS_PROXY";
}

}  // namespace

std::optional<std::string> denial_advice(const WrapResult& wrap, const Outcome& outcome) {
    if (outcome.kind != OutcomeKind::task_failed) return std::nullopt;
    // A host the run's proxy refused is the proxy's own word, whatever the tool printed.
    if (wrap.policy.network == Network::proxy)
        if (auto refused = proxy_refusal(wrap, outcome)) return refused;
    if (!outcome.denial_hint) return std::nullopt;
    const std::string line = lowered(*outcome.denial_hint);
    // apt, as root, drops to its _apt user for each download (setgroups, setegid,
    // seteuid): a confined command holds no capability to, whatever user it runs as.
    if (line.find("operation not permitted") != std::string::npos &&
        (line.find("setgroups") != std::string::npos || line.find("seteuid") != std::string::npos || line.find("setegid") != std::string::npos))
        return std::string("a change of user (apt's to _apt, for its downloads) needs CAP_SETUID and CAP_SETGID, and a confined command has "
                           "no capability, root's included: give apt-get -o APT::Sandbox::User=root (README, Installing packages with apt)");
    // apt's own state and cache, which no run's writable roots hold by default.
    for (const std::string_view dir : {"/var/lib/apt/", "/var/cache/apt/", "/var/lib/dpkg/"})
        if (line.find(dir) != std::string::npos)
            return std::string("apt keeps its lists, cache and locks in /var/lib/apt, /var/cache/apt and /var/lib/dpkg, which the run may not "
                               "write: download into the workspace (apt-get download; or -o Dir::State::Lists=DIR -o Dir::Cache=DIR "
                               "-o Debug::NoLocking=1, with DIR in it) (README, Installing packages with apt)");
    // A run with no loopback of its own (Landlock as a user other than root): the
    // network filter refuses every socket, the loopback's too.
    if (wrap.policy.network == Network::none && wrap.loopback == Loopback::none && socket_refused(line))
        return "the run has no loopback under " + wrap.runner +
               " here: with the network none every TCP and UDP socket is refused, 127.0.0.1's and ::1's too, so the command can neither "
               "serve on the loopback nor reach a server it started; bubblewrap, or Landlock as root, gives a run a loopback of its own "
               "(README, \"No network\")";
    if (wrap.policy.network == Network::allow || !network_line(line)) return std::nullopt;
    const std::string host = host_named(line);
    if (wrap.policy.network == Network::proxy) return resolved_directly(wrap, line, host);
    const std::string name = host.empty() ? std::string("HOST") : host;
    return "the run's network is none: no name resolves and no host is reached; let the command reach " + name + " with --allow-host " +
           name + " (through the run's proxy), or give it the network with --network allow";
}

}  // namespace confine
