#include "support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// confinectl and the built-in plugins copied into a private tree laid out like the
// build tree (and the install), so the tests do not depend on where the sources live.
class Installed {
public:
    Installed() {
        const fs::path built(CONFINECTL);
        const fs::path relative = fs::path(BUILTIN_PLUGIN_DIR).lexically_relative(built.parent_path());
        fs::create_directories(root_ / "bin");
        plugin_dir_ = (root_.path() / "bin" / relative).lexically_normal();
        fs::create_directories(plugin_dir_);
        for (const fs::path& d : {root_.path(), root_ / "bin", plugin_dir_})
            fs::permissions(d, fs::perms(0755));
        for (fs::path p = plugin_dir_; p != root_.path(); p = p.parent_path()) fs::permissions(p, fs::perms(0755));
        fs::copy_file(built, root_ / "bin" / "confinectl");
        for (auto n : {"landlock", "bwrap", "seatbelt", "appcontainer"}) test::install_builtin(plugin_dir_, n);
    }
    test::Result run(std::vector<std::string> args, std::vector<std::string> env = {}) const {
        std::vector<std::string> argv{"/usr/bin/env", "-u", "CONFINE_CONFIG"};
        argv.insert(argv.end(), env.begin(), env.end());
        argv.push_back((root_ / "bin" / "confinectl").string());
        argv.insert(argv.end(), args.begin(), args.end());
        return test::run(argv);
    }
    const fs::path& plugin_dir() const { return plugin_dir_; }
    fs::path scratch(const std::string& name) const { return root_ / name; }

private:
    test::TempDir root_;
    fs::path plugin_dir_;
};

void check_one_error_line(const test::Result& r, const std::string& starts_with) {
    CHECK(r.exit_code == 125);
    CHECK(test::line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("confinectl: " + starts_with));
}

}  // namespace

TEST_CASE("confinectl probe on the embedded default fails closed with one line and 125", "[cli]") {
    Installed confine;
    auto r = confine.run({"probe"});
    check_one_error_line(r, "sandbox unavailable: no usable runner for platform 'linux': bwrap: not implemented yet; landlock: not implemented yet");
    CHECK_THAT(r.out, Catch::Contains("platform: linux\n"));
    CHECK_THAT(r.out, Catch::Contains("config: <embedded default>\n"));
    CHECK_THAT(r.out, Catch::Contains("chain: bwrap landlock\n"));
    CHECK_THAT(r.out, Catch::Contains("  bwrap: unusable: not implemented yet [" + (confine.plugin_dir() / "confine-runner-bwrap.so").string() + "]\n"));
    CHECK_THAT(r.out, Catch::Contains("selected: none\n"));
}

TEST_CASE("confinectl probe --json reports every runner's verdict", "[cli]") {
    Installed confine;
    auto r = confine.run({"probe", "--json"});
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
    CHECK(j["runners"][0]["reason"] == "not implemented yet");
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
    CHECK_THAT(r.out, Catch::Contains("selected: partial (enforcement partial)\n"));
    auto j = json::parse(confine.run({"probe", "--json", "--config", cfg.string()}).out);
    CHECK(j["usable"] == true);
    CHECK(j["selected"] == "partial");
    CHECK(j["enforcement"] == "partial");
    CHECK(j["error"].is_null());
}

TEST_CASE("confinectl probe checks a runner that is alone in its chain", "[cli]") {
    Installed confine;
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "[platform.linux]\nchain = [\"landlock\"]\n");
    auto r = confine.run({"probe", "--config", cfg.string()});
    check_one_error_line(r, "sandbox unavailable: runner 'landlock', the only one in the chain, is unusable: not implemented yet");
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
                        (confine.scratch("bin") / "confinectl").string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.out, Catch::Contains("config: <embedded default>\n"));
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
    check_one_error_line(confine.run({}), "");
    check_one_error_line(confine.run({"probe", "--bogus"}), "");
    check_one_error_line(confine.run({"probe", "--config"}), "");
    check_one_error_line(confine.run({"frobnicate"}), "unknown command 'frobnicate' (see confinectl --help)");
    check_one_error_line(confine.run({"check-config", "a", "b"}), "");
}

TEST_CASE("confinectl --help and --version exit 0", "[cli]") {
    Installed confine;
    auto help = confine.run({"--help"});
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("probe"));
    CHECK_THAT(help.out, Catch::Contains("check-config"));
    auto version = confine.run({"--version"});
    CHECK(version.exit_code == 0);
    CHECK_THAT(version.out, Catch::Contains("0."));
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
        CHECK(p["abi"] == "1.1");
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
    CHECK(dflt.out == "<embedded default>: valid\n");
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "[platform.linux]\nchain = [\"landlock\"]\n[runner.landlock]\nlauncher = \"/opt/landlock-run\"\n[runner.thirdparty]\nx = 1\n");
    auto r = confine.run({"check-config", cfg.string()});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "note: " + cfg.string() + ":5:1: runner.thirdparty: no plugin here to check its settings against\n" + cfg.string() + ": valid\n");
    auto example = confine.run({"check-config", EXAMPLE_CONFIG_FILE});
    CHECK(example.exit_code == 0);
}

TEST_CASE("confinectl check-config rejects bad files and settings their plugin refuses", "[cli]") {
    Installed confine;
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "probe_timeout_ms = 0\n");
    check_one_error_line(confine.run({"check-config", cfg.string()}),
                         cfg.string() + ":1:20: probe_timeout_ms must be a positive number of milliseconds, got 0");
    test::write_file(cfg, "\n[runner.bwrap]\nprogam = \"/usr/bin/bwrap\"\n");
    check_one_error_line(confine.run({"check-config", cfg.string()}),
                         cfg.string() + ":2:1: runner.bwrap: unknown setting 'progam' (plugin " +
                             (confine.plugin_dir() / "confine-runner-bwrap.so").string() + ")");
    check_one_error_line(confine.run({"check-config", confine.scratch("none.toml").string()}), confine.scratch("none.toml").string() + ": configuration file not found");
    check_one_error_line(confine.run({"check-config", confine.scratch("bin").string()}), confine.scratch("bin").string() + ": not a regular file");
}
