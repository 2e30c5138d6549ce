// The bwrap runner: confines a command in bubblewrap's mount and PID namespaces — the
// whole file system read-only, a private /tmp, the workspace bound writable, no process
// outside the sandbox in sight — and learns out of band, from bubblewrap's
// --json-status-fd, whether the command itself ran.
#include <confine/sdk/bwrap_profile.hpp>
#include <confine/sdk/plugin.hpp>
#include <confine/sdk/program_trust.hpp>

namespace sdk = confine::sdk;

namespace {

constexpr const char* default_program = "/usr/bin/bwrap";

class BwrapRunner final : public sdk::Runner {
public:
    BwrapRunner(sdk::Host host, std::string program, std::string loopback)
        : host_(host), program_(std::move(program)), loopback_(std::move(loopback)) {}

    // The network through the run's proxy: a network namespace of its own, the proxy's
    // listener on its loopback (confine-loopback).
    bool handles_proxy() const override { return true; }

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        if (config.settings.find("new_session"))
            return std::unexpected(sdk::invalid_argument(
                "setting 'new_session' was renamed 'share_terminal_session' (default false: the command gets a session of its own; "
                "true is refused)"));
        if (auto bad = config.settings.reject_unknown({"program", "share_terminal_session"})) return std::unexpected(*bad);
        // Never found through PATH, never relative to wherever the command runs.
        auto program = config.settings.absolute_path_or("program", default_program);
        if (!program) return std::unexpected(program.error());
        // Named for what it would give up, and refused rather than honoured: --new-session
        // is what keeps the command from injecting terminal input (docs/design.md §11:
        // refused on every runner and path). A known key, so that asking for it is
        // answered with why not.
        auto share_terminal_session = config.settings.bool_or("share_terminal_session", false);
        if (!share_terminal_session) return std::unexpected(share_terminal_session.error());
        if (*share_terminal_session)
            return std::unexpected(sdk::invalid_argument(
                "setting 'share_terminal_session' cannot be true: without bubblewrap's --new-session the command could push input "
                "into the terminal it was started from (TIOCSTI)"));
        if (config.settings.find("program"))
            if (auto bad = sdk::untrusted_named_program(*program))
                return std::unexpected(sdk::invalid_argument("setting 'program': refusing " + *program + ": " + *bad));
        return std::make_unique<BwrapRunner>(host, *program, config.plugin_dir + "/confine-loopback");
    }

    // Functional: confine `true` with the read-only profile, as a run would, in a network
    // namespace of its own (the network filter's descriptor is the host's to give at a
    // run, not a probe's).
    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        if (auto bad = sdk::untrusted_program(program_)) return sdk::Verdict::unusable("bubblewrap cannot be used: " + *bad);
        sdk::Policy policy{sdk::Mode::read_only, {}, {}};
        policy.network = sdk::Network::allow;
        std::vector<std::string> argv = sdk::bwrap_profile(program(), policy);
        argv.insert(argv.end(), {"--unshare-net", "--", "true"});
        return sdk::verdict_of(host_.run_probe(argv, timeout_ms), "bubblewrap");
    }

    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        // Checked on every wrap, not only when probed: a verdict may come from the
        // per-user cache, and the program must still be the trusted one.
        std::vector<std::string> writable{"/tmp"};
        if (policy.mode == sdk::Mode::workspace_write) {
            writable.push_back(policy.workspace.string());
            for (const auto& w : policy.writable) writable.push_back(w.string());
        }
        if (auto bad = sdk::untrusted_program(program_, writable))
            return std::unexpected(sdk::unsupported("bubblewrap cannot be used: " + *bad));
        if (policy.network == sdk::Network::proxy || policy.own_terminal)
            if (auto bad = sdk::untrusted_program(loopback_, writable))
                return std::unexpected(sdk::unsupported(std::string(policy.network == sdk::Network::proxy ? "the network through the run's proxy"
                                                                                                      : "the run's own terminal") +
                                                        " cannot be set up: " + *bad));
        sdk::WrapResult r;
        std::uint32_t status_argument = 0;
        r.argv = sdk::bwrap_profile(program(), policy, &status_argument);
        for (auto& a : sdk::bwrap_proxy_arguments(loopback_, policy)) r.argv.push_back(std::move(a));
        r.argv.push_back("--");
        r.argv.insert(r.argv.end(), argv.begin(), argv.end());
        r.enforcement = sdk::Enforcement::full;
        // Its refusals: EROFS for a write outside the writable roots; EACCES for a masked
        // directory (mode 0000), for what the dropped capabilities no longer override, and
        // for the network filter's sockets; ESRCH for any process outside its PID
        // namespace; the tools' own words for a network that is not there. ENOENT inside a
        // masked directory and EBUSY for a protected mount point the host reads itself, on
        // a line that names the path (confine-plugin(7), DENIAL DIALECT).
        r.denial_signatures = {"read-only file system", "permission denied", "no such process", "erofs", "eacces", "eperm", "esrch"};
        if (policy.network != sdk::Network::allow)
            for (auto& s : sdk::network_denial_signatures()) r.denial_signatures.push_back(std::move(s));
        r.failure_rule.fatal_signatures = {"bwrap: ", "confine-loopback: "};
        r.attestation = sdk::bwrap_attestation(status_argument);  // bubblewrap's --json-status-fd
        r.dimensions = sdk::bwrap_dimensions(policy, r.argv);  // judged by the arguments given
        r.tmp = sdk::bwrap_tmp(policy);
        r.loopback = sdk::bwrap_loopback(policy, r.argv);
        return r;
    }

private:
    std::span<const std::string> program() const { return {&program_, 1}; }

    sdk::Host host_;
    std::string program_;
    std::string loopback_;
};

}  // namespace

CONFINE_RUNNER_PLUGIN(BwrapRunner, "bwrap", CONFINE_PLUGIN_VERSION, "bubblewrap mount-namespace sandbox")
