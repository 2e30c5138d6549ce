// The `offline` runner: bubblewrap's read-only root, private /tmp and writable
// workspace, and no network at all (`--unshare-net`): for builds and tests that must
// not reach anything. A third-party plugin: it uses nothing but confine's SDK.
#include <confine/sdk/plugin.hpp>

#include <unistd.h>

#include <cstring>

namespace sdk = confine::sdk;

namespace {

class OfflineRunner final : public sdk::Runner {
public:
    OfflineRunner(sdk::Host host, std::string bwrap) : host_(host), bwrap_(std::move(bwrap)) {}

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        if (auto bad = config.settings.reject_unknown({"bwrap"})) return std::unexpected(*bad);
        auto bwrap = config.settings.string_or("bwrap", "/usr/bin/bwrap");
        if (!bwrap) return std::unexpected(bwrap.error());
        if (bwrap->empty() || bwrap->front() != '/')
            return std::unexpected(sdk::invalid_argument("setting 'bwrap' must be an absolute path, got '" + *bwrap + "'"));
        return std::make_unique<OfflineRunner>(host, *bwrap);
    }

    // Functional: `true` must run with the read-only profile and no network.
    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        if (::access(bwrap_.c_str(), X_OK) != 0) return sdk::Verdict::unusable(bwrap_ + ": " + std::strerror(errno));
        auto argv = profile({});
        argv.insert(argv.end(), {"--", "true"});
        return sdk::verdict_of(host_.run_probe(argv, timeout_ms), "bubblewrap");
    }

    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        sdk::WrapResult r;
        r.argv = profile(policy);
        r.argv.push_back("--");
        r.argv.insert(r.argv.end(), argv.begin(), argv.end());
        r.enforcement = sdk::Enforcement::full;
        r.denial_signatures = {"read-only file system", "network is unreachable"};
        r.failure_rule.fatal_signatures = {"bwrap: "};
        return r;
    }

private:
    std::vector<std::string> profile(const sdk::Policy& policy) const {
        std::vector<std::string> a{bwrap_, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net",
                                   "--die-with-parent", "--cap-drop", "ALL", "--new-session"};
        if (policy.mode == sdk::Mode::workspace_write) {
            a.insert(a.end(), {"--tmpfs", "/tmp", "--bind", policy.workspace, policy.workspace});
            for (const auto& w : policy.writable) a.insert(a.end(), {"--bind", w, w});
        }
        return a;
    }

    sdk::Host host_;
    std::string bwrap_;
};

}  // namespace

CONFINE_RUNNER_PLUGIN(OfflineRunner, "offline", CONFINE_VERSION, "bubblewrap without network (an example third-party runner)")
