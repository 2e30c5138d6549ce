#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <confine/internal/network_filter_linux.hpp>
#include <confine/sdk/abi.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <map>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using test::Installed;

void check_one_error_line(const test::Result& r, const std::string& starts_with) {
    CHECK(r.exit_code == 125);
    CHECK(test::line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("confinectl: " + starts_with));
}

}  // namespace

TEST_CASE("confinectl probe on the embedded default selects bubblewrap where it confines", "[cli][bwrap]") {
    test::require_bwrap();
    Installed confine;
    auto r = confine.run({"probe"});
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("config: <embedded default>\n"));
    CHECK_THAT(r.out, Catch::Contains("chain: bwrap landlock\n"));
    CHECK_THAT(r.out, Catch::Contains("  bwrap: available (its probe: full) [" + (confine.plugin_dir() / "confine-runner-bwrap.so").string() + "]\n"));
    CHECK_THAT(r.out, Catch::Contains("selected: bwrap (enforcement full)\n"));  // every dimension, the network included
    // Landlock, second in the chain, is not even probed.
    CHECK_THAT(r.out, !Catch::Contains("landlock:"));
}

TEST_CASE("confinectl probe on the default chain falls back to landlock when bubblewrap cannot work", "[cli][landlock][linux-only]") {
    test::require_landlock();
    Installed confine;
    auto r = confine.run({"probe", "--config", confine.config_without_bwrap().string()});
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("  bwrap: unusable: " + confine.absent_bwrap_reason() + " [" + (confine.plugin_dir() / "confine-runner-bwrap.so").string() + "]\n"));
    // The runner's line says what its probe found of the mechanism; the selected line, what a
    // run here gets of it, each dimension below full named: the two never read as contradicting.
    CHECK_THAT(r.out, Catch::Contains("  landlock: available (its probe: full) [" + (confine.plugin_dir() / "confine-runner-landlock.so").string() + "]\n"));
    CHECK_THAT(r.out, Catch::Contains("selected: landlock (enforcement partial: write partial, "));  // metadata is not governed
    auto wrap = json::parse(confine.run({"wrap", "--json", "--config", confine.config_without_bwrap().string(), "--", "true"}).out);
    for (const char* dimension : {"write", "processes", "network"}) {
        INFO(dimension);
        const bool named = r.out.find(std::string(dimension) + " partial") != std::string::npos;
        CHECK(named == (wrap["dimensions"][dimension] == "partial"));
    }
}

TEST_CASE("confinectl probe fails closed with one line and 125 when no runner is usable", "[cli]") {
    Installed confine;
    confine.remove_launcher();
    auto r = confine.run({"probe", "--config", confine.config_without_bwrap().string()});
    const std::string launcher = (confine.plugin_dir() / "landlock-run").string();
    check_one_error_line(r, "sandbox unavailable: no usable runner for platform 'linux': bwrap: " + confine.absent_bwrap_reason() + "; landlock: landlock-run "
                            "launcher not found at " + launcher + ": No such file or directory");
    CHECK_THAT(r.out, Catch::Contains("platform: linux\n"));
    CHECK_THAT(r.out, Catch::Contains("  bwrap: unusable: " + confine.absent_bwrap_reason() + " [" + (confine.plugin_dir() / "confine-runner-bwrap.so").string() + "]\n"));
    CHECK_THAT(r.out, Catch::Contains("selected: none\n"));
}

TEST_CASE("confinectl probe --json reports every runner's verdict", "[cli]") {
    Installed confine;
    confine.remove_launcher();
    auto r = confine.run({"probe", "--json", "--config", confine.config_without_bwrap().string()});
    CHECK(r.exit_code == 125);
    auto j = json::parse(r.out);
    CHECK(j["schema_version"] == 1);
    CHECK(j["platform"] == "linux");
    CHECK(j["usable"] == false);
    CHECK(j["selected"].is_null());
    CHECK(j["chain"] == json::array({"bwrap", "landlock"}));
    REQUIRE(j["runners"].size() == 2);
    CHECK(j["runners"][0]["runner"] == "bwrap");
    CHECK(j["runners"][0]["verdict"] == "unusable");
    CHECK(j["runners"][0]["reason"] == confine.absent_bwrap_reason());
    CHECK(j["runners"][1]["probed"] == true);
    CHECK(j["error"]["code"] == "SANDBOX_UNAVAILABLE");
    CHECK(test::line_count(r.err) == 1);
}

TEST_CASE("confinectl probe exits 0 when a runner is usable", "[cli]") {
    Installed confine;
    test::TempDir plugins;
    test::install_fake(plugins.path(), "unusable");
    test::install_fake(plugins.path(), "partial");
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "plugin_dirs = [\"" + plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"unusable\", \"partial\"]\n");
    auto r = confine.run({"probe", "--config", cfg.string()});
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("  unusable: unusable: fake unusable says no"));
    CHECK_THAT(r.out, Catch::Contains("  partial: available (its probe: partial): older feature set ["));
    // The portable build adds lifetime partial (no supervisor of its own there).
    CHECK_THAT(r.out, Catch::Contains("selected: partial (enforcement partial: write partial, network partial, processes partial, read partial"));
    auto j = json::parse(confine.run({"probe", "--json", "--config", cfg.string()}).out);
    CHECK(j["usable"] == true);
    CHECK(j["selected"] == "partial");
    CHECK(j["enforcement"] == "partial");
    CHECK(j["error"].is_null());
}

TEST_CASE("confinectl probe checks a runner that is alone in its chain", "[cli]") {
    Installed confine;
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "[platform.linux]\nchain = [\"bwrap\"]\n" + test::absent_bwrap_setting(confine.scratch("")));
    auto r = confine.run({"probe", "--config", cfg.string()});
    check_one_error_line(r, "sandbox unavailable: runner 'bwrap', the only one in the chain, is unusable: " + confine.absent_bwrap_reason());
}

TEST_CASE("confinectl probe reports an asserted runner command without probing it", "[cli]") {
    Installed confine;
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"bwrap: \"]\n");
    auto r = confine.run({"probe", "--config", cfg.string()});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("runner_command: /usr/bin/bwrap (asserted by the operator, not probed)\n"));
    CHECK_THAT(r.out, Catch::Contains("selected: runner_command (enforcement full)\n"));
}

TEST_CASE("confinectl reads CONFINE_CONFIG, and --config wins over it", "[cli]") {
    Installed confine;
    const fs::path env_cfg = confine.scratch("env.toml");
    const fs::path flag_cfg = confine.scratch("flag.toml");
    test::write_file(env_cfg, "[platform.linux]\nchain = []\n");
    test::write_file(flag_cfg, "[platform.linux]\nchain = [\"ghost\"]\n");
    auto env = confine.run({"probe"}, {"CONFINE_CONFIG=" + env_cfg.string()});
    check_one_error_line(env, "sandbox unavailable: the runner chain for platform 'linux' is empty (" + env_cfg.string() + ")");
    auto flag = confine.run({"probe", "--config", flag_cfg.string()}, {"CONFINE_CONFIG=" + env_cfg.string()});
    check_one_error_line(flag, "sandbox unavailable: runner 'ghost' cannot be used: no plugin for runner 'ghost'");
    auto relative = confine.run({"probe"}, {"CONFINE_CONFIG=confine.toml"});
    check_one_error_line(relative, "CONFINE_CONFIG must be an absolute path, got 'confine.toml'");
}

TEST_CASE("confinectl never reads a confine.toml from the current directory", "[cli][security]") {
    Installed confine;
    test::TempDir workspace;
    test::write_file(workspace / "confine.toml", "[platform.linux]\nrunner_command = [\"/usr/bin/env\"]\nrunner_failure_signatures = [\"x\"]\n");
    auto r = test::run({"/bin/sh", "-c", "cd \"$1\" && exec env -u CONFINE_CONFIG \"$2\" probe", "sh", workspace.path().string(),
                        confine.confinectl().string()});
    CHECK_THAT(r.out, Catch::Contains("config: <embedded default>\n"));
    CHECK_THAT(r.out, Catch::Contains("chain: bwrap landlock\n"));
    CHECK_THAT(r.out, !Catch::Contains("runner_command"));
}

TEST_CASE("confinectl configuration errors are one line naming file, line and column, exit 125", "[cli]") {
    Installed confine;
    const fs::path cfg = confine.scratch("bad.toml");
    test::write_file(cfg, "probe_timeout_ms = 100\n[platform.linux]\nrunner_failure_signatures = [\"x\"]\n");
    check_one_error_line(confine.run({"probe", "--config", cfg.string()}),
                         cfg.string() + ":3:29: platform.linux.runner_failure_signatures requires runner_command (from --config)");
    check_one_error_line(confine.run({"probe", "--config", confine.scratch("missing.toml").string()}),
                         confine.scratch("missing.toml").string() + ": configuration file not found (from --config)");
    test::write_file(cfg, "", fs::perms(0666));
    check_one_error_line(confine.run({"plugins", "--config", cfg.string()}), cfg.string() + ": refusing configuration: ");
}

TEST_CASE("confinectl usage errors are one line and exit 125", "[cli]") {
    Installed confine;
    check_one_error_line(confine.run({}), "no command given (see confinectl --help)");
    check_one_error_line(confine.run({"--bogus"}), "unknown option '--bogus' (see confinectl --help)");
    check_one_error_line(confine.run({"probe", "--bogus"}), "probe: unknown option '--bogus' (see confinectl probe --help)");
    check_one_error_line(confine.run({"probe", "--config"}), "probe: --config needs a value (FILE)");
    check_one_error_line(confine.run({"probe", "--config="}), "probe: --config needs a non-empty value (FILE)");
    check_one_error_line(confine.run({"probe", "--json=yes"}), "probe: --json takes no value");
    check_one_error_line(confine.run({"probe", "extra"}), "probe: unexpected argument 'extra' (see confinectl probe --help)");
    check_one_error_line(confine.run({"frobnicate"}), "unknown command 'frobnicate' (see confinectl --help)");
    check_one_error_line(confine.run({"check-config", "a", "b"}), "check-config: unexpected argument 'b' (see confinectl check-config --help)");
    check_one_error_line(confine.run({"run", "--config", "a", "--config", "b", "--", "true"}), "run: --config given more than once");
    check_one_error_line(confine.run({"run", "--report-fd", "x7", "--", "true"}), "--report-fd: 'x7' is not a descriptor number");
}

TEST_CASE("confinectl --help and --version exit 0", "[cli]") {
    Installed confine;
    auto help = confine.run({"--help"});
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("probe"));
    CHECK_THAT(help.out, Catch::Contains("check-config"));
    auto version = confine.run({"--version"});
    CHECK(version.exit_code == 0);
    CHECK_THAT(version.out, Catch::StartsWith("confinectl 0."));
    auto run_help = confine.run({"run", "--help"});
    CHECK(run_help.exit_code == 0);
    CHECK_THAT(run_help.out, Catch::Contains("--report-fd N") && Catch::Contains("--writable PATH"));
}

TEST_CASE("confinectl plugins lists the built-in runners and where they are", "[cli]") {
    Installed confine;
    auto r = confine.run({"plugins"});
    CHECK(r.exit_code == 0);
    for (auto n : {"landlock", "bwrap", "seatbelt", "appcontainer"})
        CHECK_THAT(r.out, Catch::Contains(std::string(n) + "  0.") && Catch::Contains((confine.plugin_dir() / ("confine-runner-" + std::string(n) + ".so")).string()));
    auto j = json::parse(confine.run({"plugins", "--json"}).out);
    CHECK(j["schema_version"] == 1);
    REQUIRE(j["plugins"].size() == 4);
    for (const auto& p : j["plugins"]) {
        CHECK(p["status"] == "ok");
        CHECK(p["abi"] == "1." + std::to_string(CONFINE_ABI_MINOR));
    }
    CHECK(j["plugin_dirs"] == json::array({confine.plugin_dir().string()}));
}

TEST_CASE("confinectl plugins reports every refusal and exits 125", "[cli][trust]") {
    Installed confine;
    test::TempDir extra;
    test::install_fake(extra.path(), "wrong-major");
    fs::permissions(test::install_fake(extra.path(), "usable"), fs::perms(0775));
    test::install_builtin(extra.path(), "bwrap");
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "plugin_dirs = [\"" + extra.path().string() + "\"]\n");
    auto r = confine.run({"plugins", "--config", cfg.string()});
    check_one_error_line(r, "4 plugin file(s) refused");
    CHECK_THAT(r.out, Catch::Contains("wrong-major  REFUSED  PLUGIN_ABI_MAJOR_MISMATCH: "));
    CHECK_THAT(r.out, Catch::Contains("usable  REFUSED  PLUGIN_UNTRUSTED: " + (extra / "confine-runner-usable.so").string() +
                                      ": refusing plugin: " + (extra / "confine-runner-usable.so").string() + " is writable by its group (mode 0775)"));
    CHECK_THAT(r.out, Catch::Contains("bwrap  REFUSED  PLUGIN_DUPLICATE: "));
    CHECK_THAT(r.out, Catch::Contains("landlock  0."));
}

TEST_CASE("confinectl check-config accepts a valid file and the default", "[cli]") {
    Installed confine;
    auto dflt = confine.run({"check-config"});
    CHECK(dflt.exit_code == 0);
    CHECK(dflt.out == "platform linux: chain bwrap landlock (<embedded default>:7:1)\n<embedded default>: valid\n");
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "[platform.linux]\nchain = [\"landlock\"]\n[runner.landlock]\nlauncher = \"/opt/landlock-run\"\n[runner.thirdparty]\nx = 1\n");
    auto r = confine.run({"check-config", cfg.string()});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "note: " + cfg.string() + ":5:1: runner.thirdparty: no plugin here to check its settings against\nplatform linux: chain landlock (" +
                       cfg.string() + ":1:1)\n" + cfg.string() + ": valid\n");
    CHECK(r.err.empty());
    auto example = confine.run({"check-config", EXAMPLE_CONFIG_FILE});
    CHECK(example.exit_code == 0);
}

TEST_CASE("confinectl check-config prints the effective chain, defaults applied, and warns when it is empty", "[cli][linux-only]") {
    Installed confine;
    const fs::path timeout_only = confine.scratch("timeout.toml");
    test::write_file(timeout_only, "probe_timeout_ms = 500\n");
    auto r = confine.run({"check-config", timeout_only.string()});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "platform linux: chain bwrap landlock (<embedded default>:7:1)\n" + timeout_only.string() + ": valid\n");
    CHECK(r.err.empty());
    // And a run with it uses the default chain rather than failing closed.
    auto probe = confine.run({"probe", "--config", timeout_only.string()});
    CHECK_THAT(probe.out, Catch::Contains("chain: bwrap landlock"));

    const fs::path emptied = confine.scratch("empty.toml");
    test::write_file(emptied, "[platform.linux]\nchain = []\n");
    auto e = confine.run({"check-config", emptied.string()});
    CHECK(e.exit_code == 0);
    CHECK(e.out == emptied.string() + ": valid\n");
    CHECK(e.err == "confinectl: warning: " + emptied.string() + ":1:1: the chain for platform 'linux' is empty: every run fails closed\n");
    auto run = confine.run({"run", "--config", emptied.string(), "--", "true"});
    CHECK(run.exit_code == 125);
}

TEST_CASE("confinectl check-config warns about a plugin_dirs entry that is not a directory, and still calls the file valid", "[cli]") {
    Installed confine;
    test::TempDir plugins;
    const fs::path missing = plugins.path() / "missing";
    const fs::path file = plugins.path() / "file";
    test::write_file(file, "");
    const fs::path cfg = confine.scratch("dirs.toml");
    test::write_file(cfg, "plugin_dirs = [\"" + plugins.path().string() + "\",\n  \"" + missing.string() + "\",\n  \"" + file.string() + "\"]\n");
    auto r = confine.run({"check-config", cfg.string()});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::EndsWith(cfg.string() + ": valid\n"));
    CHECK(r.err == "confinectl: warning: " + cfg.string() + ":2:3: plugin_dirs entry '" + missing.string() + "' does not exist\n"
                   "confinectl: warning: " + cfg.string() + ":3:3: plugin_dirs entry '" + file.string() + "' is not a directory\n");
    // Every entry there: no warning.
    test::write_file(cfg, "plugin_dirs = [\"" + plugins.path().string() + "\"]\n");
    auto quiet = confine.run({"check-config", cfg.string()});
    CHECK(quiet.exit_code == 0);
    CHECK(quiet.err.empty());
}

TEST_CASE("confinectl check-config rejects bad files and settings their plugin refuses", "[cli]") {
    Installed confine;
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "probe_timeout_ms = 0\n");
    check_one_error_line(confine.run({"check-config", cfg.string()}),
                         cfg.string() + ":1:20: probe_timeout_ms must be a positive number of milliseconds, got 0");
    test::write_file(cfg, "\n[runner.bwrap]\nprogam = \"/usr/bin/bwrap\"\n");
    check_one_error_line(confine.run({"check-config", cfg.string()}),
                         cfg.string() + ":3:1: runner.bwrap: unknown setting 'progam' (plugin " +
                             (confine.plugin_dir() / "confine-runner-bwrap.so").string() + ")");
    check_one_error_line(confine.run({"check-config", confine.scratch("none.toml").string()}), confine.scratch("none.toml").string() + ": configuration file not found");
    check_one_error_line(confine.run({"check-config", confine.scratch("bin").string()}), confine.scratch("bin").string() + ": not a regular file");
}

namespace {

const std::string notice = "landlock-run: partial enforcement (older Landlock ABI)";
const std::string fatal = "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)";

// confinectl with a configuration whose Linux runner is the fake Landlock-shaped one.
struct FakeRunnerSetup {
    Installed confine;
    test::TempDir plugins, workspace;
    fs::path config = confine.scratch("run.toml");

    explicit FakeRunnerSetup(bool attest = true, bool launcher = true) {
        test::install_fake(plugins.path(), "usable");
        std::string text = "plugin_dirs = [\"" + plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n[runner.usable]\n";
        if (launcher) text += "launcher = \"" FAKE_LAUNCHER "\"\nattest = " + std::string(attest ? "true" : "false") + "\n";
        test::write_file(config, text);
    }
    test::Result run(std::vector<std::string> command, std::vector<std::string> env = {}, std::vector<std::string> flags = {}) const {
        std::vector<std::string> args{"run", "--config", config.string(), "--workspace", workspace.path().string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        return confine.run(args, env);
    }
};

std::size_t own_lines(const std::string& err) {
    std::size_t n = 0;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) n += line.starts_with("confinectl: ");
    return n;
}

std::string last_line(const std::string& text) {
    std::string t = text;
    if (!t.empty() && t.back() == '\n') t.pop_back();
    return t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
}

}  // namespace

TEST_CASE("confinectl run passes the command's exit status and bytes through", "[cli][run][linux-only]") {
    for (bool attest : {true, false}) {
        INFO("attest " << attest);
        FakeRunnerSetup s(attest);
        for (int code : {0, 1, 7, 125, 126, 127}) {
            auto r = s.run({"/bin/sh", "-c", "printf 'out\\000put'; printf 'err' >&2; exit " + std::to_string(code)});
            CHECK(r.exit_code == code);
            CHECK(r.out == std::string("out\0put", 7));
            CHECK(r.err == notice + "\nerr");
        }
    }
}

TEST_CASE("confinectl run ends by the signal that ended the command", "[cli][run][linux-only]") {
    FakeRunnerSetup s;
    auto r = s.run({"/bin/sh", "-c", "kill -TERM $$"});
    CHECK(r.exit_code == -1);
    CHECK(r.signal == SIGTERM);
    auto killed = s.run({"/bin/sh", "-c", "kill -KILL $$"});
    CHECK(killed.signal == SIGKILL);
}

TEST_CASE("confinectl run reports a runner failure in one line and exits 125, the command not run", "[cli][run][linux-only]") {
    for (bool attest : {true, false}) {
        FakeRunnerSetup s(attest);
        const fs::path marker = s.workspace / "ran";
        auto r = s.run({"/usr/bin/touch", marker.string()}, {"FAKE_LAUNCHER_FAIL=1"});
        CHECK(r.exit_code == 125);
        CHECK(own_lines(r.err) == 1);
        if (attest) {
            // Attested, with no report asking for a denial hint, stderr is the caller's own:
            // the launcher's line reaches it directly, and the attestation is the evidence.
            CHECK(r.err == notice + "\n" + fatal + "\n" + "confinectl: sandbox unavailable: runner 'usable' ended with exit status 125 "
                                                         "before starting the command (1 of 2 execs seen)\n");
        } else {
            CHECK(last_line(r.err) == "confinectl: sandbox unavailable: " + fatal);
        }
        CHECK_FALSE(fs::exists(marker));
    }
}

TEST_CASE("confinectl run fails closed on the default configuration when no runner works", "[cli][run]") {
    Installed confine;
    confine.remove_launcher();
    test::TempDir ws;
    const fs::path marker = ws / "ran";
    auto r = confine.run({"run", "--config", confine.config_without_bwrap().string(), "--workspace", ws.path().string(), "--", "/usr/bin/touch", marker.string()});
    check_one_error_line(r, "sandbox unavailable: no usable runner for platform 'linux': bwrap: " + confine.absent_bwrap_reason() + "; landlock: landlock-run launcher not found at ");
    CHECK_FALSE(fs::exists(marker));
}

// A run that falls back from the chain's first choice says so in one line, without -v:
// what could not be used and why, and what the runner used enforces less than full.
TEST_CASE("confinectl run says in one line that it fell back to a runner after the chain's first, and what is weaker", "[cli][run][e2e][linux-only]") {
    test::require_landlock();
    Installed confine;
    test::Tree t(false);
    auto r = confine.run({"run", "--config", confine.config_without_bwrap().string(), "--workspace", t.ws.string(), "--", "/bin/true"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(test::line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("confinectl: warning: running under landlock, not bwrap, the first choice, which cannot be used here (" +
                                        confine.absent_bwrap_reason() + "); enforced less here: write partial, processes partial"));
    CHECK_THAT(r.err, !Catch::Contains("loopback"));  // as root Landlock gives one
    // As another user Landlock has no network namespace to give a loopback: said too.
    test::require_user_switch();
    test::Tree theirs(true);
    auto as_nobody = confine.run({"run", "--config", confine.config_without_bwrap().string(), "--workspace", theirs.ws.string(), "--", "/bin/true"}, {},
                                 test::as_user(true));
    INFO(as_nobody.err);
    CHECK(as_nobody.exit_code == 0);
    CHECK(test::line_count(as_nobody.err) == 1);
    CHECK_THAT(as_nobody.err, Catch::EndsWith("; no loopback here: every TCP and UDP socket is refused, 127.0.0.1's too\n"));
    // The first choice used: nothing said.
    test::require_bwrap();
    const fs::path both = confine.scratch("both.toml");
    test::write_file(both, "[platform.linux]\nchain = [\"bwrap\", \"landlock\"]\n");
    auto first = confine.run({"run", "--config", both.string(), "--workspace", t.ws.string(), "--", "/bin/true"});
    CHECK(first.exit_code == 0);
    CHECK(first.err.empty());
}

TEST_CASE("a runner below a dimension's minimum runs nothing, and best-effort accepts it with a report that says what it is", "[cli][run][network]") {
    test::Installed confine;
    test::TempDir plugins, ws;
    test::install_fake(plugins.path(), "usable");
    const fs::path config = confine.scratch("levels.toml");
    const fs::path marker = ws / "ran";
    const fs::path report = confine.scratch("report.json");
    // `runner`: more of [runner.usable] (whose launcher is the fake one); `policy`: more tables.
    // No path to deny (the account's own home, which ~ also names, holds what it holds).
    auto run = [&](const std::string& runner, const std::string& policy, std::vector<std::string> flags = {}) {
        test::write_file(config, "plugin_dirs = [\"" + plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n"
                                 "[runner.usable]\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = false\n" + runner + "[policy]\ndeny_read = []\n" + policy);
        std::vector<std::string> args{"run", "--config", config.string(), "--workspace", ws.path().string(), "--report", report.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/usr/bin/touch", marker.string()});
        return confine.run(args);
    };
    // It says it cannot confine the network at all: with the network confined (the
    // default), nothing runs.
    auto refused = run("network = \"none\"\n", "");
    CHECK(refused.exit_code == 125);
    CHECK(refused.err == "confinectl: sandbox unavailable: runner 'usable' enforces network at level none, below the minimum partial "
                         "([policy.enforcement] network)\n");
    CHECK_FALSE(fs::exists(marker));
    // The network allowed: not asked of it, so it runs; the report says so.
    auto allowed = run("network = \"none\"\n", "", {"--network", "allow"});
    CHECK(allowed.exit_code == 0);
    CHECK(fs::exists(marker));
    auto j = json::parse(test::read_file(report));
    CHECK(j["dimensions"]["network"] == "not asked");
    fs::remove(marker);
    // Accepted as best-effort: it runs, and the report says what it enforced.
    auto lenient = run("network = \"none\"\n", "[policy.enforcement]\nnetwork = \"best-effort\"\n");
    CHECK(lenient.exit_code == 0);
    CHECK(fs::exists(marker));
    j = json::parse(test::read_file(report));
    // Lifetime is the host's supervisor's (full here as root), or the fake's own where the
    // build has none (partial, the host's gap then said after the fake's).
    json dimensions = j["dimensions"];
    CHECK((dimensions["lifetime"] == "full" || dimensions["lifetime"] == "partial"));
    CHECK_THAT(dimensions["open"].get<std::string>(), Catch::StartsWith("what a fake leaves open"));
    dimensions.erase("lifetime");
    dimensions.erase("open");
    CHECK(dimensions == json{{"write", "partial"}, {"network", "none"}, {"processes", "partial"}, {"read", "not asked"}, {"read_scope", "not asked"},
                             {"protect", "not asked"}, {"limits", "not asked"}});
    CHECK(j["enforcement"] == "partial");
    fs::remove(marker);
    // A minimum of full refuses partial.
    auto strict = run("", "[policy.enforcement]\nprocesses = \"full\"\n");
    CHECK(strict.exit_code == 125);
    CHECK(strict.err == "confinectl: sandbox unavailable: runner 'usable' enforces processes at level partial, below the minimum full "
                        "([policy.enforcement] processes)\n");
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("confinectl probe --prove holds every check on bubblewrap and on Landlock, as root and as nobody", "[cli][prove][e2e][linux-only]") {
    for (const std::string runner : {"bwrap", "landlock"}) {
        if (runner == "bwrap") test::require_bwrap();
        else test::require_landlock();
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            for (const std::string network : {"none", "allow", "proxy"}) {
                Installed confine;
                const fs::path config = confine.scratch("prove.toml");
                test::write_file(config, "[platform.linux]\nchain = [\"" + runner + "\"]\n[policy]\n" +
                                             (network == "proxy" ? std::string("allow_hosts = [\"example.org\"]\n") : "network = \"" + network + "\"\n"));
                auto r = confine.run({"probe", "--prove", "--json", "--config", config.string()}, {}, test::as_user(unprivileged));
                INFO(runner << (unprivileged ? " as nobody" : " as root") << ", network " << network << "\n" << r.out << r.err);
                CHECK(r.exit_code == 0);
                auto j = json::parse(r.out);
                CHECK(j["schema_version"] == 1);
                CHECK(j["runner"] == runner);
                CHECK(j["network"] == network);
                REQUIRE(j["checks"].size() == 29);
                CHECK(j["summary"]["cost"] == (runner == "landlock" ? 1 : 0));
                for (const auto& c : j["checks"]) {
                    INFO(c.dump());
                    // The directory a denied one lies in cannot be listed under Landlock (its
                    // deny-list carve), which names it as a cost; bubblewrap lists it.
                    if (c["check"].get<std::string>().ends_with("(what the deny list costs)")) {
                        CHECK(c["expected"] == "allowed");
                        CHECK(c["outcome"] == (runner == "landlock" ? "cost" : "held"));
                        CHECK(c["observed"] == (runner == "landlock" ? "refused" : "allowed"));
                        continue;
                    }
                    // Landlock does not govern metadata, and reports it: that check is open,
                    // every other holds — the protected paths too: as root a mount namespace
                    // of the run's own keeps them read-only, as nobody the host puts them back
                    // after the run (and moves a renamed .git back), and the planted
                    // commondir is moved aside by the run-end check after any run.
                    const bool open = runner == "landlock" && c["check"].get<std::string>().ends_with("(metadata)");
                    CHECK(c["held"] == !open);
                    CHECK(c["open"] == open);
                    CHECK(c["outcome"] == (open ? "open" : "held"));
                    // The level reported, on every check but env's (confine's own filter).
                    CHECK(c["reported"].is_string() == (c["dimension"] != "env"));
                    // The network through the run's proxy, checked whatever the configuration's
                    // network: a listed host reached, an unlisted one and a direct
                    // connection refused; bubblewrap full, Landlock partial (a port rule).
                    if (c["check"].get<std::string>().find("run's proxy") != std::string::npos) {
                        const bool listed = c["check"].get<std::string>().starts_with("a listed host through");
                        CHECK(c["expected"] == (listed ? "allowed" : "refused"));
                        CHECK(c["reported"] == (runner == "landlock" ? "partial" : "full"));
                        continue;
                    }
                    if (c["dimension"] == "network" && network == "allow") CHECK(c["reported"] == "not asked");
                    if (c["dimension"] == "read") CHECK(c["reported"] == "full");
                    if (c["dimension"] == "protect") CHECK(c["reported"] == (runner == "landlock" && unprivileged ? "partial" : "full"));
                    if (c["dimension"] == "network") CHECK(c["expected"] == (network == "allow" ? "allowed" : "refused"));
                    if (c["dimension"] == "env") CHECK(c["expected"] == "refused");
                }
            }
        }
    }
}

TEST_CASE("confinectl probe --prove fails, naming each check, under a runner that confines nothing", "[cli][prove][linux-only]") {
    // The fake launcher execs the command as it is, while saying it enforces everything.
    FakeRunnerSetup s;
    test::write_file(s.config, test::read_file(s.config) + "network = \"full\"\nprocesses = \"full\"\nread = \"full\"\nprotect = \"full\"\n");
    auto r = s.confine.run({"probe", "--prove", "--config", s.config.string()});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("FAILED  read: a read of a secret under a denied directory — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  read: a listing of a denied directory — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  protect: a write to a protected hook — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  protect: a new hook in a protected directory — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  write: a write outside the writable roots — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  network: a TCP connection to the host's loopback — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  processes: a signal to a process of the host — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  write: a rename of a file from outside into the workspace — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  processes: a trace of a process of the host — expected refused, observed allowed"));
    // Each failed check says what the runner reported of its dimension.
    CHECK_THAT(r.out, Catch::Contains("FAILED  network: a TCP connection to the host's loopback — expected refused, observed allowed "
                                      "(the runner reports network: full)\n"));
    // It reports write partial, explaining "what a fake leaves open": that names no change of
    // mode, so the metadata check is an over-claim too.
    CHECK_THAT(r.out, Catch::Contains("FAILED  write: a change of mode of a file outside the writable roots (metadata) — expected refused, observed allowed "
                                      "(the runner reports write: partial, without naming it)"));
    CHECK_THAT(r.out, Catch::Contains(" over-claimed\n"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  network: a datagram to an abstract unix socket of the host (abstract datagram) — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("FAILED  network: a datagram to a unix socket of the host by its path — expected refused, observed allowed"));
    CHECK_THAT(r.out, Catch::Contains("held    write: a write inside the workspace"));
    // A runner that says it does not protect at all: the host puts the protected paths back
    // after the run (protect partial), and the checks, judged after it, hold.
    test::write_file(s.config, test::read_file(s.config) + "[policy.enforcement]\nprotect = \"best-effort\"\n");
    auto lowered = test::read_file(s.config);
    lowered.replace(lowered.find("protect = \"full\""), 16, "protect = \"none\"");
    test::write_file(s.config, lowered);
    auto said = s.confine.run({"probe", "--prove", "--config", s.config.string()});
    CHECK_THAT(said.out, Catch::Contains("held    protect: a write to a protected hook — expected refused, observed refused"));
    CHECK_THAT(said.out, Catch::Contains("held    protect: a rename of a protected repository's .git (git redirect) — expected refused, observed refused"));
}

namespace {

// The proof's checks by outcome, from `probe --prove --json`'s output.
std::map<std::string, std::vector<json>> by_outcome(const json& proof) {
    std::map<std::string, std::vector<json>> out;
    for (const auto& c : proof["checks"]) out[c["outcome"].get<std::string>()].push_back(c);
    return out;
}

const json* check_named(const json& proof, const std::string& name) {
    for (const auto& c : proof["checks"])
        if (c["check"] == name) return &c;
    return nullptr;
}

}  // namespace

TEST_CASE("probe --prove tells a hole the runner reports from an over-claim, and --strict fails on either", "[cli][prove][slow][linux-only]") {
    // The fake confines nothing. Here it says so: every dimension none, accepted as best-effort.
    FakeRunnerSetup s;
    const std::string table = test::read_file(s.config);
    const std::string accepted = "[policy.enforcement]\nwrite = \"best-effort\"\nnetwork = \"best-effort\"\nprocesses = \"best-effort\"\n"
                                 "read = \"best-effort\"\nprotect = \"best-effort\"\nlifetime = \"best-effort\"\n";
    test::write_file(s.config, table + "write = \"none\"\nnetwork = \"none\"\nprocesses = \"none\"\nread = \"none\"\nprotect = \"none\"\nlifetime = \"none\"\n" + accepted);
    auto honest = s.confine.run({"probe", "--prove", "--config", s.config.string()});
    INFO(honest.out << honest.err);
    CHECK(honest.exit_code == 0);
    CHECK_THAT(honest.out, Catch::Contains("open    network: a TCP connection to the host's loopback — expected refused, observed allowed "
                                           "(the runner reports network: none)\n"));
    CHECK_THAT(honest.out, Catch::Contains("open    write: a write outside the writable roots — expected refused, observed allowed (the runner reports write: none)\n"));
    CHECK_THAT(honest.out, Catch::Contains("held    write: a write inside the workspace"));
    CHECK_THAT(honest.out, Catch::Contains(" 0 over-claimed\n"));
    CHECK(s.confine.run({"probe", "--prove", "--strict", "--config", s.config.string()}).exit_code == 1);
    auto as_json = s.confine.run({"probe", "--prove", "--json", "--config", s.config.string()});
    CHECK(as_json.exit_code == 0);
    const json proof = json::parse(as_json.out);
    auto outcomes = by_outcome(proof);
    CHECK(outcomes["over-claim"].empty());
    CHECK_FALSE(outcomes["open"].empty());
    CHECK(proof["summary"]["open"] == outcomes["open"].size());
    CHECK(proof["summary"]["held"] == outcomes["held"].size());
    for (const auto& c : proof["checks"]) {
        INFO(c.dump());
        // Every check carries the level reported for its dimension; env is confine's own filter.
        if (c["dimension"] == "env") CHECK(c["reported"].is_null());
        else CHECK(c["reported"].is_string());
        if (c["outcome"] == "open") CHECK(c["reported"] == "none");
        CHECK(c["open"] == (c["outcome"] == "open"));
        CHECK(c["held"] == (c["outcome"] == "held"));
    }
    check_one_error_line(s.confine.run({"probe", "--strict", "--config", s.config.string()}), "probe: --strict applies to --prove");

    // The network partial, with an explanation that names abstract sockets and datagrams
    // only: those checks are open, the TCP connection an over-claim.
    test::write_file(s.config, table + "write = \"none\"\nnetwork = \"partial\"\nprocesses = \"none\"\nread = \"none\"\nprotect = \"none\"\n"
                                       "lifetime = \"none\"\nopen = \"network: abstract unix sockets and unix datagrams reach the host\"\n" + accepted);
    auto partial = s.confine.run({"probe", "--prove", "--config", s.config.string()});
    INFO(partial.out << partial.err);
    CHECK(partial.exit_code == 1);
    CHECK_THAT(partial.out, Catch::Contains("open    network: an abstract unix socket of the host — expected refused, observed allowed "
                                            "(the runner reports network: partial, naming it)\n"));
    CHECK_THAT(partial.out, Catch::Contains("FAILED  network: a TCP connection to the host's loopback — expected refused, observed allowed "
                                            "(the runner reports network: partial, without naming it)\n"));
    const json partial_proof = json::parse(s.confine.run({"probe", "--prove", "--json", "--config", s.config.string()}).out);
    const json* tcp = check_named(partial_proof, "a TCP connection to the host's loopback");
    REQUIRE(tcp);
    CHECK((*tcp)["outcome"] == "over-claim");
    CHECK((*tcp)["reported"] == "partial");
    CHECK((*tcp)["left_open"] == "abstract unix sockets and unix datagrams reach the host");
    CHECK((*tcp)["named_by"] == json::array({"tcp"}));
    const json* abstract = check_named(partial_proof, "an abstract unix socket of the host");
    REQUIRE(abstract);
    CHECK((*abstract)["outcome"] == "open");
    CHECK(partial_proof["summary"]["over_claim"].get<int>() >= 1);
}

TEST_CASE("probe --prove calls a full level that does not hold an over-claim, in JSON too", "[cli][prove][linux-only]") {
    FakeRunnerSetup s;
    test::write_file(s.config, test::read_file(s.config) + "network = \"full\"\nprocesses = \"full\"\nread = \"full\"\nprotect = \"full\"\n");
    auto r = s.confine.run({"probe", "--prove", "--json", "--config", s.config.string()});
    CHECK(r.exit_code == 1);
    const json proof = json::parse(r.out);
    for (const std::string name : {"a TCP connection to the host's loopback", "a read of a secret under a denied directory", "a signal to a process of the host",
                                   "a write to a protected hook"}) {
        INFO(name);
        const json* c = check_named(proof, name);
        REQUIRE(c);
        CHECK((*c)["outcome"] == "over-claim");
        CHECK((*c)["reported"] == "full");
        CHECK((*c)["open"] == false);
    }
    CHECK(proof["summary"]["over_claim"].get<int>() >= 4);
}

namespace {

// confinectl `command` with `flags` (and for run, the command true), started in `cwd`.
test::Result from(const FakeRunnerSetup& s, const fs::path& cwd, const std::string& command, const std::vector<std::string>& flags) {
    std::vector<std::string> argv{"/usr/bin/env", "-C", cwd.string(), "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + s.confine.scratch("cache").string(),
                                  s.confine.confinectl().string(), command, "--config", s.config.string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    if (command == "run") argv.insert(argv.end(), {"--", "/bin/true"});
    return test::run(argv);
}

}  // namespace

TEST_CASE("probe judges the workspace run would get, and where run would refuse it says run's line and exits 125", "[cli][probe][linux-only]") {
    FakeRunnerSetup s;
    const fs::path plugins = s.plugins.path(), ws = s.workspace.path();
    struct Case {
        fs::path cwd;
        std::vector<std::string> flags;
        bool refused;
    };
    const std::vector<Case> cases{
        {plugins, {}, true},                                       // the plugin lies in the default workspace
        {plugins, {"--workspace", ws.string()}, false},            // elsewhere
        {ws, {"--writable", plugins.string()}, true},              // in a writable root
        {plugins, {"--mode", "read-only"}, false},                 // no workspace at all
        {ws, {"--workspace", "/"}, true},                          // a root run refuses
        {ws, {"--workspace", (ws / "missing").string()}, true},    // a workspace that is not there
    };
    for (const auto& c : cases) {
        std::string named = c.cwd.string() + ":";
        for (const auto& f : c.flags) named += " " + f;
        INFO(named);
        auto ran = from(s, c.cwd, "run", c.flags);
        auto probed = from(s, c.cwd, "probe", c.flags);
        INFO(probed.out << probed.err << ran.err);
        CHECK_THAT(probed.out, Catch::Contains("selected: usable"));
        if (c.refused) {
            CHECK(ran.exit_code == 125);
            CHECK(probed.exit_code == 125);
            CHECK(test::line_count(probed.err) == 1);
            CHECK(probed.err == ran.err);
            CHECK_THAT(probed.out, Catch::Contains("run: would refuse: " + ran.err.substr(std::string("confinectl: ").size())));
        } else {
            CHECK(ran.exit_code == 0);
            CHECK(probed.exit_code == 0);
            CHECK(probed.err.empty());
            CHECK_THAT(probed.out, Catch::EndsWith("run: would start\n"));
        }
    }
    // A judgement leaves nothing behind: no package caches made in the workspace.
    test::TempDir fresh("/var/tmp");
    CHECK(from(s, fresh.path(), "probe", {"--workspace", fresh.path().string()}).exit_code == 0);
    CHECK(fs::is_empty(fresh.path()));
    // The default: the current directory, named; the plugin's place said in run's words.
    auto here = from(s, plugins, "probe", {});
    CHECK_THAT(here.out, Catch::Contains("workspace: " + plugins.string() + "\n"));
    CHECK_THAT(here.err, Catch::Contains("refusing to run: the plugin ") && Catch::Contains(" lies in " + plugins.string() + ", which the confined command may write"));
    CHECK_THAT(from(s, plugins, "probe", {"--mode", "read-only"}).out, Catch::Contains("workspace: none (read-only mode)\n"));
    // In JSON: the workspace, and the line, or null.
    auto refused = from(s, plugins, "probe", {"--json"});
    CHECK(refused.exit_code == 125);
    auto j = json::parse(refused.out);
    CHECK(j["usable"] == true);
    CHECK(j["selected"] == "usable");
    CHECK(j["workspace"] == plugins.string());
    CHECK(j["run_refused"] == refused.err.substr(std::string("confinectl: ").size(), refused.err.size() - std::string("confinectl: ").size() - 1));
    auto started = from(s, plugins, "probe", {"--json", "--workspace", ws.string()});
    CHECK(started.exit_code == 0);
    j = json::parse(started.out);
    CHECK(j["workspace"] == ws.string());
    CHECK(j["run_refused"].is_null());
    j = json::parse(from(s, plugins, "probe", {"--json", "--mode", "read-only"}).out);
    CHECK(j["workspace"].is_null());
    // --prove proves only where a run would start.
    auto proving = from(s, plugins, "probe", {"--prove"});
    CHECK(proving.exit_code == 125);
    CHECK(proving.out.empty());
    CHECK(proving.err == refused.err);
}

TEST_CASE("probe in a directory that holds confine's own plugins says run would refuse there, on bubblewrap and on Landlock", "[cli][probe][e2e][linux-only]") {
    for (const std::string runner : {"bwrap", "landlock"}) {
        if (runner == "bwrap") test::require_bwrap();
        else test::require_landlock();
        INFO(runner);
        Installed confine;
        const fs::path config = confine.scratch(runner + ".toml");
        test::write_file(config, "[platform.linux]\nchain = [\"" + runner + "\"]\n");
        const fs::path tree = confine.here().parent_path();  // bin/ and lib/confine/plugins/ below it
        auto probe_in = [&](const fs::path& cwd, const std::string& command) {
            std::vector<std::string> argv{"/usr/bin/env", "-C", cwd.string(), "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + confine.scratch("cache").string(),
                                          confine.confinectl().string(), command, "--config", config.string()};
            if (command == "run") argv.insert(argv.end(), {"--", "/bin/true"});
            return test::run(argv);
        };
        auto probed = probe_in(tree, "probe");
        auto ran = probe_in(tree, "run");
        INFO(probed.out << probed.err);
        CHECK_THAT(probed.out, Catch::Contains("selected: " + runner));
        CHECK(probed.exit_code == 125);
        CHECK(ran.exit_code == 125);
        CHECK(probed.err == ran.err);
        CHECK_THAT(probed.err, Catch::StartsWith("confinectl: sandbox unavailable: refusing to run: the plugin " + confine.plugin_dir().string()));
        // From a directory of its own, as a project's: it would start, and does.
        auto elsewhere = probe_in(confine.here(), "probe");
        CHECK(elsewhere.exit_code == 0);
        CHECK_THAT(elsewhere.out, Catch::Contains("workspace: " + confine.here().string() + "\nrun: would start\n"));
        CHECK(probe_in(confine.here(), "run").exit_code == 0);
    }
}

TEST_CASE("confinectl run writes a JSON report of the outcome", "[cli][run][linux-only]") {
    FakeRunnerSetup s;
    const fs::path report = s.confine.scratch("report.json");
    auto r = s.run({"/bin/sh", "-c", "echo 'x: Permission denied' >&2; exit 3"}, {}, {"--report", report.string()});
    CHECK(r.exit_code == 3);
    auto j = json::parse(test::read_file(report));
    CHECK(j["schema_version"] == 1);
    CHECK(j["outcome"] == "task_failed");
    CHECK(j["exit_code"] == 3);
    CHECK(j["signal"].is_null());
    CHECK(j["runner"] == "usable");
    CHECK(j["enforcement"] == "partial");
    CHECK(j["basis"] == "attestation");
    CHECK(j["evidence"].is_null());
    CHECK(j["denial_hint"] == "x: Permission denied");
    CHECK(j["timed_out"] == false);
    // Not through the run's proxy: nothing of it.
    CHECK(j["network_requests"].is_null());
    CHECK(j["network_over_limit"].is_null());

    s.run({"/bin/true"}, {"FAKE_LAUNCHER_FAIL=1"}, {"--report", report.string()});
    auto failed = json::parse(test::read_file(report));
    CHECK(failed["outcome"] == "sandbox_unavailable");
    CHECK(failed["evidence"]["line"] == fatal);
    CHECK(failed["evidence"]["rule"] == "landlock-run: ");
    CHECK(failed["exit_code"] == 125);
}

TEST_CASE("confinectl run refuses a report path that holds a device, a pipe or a socket, which the report would replace", "[cli][run][linux-only]") {
    FakeRunnerSetup s;
    const fs::path device = s.confine.scratch("null"), fifo = s.confine.scratch("fifo");
    REQUIRE(::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0);  // another /dev/null
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const fs::path marker = s.workspace / "ran";
    for (const fs::path& target : {device, fifo}) {
        INFO(target);
        auto r = s.run({"/bin/sh", "-c", "touch " + marker.string()}, {}, {"--report", target.string()});
        CHECK(r.exit_code == 125);
        CHECK(r.err == "confinectl: --report " + target.string() + ": is not a regular file, and a report would replace it "
                       "(--report-fd N writes to a descriptor)\n");
        CHECK_FALSE(fs::exists(marker));
    }
    struct stat st {};
    REQUIRE(::lstat(device.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
    REQUIRE(::lstat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("a command's stderr line that is not UTF-8 is reported with U+FFFD, and its own status stands", "[cli][run][security][linux-only]") {
    // Such a line once stopped the report being written and ended confinectl with 125, as
    // if confine had failed: a command could disguise its own failure as the sandbox's.
    FakeRunnerSetup s;
    const fs::path report = s.confine.scratch("report.json");
    auto r = s.run({"/bin/sh", "-c", "printf 'x\\377: Permission denied\\n' >&2; exit 3"}, {}, {"--report", report.string()});
    CHECK(r.exit_code == 3);
    CHECK(r.err == notice + "\nx\xff: Permission denied\n");  // the bytes themselves reach the caller unchanged
    auto j = json::parse(test::read_file(report));
    CHECK(j["outcome"] == "task_failed");
    CHECK(j["denial_hint"] == "x\xEF\xBF\xBD: Permission denied");
}

TEST_CASE("stderr goes through confinectl only where something reads it", "[cli][run][linux-only]") {
    // The command's stderr, and confinectl's (the command's parent, through the
    // attested launcher that execs it): the same pipe, or a pipe of confinectl's own.
    // The parent's number as /proc has it (the run may have a PID namespace of its own).
    const std::vector<std::string> both{"/bin/sh", "-c", "read -r _ _ _ p _ < /proc/self/stat; readlink /proc/self/fd/2 /proc/$p/fd/2"};
    auto same = [](const std::string& out) {
        const std::size_t nl = out.find('\n');
        return nl != std::string::npos && out.substr(0, nl + 1) == out.substr(nl + 1);
    };
    FakeRunnerSetup attested(true);
    // No report: no denial hint is wanted, and nothing else needs stderr.
    auto direct = attested.run(both);
    CHECK(direct.exit_code == 0);
    CHECK(same(direct.out));
    // A report carries a denial hint: stderr is read on its way through.
    const fs::path report = attested.confine.scratch("report.json");
    auto read = attested.run(both, {}, {"--report", report.string()});
    CHECK(read.exit_code == 0);
    CHECK_FALSE(same(read.out));
    // A runner judged by its rule needs stderr, report or not.
    FakeRunnerSetup ruled(false);
    auto judged = ruled.run(both);
    CHECK(judged.exit_code == 0);
    CHECK_FALSE(same(judged.out));
}

TEST_CASE("confinectl run --report-fd writes there, and the command does not inherit it", "[cli][run][linux-only]") {
    FakeRunnerSetup s;
    const fs::path report = s.confine.scratch("fd-report.json");
    auto r = test::run({"/bin/sh", "-c", "exec 7>\"$1\"; shift; exec \"$@\"", "sh", report.string(), s.confine.confinectl().string(),
                        "run", "--config", s.config.string(), "--workspace", s.workspace.path().string(), "--report-fd", "7", "--",
                        "/bin/sh", "-c", "if [ -e /proc/$$/fd/7 ]; then echo inherited; else echo not-inherited; fi"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "not-inherited\n");
    auto j = json::parse(test::read_file(report));
    CHECK(j["outcome"] == "completed");
    check_one_error_line(s.run({"/bin/true"}, {}, {"--report-fd", "57"}), "--report-fd 57 is not an open file descriptor");
    check_one_error_line(s.confine.run({"run", "--report", "/x", "--report-fd", "7", "--", "true"}), "run: --report and --report-fd cannot be used together");
}

TEST_CASE("confinectl run gives the command its standard input", "[cli][run][linux-only]") {
    FakeRunnerSetup s;
    auto r = test::run({"/bin/sh", "-c", "printf 'through stdin' | \"$@\"", "sh", s.confine.confinectl().string(), "run", "--config",
                        s.config.string(), "--workspace", s.workspace.path().string(), "--", "/bin/cat"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "through stdin");
}

TEST_CASE("confinectl run carries more than 1 MiB on both streams", "[cli][run][linux-only]") {
    FakeRunnerSetup s;
    auto r = s.run({"/bin/sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a & head -c 2000000 /dev/zero | tr '\\0' b >&2; wait"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == std::string(3000000, 'a'));
    CHECK(r.err == notice + "\n" + std::string(2000000, 'b'));
}

TEST_CASE("confinectl run refuses a missing or non-directory workspace and bad flags, running nothing", "[cli][run]") {
    FakeRunnerSetup s;
    const fs::path marker = s.workspace / "ran";
    const std::vector<std::string> touch{"--", "/usr/bin/touch", marker.string()};
    auto with = [&](std::vector<std::string> args) {
        std::vector<std::string> all{"run", "--config", s.config.string()};
        all.insert(all.end(), args.begin(), args.end());
        all.insert(all.end(), touch.begin(), touch.end());
        return s.confine.run(all);
    };
    check_one_error_line(with({"--workspace", s.workspace.path().string() + "/absent"}),
                         "workspace does not exist: " + s.workspace.path().string() + "/absent");
    check_one_error_line(with({"--workspace", s.config.string()}), "workspace is not a directory: " + s.config.string());
    check_one_error_line(with({"--mode", "read-write"}), "--mode: read-write is not one of read-only, workspace-write");
    check_one_error_line(with({"--mode", "read-only", "--workspace", s.workspace.path().string()}), "--workspace needs --mode workspace-write");
    check_one_error_line(with({"--mode", "read-only", "--writable", s.workspace.path().string()}), "read-only mode cannot have writable roots");
    check_one_error_line(with({"--bogus"}), "run: unknown option '--bogus' (see confinectl run --help)");
    check_one_error_line(s.confine.run({"run", "--config", s.config.string()}), "run: no command given");
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("confinectl run uses the current directory as the default workspace", "[cli][run]") {
    FakeRunnerSetup s(true, false);
    test::write_file(s.config, test::read_file(s.config) + "[policy]\ndeny_read = []\n");  // the argv alone, whatever the account's home holds
    auto r = test::run({"/bin/sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", s.workspace.path().string(),
                        s.confine.confinectl().string(), "wrap", "--json", "--config", s.config.string(), "--", "echo", "hi"});
    CHECK(r.exit_code == 0);
    auto j = json::parse(r.out);
    CHECK(j["argv"] == json::array({"/usr/bin/env", "FAKE_RUNNER=usable", "FAKE_MODE=workspace-write:" + fs::canonical(s.workspace.path()).string(), "--", "echo", "hi"}));
}

TEST_CASE("run --workspace DIR started outside DIR starts the command in DIR, started inside it where it was started", "[cli][run][e2e][linux-only]") {
    for (const test::Way way : {test::Way::bwrap, test::Way::landlock_forked, test::Way::landlock_in_place}) {
        INFO(test::name_of(way));
        test::Sandbox box(way);
        test::Tree tree(false);
        const auto from = [&](const fs::path& dir, const std::string& workspace) {
            std::vector<std::string> args{"run", "--config", box.config.string(), "--workspace", workspace};
            if (way == test::Way::landlock_forked) args.insert(args.end(), {"--report", (tree.root / "report.json").string()});
            args.insert(args.end(), {"--", "/bin/sh", "-c", "pwd; touch here.txt"});
            return box.confine.run(args, {}, {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir.string()});
        };
        // From the parent, as a new user types it: the command starts in the workspace.
        auto r = from(tree.root.path(), "ws");
        INFO(r.out << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out == fs::canonical(tree.ws).string() + "\n");
        CHECK(fs::exists(tree.ws / "here.txt"));
        CHECK_FALSE(fs::exists(tree.root / "here.txt"));
        // From beneath it: where it was started.
        fs::create_directories(tree.ws / "sub");
        auto inside = from(tree.ws / "sub", tree.ws.string());
        INFO(inside.out << inside.err);
        CHECK(inside.exit_code == 0);
        CHECK(inside.out == fs::canonical(tree.ws / "sub").string() + "\n");
        CHECK(fs::exists(tree.ws / "sub" / "here.txt"));
    }
}

TEST_CASE("confinectl wrap --json looks the command up as run does, and says every failure as a JSON object too", "[cli][wrap]") {
    FakeRunnerSetup s;
    auto wrap = [&](std::vector<std::string> tail, std::vector<std::string> flags = {}) {
        std::vector<std::string> args{"wrap", "--json", "--config", s.config.string(), "--workspace", s.workspace.path().string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.push_back("--");
        args.insert(args.end(), tail.begin(), tail.end());
        return s.confine.run(args);
    };
    auto check_error = [](const test::Result& r, int status, const std::string& code, const std::string& message) {
        INFO(r.out << r.err);
        CHECK(r.exit_code == status);
        CHECK(r.err == "confinectl: " + message + "\n");
        const auto j = json::parse(r.out);
        CHECK(j == json{{"schema_version", 1}, {"error", {{"code", code}, {"message", message}}}});
    };
    check_error(wrap({"no-such-command-here"}), 127, "COMMAND_NOT_FOUND", "no-such-command-here: command not found");
    check_error(wrap({"/no/such/file"}), 127, "COMMAND_NOT_FOUND", "/no/such/file: No such file or directory");
    const fs::path not_executable = s.workspace / "data";
    test::write_file(not_executable, "x", fs::perms(0644));
    check_error(wrap({not_executable.string()}), 126, "COMMAND_NOT_EXECUTABLE", not_executable.string() + ": Permission denied");
    check_error(wrap({"true"}, {"--network", "off"}), 125, "USAGE", "--network: off is not one of none, allow");
    check_error(wrap({"true"}, {"--tmp", "private"}), 125, "SANDBOX_UNAVAILABLE",
                "sandbox unavailable: runner 'usable' does not say which /tmp it gives (plugin ABI older than 1.6), and the policy asks for a "
                "private one ([policy] tmp, --tmp)");
    auto missing = s.confine.run({"wrap", "--json", "--config", s.confine.scratch("none.toml").string(), "--", "true"});
    check_error(missing, 125, "CONFIG_NOT_FOUND", s.confine.scratch("none.toml").string() + ": configuration file not found (from --config)");
    // --allow-host's proxy lives with a run: wrap neither offers nor takes it.
    check_one_error_line(wrap({"true"}, {"--allow-host", "example.org"}), "wrap: unknown option '--allow-host' (see confinectl wrap --help)");
    CHECK_THAT(s.confine.run({"wrap", "--help"}).out, !Catch::Contains("--allow-host") && Catch::Contains("--network"));
    CHECK_THAT(s.confine.run({"run", "--help"}).out, Catch::Contains("--allow-host"));
}

TEST_CASE("confinectl wrap --json names each placeholder a host fills in, with the network filter's program", "[cli][wrap][bwrap][linux-only]") {
    test::require_bwrap();
    Installed confine;
    const fs::path config = confine.scratch("bwrap.toml");
    test::write_file(config, "[platform.linux]\nchain = [\"bwrap\"]\n");
    test::TempDir ws;
    auto r = confine.run({"wrap", "--json", "--config", config.string(), "--workspace", ws.path().string(), "--", "true"});
    REQUIRE(r.exit_code == 0);
    const auto j = json::parse(r.out);
    const auto& argv = j["argv"];
    const auto& p = j["placeholders"];
    REQUIRE(p.size() == 3);
    for (const auto& entry : p) CHECK(argv[entry["argument"].get<std::size_t>()] == entry["text"]);
    // The network none: the loopback program, for bubblewrap's network namespace.
    CHECK(p[0]["kind"] == "loopback-filter-fd");
    CHECK(p[0]["text"] == "{loopback-filter-fd}");
    // The program bubblewrap's --seccomp reads: whole BPF instructions of 8 bytes each.
    const std::string program = p[0]["program_base64"];
    CHECK(program.size() % 4 == 0);
    const std::size_t padding = program.ends_with("==") ? 2 : program.ends_with("=") ? 1 : 0;
    CHECK((program.size() / 4 * 3 - padding) % 8 == 0);
    CHECK(program.size() / 4 * 3 - padding == confine::network::filter_size(confine::network::Filter::loopback) * 8);
    CHECK(p[1] == json{{"argument", j["attestation"]["status_argument"]}, {"kind", "status-fd"}, {"text", "{status-fd}"}});
    CHECK(p[2] == json{{"argument", p[2]["argument"]}, {"kind", "dir-fd"}, {"path", fs::canonical(ws.path()).string()},
                       {"text", "{dir-fd:" + fs::canonical(ws.path()).string() + "}"}});
    CHECK(j["tmp"] == "private");
    CHECK(j["loopback"] == "own");  // bubblewrap's network namespace
}

TEST_CASE("confinectl wrap --json prints the wrap result for hosts that spawn themselves", "[cli][wrap]") {
    FakeRunnerSetup s;
    auto r = s.confine.run({"wrap", "--json", "--config", s.config.string(), "--workspace", s.workspace.path().string(), "--", "ls", "-l"});
    CHECK(r.exit_code == 0);
    auto j = json::parse(r.out);
    CHECK(j["schema_version"] == 1);
    CHECK(j["runner"] == "usable");
    CHECK(j["argv"] == json::array({FAKE_LAUNCHER, "--", "ls", "-l"}));
    CHECK(j["enforcement"] == "partial");
    CHECK(j["denial_signatures"] == json::array({"permission denied"}));
    CHECK(j["failure_rule"]["evidence_exit_codes"] == json::array({125}));
    CHECK(j["failure_rule"]["allowed_exit_codes"] == json::array({125}));  // the older name, same list
    CHECK(j["failure_rule"]["fatal_signatures"] == json::array({"landlock-run: "}));
    CHECK(j["failure_rule"]["informational_lines"] == json::array({notice}));
    CHECK(j["attestation"]["kind"] == "exec");
    CHECK(j["attestation"]["exec_index"] == 2);
    // Every field a host gets is named in the first cell of a row of docs/hosts.md's table.
    std::string named;
    std::istringstream hosts(test::read_file(fs::path(SOURCE_DIR) / "docs" / "hosts.md"));
    for (std::string line; std::getline(hosts, line);)
        if (line.starts_with("| `")) named += line.substr(0, line.find(" |", 2)) + "\n";
    for (const auto& [field, value] : j.items()) {
        INFO(field);
        CHECK(named.find("`" + field + "`") != std::string::npos);
    }

    FakeRunnerSetup plain(true, false);
    test::write_file(plain.config, test::read_file(plain.config) + "[policy]\ndeny_read = []\n");  // the argv alone, whatever the account's home holds
    auto ro = plain.confine.run({"wrap", "--json", "--config", plain.config.string(), "--mode", "read-only", "--", "true"});
    CHECK(json::parse(ro.out)["argv"] == json::array({"/usr/bin/env", "FAKE_RUNNER=usable", "FAKE_MODE=read-only", "--", "true"}));
    test::TempDir cache;
    auto extra = plain.confine.run({"wrap", "--json", "--config", plain.config.string(), "--workspace", plain.workspace.path().string(),
                                    "--writable", cache.path().string(), "--", "true"});
    CHECK(json::parse(extra.out)["argv"][3] == "FAKE_WRITABLE=" + cache.path().string());
    // The plugin itself may not become writable: the next run would load what this one wrote.
    auto over_plugin = plain.confine.run({"wrap", "--json", "--config", plain.config.string(), "--workspace", plain.workspace.path().string(),
                                          "--writable", plain.plugins.path().string(), "--", "true"});
    CHECK(over_plugin.exit_code == 125);
    CHECK(json::parse(over_plugin.out)["error"]["code"] == "SANDBOX_UNAVAILABLE");
    CHECK_THAT(over_plugin.err, Catch::StartsWith("confinectl: sandbox unavailable: refusing to run: the plugin ") &&
                                    Catch::Contains(" lies in " + plain.plugins.path().string() + ", which the confined command may write"));

    Installed dflt;
    dflt.remove_launcher();
    check_one_error_line(dflt.run({"wrap", "--json", "--config", dflt.config_without_bwrap().string(), "--", "true"}),
                         "sandbox unavailable: no usable runner for platform 'linux'");

    // An argument JSON cannot carry exactly is refused, never altered.
    auto binary = s.confine.run({"wrap", "--json", "--config", s.config.string(), "--workspace", s.workspace.path().string(), "--", "ls",
                                 "file\xff"});
    CHECK(json::parse(binary.out)["error"]["code"] == "INVALID_POLICY");
    check_one_error_line(binary, "wrap --json: argument 3 of the wrapped command line is not UTF-8, which JSON cannot carry");
}

TEST_CASE("confinectl wrap --runner appcontainer in read-only mode plans reading where the command runs", "[cli][wrap][appcontainer]") {
    // Issue 19: the core passed no workspace in read-only mode, and the wrap granted
    // nothing. Now the policy names the working directory (ABI 1.8) and the plugin plans a
    // read grant on it; on Linux that directory is no Windows path, and the wrap says so,
    // naming it (under Wine the Windows build shows the --ro). The command is looked up
    // first, here where it runs: `true`, not `cmd.exe`.
    Installed confine;
    test::TempDir cwd;
    const std::vector<std::string> in_cwd{"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", cwd.path().string()};
    auto r = confine.run({"wrap", "--json", "--runner", "appcontainer", "--mode", "read-only", "--", "true"}, {}, in_cwd);
    CHECK(r.exit_code != 0);
    CHECK(json::parse(r.out)["error"]["code"] == "SANDBOX_UNAVAILABLE");  // as every refused wrap
    CHECK_THAT(r.err, Catch::Contains("not an absolute Windows path: " + fs::canonical(cwd.path()).string()));
    // Workspace-write: the workspace, as before, and no working directory of its own.
    auto rw = confine.run({"wrap", "--json", "--runner", "appcontainer", "--workspace", cwd.path().string(), "--", "true"}, {}, in_cwd);
    CHECK_THAT(rw.err, Catch::Contains("not an absolute Windows path: " + fs::canonical(cwd.path()).string()));
}

TEST_CASE("a terminal stays a terminal where the runner attests", "[cli][run][linux-only]") {
    if (!fs::exists("/usr/bin/script")) test::skip_test("needs script(1) from util-linux to make a terminal");
    for (bool attest : {true, false}) {
        INFO("attest " << attest);
        FakeRunnerSetup s(attest);
        const std::string inner = s.confine.confinectl().string() + " run --config " + s.config.string() +
                                  " --workspace " + s.workspace.path().string() +
                                  " -- /bin/sh -c 'test -t 0 && echo tty0; test -t 1 && echo tty1; test -t 2 && echo tty2; true'";
        auto r = test::run({"/usr/bin/script", "-qec", inner, "/dev/null"});
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::Contains("tty0") && Catch::Contains("tty1"));
        // Without attestation the failure rule must read stderr, so it goes through a pipe.
        if (attest) CHECK_THAT(r.out, Catch::Contains("tty2"));
        else CHECK_THAT(r.out, !Catch::Contains("tty2"));
    }
}

TEST_CASE("confinectl run exits 127 for a command that is not there and 126 for one that cannot run", "[cli][run]") {
    FakeRunnerSetup s;
    auto missing = s.run({"confine-no-such-command"});
    CHECK(missing.exit_code == 127);
    CHECK(missing.err == "confinectl: confine-no-such-command: command not found\n");
    test::write_file(s.workspace / "script", "#!/bin/sh\n", fs::perms(0644));
    auto not_exec = s.run({(s.workspace / "script").string()});
    CHECK(not_exec.exit_code == 126);
    CHECK(not_exec.err == "confinectl: " + (s.workspace / "script").string() + ": Permission denied\n");
}

TEST_CASE("confinectl run fails closed when the runner cannot be traced for attestation", "[cli][run][attestation][linux-only]") {
    if (!fs::exists("/usr/bin/strace")) test::skip_test("needs strace to trace confinectl");
    FakeRunnerSetup s;
    const fs::path marker = s.workspace / "ran";
    auto r = test::run({"/usr/bin/strace", "-f", "-o", "/dev/null", s.confine.confinectl().string(), "run", "--config",
                        s.config.string(), "--workspace", s.workspace.path().string(), "--", "/usr/bin/touch", marker.string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::EndsWith("Operation not permitted (cannot trace the runner to attest it)\n"));
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("confinectl -v says the configuration, each verdict and whence, the selection, the policy and the exact command line", "[cli][linux-only]") {
    FakeRunnerSetup s;
    test::install_fake(s.plugins.path(), "unusable");
    test::write_file(s.config, "plugin_dirs = [\"" + s.plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"unusable\", \"usable\"]\n"
                               "[runner.usable]\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = true\n");
    const std::string ws = s.workspace.path().string();
    auto lines_of = [](const std::string& err) {
        std::vector<std::string> lines;
        std::istringstream in(err);
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        return lines;
    };
    auto has = [](const std::vector<std::string>& lines, const std::string& line) { return std::find(lines.begin(), lines.end(), line) != lines.end(); };
    test::TempDir extra;
    auto first = s.run({"/bin/echo", "two words", "it's"}, {}, {"-v", "--writable", extra.path().string()});
    INFO(first.err);
    CHECK(first.exit_code == 0);
    auto l = lines_of(first.err);
    CHECK(has(l, "confinectl: configuration: " + s.config.string()));
    CHECK(std::count_if(l.begin(), l.end(), [](const std::string& x) { return x.starts_with("confinectl: runner unusable: unusable (probed)"); }) == 1);
    CHECK(has(l, "confinectl: runner usable: full (probed)"));
    CHECK(has(l, "confinectl: selected: usable (enforcement partial)"));
    CHECK(has(l, "confinectl: policy: mode workspace-write, workspace " + ws + ", writable roots " + extra.path().string() + ", network none"));
    CHECK(std::count_if(l.begin(), l.end(), [](const std::string& x) {
              return x.starts_with("confinectl: exec: " FAKE_LAUNCHER " ") && x.ends_with(" -- /bin/echo 'two words' 'it'\\''s'");
          }) == 1);
    // The next run takes the usable verdict from the cache, and says so.
    auto second = s.run({"/bin/true"}, {}, {"-v"});
    INFO(second.err);
    CHECK(has(lines_of(second.err), "confinectl: runner usable: full (verdict from the cache)"));
}

TEST_CASE("confinectl -v lists every exec the attested runner made, and a wrong declared exec fails closed in one line", "[cli][attestation][exec-check][linux-only]") {
    const std::string dash = fs::canonical("/bin/sh").string();
    for (int index : {2, 1}) {
        INFO("declared exec " << index);
        FakeRunnerSetup s;
        test::write_file(s.config, "plugin_dirs = [\"" + s.plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n"
                                   "[runner.usable]\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = true\nexec_index = " + std::to_string(index) + "\n");
        const fs::path marker = s.workspace / "ran";
        auto r = s.run({"/usr/bin/touch", marker.string()}, {}, {"-v"});
        INFO(r.err);
        std::vector<std::string> execs;
        std::istringstream in(r.err);
        for (std::string line; std::getline(in, line);)
            if (line.starts_with("confinectl: exec ") && line.find(" seen: ") != std::string::npos) execs.push_back(line);
        CHECK(execs == std::vector<std::string>{"confinectl: exec 1 seen: " FAKE_LAUNCHER " (a script, run by " + dash + ")",
                                                "confinectl: exec 2 seen: /usr/bin/touch (the command's file)"});
        if (index == 2) {
            CHECK(r.exit_code == 0);
            CHECK(fs::exists(marker));
        } else {
            CHECK(r.exit_code == 125);
            CHECK(last_line(r.err) == "confinectl: sandbox unavailable: runner declared the command at exec 1 but exec 1 ran " FAKE_LAUNCHER
                                      "; the command's file /usr/bin/touch was exec 2");
            CHECK_FALSE(fs::exists(marker));
        }
    }
}

TEST_CASE("confinectl keeps usable verdicts per user, and probe asks afresh", "[cli][cache][linux-only]") {
    FakeRunnerSetup s;
    // A chain of two, so that selection probes.
    test::install_fake(s.plugins.path(), "unusable");
    test::write_file(s.config, "plugin_dirs = [\"" + s.plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"unusable\", \"usable\"]\n"
                               "[runner.usable]\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = true\n");
    test::TempDir cache_home;
    const std::vector<std::string> env{"XDG_CACHE_HOME=" + cache_home.path().string()};
    const fs::path cache = cache_home / "confine" / "verdicts";
    CHECK(s.run({"/bin/true"}, env).exit_code == 0);
    REQUIRE(fs::exists(cache));
    const std::string first = test::read_file(cache);
    CHECK(first.starts_with("confine-verdicts 3\n"));
    CHECK(test::line_count(first) == 2);  // the header and the usable runner
    auto probe = s.confine.run({"probe", "--json", "--config", s.config.string()}, env);
    CHECK(probe.exit_code == 0);
    auto j = json::parse(probe.out);
    CHECK(j["runners"][1]["probed"] == true);
}

TEST_CASE("confinectl run with a cached verdict loads no plugin later in the chain, and says nothing of a broken one",
          "[cli][cache][levels][linux-only]") {
    FakeRunnerSetup s;
    // A later runner whose file is no plugin at all.
    test::write_file(s.plugins / "confine-runner-broken.so", "not an ELF file\n", fs::perms(0755));
    test::write_file(s.config, "plugin_dirs = [\"" + s.plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"usable\", \"broken\"]\n"
                               "[runner.usable]\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = true\n");
    test::TempDir cache_home;
    const std::vector<std::string> env{"XDG_CACHE_HOME=" + cache_home.path().string()};
    for (const char* launch : {"probed", "from the cache"}) {
        INFO(launch);
        auto r = s.run({"/bin/sh", "-c", "echo ran"}, env, {"-v"});
        CHECK(r.exit_code == 0);
        CHECK(r.out == "ran\n");
        CHECK(r.err.find("broken") == std::string::npos);
        CHECK(r.err.find(std::string("runner usable: full (") + (std::string(launch) == "probed" ? "probed" : "verdict from the cache") + ")") !=
              std::string::npos);
    }
    // Where the selection needs it, it is refused as it always was, and nothing runs.
    test::install_fake(s.plugins.path(), "unusable");
    test::write_file(s.config, "plugin_dirs = [\"" + s.plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"unusable\", \"broken\"]\n");
    auto refused = s.run({"/bin/sh", "-c", "echo ran"}, env);
    CHECK(refused.exit_code == 125);
    CHECK(refused.out.empty());
    CHECK_THAT(refused.err, Catch::Contains("broken: ") && Catch::Contains("confine-runner-broken.so"));
}

namespace {

// confinectl --plugin with a fake plugin file, and a configuration whose own chain and
// plugin directory (with the fake `configured` in it) --plugin must set aside.
struct PluginOption {
    Installed confine;
    test::TempDir plugins, others, workspace;
    fs::path file, config = confine.scratch("c.toml");

    PluginOption(const std::string& plugin, const std::string& configured, const std::string& more_config = {}) {
        file = test::install_fake(plugins.path(), plugin);
        test::install_fake(others.path(), configured);
        test::write_file(config, "plugin_dirs = [\"" + others.path().string() + "\"]\n[platform.linux]\nchain = [\"" + configured + "\"]\n" + more_config);
    }
    test::Result run(const std::string& command, std::vector<std::string> rest = {}) const {
        std::vector<std::string> args{"--plugin", file.string(), command, "--config", config.string()};
        if (command != "probe") args.insert(args.end(), {"--workspace", workspace.path().string()});
        args.insert(args.end(), rest.begin(), rest.end());
        return confine.run(args);
    }
};

}  // namespace

TEST_CASE("confinectl --plugin makes that file's runner the whole chain, with its settings from the configuration", "[cli][plugin-option]") {
    // Its [runner.usable] still gives the runner its settings.
    PluginOption s("usable", "partial", "[runner.usable]\nlabel = \"from the configuration\"\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = false\n");
    test::FakeLog log;
    auto probe = s.run("probe");
    CHECK(probe.exit_code == 0);
    CHECK(probe.err.empty());
    CHECK_THAT(probe.out, Catch::Contains("chain: usable\n"));
    CHECK_THAT(probe.out, Catch::Contains("  usable: available (its probe: full): from the configuration [" + s.file.string() + "]\n"));
    CHECK_THAT(probe.out, Catch::Contains("selected: usable"));
    CHECK(log.count("load partial") == 0);

    auto run = s.confine.run({"--plugin=" + s.file.string(), "run", "--config", s.config.string(), "--workspace", s.workspace.path().string(), "--", "/bin/echo", "hi"});
    CHECK(run.exit_code == 0);
    CHECK(run.out == "hi\n");
    CHECK(log.count("probe usable") == 2);  // a runner named by --plugin passes its probe before it runs anything
    CHECK(log.count("load partial") == 0);

    auto wrap = s.run("wrap", {"--json", "--", "/bin/true"});
    INFO(wrap.err);
    CHECK(wrap.exit_code == 0);
    auto j = json::parse(wrap.out);
    CHECK(j["runner"] == "usable");
    CHECK(j["argv"][0] == FAKE_LAUNCHER);

    // An operator's asserted runner_command is set aside too.
    test::write_file(s.config, "[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"bwrap: \"]\n");
    auto asserted = s.run("probe");
    CHECK(asserted.exit_code == 0);
    CHECK_THAT(asserted.out, Catch::Contains("chain: usable\n"));
    CHECK_THAT(asserted.out, !Catch::Contains("runner_command"));
}

TEST_CASE("confinectl --plugin fails closed when its runner's probe fails, with no fallback", "[cli][plugin-option]") {
    PluginOption s("unusable", "usable");
    test::FakeLog log;
    const std::string why = "sandbox unavailable: runner 'unusable', the only one in the chain, is unusable: fake unusable says no";
    auto run = s.run("run", {"--", "/bin/echo", "hi"});
    check_one_error_line(run, why);
    CHECK(run.out.empty());
    check_one_error_line(s.run("probe"), why);
    auto wrap = s.run("wrap", {"--json", "--", "/bin/true"});
    check_one_error_line(wrap, why);
    CHECK(json::parse(wrap.out)["error"]["code"] == "SANDBOX_UNAVAILABLE");
    CHECK(log.count("load usable") == 0);
}

TEST_CASE("confinectl --plugin refuses a file that is missing, misnamed, not a plugin or untrusted, in one line", "[cli][plugin-option]") {
    Installed confine;
    test::TempDir plugins;
    const fs::path usable = test::install_fake(plugins.path(), "usable");
    const auto run_with = [&](const std::string& file, const std::string& command = "run") {
        std::vector<std::string> args{"--plugin", file, command};
        if (command == "run") args.insert(args.end(), {"--", "/bin/true"});
        return confine.run(args);
    };
    const std::string missing = (plugins.path() / "confine-runner-absent.so").string();
    check_one_error_line(run_with(missing), "--plugin " + missing + ": no such file");
    const fs::path misnamed = plugins.path() / "libusable.so";
    fs::copy_file(usable, misnamed);
    check_one_error_line(run_with(misnamed.string()), "--plugin " + misnamed.string() + ": not a plugin file name (confine-runner-NAME.so)");
    const fs::path text = plugins.path() / "confine-runner-text.so";
    test::write_file(text, "not a shared object\n", fs::perms(0755));
    auto not_plugin = run_with(text.string());
    check_one_error_line(not_plugin, "sandbox unavailable: runner 'text' cannot be used: " + text.string() + ": ");
    const fs::path other = test::install_fake(plugins.path(), "mismatch");
    check_one_error_line(run_with(other.string()), "sandbox unavailable: runner 'mismatch' cannot be used: " + other.string() +
                                                       ": descriptor names runner 'other' but the file name says 'mismatch'");
    fs::permissions(usable, fs::perms(0775));
    // Untrusted is no runner that cannot work here: the line is the refusal itself.
    check_one_error_line(run_with(usable.string(), "probe"), usable.string() + ": refusing plugin: " + usable.string() +
                                                                 " is writable by its group (mode 0775)");
    fs::permissions(usable, fs::perms(0755));
    check_one_error_line(run_with(usable.string(), "plugins"), "--plugin applies to run, wrap and probe, not plugins");
    check_one_error_line(run_with(usable.string(), "check-config"), "--plugin applies to run, wrap and probe, not check-config");
    check_one_error_line(confine.run({"--plugin"}), "--plugin needs a value (FILE)");
    check_one_error_line(confine.run({"--plugin", usable.string(), "--plugin", usable.string(), "probe"}), "--plugin given more than once");
    auto both = confine.run({"--plugin", usable.string(), "wrap", "--json", "--runner", "bwrap", "--", "/bin/true"});
    check_one_error_line(both, "wrap: --runner and --plugin cannot be used together");
}

TEST_CASE("the usage example of the SDK header, built as a plugin, loads with confinectl --plugin", "[cli][plugin-option][sdk]") {
    Installed confine;
    test::TempDir plugins;
    const fs::path file = plugins.path() / "confine-runner-my.so";
    fs::copy_file(SDK_EXAMPLE_PLUGIN, file);
    fs::permissions(file, fs::perms(0755));
    const fs::path cfg = confine.scratch("c.toml");
    // Its probe runs its program, which is not there: unusable, said in one line.
    test::write_file(cfg, "[runner.my]\nprogram = \"/nonexistent/x\"\noptions = [\"--quiet\"]\n");
    check_one_error_line(confine.run({"--plugin", file.string(), "probe", "--config", cfg.string()}),
                         "sandbox unavailable: runner 'my', the only one in the chain, is unusable: cannot start x: No such file or directory");
    // A setting of the wrong type is reported at its key, a configuration error as
    // check-config says it.
    test::write_file(cfg, "[runner.my]\nprogram = \"/usr/bin/env\"\n\n options = \"--quiet\"\n");
    check_one_error_line(confine.run({"--plugin", file.string(), "probe", "--config", cfg.string()}),
                         cfg.string() + ":4:2: runner.my: setting 'options' must be an array of strings, not a string (plugin " + file.string() + ")");
}

namespace {

// confinectl's own lines of `err` (the fake launcher says its notice there too).
std::string own(const std::string& err) {
    std::string lines;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("confinectl: ")) lines += line + "\n";
    return lines;
}

const std::string best_effort_secrets = "[policy.enforcement]\nread = \"best-effort\"\nprotect = \"best-effort\"\n";

}  // namespace

TEST_CASE("a path to deny or protect that does not exist is said in one line naming its flag, and the run goes on", "[cli][run][absent-paths][linux-only]") {
    FakeRunnerSetup s;
    // The fake runner keeps nothing unreadable or read-only: an explicit ask is accepted
    // at any level, so that the run goes on.
    test::write_file(s.config, test::read_file(s.config) + best_effort_secrets);
    const std::vector<std::string> exit3{"/bin/sh", "-c", "exit 3"};
    // The built-in lists (~/.ssh, ~/.aws, ... and git's files), mostly absent: nothing said.
    auto quiet = s.run(exit3);
    CHECK(quiet.exit_code == 3);
    CHECK(own(quiet.err).empty());
    const std::string typo = (s.workspace.path() / "no-such-secret").string();
    auto denied = s.run(exit3, {}, {"--deny-read", typo});
    CHECK(denied.exit_code == 3);
    CHECK(own(denied.err) == "confinectl: warning: --deny-read " + typo + " does not exist: nothing is denied there\n");
    // As given: a relative path is named as it was typed.
    auto relative = s.confine.run({"run", "--config", s.config.string(), "--workspace", s.workspace.path().string(), "--protect",
                                   "no-such-file", "--", "/bin/true"},
                                  {}, {"/usr/bin/env", "-C", s.workspace.path().string()});
    CHECK(relative.exit_code == 0);
    CHECK_THAT(relative.err, Catch::Contains("confinectl: warning: --protect no-such-file does not exist: nothing is protected there\n"));
    // One that exists is not said.
    test::write_file(s.workspace.path() / "present", "");
    auto present = s.run(exit3, {}, {"--protect", (s.workspace.path() / "present").string()});
    CHECK(present.exit_code == 3);
    CHECK(own(present.err).empty());
}

TEST_CASE("a configuration's deny_read or protect entry that does not exist is said with its file, line and key, the built-in ones never",
          "[cli][run][absent-paths][linux-only]") {
    FakeRunnerSetup s;
    const std::string absent = (s.workspace.path() / "gone").string();
    // The built-in entries written again (as the shipped confine.toml does), and one of
    // the caller's own, each kind.
    test::write_file(s.config, test::read_file(s.config) +
                                   "[policy]\ndeny_read = [\"~/.ssh\", \"~/.aws\",\n  \"" + absent + "\", \"~/no-such-store-of-mine\"]\n"
                                   "protect = [\".git/hooks\", \".git/config\", \".gitmodules\", \"secrets.env\"]\n" +
                                   best_effort_secrets);
    auto r = s.run({"/bin/sh", "-c", "exit 4"});
    CHECK(r.exit_code == 4);
    const std::string where = s.config.string();
    CHECK(own(r.err) == "confinectl: warning: " + where + ":9:3: deny_read entry '" + absent + "' does not exist: nothing is denied there\n" +
                       "confinectl: warning: " + where + ":9:" + std::to_string(7 + absent.size()) +
                       ": deny_read entry '~/no-such-store-of-mine' does not exist: nothing is denied there\n" +
                       "confinectl: warning: " + where + ":10:56: protect entry 'secrets.env' is in no writable root (" +
                       s.workspace.path().string() + "): nothing is protected there\n");
    // check-config says the same of the entries it can judge without a run's roots, and
    // calls the file valid.
    auto checked = s.confine.run({"check-config", s.config.string()});
    CHECK(checked.exit_code == 0);
    CHECK_THAT(checked.out, Catch::EndsWith(where + ": valid\n"));
    CHECK(own(checked.err) == "confinectl: warning: " + where + ":9:3: deny_read entry '" + absent + "' does not exist: nothing is denied there\n" +
                             "confinectl: warning: " + where + ":9:" + std::to_string(7 + absent.size()) +
                             ": deny_read entry '~/no-such-store-of-mine' does not exist: nothing is denied there\n");
    // Once it is there, nothing is said of it.
    test::write_file(s.workspace.path() / "secrets.env", "");
    auto after = s.run({"/bin/true"});
    CHECK(after.exit_code == 0);
    CHECK_THAT(after.err, !Catch::Contains("secrets.env"));
}

TEST_CASE("a writable root that does not exist stops the run with one line naming --writable", "[cli][run][absent-paths]") {
    FakeRunnerSetup s;
    const fs::path marker = s.workspace.path() / "ran";
    auto r = s.run({"/usr/bin/touch", marker.string()}, {}, {"--writable", (s.workspace.path() / "nowhere").string()});
    check_one_error_line(r, "--writable " + (s.workspace.path() / "nowhere").string() + " does not exist");
    CHECK_FALSE(fs::exists(marker));
}

#include <confine/prove.hpp>

TEST_CASE("a proof check of what the policy allows is a cost only where the runner names exactly that path as one", "[cli][prove]") {
    using confine::ProofOutcome;
    confine::ProofCheck c{"a listing of the directory a denied one lies in", "read", "allowed", "refused", "full", "", {}};
    c.costly = "/var/tmp/p";
    c.costs = {"/", "/var", "/var/tmp", "/var/tmp/p"};
    CHECK(c.outcome() == ProofOutcome::cost);
    c.costs = {"/", "/var", "/var/tmp", "/var/tmp/p/ws"};  // another path, or one beneath it
    CHECK(c.outcome() == ProofOutcome::over_claim);
    c.costs = {};
    CHECK(c.outcome() == ProofOutcome::over_claim);  // refused without a word
    c.costs = {"/var/tmp/p"};
    c.observed = "allowed";
    CHECK(c.outcome() == ProofOutcome::held);
    // A cost never excuses a refusal that did not hold.
    confine::ProofCheck hole{"a listing of a denied directory", "read", "refused", "allowed", "full", "", {}};
    hole.costly = "/var/tmp/p";
    hole.costs = {"/var/tmp/p"};
    CHECK(hole.outcome() == ProofOutcome::over_claim);
}
