// The seatbelt runner: confines a command on macOS with Seatbelt, through
// `sandbox-exec -p <profile>`. The profile is generated per policy (sbpl.hpp); every
// root in it is canonical, because Seatbelt matches resolved paths and a root that is
// not canonical would silently grant nothing.
#include "sbpl.hpp"

#include <confine/sdk/placeholders.hpp>
#include <confine/sdk/plugin.hpp>

#if defined(__APPLE__)
#include <unistd.h>
#endif

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

namespace sdk = confine::sdk;

namespace {

constexpr const char* default_program = "/usr/bin/sandbox-exec";

// sandbox-exec's exit statuses when it fails (<sysexits.h>, which not every OS that
// generates profiles has).
constexpr std::int32_t sysexits_dataerr = 65;
constexpr std::int32_t sysexits_oserr = 71;

// The per-user temporary directory ($TMPDIR's usual home on macOS), if this OS has one.
std::string system_user_temp_dir() {
#if defined(__APPLE__)
    char buf[PATH_MAX];
    const std::size_t n = ::confstr(_CS_DARWIN_USER_TEMP_DIR, buf, sizeof buf);
    if (n > 0 && n <= sizeof buf) return std::string(buf);
#endif
    return {};
}

std::expected<std::string, std::string> canonical(const std::string& path) {
    if (path.empty() || path.front() != '/') return std::unexpected(path + " is not an absolute path");
    std::error_code ec;
    const auto real = std::filesystem::canonical(path, ec);
    if (ec) return std::unexpected(path + ": " + ec.message());
    return real.generic_string();
}

class SeatbeltRunner final : public sdk::Runner {
public:
    SeatbeltRunner(sdk::Host host, std::string program, std::string user_temp_dir)
        : host_(host), program_(std::move(program)), user_temp_dir_(std::move(user_temp_dir)) {}

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        if (auto bad = config.settings.reject_unknown({"program", "user_temp_dir"})) return std::unexpected(*bad);
        // macOS paths, wherever the profile is generated.
        auto program = config.settings.absolute_path_or("program", default_program, sdk::PathRules::posix);
        if (!program) return std::unexpected(program.error());
        auto temp = config.settings.absolute_path_or("user_temp_dir", system_user_temp_dir(), sdk::PathRules::posix);
        if (!temp) return std::unexpected(temp.error());
        return std::make_unique<SeatbeltRunner>(host, *program, *temp);
    }

    // Functional, in a longer chain: sandbox-exec must confine `true` with the
    // read-only profile.
    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(program_, ec))
            return sdk::Verdict::unusable(program_ + " cannot be executed: " + (ec ? ec.message() : std::string("not a regular file")));
        auto p = confine::seatbelt::profile(std::vector<std::string>{});
        if (!p) return sdk::Verdict::unusable(p.error());
        return sdk::verdict_of(host_.run_probe(std::vector<std::string>{program_, "-p", *p, "--", "/usr/bin/true"}, timeout_ms),
                               "sandbox-exec");
    }

    // A pure transformation: it works on any OS, so that an operator can review the
    // profile a policy gets before deploying it.
    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        std::vector<std::string> roots;
        if (policy.mode == sdk::Mode::workspace_write) {
            std::vector<std::string> wanted{policy.workspace.string(), "/tmp"};
            if (!user_temp_dir_.empty()) wanted.push_back(user_temp_dir_);
            for (const auto& w : policy.writable) wanted.push_back(w.string());
            for (const auto& w : wanted) {
                auto real = canonical(w);
                if (!real) return std::unexpected(sdk::invalid_argument("cannot canonicalise writable root " + real.error()));
                roots.push_back(*real);
            }
        }
        // deny_read and protect come canonical and existing (ABI 1.7): as Seatbelt
        // matches them.
        confine::seatbelt::Request request{std::move(roots), policy.network == sdk::Network::none, {}, {}};
        for (const auto& d : policy.deny_read) request.deny_read.push_back(d.generic_string());
        for (const auto& k : policy.protect) request.protect.push_back(k.generic_string());
        auto p = confine::seatbelt::profile(std::move(request));
        if (!p) return std::unexpected(sdk::invalid_argument(p.error()));
        // The attesting shell's exec would take such a name for one of its options.
        if (!argv.empty() && argv.front().starts_with('-'))
            return std::unexpected(sdk::invalid_argument("the command '" + argv.front() + "' begins with '-'; name it by a path (./" +
                                                         argv.front() + ")"));
        sdk::WrapResult r;
        r.argv = {program_, "-p", *p, "--", std::string(confine::seatbelt::attestation_shell), "-c",
                  std::string(confine::seatbelt::attestation_script)};
        const auto status_argument = static_cast<std::uint32_t>(r.argv.size());
        r.argv.insert(r.argv.end(), {sdk::status_fd_placeholder(), "--"});
        r.argv.insert(r.argv.end(), argv.begin(), argv.end());
        r.attestation = sdk::Attestation::status_fd(status_argument, std::string(confine::seatbelt::status_marker));
        r.enforcement = sdk::Enforcement::full;
        // Seatbelt refuses a file access and a connection with EPERM; the tools'
        // own words for a network that is not there.
        r.denial_signatures = {"operation not permitted", "eperm", "eacces"};
        if (policy.network == sdk::Network::none)
            for (auto& s : sdk::network_denial_signatures()) r.denial_signatures.push_back(std::move(s));
        // sandbox-exec's own failures, before the command runs: a profile it does not
        // accept (a syntax error, an operation this macOS does not know: "sandbox-exec:
        // unbound variable: …") exits 65 (EX_DATAERR); a profile it cannot apply
        // ("sandbox-exec: sandbox_apply: …") or a program it cannot execute exits 71
        // (EX_OSERR). The status descriptor decides whether the command ran (sbpl.hpp);
        // the rule only names the evidence when it did not, and judges alone when the
        // descriptor could not say (the runner ended by a signal).
        r.failure_rule.evidence_exit_codes = {sysexits_dataerr, sysexits_oserr};
        r.failure_rule.fatal_signatures = {"sandbox-exec: "};
        // The profile allows everything but writes (and the network, when confined): a
        // command can still signal the user's other processes and ask host services to
        // act for it (mach-lookup, AppleEvents). Every deny_read and protect path is in
        // the profile or the wrap fails, so both are full. Unverified here: there is no Mac.
        r.dimensions.write = sdk::Level::full;
        r.dimensions.network = policy.network == sdk::Network::none ? sdk::Level::full : sdk::Level::none;
        r.dimensions.processes = sdk::Level::none;
        r.dimensions.read = sdk::Level::full;
        r.dimensions.protect = sdk::Level::full;
        r.dimensions.open = "processes: the profile allows signals to the user's other processes and mach-lookup of host services";
        r.tmp = sdk::Tmp::host;  // the host's /private/tmp and per-user temp directory
        // (deny network*) holds for the loopback too: a command has none of its own.
        if (policy.network == sdk::Network::none) r.loopback = sdk::Loopback::none;
        return r;
    }

private:
    sdk::Host host_;
    std::string program_;
    std::string user_temp_dir_;
};

}  // namespace

CONFINE_RUNNER_PLUGIN(SeatbeltRunner, "seatbelt", CONFINE_PLUGIN_VERSION, "macOS Seatbelt through sandbox-exec")
