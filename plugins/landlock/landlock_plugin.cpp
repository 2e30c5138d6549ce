// The landlock runner: confines a command with the Landlock LSM through the
// landlock-run launcher (contracts/landlock-run.md), which execs the command itself —
// so the host can attest, out of band, that the launcher reached it.
#include "ruleset.hpp"

#include <confine/plugin_sdk.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace sdk = confine::sdk;
namespace ll = confine::landlock;

namespace {

const char* const notice = "landlock-run: partial enforcement (older Landlock ABI)";

class LandlockRunner final : public sdk::Runner {
public:
    explicit LandlockRunner(std::string launcher) : launcher_(std::move(launcher)) {}

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        if (auto bad = config.settings.reject_unknown({"launcher"})) return std::unexpected(*bad);
        auto launcher = config.settings.string_or("launcher", config.plugin_dir + "/landlock-run");
        if (!launcher) return std::unexpected(launcher.error());
        if (launcher->empty() || launcher->front() != '/')
            return std::unexpected(sdk::invalid_argument("setting 'launcher' must be an absolute path, got '" + *launcher + "'"));
        auto runner = std::make_unique<LandlockRunner>(*launcher);
        runner->host_ = host;
        return runner;
    }

    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        struct stat st {};
        // No launcher is the same answer as a kernel without Landlock: unusable. A
        // launcher that lost its execute bit is said to be exactly that.
        if (::stat(launcher_.c_str(), &st) != 0)
            return sdk::Verdict::unusable("landlock-run launcher not found at " + launcher_ + ": " + std::strerror(errno));
        if (!S_ISREG(st.st_mode) || ::access(launcher_.c_str(), X_OK) != 0)
            return sdk::Verdict::unusable("landlock-run launcher at " + launcher_ + " is not executable");
        const std::vector<std::string> argv{launcher_, "--probe"};
        auto run = host_.run_probe(argv, timeout_ms);
        if (!run) return sdk::Verdict::unusable(run.error().message);
        if (run->timed_out) return sdk::Verdict::unusable("landlock-run --probe timed out");
        if (!run->spawned) return sdk::Verdict::unusable("cannot start " + launcher_ + ": " + std::strerror(run->spawn_errno));
        if (run->exited && run->exit_code == 0) {
            if (run->stdout_text == "landlock: fully enforced\n") return sdk::Verdict::full();
            if (run->stdout_text == "landlock: partially enforced (older ABI)\n") {
                partial_ = true;
                return sdk::Verdict::partial("older Landlock ABI");
            }
            return sdk::Verdict::unusable("unexpected landlock-run --probe report: " + first_line(run->stdout_text));
        }
        std::string why = first_line(run->stderr_text);
        if (why.empty()) why = run->exited ? "exit status " + std::to_string(run->exit_code) : "signal " + std::to_string(run->signal);
        return sdk::Verdict::unusable(why);
    }

    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        // Asking the kernel is one system call: a kernel without Landlock fails here,
        // before anything is started.
        const int abi = ll::abi_version();
        if (abi < 1) return std::unexpected(sdk::unsupported("landlock is not enforced by this kernel (ABI unsupported or disabled)"));
        sdk::WrapResult r;
        r.argv = {launcher_, "--ro", "/", "--rw", "/dev/null"};
        if (policy.mode == sdk::Mode::workspace_write) {
            r.argv.insert(r.argv.end(), {"--rw", "/tmp", "--rw", policy.workspace});
            for (const auto& w : policy.writable) r.argv.insert(r.argv.end(), {"--rw", w});
        }
        r.argv.push_back("--");
        r.argv.insert(r.argv.end(), argv.begin(), argv.end());
        r.enforcement = partial_ || !ll::fully_enforced(abi) ? sdk::Enforcement::partial : sdk::Enforcement::full;
        r.denial_signatures = {"permission denied"};
        r.failure_rule.allowed_exit_codes = {125};
        r.failure_rule.fatal_signatures = {"landlock-run: "};
        r.failure_rule.informational_lines = {notice};
        r.attestation = sdk::Attestation::exec(2);  // the launcher's own exec, then the command's
        return r;
    }

private:
    static std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

    std::string launcher_;
    sdk::Host host_{nullptr};
    bool partial_ = false;
};

}  // namespace

CONFINE_RUNNER_PLUGIN(LandlockRunner, "landlock", CONFINE_VERSION, "Landlock LSM through the landlock-run launcher")
