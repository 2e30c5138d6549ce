// A host program in another language (examples/python-host/confine_host.py, Python's
// standard library only) that spawns and classifies by itself through `wrap --json`:
// it fills in every placeholder the wrap lists, reads the runner's status descriptor, and
// so tells a forged fatal line from a real runner failure, on bubblewrap and on Landlock.
#include "support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::string python = "/usr/bin/python3";
const std::string host_program = std::string(SOURCE_DIR) + "/examples/python-host/confine_host.py";

struct PythonHost {
    test::Installed confine;
    fs::path config = confine.scratch("host.toml");
    test::Tree tree{false};

    explicit PythonHost(const std::string& runner) {
        test::write_file(config, "[platform.linux]\nchain = [\"" + runner + "\"]\n");
    }
    // The host program on `command`; `prefix` goes in front of it (a seccomp wrapper).
    test::Result run(const std::vector<std::string>& command, const std::vector<std::string>& prefix = {},
                     const std::vector<std::string>& flags = {}) const {
        std::vector<std::string> argv = prefix;
        argv.insert(argv.end(), {python, host_program, "--confinectl", confine.confinectl().string(), "--config", config.string(),
                                 "--workspace", tree.ws.string()});
        argv.insert(argv.end(), flags.begin(), flags.end());
        argv.push_back("--");
        argv.insert(argv.end(), command.begin(), command.end());
        return test::run(argv);
    }
    // The wrap of `command`, saved for the host program to run later (--wrap-json).
    fs::path saved_wrap(const std::vector<std::string>& command) const {
        std::vector<std::string> args{"wrap", "--json", "--config", config.string(), "--workspace", tree.ws.string(), "--"};
        args.insert(args.end(), command.begin(), command.end());
        auto r = confine.run(args);
        REQUIRE(r.exit_code == 0);
        const fs::path file = tree.root / "wrap.json";
        test::write_file(file, r.out);
        return file;
    }
};

// The verdict: the last line of the host program's stderr.
json verdict(const test::Result& r) {
    std::string err = r.err;
    if (!err.empty() && err.back() == '\n') err.pop_back();
    return json::parse(err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1));
}

}  // namespace

TEST_CASE("a Python host runs and classifies through wrap --json on bubblewrap and on Landlock, telling a forged fatal line from a real runner failure", "[wrap][e2e][python][linux-only]") {
    if (!fs::exists(python)) test::skip_test("needs " + python);
    struct Case {
        std::string runner;
        std::string fatal_line;               // a line of the runner's own
        std::vector<std::string> breaks_it;   // a wrapper under which the runner cannot set up
    };
    const std::vector<Case> cases{
        {"bwrap", "bwrap: Creating new namespace failed: Operation not permitted", {NO_LANDLOCK, "--no-user-namespaces"}},
        {"landlock", "landlock-run: landlock ruleset error: Invalid argument", {NO_LANDLOCK}},
    };
    for (const Case& c : cases) {
        if (c.runner == "bwrap") test::require_bwrap();
        else test::require_landlock();
        INFO(c.runner);
        PythonHost host(c.runner);
        const fs::path inside = host.tree.ws / "inside", outside = host.tree.root / "outside";

        auto ok = host.run({"/bin/sh", "-c", "echo granted > " + inside.string() + " && cat " + inside.string()});
        INFO(ok.err);
        CHECK(ok.exit_code == 0);
        CHECK(ok.out == "granted\n");
        CHECK(verdict(ok) == json{{"outcome", "completed"}, {"exit_code", 0}, {"signal", nullptr}, {"basis", "attestation"},
                                  {"evidence", nullptr}, {"runner", c.runner}});

        auto denied = host.run({"/bin/sh", "-c", "echo x > " + outside.string()});
        CHECK(denied.exit_code != 0);
        CHECK(verdict(denied)["outcome"] == "task_failed");
        CHECK_FALSE(fs::exists(outside));

        // The command prints the runner's own fatal line and exits 125: the runner's status
        // descriptor says the command ran, so it is the command's failure.
        auto forged = host.run({"/bin/sh", "-c", "echo '" + c.fatal_line + "' >&2; exit 125"});
        CHECK(forged.exit_code == 125);
        CHECK(verdict(forged) == json{{"outcome", "task_failed"}, {"exit_code", 125}, {"signal", nullptr}, {"basis", "attestation"},
                                      {"evidence", nullptr}, {"runner", c.runner}});

        // The runner itself cannot set up: nothing ran, and its own line is the evidence.
        const std::vector<std::string> touch{"/usr/bin/touch", inside.string() + "-real"};
        const fs::path saved = host.saved_wrap(touch);
        std::vector<std::string> argv = c.breaks_it;
        argv.insert(argv.end(), {python, host_program, "--wrap-json", saved.string()});
        auto real = test::run(argv);
        INFO(real.err);
        CHECK(real.exit_code == 125);
        const auto v = verdict(real);
        CHECK(v["outcome"] == "sandbox_unavailable");
        CHECK(v["basis"] == "attestation");
        CHECK_THAT(v["evidence"].get<std::string>(), Catch::StartsWith(c.runner == "bwrap" ? "bwrap: " : "landlock-run: "));
        CHECK_FALSE(fs::exists(inside.string() + "-real"));

        // The host runs the wrap with the environment it gives: a secret-looking variable of
        // its own never reaches the command, and one it passes with --env does.
        auto env = host.run({"/usr/bin/env"}, {"/usr/bin/env", "MY_API_KEY=value-of-my-api-key", "PLAIN_SETTING=plain-value"},
                            {"--env", "ADDED=added-value"});
        INFO(env.err);
        CHECK(env.exit_code == 0);
        CHECK_THAT(env.out, !Catch::Contains("value-of-my-api-key"));
        CHECK_THAT("\n" + env.out, Catch::Contains("\nADDED=added-value\n"));
        CHECK_THAT("\n" + env.out, Catch::Contains("\nPLAIN_SETTING=plain-value\n"));

        // A command that does not exist is the caller's error, said before anything runs.
        auto missing = host.run({"no-such-command-anywhere"});
        CHECK(missing.exit_code == 127);
        CHECK(verdict(missing)["error"]["code"] == "COMMAND_NOT_FOUND");
    }
}
