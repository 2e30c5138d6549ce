// The run's proxy (docs/design.md §12, the network through the proxy): confine-proxy,
// started outside the sandbox for one run, ended with it. The host opens its listener on
// 127.0.0.1 before the wrap (the port goes into the policy), starts the program once the
// runner has said how the command reaches it, and reads what it saw when the run is over.
// Internal to libconfine.
#pragma once

#include <confine/error.hpp>
#include <confine/execute.hpp>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace confine::detail {

// What the proxy reported at its end.
struct ProxyReport {
    bool read = false;       // its report arrived whole
    unsigned listeners = 0;  // the listeners a sandbox handed it ({proxy-fd})
    std::uint64_t over_limit = 0;  // connections it refused (503), serving its limit already
    std::vector<NetworkRequest> requests;
    std::string problem;     // why there is no report, when there is none
};

class ProxyRun {
public:
    // The run's listener on 127.0.0.1, at a port the system chooses, and confine-proxy
    // found in `dirs` (beside the built-in plugins); judge() says whether it may run.
    // `verbose`: the proxy says each refusal on this process's stderr as it happens.
    static std::expected<std::shared_ptr<ProxyRun>, Error> open(std::vector<std::string> allow_hosts,
                                                                const std::vector<std::filesystem::path>& dirs, bool verbose);
    ProxyRun(const ProxyRun&) = delete;
    ProxyRun& operator=(const ProxyRun&) = delete;
    ~ProxyRun();

    std::uint16_t port() const noexcept;
    // Why the program cannot be trusted to run for the run whose writable roots these are
    // (the trust rule, program_trust.hpp: one the command could replace would be the next
    // run's proxy), or nullopt. Judged once, by a run and by a judgement of one alike.
    std::optional<Error> judge(const std::vector<std::filesystem::path>& writable_roots) const;
    // Starts the program, judged. `receive`: the sandbox binds its own listener and hands it
    // over the socket whose other end is sandbox_end() (the {proxy-fd} placeholder);
    // otherwise the proxy accepts on the host's listener, and the command connects to it there.
    std::optional<Error> start(bool receive);
    int sandbox_end() const noexcept;  // -1 unless started to receive
    bool receiving() const noexcept;
    // Ends the program and reads its report: once; later calls give the same.
    const ProxyReport& finish();

    struct Impl;

private:
    explicit ProxyRun(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// The variables the usual tools read for a proxy (curl, git, pip, npm, cargo, ...), each
// NAME=VALUE, for a proxy at 127.0.0.1:`port`; NO_PROXY keeps the loopback direct (the
// sandbox's own), but for a loopback name or address `allow_hosts` lists: the host's
// service there is reached through the proxy.
std::vector<std::string> proxy_environment(std::uint16_t port, const std::vector<std::string>& allow_hosts = {});

}  // namespace confine::detail
