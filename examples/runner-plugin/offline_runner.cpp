// The `offline` runner: confine's bubblewrap profile — the whole file system read-only,
// a private /tmp, the workspace writable, no capabilities, namespaces of its own — and
// no network at all (`--unshare-net`): for builds and tests that must not reach
// anything. bubblewrap attests on the host's status descriptor that it reached the
// command, and names its process there. A third-party plugin: it uses nothing but
// confine's SDK.
#include <confine/sdk/bwrap_profile.hpp>
#include <confine/sdk/plugin.hpp>
#include <confine/sdk/program_trust.hpp>

namespace sdk = confine::sdk;

namespace {

class OfflineRunner final : public sdk::Runner {
public:
    OfflineRunner(sdk::Host host, std::string bwrap) : host_(host), prefix_{std::move(bwrap), "--unshare-net"} {}

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        if (auto bad = config.settings.reject_unknown({"bwrap"})) return std::unexpected(*bad);
        auto bwrap = config.settings.absolute_path_or("bwrap", "/usr/bin/bwrap");
        if (!bwrap) return std::unexpected(bwrap.error());
        return std::make_unique<OfflineRunner>(host, *bwrap);
    }

    // Functional: `true` must run with the read-only profile and no network.
    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        if (auto bad = sdk::untrusted_program(prefix_.front())) return sdk::Verdict::unusable("bubblewrap cannot be used: " + *bad);
        // The network filter's descriptor is the host's to give at a run, not a probe's.
        sdk::Policy policy{sdk::Mode::read_only, {}, {}};
        policy.network = sdk::Network::allow;
        auto argv = sdk::bwrap_profile(prefix_, policy);
        argv.insert(argv.end(), {"--", "true"});
        return sdk::verdict_of(host_.run_probe(argv, timeout_ms), "bubblewrap");
    }

    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        // On every wrap: a program the command could have replaced confines nothing.
        std::vector<std::filesystem::path> writable;
        if (policy.mode == sdk::Mode::workspace_write) {
            writable.push_back(policy.workspace);
            writable.insert(writable.end(), policy.writable.begin(), policy.writable.end());
        }
        if (auto bad = sdk::untrusted_program(prefix_.front(), writable))
            return std::unexpected(sdk::unsupported("bubblewrap cannot be used: " + *bad));
        sdk::WrapResult r;
        std::uint32_t status_argument = 0;  // where the profile puts {status-fd}
        r.argv = sdk::bwrap_profile(prefix_, policy, &status_argument);
        r.argv.push_back("--");
        r.argv.insert(r.argv.end(), argv.begin(), argv.end());
        // Attested: the command ran if and only if bubblewrap says so on the status
        // descriptor, which the command cannot write; a bubblewrap that stopped is a
        // sandbox failure whatever it printed. The process ID it reports there is where
        // the host forwards signals.
        r.attestation = sdk::bwrap_attestation(status_argument);
        r.enforcement = sdk::Enforcement::full;  // the dimensions below say the rest
        r.denial_signatures = {"read-only file system", "network is unreachable"};
        // For a host that cannot read the descriptor: a "bwrap: " line is bubblewrap's.
        r.failure_rule.fatal_signatures = {"bwrap: "};
        // What it enforces, per dimension: bubblewrap's profile, always without a network
        // (even when the policy allows one), which is what this runner is for.
        sdk::Policy offline = policy;
        offline.network = sdk::Network::none;
        r.dimensions = sdk::bwrap_dimensions(offline, r.argv);
        r.tmp = sdk::bwrap_tmp(policy);  // which /tmp the profile gives
        return r;
    }

private:
    sdk::Host host_;
    std::vector<std::string> prefix_;  // bubblewrap, and what this runner adds to the profile
};

}  // namespace

CONFINE_RUNNER_PLUGIN(OfflineRunner, "offline", CONFINE_PLUGIN_VERSION, "bubblewrap without network (an example third-party runner)")
