// A reported level is a promise (docs/design.md §11): every dimension a runner reports
// `full` is backed by escape-suite cases that try to break it. The levels are obtained
// for real — `confinectl wrap --json` through each Linux way (test::Way), for the
// default policy and for one that asks deny_read, protect and network none — and each
// `full` must be named below by at least one test case registered in this binary.
// A new dimension, a new way or a level raised to `full` without a case behind it fails
// here, naming the way and the dimension.
//
// To add a proof: one line per way × dimension × test case name. "{way}" in a name
// stands for the way's words in the escape suites' names ("the bwrap plugin", …).
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;
using test::Way;

namespace {

struct Proof {
    Way way;
    const char* dimension;
    const char* test_case;
};

// The Linux ways' proofs.
const Proof linux_proofs[] = {
    // write: files outside the writable roots stay as they were.
    {Way::bwrap, "write", "no file escape through {way}, as root"},
    {Way::bwrap, "write", "no file escape through {way}, as an unprivileged user"},
    {Way::bwrap, "write", "file metadata outside the writable roots stays as it was under bubblewrap"},
    {Way::runner_command, "write", "no file escape through {way}, as root"},
    {Way::runner_command, "write", "no file escape through {way}, as an unprivileged user"},
    {Way::landlock_launcher, "write", "no file escape through {way}, as root"},
    {Way::landlock_launcher, "write", "no file escape through {way}, as an unprivileged user"},
    {Way::landlock_forked, "write", "no file escape through {way}, as root"},
    {Way::landlock_forked, "write", "no file escape through {way}, as an unprivileged user"},
    {Way::landlock_in_place, "write", "no file escape through {way}, as root"},
    {Way::landlock_in_place, "write", "no file escape through {way}, as an unprivileged user"},
    // network: no socket reaches the host.
    {Way::bwrap, "network", "no socket reaches the host through {way}, as root and as an unprivileged user"},
    {Way::runner_command, "network", "no socket reaches the host through {way}, as root and as an unprivileged user"},
    {Way::landlock_launcher, "network", "no socket reaches the host through {way}, as root and as an unprivileged user"},
    {Way::landlock_forked, "network", "no socket reaches the host through {way}, as root and as an unprivileged user"},
    {Way::landlock_in_place, "network", "no socket reaches the host through {way}, as root and as an unprivileged user"},
    // processes: the supervisor and the host's processes out of reach.
    {Way::bwrap, "processes", "the supervisor cannot be signalled, traced or entered through {way}"},
    {Way::runner_command, "processes", "the supervisor cannot be signalled, traced or entered through {way}"},
    {Way::landlock_launcher, "processes", "the supervisor cannot be signalled, traced or entered through {way}"},
    {Way::landlock_forked, "processes", "the supervisor cannot be signalled, traced or entered through {way}"},
    {Way::landlock_in_place, "processes", "the supervisor cannot be signalled, traced or entered through {way}"},
    // read: what deny_read names is neither read nor listed.
    {Way::bwrap, "read", "denied paths cannot be read or listed through {way}, as root"},
    {Way::bwrap, "read", "denied paths cannot be read or listed through {way}, as an unprivileged user"},
    {Way::bwrap, "read", "an explicit --deny-read or --protect is enforced or fails closed naming the path and runner, through {way}"},
    {Way::runner_command, "read", "denied paths cannot be read or listed through {way}, as root"},
    {Way::runner_command, "read", "denied paths cannot be read or listed through {way}, as an unprivileged user"},
    {Way::runner_command, "read", "an explicit --deny-read or --protect is enforced or fails closed naming the path and runner, through {way}"},
    {Way::landlock_launcher, "read", "denied paths cannot be read or listed through {way}, as root"},
    {Way::landlock_launcher, "read", "denied paths cannot be read or listed through {way}, as an unprivileged user"},
    {Way::landlock_forked, "read", "denied paths cannot be read or listed through {way}, as root"},
    {Way::landlock_forked, "read", "denied paths cannot be read or listed through {way}, as an unprivileged user"},
    {Way::landlock_in_place, "read", "denied paths cannot be read or listed through {way}, as root"},
    {Way::landlock_in_place, "read", "denied paths cannot be read or listed through {way}, as an unprivileged user"},
    // write, continued: nothing the caller leaked, and no library the command could rewrite loaded outside.
    {Way::bwrap, "write", "no leaked descriptor reaches the command through {way}, as root"},
    {Way::bwrap, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as root"},
    {Way::bwrap, "write", "no leaked descriptor reaches the command through {way}, as an unprivileged user"},
    {Way::bwrap, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as an unprivileged user"},
    {Way::runner_command, "write", "no leaked descriptor reaches the command through {way}, as root"},
    {Way::runner_command, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as root"},
    {Way::runner_command, "write", "no leaked descriptor reaches the command through {way}, as an unprivileged user"},
    {Way::runner_command, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as an unprivileged user"},
    {Way::landlock_launcher, "write", "no leaked descriptor reaches the command through {way}, as root"},
    {Way::landlock_launcher, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as root"},
    {Way::landlock_launcher, "write", "no leaked descriptor reaches the command through {way}, as an unprivileged user"},
    {Way::landlock_launcher, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as an unprivileged user"},
    {Way::landlock_forked, "write", "no leaked descriptor reaches the command through {way}, as root"},
    {Way::landlock_forked, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as root"},
    {Way::landlock_forked, "write", "no leaked descriptor reaches the command through {way}, as an unprivileged user"},
    {Way::landlock_forked, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as an unprivileged user"},
    {Way::landlock_in_place, "write", "no leaked descriptor reaches the command through {way}, as root"},
    {Way::landlock_in_place, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as root"},
    {Way::landlock_in_place, "write", "no leaked descriptor reaches the command through {way}, as an unprivileged user"},
    {Way::landlock_in_place, "write", "a workspace library named by LD_PRELOAD never runs unconfined through {way}, as an unprivileged user"},
    {Way::bwrap, "write", "metadata of a file outside the writable roots stays as it was, or the run says write is not full, through {way}, as root and as an unprivileged user"},
    {Way::runner_command, "write", "metadata of a file outside the writable roots stays as it was, or the run says write is not full, through {way}, as root and as an unprivileged user"},
    // network, continued: no unix datagram, by abstract name or by path.
    {Way::bwrap, "network", "no unix datagram reaches a host socket by abstract name or path, nor a host abstract stream socket, through {way}, as root and as an unprivileged user"},
    {Way::runner_command, "network", "no unix datagram reaches a host socket by abstract name or path, nor a host abstract stream socket, through {way}, as root and as an unprivileged user"},
    {Way::landlock_launcher, "network", "no unix datagram reaches a host socket by abstract name or path, nor a host abstract stream socket, through {way}, as root and as an unprivileged user"},
    {Way::landlock_forked, "network", "no unix datagram reaches a host socket by abstract name or path, nor a host abstract stream socket, through {way}, as root and as an unprivileged user"},
    {Way::landlock_in_place, "network", "no unix datagram reaches a host socket by abstract name or path, nor a host abstract stream socket, through {way}, as root and as an unprivileged user"},
    // read, continued: both homes, and every default credential store.
    {Way::bwrap, "read", "a denied path beneath the account's home stays unread when HOME points elsewhere, through {way}"},
    {Way::bwrap, "read", "the default deny_read list keeps every credential store unread, the GitHub CLI's token included, through {way}"},
    {Way::runner_command, "read", "a denied path beneath the account's home stays unread when HOME points elsewhere, through {way}"},
    {Way::runner_command, "read", "the default deny_read list keeps every credential store unread, the GitHub CLI's token included, through {way}"},
    {Way::landlock_launcher, "read", "a denied path beneath the account's home stays unread when HOME points elsewhere, through {way}"},
    {Way::landlock_launcher, "read", "the default deny_read list keeps every credential store unread, the GitHub CLI's token included, through {way}"},
    {Way::landlock_forked, "read", "a denied path beneath the account's home stays unread when HOME points elsewhere, through {way}"},
    {Way::landlock_forked, "read", "the default deny_read list keeps every credential store unread, the GitHub CLI's token included, through {way}"},
    {Way::landlock_in_place, "read", "a denied path beneath the account's home stays unread when HOME points elsewhere, through {way}"},
    {Way::landlock_in_place, "read", "the default deny_read list keeps every credential store unread, the GitHub CLI's token included, through {way}"},
    // protect: what protect names stays as it was.
    {Way::bwrap, "protect", "git on the host runs nothing the command planted through {way}, as root"},
    {Way::bwrap, "protect", "git on the host runs nothing the command planted through {way}, as an unprivileged user"},
    {Way::bwrap, "protect", "what the run-end check moved aside is said and reported through {way}"},
    {Way::runner_command, "protect", "git on the host runs nothing the command planted through {way}, as root"},
    {Way::runner_command, "protect", "git on the host runs nothing the command planted through {way}, as an unprivileged user"},
    {Way::runner_command, "protect", "what the run-end check moved aside is said and reported through {way}"},
    {Way::bwrap, "protect", "protected git files stay as they were, or the report says they cannot, through {way}"},
    {Way::bwrap, "protect", "an explicit --deny-read or --protect is enforced or fails closed naming the path and runner, through {way}"},
    {Way::runner_command, "protect", "protected git files stay as they were, or the report says they cannot, through {way}"},
    {Way::runner_command, "protect", "an explicit --deny-read or --protect is enforced or fails closed naming the path and runner, through {way}"},
    {Way::bwrap, "protect", "what the protect list names ends the run as it began through {way}, as root"},
    {Way::runner_command, "protect", "what the protect list names ends the run as it began through {way}, as root"},
    {Way::landlock_launcher, "protect", "git on the host runs nothing the command planted through {way}, as root"},
    {Way::landlock_launcher, "protect", "git on the host runs nothing the command planted through {way}, as an unprivileged user"},
    {Way::landlock_launcher, "protect", "protected git files stay as they were, or the report says they cannot, through {way}"},
    {Way::landlock_launcher, "protect", "what the protect list names ends the run as it began through {way}, as root"},
    {Way::landlock_forked, "protect", "git on the host runs nothing the command planted through {way}, as root"},
    {Way::landlock_forked, "protect", "git on the host runs nothing the command planted through {way}, as an unprivileged user"},
    {Way::landlock_forked, "protect", "protected git files stay as they were, or the report says they cannot, through {way}"},
    {Way::landlock_forked, "protect", "what the protect list names ends the run as it began through {way}, as root"},
    {Way::landlock_in_place, "protect", "git on the host runs nothing the command planted through {way}, as root"},
    {Way::landlock_in_place, "protect", "git on the host runs nothing the command planted through {way}, as an unprivileged user"},
    {Way::landlock_in_place, "protect", "protected git files stay as they were, or the report says they cannot, through {way}"},
    {Way::landlock_in_place, "protect", "what the protect list names ends the run as it began through {way}, as root"},
    // lifetime: nothing the command started outlives the run, nor a confinectl killed mid-run.
    {Way::bwrap, "lifetime", "nothing the command started outlives the run through {way}, as root"},
    {Way::bwrap, "lifetime", "nothing the command started outlives the run through {way}, as an unprivileged user"},
    {Way::bwrap, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as root"},
    {Way::bwrap, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as an unprivileged user"},
    {Way::runner_command, "lifetime", "nothing the command started outlives the run through {way}, as root"},
    {Way::runner_command, "lifetime", "nothing the command started outlives the run through {way}, as an unprivileged user"},
    {Way::runner_command, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as root"},
    {Way::runner_command, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as an unprivileged user"},
    {Way::landlock_launcher, "lifetime", "nothing the command started outlives the run through {way}, as root"},
    {Way::landlock_launcher, "lifetime", "nothing the command started outlives the run through {way}, as an unprivileged user"},
    {Way::landlock_launcher, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as root"},
    {Way::landlock_launcher, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as an unprivileged user"},
    {Way::landlock_forked, "lifetime", "nothing the command started outlives the run through {way}, as root"},
    {Way::landlock_forked, "lifetime", "nothing the command started outlives the run through {way}, as an unprivileged user"},
    {Way::landlock_forked, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as root"},
    {Way::landlock_forked, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as an unprivileged user"},
    {Way::landlock_in_place, "lifetime", "nothing the command started outlives the run through {way}, as root"},
    {Way::landlock_in_place, "lifetime", "nothing the command started outlives the run through {way}, as an unprivileged user"},
    {Way::landlock_in_place, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as root"},
    {Way::landlock_in_place, "lifetime", "killing confinectl with SIGKILL ends every process of the run through {way}, as an unprivileged user"},
};

// The words each way goes by in the escape suites' test names.
std::string words_of(Way w) {
    switch (w) {
    case Way::bwrap: return "the bwrap plugin";
    case Way::runner_command: return "an asserted runner_command";
    case Way::landlock_launcher: return "landlock-run";
    case Way::landlock_forked: return "landlock in a forked child";
    case Way::landlock_in_place: return "landlock in place";
    }
    return "?";
}

std::string expanded(std::string name, Way w) {
    const std::string key = "{way}";
    for (std::size_t at = 0; (at = name.find(key, at)) != std::string::npos;) name.replace(at, key.size(), words_of(w));
    return name;
}

// The runners of other systems, whose levels are read from their wraps here (for review:
// `wrap --runner`, which works on any OS). Seatbelt's profile is proven in this binary by
// its golden files and the independent profile reader; AppContainer's enforcement can only
// be shown on Windows, by the world proofs of .github/workflows/windows.yml.
struct OtherProof {
    const char* runner;
    const char* dimension;
    const char* test_case;  // in this binary, or empty
    const char* elsewhere;  // "<workflow file>:<job>", for what only another OS can show
};
const OtherProof other_proofs[] = {
    {"seatbelt", "write", "seatbelt profiles per mode and policy match their golden files", ""},
    {"seatbelt", "write", "hard links are made only between writable roots, so nothing outside is written through one", ""},
    {"seatbelt", "write", "seatbelt confines writes with the real sandbox-exec", ""},
    {"seatbelt", "network", "seatbelt profiles per mode and policy match their golden files", ""},
    {"seatbelt", "read", "the independent reader proves what deny_read and protect deny, and what they leave alone", ""},
    {"seatbelt", "protect", "the independent reader proves what deny_read and protect deny, and what they leave alone", ""},
    {"seatbelt", "protect", "a workspace inside /tmp cannot be renamed away from its protected paths", ""},
    {"appcontainer", "write", "", ".github/workflows/windows.yml:world-proofs"},
    {"appcontainer", "network", "", ".github/workflows/windows.yml:world-proofs"},
    {"appcontainer", "processes", "", ".github/workflows/windows.yml:world-proofs"},
    {"appcontainer", "read", "", ".github/workflows/windows.yml:world-proofs"},
    {"appcontainer", "protect", "", ".github/workflows/windows.yml:world-proofs"},
};

std::set<std::string> registered_test_cases() {
    std::set<std::string> names;
    for (const auto& tc : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) names.insert(tc.getTestCaseInfo().name);
    return names;
}

// A workspace that is a git repository, a secret outside it, and the policies the levels
// are read for.
struct Scene {
    test::Tree tree{false};
    fs::path secret = tree.home / ".ssh" / "id_x";
    Scene() {
        fs::create_directories(tree.ws / ".git" / "hooks");
        fs::create_directories(secret.parent_path());
        test::write_file(secret, "x\n");
    }
    // The default policy (the embedded deny_read and protect lists, network none), and
    // one that asks deny_read, protect and network none itself.
    std::vector<std::vector<std::string>> policies() const {
        return {{"--workspace", tree.ws.string()},
                {"--workspace", tree.ws.string(), "--network", "none", "--deny-read", secret.string(), "--protect", (tree.ws / ".git" / "hooks").string()}};
    }
};

// Every minimum lowered: the wrap says what it gives, whatever it gives.
const std::string lowered = "write = \"best-effort\"\nnetwork = \"best-effort\"\nprocesses = \"best-effort\"\n"
                            "read = \"best-effort\"\nprotect = \"best-effort\"\nlifetime = \"best-effort\"\nlimits = \"best-effort\"\n";

// The dimensions `wrap --json` reports `full` for, in any of the policies.
std::set<std::string> full_dimensions(const test::Installed& confine, const fs::path& config, const Scene& scene,
                                      const std::vector<std::string>& extra, std::string& error) {
    std::set<std::string> full;
    for (const auto& policy : scene.policies()) {
        std::vector<std::string> args{"wrap", "--json", "--config", config.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(), policy.begin(), policy.end());
        args.insert(args.end(), {"--", "/bin/true"});
        auto r = confine.run(args, {"HOME=" + scene.tree.home.string()});
        if (r.exit_code != 0) {
            error = r.err;
            return full;
        }
        const json dimensions = json::parse(r.out).at("dimensions");
        for (const auto& [dimension, level] : dimensions.items())
            if (level.is_string() && level.get<std::string>() == "full") full.insert(dimension);
    }
    return full;
}

}  // namespace

TEST_CASE("every dimension a Linux way reports full is proven by an escape-suite case in this binary", "[claims][linux-only]") {
    const auto registered = registered_test_cases();
    // Each name in the table is a test case that exists: a renamed case breaks the table.
    for (const auto& p : linux_proofs) {
        INFO(test::name_of(p.way) << ", " << p.dimension);
        CHECK(registered.contains(expanded(p.test_case, p.way)));
    }
    Scene scene;
    for (const Way way : {Way::bwrap, Way::runner_command, Way::landlock_launcher, Way::landlock_forked, Way::landlock_in_place}) {
        test::require_way(way);
        test::Installed confine;
        const fs::path config = confine.scratch("claims.toml");
        test::write_file(config, test::way_config(way, lowered));
        std::string error;
        const auto full = full_dimensions(confine, config, scene, {}, error);
        INFO(test::name_of(way) << ": " << error);
        REQUIRE(error.empty());
        CHECK_FALSE(full.empty());
        for (const auto& dimension : full) {
            bool proven = false;
            for (const auto& p : linux_proofs)
                proven = proven || (p.way == way && dimension == p.dimension && registered.contains(expanded(p.test_case, way)));
            INFO(test::name_of(way) << " reports " << dimension << ": full, and no escape-suite case in the table proves it");
            CHECK(proven);
        }
    }
}

TEST_CASE("every dimension Seatbelt or AppContainer reports full is proven here or by its system's world proofs", "[claims]") {
    const auto registered = registered_test_cases();
    for (const auto& p : other_proofs) {
        INFO(p.runner << ", " << p.dimension);
        if (*p.test_case) {
            CHECK(registered.contains(p.test_case));
            continue;
        }
        // Proven elsewhere: the named workflow file has the named job.
        const std::string where = p.elsewhere;
        const auto colon = where.find(':');
        REQUIRE(colon != std::string::npos);
        std::ifstream workflow(fs::path(SOURCE_DIR) / where.substr(0, colon));
        REQUIRE(workflow);
        std::stringstream text;
        text << workflow.rdbuf();
        CHECK_THAT(text.str(), Catch::Contains("\n  " + where.substr(colon + 1) + ":\n"));
    }
    Scene scene;
    test::Installed confine;
    const fs::path config = confine.scratch("claims.toml");
    test::write_file(config, "[policy.enforcement]\n" + lowered);
    for (const std::string runner : {"seatbelt", "appcontainer"}) {
        std::string error;
        auto full = full_dimensions(confine, config, scene, {"--runner", runner}, error);
        INFO(runner << ": " << error);
        if (!error.empty()) {
            // Its wrap cannot be had on this system (AppContainer plans Windows paths):
            // every dimension it could report must then be listed.
            full = {"write", "network", "processes", "read", "protect"};
        }
        for (const auto& dimension : full) {
            bool proven = false;
            for (const auto& p : other_proofs)
                proven = proven || (runner == p.runner && dimension == p.dimension && (*p.elsewhere || registered.contains(p.test_case)));
            INFO(runner << " reports " << dimension << ": full, and nothing in the table proves it");
            CHECK(proven);
        }
    }
}
