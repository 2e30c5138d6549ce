// A call's policy completed from its request (docs/design.md §3, "Completing a policy"):
// what the request leaves unsaid from the configuration and the run.
#include <confine/policy.hpp>
#include <confine/sdk/vocabulary.hpp>

#include "completion.hpp"

#include <algorithm>
#include <cstdlib>

namespace fs = std::filesystem;

namespace confine {

// The unprotect entries of a call: the configuration's, then the request's.
std::vector<fs::path> detail::unprotect_entries(const PolicyRequest& request, const Config& config) {
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
    const auto lifted = detail::unprotect_entries(request, config);
    std::erase_if(p.protect, [&](const fs::path& entry) {
        return std::any_of(lifted.begin(), lifted.end(), [&](const fs::path& u) { return sdk::is_within(entry.lexically_normal(), u); });
    });
    return p;
}

}  // namespace confine
