// The appcontainer runner: confines a command on Windows in an AppContainer, through
// the appcontainer-run launcher next to the plugin. The plan (which roots, which
// access, the container's name) is portable (plan.hpp); the launcher does the rest.
#include "plan.hpp"

#include <confine/sdk/plugin.hpp>

#if defined(_WIN32)
#include <windows.h>
#endif

#include <filesystem>

namespace sdk = confine::sdk;
namespace ac = confine::appcontainer;

namespace {

#if defined(_WIN32)
constexpr const char* launcher_file = "appcontainer-run.exe";
#else
constexpr const char* launcher_file = "appcontainer-run";
#endif

// The user's profile folder: no grant may hold it (plan.hpp, grant_refusal).
std::string user_profile_dir() {
#if defined(_WIN32)
    if (const wchar_t* home = ::_wgetenv(L"USERPROFILE"); home && *home) return std::filesystem::path(home).string();
#endif
    return {};
}

class AppContainerRunner final : public sdk::Runner {
public:
    AppContainerRunner(sdk::Host host, std::string launcher, std::string temp_dir)
        : host_(host), launcher_(std::move(launcher)), temp_dir_(std::move(temp_dir)), home_(user_profile_dir()) {}

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        if (auto bad = config.settings.reject_unknown({"launcher", "temp_dir"})) return std::unexpected(*bad);
        auto launcher = config.settings.absolute_path_or("launcher", (std::filesystem::path(config.plugin_dir) / launcher_file).string());
        if (!launcher) return std::unexpected(launcher.error());
        // Where the run's own temporary directory is made; empty: the launcher's %TEMP%.
        auto temp = config.settings.string_or("temp_dir", "");
        if (!temp) return std::unexpected(temp.error());
        return std::make_unique<AppContainerRunner>(host, *launcher, *temp);
    }

    // The launcher says whether this Windows can start a process in an AppContainer;
    // a missing launcher is the same answer as a Windows that cannot.
    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(launcher_, ec)) return sdk::Verdict::unusable("appcontainer-run launcher not found at " + launcher_);
        auto run = host_.run_probe(std::vector<std::string>{launcher_, "--probe"}, timeout_ms);
        sdk::Verdict v = sdk::verdict_of(run, "appcontainer-run");
        if (v.kind == sdk::Verdict::Kind::full && !run->stdout_text.starts_with("appcontainer: available"))
            return sdk::Verdict::unusable("unexpected appcontainer-run --probe report: " + run->stdout_text.substr(0, run->stdout_text.find('\n')));
        return v;
    }

    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        const bool write = policy.mode == sdk::Mode::workspace_write;
        std::vector<std::string> writable;
        for (const auto& w : policy.writable) writable.push_back(w.string());
        // Read-only mode names no workspace: the container is granted reading where the
        // command runs (ABI 1.8), the one place the policy names, and nothing else.
        auto grants = ac::plan_grants(write, policy.workspace.string(), policy.working_directory.string(), writable, home_);
        if (!grants) return std::unexpected(sdk::invalid_argument(grants.error()));
        std::vector<std::string> deny_read, protect;
        for (const auto& d : policy.deny_read) deny_read.push_back(d.string());
        for (const auto& k : policy.protect) protect.push_back(k.string());
        auto denials = ac::plan_denials(*grants, deny_read, protect);
        if (!denials) return std::unexpected(sdk::invalid_argument(denials.error()));
        sdk::WrapResult r;
        const bool network = policy.network == sdk::Network::allow;
        // Workspace-write: a temporary directory of the run's own, not the user's %TEMP%.
        const ac::PrivateTemp temp{write, temp_dir_};
        if (!temp_dir_.empty())
            if (auto why = ac::path_refusal(temp_dir_); !why.empty()) return std::unexpected(sdk::invalid_argument("temp_dir: " + why));
        r.argv = ac::launcher_argv(launcher_, *grants, std::vector<std::string>(argv.begin(), argv.end()), network, *denials, temp);
        r.enforcement = sdk::Enforcement::full;
        // An AppContainer holds no capability but internetClient when the network is
        // allowed: without it no network at all; no access to processes outside its
        // container. Unverified here.
        r.dimensions = {sdk::Level::full, network ? sdk::Level::none : sdk::Level::full, sdk::Level::full, {}};
        // deny_read and protect: a deny entry for the container on each path (README).
        // Partial, for what an access list cannot say or keep.
        r.dimensions.read = deny_read.empty() ? sdk::Level::full : sdk::Level::partial;
        r.dimensions.protect = protect.empty() ? sdk::Level::full : sdk::Level::partial;
        if (!deny_read.empty()) r.dimensions.open = "read: " + std::string(ac::left_open);
        if (!protect.empty()) r.dimensions.open += std::string(deny_read.empty() ? "" : "; ") + "protect: " + std::string(ac::left_open);
        // Workspace-write: TEMP and TMP name the run's own directory, empty at its start and
        // removed after it. Read-only: the user's, which the container cannot reach.
        r.tmp = write ? sdk::Tmp::private_ : sdk::Tmp::host;
        // An AppContainer without a capability has no network, the loopback's included.
        if (policy.network == sdk::Network::none) r.loopback = sdk::Loopback::none;
        // A container without internetClient gets WSAEACCES for a socket ("… forbidden by
        // its access permissions"), and the tools' words for a network that is not there.
        r.denial_signatures = {"access is denied", "eacces", "eperm"};
        if (!network)
            for (auto& s : sdk::network_denial_signatures()) r.denial_signatures.push_back(std::move(s));
        r.failure_rule.evidence_exit_codes = {125};
        r.failure_rule.fatal_signatures = {"appcontainer-run: "};
        return r;
    }

private:
    sdk::Host host_;
    std::string launcher_;
    std::string temp_dir_;
    std::string home_;
};

}  // namespace

CONFINE_RUNNER_PLUGIN(AppContainerRunner, "appcontainer", CONFINE_PLUGIN_VERSION, "Windows AppContainer through the appcontainer-run launcher")
