// The bwrap runner: confines a command in bubblewrap's mount namespace — the whole
// file system read-only, a private /tmp, the workspace bound writable — and learns out
// of band, from bubblewrap's --json-status-fd, whether the command itself ran.
#include "../common/program_trust.hpp"

#include <confine/plugin_sdk.hpp>

#include <cstring>

namespace sdk = confine::sdk;

namespace {

constexpr const char* default_program = "/usr/bin/bwrap";
// Replaced by the host with the number of the status descriptor. Should a host run the
// argv without replacing it, bubblewrap refuses the argument: nothing runs.
constexpr const char* status_placeholder = "{status-fd}";
// bubblewrap writes this once the command has run and exited; never when its set-up
// (mounts, namespaces, the command's execvp) failed.
constexpr const char* status_marker = "\"exit-code\"";
// bubblewrap reports the command's process ID (as this side sees it) as "child-pid".
constexpr const char* status_pid_key = "\"child-pid\"";

class BwrapRunner final : public sdk::Runner {
public:
    BwrapRunner(sdk::Host host, std::string program, bool new_session)
        : host_(host), program_(std::move(program)), new_session_(new_session) {}

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        if (auto bad = config.settings.reject_unknown({"program", "new_session"})) return std::unexpected(*bad);
        auto program = config.settings.string_or("program", default_program);
        if (!program) return std::unexpected(program.error());
        // Never found through PATH, never relative to wherever the command runs.
        if (program->empty() || program->front() != '/')
            return std::unexpected(sdk::invalid_argument("setting 'program' must be an absolute path, got '" + *program + "'"));
        bool new_session = true;
        if (const sdk::Setting* s = config.settings.find("new_session")) {
            if (s->kind != CONFINE_SETTING_BOOLEAN) return std::unexpected(sdk::invalid_argument("setting 'new_session' must be a boolean"));
            new_session = s->boolean_value;
        }
        return std::make_unique<BwrapRunner>(host, *program, new_session);
    }

    // Functional: confine `true` with the read-only profile, as a run would.
    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        if (auto bad = confine::builtin::untrusted_program(program_))
            return sdk::Verdict::unusable("bubblewrap cannot be used: " + *bad);
        std::vector<std::string> argv = profile(sdk::Mode::read_only, {}, {}, nullptr);
        argv.insert(argv.end(), {"--", "true"});
        return sdk::verdict_of(host_.run_probe(argv, timeout_ms), "bubblewrap");
    }

    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        // Checked on every wrap, not only when probed: a verdict may come from the
        // per-user cache, and the program must still be the trusted one.
        std::vector<std::string> writable{"/tmp"};
        if (policy.mode == sdk::Mode::workspace_write) {
            writable.push_back(policy.workspace);
            writable.insert(writable.end(), policy.writable.begin(), policy.writable.end());
        }
        if (auto bad = confine::builtin::untrusted_program(program_, writable))
            return std::unexpected(sdk::unsupported("bubblewrap cannot be used: " + *bad));
        sdk::WrapResult r;
        std::uint32_t status_argument = 0;
        r.argv = profile(policy.mode, policy.workspace, policy.writable, &status_argument);
        r.argv.push_back("--");
        r.argv.insert(r.argv.end(), argv.begin(), argv.end());
        r.enforcement = sdk::Enforcement::full;
        r.denial_signatures = {"read-only file system"};
        r.failure_rule.fatal_signatures = {"bwrap: "};
        r.attestation = sdk::Attestation::status_fd(status_argument, status_marker, status_pid_key);
        return r;
    }

private:
    // DESIGN §4, plus what makes it hold: no capabilities (as root, bubblewrap would
    // otherwise leave the command able to remount / read-write), and a new session (no
    // terminal injection through TIOCSTI) unless the operator turns it off. With
    // `status_argument`, a status descriptor placeholder whose index lands there.
    std::vector<std::string> profile(sdk::Mode mode, const std::string& workspace, const std::vector<std::string>& extra,
                                     std::uint32_t* status_argument) const {
        std::vector<std::string> a{program_,      "--ro-bind", "/",     "/",        "--dev", "/dev", "--proc", "/proc",
                                   "--die-with-parent", "--cap-drop", "ALL"};
        if (new_session_) a.push_back("--new-session");
        if (status_argument) {
            a.push_back("--json-status-fd");
            *status_argument = static_cast<std::uint32_t>(a.size());
            a.push_back(status_placeholder);
        }
        if (mode == sdk::Mode::workspace_write) {
            // After the tmpfs, so that a workspace under /tmp is bound on top of it.
            a.insert(a.end(), {"--tmpfs", "/tmp"});
            a.insert(a.end(), {"--bind", workspace, workspace});
            for (const auto& w : extra) a.insert(a.end(), {"--bind", w, w});
        }
        return a;
    }

    sdk::Host host_;
    std::string program_;
    bool new_session_ = true;
};

}  // namespace

CONFINE_RUNNER_PLUGIN(BwrapRunner, "bwrap", CONFINE_VERSION, "bubblewrap mount-namespace sandbox")
