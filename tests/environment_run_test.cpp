// The environment filter end to end, on the real kernel: on each runner and path
// (bubblewrap, an asserted runner_command, Landlock through its launcher, applied in a
// forked child and applied in place), as root and as nobody, a variable whose name looks
// like a secret never reaches the command, one passed with --env or set by the
// configuration does, and the report and -v name what was removed, never a value.
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;
using test::name_of;
using test::Way;

namespace {

// The secrets, in confinectl's own environment, and what the command must see instead.
const std::vector<std::string> caller_environment{"MY_API_KEY=value-of-my-api-key", "GITHUB_TOKEN=value-of-github-token",
                                                  "DB_PASSWORD=value-of-db-password", "PASSED_TOKEN=value-of-passed-token",
                                                  "PLAIN_SETTING=plain-value"};
const std::vector<std::string> secret_values{"value-of-my-api-key", "value-of-github-token", "value-of-db-password"};

struct EnvironmentRun {
    test::Installed confine;
    fs::path config = confine.scratch("env.toml");
    Way way;

    explicit EnvironmentRun(Way w) : way(w) {
        test::require_way(w);
        const std::string text = test::way_config(w);
        // The environment alone (no path denied to read, a dimension of its own); the
        // default exclude list stands, and the configuration sets one variable.
        test::write_file(config, text + "[policy]\ndeny_read = []\n[policy.env]\nset = { CONFIGURED = \"from-the-configuration\" }\n");
    }

    // `env` run confined in `tree`'s workspace, with -v; a report where it keeps
    // confinectl in front (every way but the in-place one).
    test::Result run(const test::Tree& tree, bool unprivileged, const std::vector<std::string>& flags = {}) const {
        std::vector<std::string> args{"-v", "run", "--config", config.string(), "--workspace", tree.ws.string()};
        if (way != Way::landlock_in_place) args.insert(args.end(), {"--report", report(tree).string()});
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/usr/bin/env"});
        return confine.run(args, caller_environment, test::as_user(unprivileged));
    }
    fs::path report(const test::Tree& tree) const { return tree.root / "report.json"; }
};

bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

void check_filtered(Way way) {
    EnvironmentRun s(way);
    for (const bool unprivileged : {false, true}) {
        if (unprivileged) test::require_user_switch();
        test::Tree tree(unprivileged);
        INFO(name_of(way) << (unprivileged ? " as nobody" : " as root"));
        auto r = s.run(tree, unprivileged, {"--env", "PASSED_TOKEN", "--env", "ADDED=added-value"});
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        // The secrets are gone, by name and by value.
        for (const char* name : {"MY_API_KEY=", "GITHUB_TOKEN=", "DB_PASSWORD="}) CHECK_THAT(r.out, !Catch::Contains(name));
        for (const auto& value : secret_values) {
            CHECK_THAT(r.out, !Catch::Contains(value));
            CHECK_THAT(r.err, !Catch::Contains(value));
        }
        // What was passed, set or harmless is there.
        CHECK(has_line(r.out, "PASSED_TOKEN=value-of-passed-token"));
        CHECK(has_line(r.out, "ADDED=added-value"));
        CHECK(has_line(r.out, "CONFIGURED=from-the-configuration"));
        CHECK(has_line(r.out, "PLAIN_SETTING=plain-value"));
        CHECK_THAT(r.out, Catch::Contains("\nPATH=") || Catch::StartsWith("PATH="));
        // -v names what was removed, never a value.
        CHECK_THAT(r.err, Catch::Contains("confinectl: environment: inherit all; removed "));
        CHECK_THAT(r.err, Catch::Contains(" DB_PASSWORD ") && Catch::Contains(" GITHUB_TOKEN ") && Catch::Contains(" MY_API_KEY "));
        CHECK_THAT(r.err, Catch::Contains("; set ADDED CONFIGURED"));
        if (way == Way::landlock_in_place) continue;
        const std::string text = test::read_file(s.report(tree));
        for (const auto& value : secret_values) CHECK_THAT(text, !Catch::Contains(value));
        const auto removed = json::parse(text)["environment"]["removed"];
        CHECK(std::find(removed.begin(), removed.end(), "MY_API_KEY") != removed.end());
        CHECK(std::find(removed.begin(), removed.end(), "GITHUB_TOKEN") != removed.end());
        CHECK(std::find(removed.begin(), removed.end(), "DB_PASSWORD") != removed.end());
        CHECK(std::find(removed.begin(), removed.end(), "PASSED_TOKEN") == removed.end());
        CHECK(std::find(removed.begin(), removed.end(), "PLAIN_SETTING") == removed.end());
    }
}

}  // namespace

TEST_CASE("a secret-looking variable never reaches the command under the bwrap plugin, as root and as nobody", "[environment][e2e][bwrap][linux-only]") {
    check_filtered(Way::bwrap);
}

TEST_CASE("a secret-looking variable never reaches the command under an asserted runner_command, as root and as nobody", "[environment][e2e][bwrap][linux-only]") {
    check_filtered(Way::runner_command);
}

TEST_CASE("a secret-looking variable never reaches the command through landlock-run, as root and as nobody", "[environment][e2e][landlock][linux-only]") {
    check_filtered(Way::landlock_launcher);
}

TEST_CASE("a secret-looking variable never reaches the command under landlock in a forked child, as root and as nobody", "[environment][e2e][landlock][linux-only]") {
    check_filtered(Way::landlock_forked);
}

TEST_CASE("a secret-looking variable never reaches the command under landlock applied in place, as root and as nobody", "[environment][e2e][landlock][linux-only]") {
    check_filtered(Way::landlock_in_place);
}

TEST_CASE("inherit none gives the command only what is set, and it is still looked up on the default path", "[environment][e2e][landlock][linux-only]") {
    EnvironmentRun s(Way::landlock_launcher);
    test::write_file(s.config, test::read_file(s.config) + "inherit = \"none\"\n");
    test::Tree tree(false);
    // `env` by name: without PATH, found where execvp looks (/bin:/usr/bin).
    auto r = s.confine.run({"run", "--config", s.config.string(), "--workspace", tree.ws.string(), "--report", s.report(tree).string(),
                            "--env", "PLAIN_SETTING", "--", "env"},
                           caller_environment);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    // And the package managers' caches beneath the workspace ([policy.packages]): paths, no
    // more of the caller's environment.
    const std::string base = (fs::canonical(tree.ws) / ".confine").string();
    CHECK(r.out == "PLAIN_SETTING=plain-value\nCONFIGURED=from-the-configuration\nnpm_config_cache=" + base + "/cache/npm\nPIP_CACHE_DIR=" + base +
                       "/cache/pip\nCARGO_HOME=" + base + "/cargo\n");
    const auto removed = json::parse(test::read_file(s.report(tree)))["environment"]["removed"];
    CHECK(std::find(removed.begin(), removed.end(), "PATH") != removed.end());
    CHECK(std::find(removed.begin(), removed.end(), "MY_API_KEY") != removed.end());
}

TEST_CASE("the command is looked up on the PATH it gets, not on confinectl's", "[environment][e2e][landlock][linux-only]") {
    EnvironmentRun s(Way::landlock_launcher);
    test::Tree tree(false);
    const fs::path bin = tree.root / "bin";
    fs::create_directories(bin);
    test::write_file(bin / "only-here", "#!/bin/sh\necho found\n", fs::perms(0755));
    // Found on a PATH that the command gets (set by --env)...
    auto found = s.confine.run({"run", "--config", s.config.string(), "--workspace", tree.ws.string(), "--env", "PATH=" + bin.string() + ":/usr/bin:/bin",
                                "--", "only-here"});
    INFO(found.err);
    CHECK(found.exit_code == 0);
    CHECK(found.out == "found\n");
    // ...and not on one the filter takes away, though confinectl has it.
    test::write_file(s.config, test::read_file(s.config) + "exclude = [\"PATH\"]\n");
    auto missing = s.confine.run({"run", "--config", s.config.string(), "--workspace", tree.ws.string(), "--", "only-here"},
                                 {"PATH=" + bin.string() + ":/usr/bin:/bin"});
    CHECK(missing.exit_code == 127);
    CHECK(missing.err == "confinectl: only-here: command not found\n");
}

TEST_CASE("confinectl refuses an --env with a bad name in one line and 125, nothing run", "[environment][cli]") {
    test::Installed confine;
    const test::TempDir ws;
    for (const std::string& bad : {std::string("=x"), std::string("=")}) {
        for (const std::string command : {"run", "wrap"}) {
            std::vector<std::string> args{command};
            if (command == "wrap") args.push_back("--json");
            args.insert(args.end(), {"--workspace", ws.path().string(), "--env", bad, "--", "/bin/true"});
            auto r = confine.run(args);
            INFO(command << " --env " << bad << ": " << r.err);
            CHECK(r.exit_code == 125);
            CHECK(r.err == "confinectl: --env '" + bad + "': an empty variable name\n");
        }
    }
}

TEST_CASE("wrap --json gives a host the environment to run with, without the values it removed", "[environment][wrap][linux-only]") {
    EnvironmentRun s(Way::landlock_launcher);
    test::Tree tree(false);
    auto r = s.confine.run({"wrap", "--json", "--config", s.config.string(), "--workspace", tree.ws.string(), "--env", "PASSED_TOKEN", "--env",
                            "ADDED=added-value", "--", "/usr/bin/env"},
                           caller_environment);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (const auto& value : secret_values) CHECK_THAT(r.out, !Catch::Contains(value));
    const auto env = json::parse(r.out)["environment"];
    const auto& variables = env["variables"];
    CHECK(variables["PASSED_TOKEN"] == "value-of-passed-token");
    CHECK(variables["ADDED"] == "added-value");
    CHECK(variables["CONFIGURED"] == "from-the-configuration");
    CHECK(variables["PLAIN_SETTING"] == "plain-value");
    CHECK(variables.contains("PATH"));
    CHECK_FALSE(variables.contains("MY_API_KEY"));
    CHECK_FALSE(variables.contains("GITHUB_TOKEN"));
    const auto& removed = env["removed"];
    CHECK(std::find(removed.begin(), removed.end(), "MY_API_KEY") != removed.end());
    CHECK(std::find(removed.begin(), removed.end(), "GITHUB_TOKEN") != removed.end());
    CHECK(env["set"] == json::array({"ADDED", "CONFIGURED"}));
}

TEST_CASE("probe --prove checks that a secret-looking variable is absent, and expects it where the configuration keeps such names", "[environment][prove][e2e][landlock][linux-only]") {
    EnvironmentRun s(Way::landlock_launcher);
    for (const bool kept : {false, true}) {
        if (kept) test::write_file(s.config, test::read_file(s.config) + "exclude = []\n");
        auto r = s.confine.run({"probe", "--prove", "--json", "--config", s.config.string()});
        INFO((kept ? "exclude = []" : "the default exclude list") << "\n" << r.out << r.err);
        CHECK(r.exit_code == 0);
        const auto checks = json::parse(r.out)["checks"];
        const auto env = std::find_if(checks.begin(), checks.end(), [](const json& c) { return c["dimension"] == "env"; });
        REQUIRE(env != checks.end());
        CHECK((*env)["check"] == "a variable with a secret-looking name (CONFINE_PROVE_TOKEN)");
        CHECK((*env)["expected"] == (kept ? "allowed" : "refused"));
        CHECK((*env)["held"] == true);
    }
}
