// What a host asks of one call, and how the provider completes it (docs/design.md §3,
// §12): a field the request leaves unsaid takes the operator's value from the
// configuration's [policy], for confinectl (whose flags are said fields) and every library
// host alike, and what only the run itself knows — whether the command gets the caller's
// terminal, where it runs — from the run.
//
//   confine::PolicyRequest request{confine::Mode::workspace_write, workspace};
//   // request.network, request.tmp unsaid: [policy] network, [policy] tmp
//   auto outcome = confine::run(**provider, request, argv);
//
// A complete confine::Policy (confine/sdk/vocabulary.hpp) is what a runner receives. One
// given where a request is taken says every field as it is written, but `tmp` when it is
// Tmp::unsaid and `terminal` when it is false: those are left unsaid. Its `network` is
// always said (Network::none unless set), so a host that wants the operator's [policy]
// network builds a PolicyRequest.
#pragma once

#include <confine/wrap_result.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

namespace confine {

struct Config;

struct PolicyRequest {
    Mode mode = Mode::workspace_write;
    std::filesystem::path workspace;              // required for workspace-write; empty in read-only
    std::vector<std::filesystem::path> writable;  // extra writable roots (workspace-write only)
    // Unsaid: [policy] network, else none (proxy when [policy] allow_hosts lists hosts).
    std::optional<Network> network;
    // The hosts the command may reach through the run's proxy (confine/allow_hosts.hpp
    // patterns). Any here: the network is Network::proxy with these hosts, and `network`
    // must be unsaid or proxy. None: [policy] allow_hosts where the network is the
    // configuration's. Only run() and spawn() can give it: the proxy lives with the run.
    std::vector<std::string> allow_hosts;
    // Unsaid: [policy] tmp, else either (a runner's own choice). Said, or set by the
    // operator, a runner that cannot give it fails closed (SANDBOX_UNAVAILABLE).
    std::optional<Tmp> tmp;
    // Added to the configuration's [policy] deny_read and protect (absolute paths); each
    // one said here is an explicit ask ([policy.enforcement]).
    std::vector<std::filesystem::path> deny_read;
    std::vector<std::filesystem::path> protect;
    // Unsaid: [policy] read ("scoped": true). Scoped, the command reads the system's
    // directories, the writable roots, where it runs, [policy] read_roots and these
    // `read_roots` (absolute, or "~/..."), and nothing else (Config::read_scoped).
    std::optional<bool> read_scoped;
    std::vector<std::filesystem::path> read_roots;
    // Protect entries lifted, besides [policy] unprotect (as written there: relative to
    // each writable root, absolute, or "~/..."): see Config::unprotect.
    std::vector<std::filesystem::path> unprotect;
    // Whether the command's standard descriptors include the caller's terminal. Unsaid:
    // what the run knows (RunContext): run() whether this process's standard descriptors
    // include one, spawn() never (a background run has none; said true there is
    // INVALID_POLICY), wrap() no.
    std::optional<bool> terminal;
    // Where the command will run. Empty: the run's (RunOptions::working_directory), else
    // the current directory.
    std::filesystem::path working_directory;

    PolicyRequest() = default;
    PolicyRequest(Mode asked_mode, std::filesystem::path asked_workspace, std::vector<std::filesystem::path> asked_writable = {})
        : mode(asked_mode), workspace(std::move(asked_workspace)), writable(std::move(asked_writable)) {}
    // A complete policy as a request: each of its fields said, its network among them,
    // so the configuration's [policy] network is not taken. Explicit, so that a host that
    // passes a Policy where a request is asked for says so: leave `network` unsaid (reset
    // it) to take the operator's.
    explicit PolicyRequest(const Policy& policy);
};

// What the call knows of the run that a request may leave unsaid: whether the command's
// standard descriptors include the caller's terminal, and where it runs (empty: the
// current directory). run() and spawn() give their own; a host that runs a wrap itself
// gives its own, or says them in the request.
struct RunContext {
    bool terminal = false;
    std::filesystem::path working_directory;
    // The port of the run's proxy (Policy::proxy_port), which run() and spawn() open
    // before the wrap; 0: none (a wrap with the network through the proxy is refused).
    std::uint16_t proxy_port = 0;
    // With `terminal`: the run gives the command a pseudo-terminal of its own
    // (Policy::own_terminal, RunOptions::own_terminal).
    bool own_terminal = false;
};

// The policy a call gets, before its paths are resolved: the request's fields, each one it
// leaves unsaid from `config` ([policy] network, tmp) or `context` (terminal, working
// directory); the configuration's deny_read and protect before the request's, and — while
// deny_read holds anything — the socket of the caller's ssh agent (SSH_AUTH_SOCK), which
// taking the variable away would not hide. The one completion: Provider::complete(),
// wrap(), run() and spawn() all go through it.
Policy complete_policy(const PolicyRequest& request, const Config& config, const RunContext& context = {});

}  // namespace confine
