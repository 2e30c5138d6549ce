#include "support.hpp"

#include <confine/config.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>

using confine::ErrorCode;
namespace fs = std::filesystem;

namespace {

confine::Error error_of(const std::string& text) {
    auto cfg = confine::parse_config(text, "test.toml");
    if (cfg) FAIL("configuration was accepted:\n" << text);
    return cfg.error();
}

// Restores the working directory and CONFINE_CONFIG when a test is done with them.
struct EnvironmentGuard {
    fs::path cwd = fs::current_path();
    std::optional<std::string> config_env = std::getenv("CONFINE_CONFIG") ? std::optional<std::string>(std::getenv("CONFINE_CONFIG")) : std::nullopt;
    ~EnvironmentGuard() {
        fs::current_path(cwd);
        if (config_env) ::setenv("CONFINE_CONFIG", config_env->c_str(), 1);
        else ::unsetenv("CONFINE_CONFIG");
    }
};

}  // namespace

TEST_CASE("the embedded default is config/confine.toml byte for byte", "[config]") {
    CHECK(confine::embedded_default_config() == test::read_file(DEFAULT_CONFIG_FILE));
}

TEST_CASE("the default read at start-up, when no file is found, is the embedded file's configuration, positions and all", "[config]") {
    test::TempDir dir;
    auto file = confine::parse_config(confine::embedded_default_config(), "<embedded default>");
    auto read = confine::load_config({.read_environment = false, .system_path = dir / "absent.toml"});
    REQUIRE(file);
    REQUIRE(read);
    CHECK(*read == *file);
    // And a file over it is read over the same.
    auto over = test::config_from("probe_timeout_ms = 500\n");
    CHECK(over.deny_read_where == file->deny_read_where);
}

TEST_CASE("the embedded default chains bwrap then landlock on linux, one runner elsewhere", "[config]") {
    auto cfg = confine::parse_config(confine::embedded_default_config(), "<embedded default>");
    REQUIRE(cfg);
    CHECK(cfg->platforms.at("linux").chain == std::vector<std::string>{"bwrap", "landlock"});
    CHECK(cfg->platforms.at("darwin").chain == std::vector<std::string>{"seatbelt"});
    CHECK(cfg->platforms.at("windows").chain == std::vector<std::string>{"appcontainer"});
    CHECK(cfg->platforms.size() == 3);
    CHECK(cfg->probe_timeout_ms == 2000);
    // A file that leaves probe_timeout_ms out gets the same value as the default file.
    CHECK(test::config_from("").probe_timeout_ms == cfg->probe_timeout_ms);
}

TEST_CASE("a file's missing keys and tables take the embedded default's, and what it gives replaces the default's whole", "[config]") {
    // Only the probe timeout: every chain is the default's, and says where it came from.
    auto timeout_only = test::config_from("probe_timeout_ms = 500\n");
    CHECK(timeout_only.probe_timeout_ms == 500);
    CHECK(timeout_only.source == "test.toml");
    CHECK(timeout_only.platforms.at("linux").chain == std::vector<std::string>{"bwrap", "landlock"});
    CHECK(timeout_only.platforms.at("linux").where.file == "<embedded default>");
    CHECK(timeout_only.platforms.at("darwin").chain == std::vector<std::string>{"seatbelt"});
    CHECK(timeout_only.platforms.at("windows").chain == std::vector<std::string>{"appcontainer"});
    CHECK(timeout_only.network == confine::Network::none);
    CHECK(timeout_only.plugin_dirs.empty());

    // One platform's table replaces that platform's default only.
    auto linux_only = test::config_from("[platform.linux]\nchain = [\"landlock\"]\n");
    CHECK(linux_only.platforms.at("linux").chain == std::vector<std::string>{"landlock"});
    CHECK(linux_only.platforms.at("linux").where.file == "test.toml");
    CHECK(linux_only.platforms.at("darwin").chain == std::vector<std::string>{"seatbelt"});
    CHECK(linux_only.probe_timeout_ms == 2000);

    // A runner_command replaces the default chain: the two are never mixed.
    auto asserted = test::config_from("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"bwrap: \"]\n");
    CHECK(asserted.platforms.at("linux").chain.empty());
    CHECK(asserted.platforms.at("linux").runner_command == std::vector<std::string>{"/usr/bin/bwrap"});

    // An explicit empty chain stays empty (and fails closed); other platforms keep theirs.
    auto emptied = test::config_from("[platform.linux]\nchain = []\n");
    CHECK(emptied.platforms.at("linux").chain.empty());
    CHECK(emptied.platforms.at("darwin").chain == std::vector<std::string>{"seatbelt"});

    // One dimension's minimum leaves the others at their default.
    auto one_minimum = test::config_from("[policy.enforcement]\nwrite = \"full\"\n");
    CHECK(one_minimum.minimums.write == confine::Minimum::full);
    CHECK(one_minimum.minimums.network == confine::Minimum::partial);
    CHECK(one_minimum.minimums.processes == confine::Minimum::partial);
}

TEST_CASE("the commented example configuration is valid", "[config]") {
    auto cfg = confine::parse_config(test::read_file(EXAMPLE_CONFIG_FILE), "example");
    REQUIRE(cfg);
    CHECK(cfg->plugin_dirs.empty());  // commented out: a directory missing here would be a warning wherever it is copied
    CHECK(cfg->minimums.lifetime == confine::Minimums{}.lifetime);
}

TEST_CASE("a full configuration is read into its fields", "[config]") {
    auto cfg = test::config_from(R"(
probe_timeout_ms = 750
plugin_dirs = ["/opt/a", "/opt/b/"]
[platform.linux]
runner_command = ["/usr/bin/bwrap", "--unshare-net"]
runner_failure_signatures = ["bwrap: "]
[platform.darwin]
chain = []
[runner.landlock]
launcher = "/usr/lib/confine/landlock-run"
count = 3
flag = true
list = ["a", "b"]
)");
    CHECK(cfg.probe_timeout_ms == 750);
    CHECK(cfg.plugin_dirs == std::vector<fs::path>{"/opt/a", "/opt/b/"});
    const auto& linux_cfg = cfg.platforms.at("linux");
    CHECK(linux_cfg.runner_command == std::vector<std::string>{"/usr/bin/bwrap", "--unshare-net"});
    CHECK(linux_cfg.runner_failure_signatures == std::vector<std::string>{"bwrap: "});
    CHECK(linux_cfg.chain.empty());
    CHECK(cfg.platforms.at("darwin").chain.empty());
    const auto& settings = cfg.runners.at("landlock").settings;
    REQUIRE(settings.size() == 4);
    CHECK(settings[0].key == "launcher");
    CHECK(settings[0].string_value == "/usr/lib/confine/landlock-run");
    CHECK(settings[1].kind == confine::RunnerSetting::Kind::integer);
    CHECK(settings[1].integer_value == 3);
    CHECK(settings[2].kind == confine::RunnerSetting::Kind::boolean);
    CHECK(settings[2].boolean_value);
    CHECK(settings[3].array_value == std::vector<std::string>{"a", "b"});
    CHECK(confine::to_string(cfg.runners.at("landlock").where) == "test.toml:9:1");
}

TEST_CASE("[policy] network is none by default, allow when it says so, and nothing else", "[config][network]") {
    CHECK(confine::parse_config("", "test.toml")->network == confine::Network::none);
    CHECK(confine::parse_config("[policy]\nnetwork = \"allow\"\n", "test.toml")->network == confine::Network::allow);
    CHECK(confine::parse_config("[policy]\nnetwork = \"none\"\n", "test.toml")->network == confine::Network::none);
    CHECK(error_of("[policy]\nnetwork = \"off\"\n").message == "test.toml:2:11: policy.network must be \"none\" or \"allow\"");
    CHECK(error_of("[policy]\nnetwork = false\n").message == "test.toml:2:11: policy.network must be \"none\" or \"allow\"");
    CHECK(error_of("[policy]\nreads = 1\n").message == "test.toml:2:1: unknown key 'reads' in [policy] (known: network, allow_hosts, tmp, read, read_roots, deny_read, protect, unprotect, env, timeout, kill_after, enforcement, limits, packages)");
    CHECK(error_of("[policy]\nread = 1\n").message == "test.toml:2:8: policy.read must be \"all\" or \"scoped\"");
    CHECK(error_of("[policy]\nread = \"some\"\n").message == "test.toml:2:8: policy.read must be \"all\" or \"scoped\"");
    CHECK(error_of("[policy]\nread_roots = [\"relative\"]\n").message == "test.toml:2:15: policy.read_roots entry 'relative' must be an absolute path or begin with ~/");
    CHECK(test::config_from("[policy]\nread = \"scoped\"\nread_roots = [\"/srv/x\"]\n").read_scoped);
    CHECK(error_of("policy = \"none\"\n").message == "test.toml:1:10: policy must be a table, not string");
}

TEST_CASE("[policy.limits] reads numbers and sizes, refuses anything else at its key, and a call's limits replace its entries by name",
          "[config][limits]") {
    CHECK_FALSE(test::config_from("").limits.any());
    const auto limits = test::config_from("[policy.limits]\nmemory = \"2G\"\nprocesses = 256\ncpu = 600\nfile-size = \"512K\"\nopen-files = \"1024\"\n").limits;
    CHECK(limits.memory == 2ull << 30);
    CHECK(limits.processes == 256u);
    CHECK(limits.cpu == 600u);
    CHECK(limits.file_size == 512u << 10);
    CHECK(limits.open_files == 1024u);
    CHECK(confine::describe(limits) == "memory=2147483648 processes=256 cpu=600 file-size=524288 open-files=1024");
    CHECK(error_of("[policy.limits]\nmemory = 0\n").message ==
          "test.toml:2:10: policy.limits.memory must be a positive whole number of bytes (K, M, G: KiB, MiB, GiB), not '0'");
    CHECK(error_of("[policy.limits]\ncpu = \"1M\"\n").message == "test.toml:2:7: policy.limits.cpu must be a positive whole number of seconds, not '1M'");
    CHECK(error_of("[policy.limits]\nprocesses = 1.5\n").message == "test.toml:2:13: policy.limits.processes must be a number or a string, not floating-point");
    CHECK(error_of("[policy.limits]\nswap = 1\n").message ==
          "test.toml:2:1: unknown limit 'swap' (known: memory, processes, cpu, file-size, open-files) in [policy.limits]");

    confine::Limits call;
    REQUIRE_FALSE(confine::set_limit(call, "memory", "64m"));
    REQUIRE_FALSE(confine::set_limit(call, "open-files", "32"));
    const auto both = call.over(limits);
    CHECK(both.memory == 64u << 20);
    CHECK(both.open_files == 32u);
    CHECK(both.processes == 256u);
    CHECK(both.cpu == 600u);
    CHECK(confine::set_limit(call, "memory", "1G") == "memory is limited twice");
    CHECK(confine::set_limit(call, "cpu", "") == "cpu must be a positive whole number of seconds, not ''");
    CHECK(confine::set_limit(call, "file-size", "K") == "file-size must be a positive whole number of bytes (K, M, G: KiB, MiB, GiB), not 'K'");
    CHECK(confine::set_limit(call, "file-size", "99999999999999999999") ==
          "file-size must be a positive whole number of bytes (K, M, G: KiB, MiB, GiB), not '99999999999999999999'");
    CHECK(confine::set_limit(call, "file-size", "17179869184G") ==  // 2^64 bytes: too many
          "file-size must be a positive whole number of bytes (K, M, G: KiB, MiB, GiB), not '17179869184G'");
    CHECK_FALSE(call.cpu);
    CHECK_FALSE(call.file_size);
}

TEST_CASE("[policy] tmp asks for a private or the host's /tmp, and says neither by default", "[config]") {
    CHECK(test::config_from("").tmp == confine::Tmp::unsaid);
    CHECK(test::config_from("[policy]\ntmp = \"private\"\n").tmp == confine::Tmp::private_);
    CHECK(test::config_from("[policy]\ntmp = \"host\"\n").tmp == confine::Tmp::host);
    CHECK(error_of("[policy]\ntmp = \"shared\"\n").message == "test.toml:2:7: policy.tmp must be \"private\" or \"host\"");
    CHECK(error_of("[policy]\ntmp = 1\n").message == "test.toml:2:7: policy.tmp must be \"private\" or \"host\"");
}

TEST_CASE("[policy.enforcement] sets the least level per dimension, partial by default", "[config][network]") {
    const auto d = confine::parse_config("", "test.toml")->minimums;
    CHECK((d.write == confine::Minimum::partial && d.network == confine::Minimum::partial && d.processes == confine::Minimum::partial));
    const auto m = confine::parse_config("[policy.enforcement]\nwrite = \"full\"\nnetwork = \"best-effort\"\n", "test.toml")->minimums;
    CHECK(m.write == confine::Minimum::full);
    CHECK(m.network == confine::Minimum::best_effort);
    CHECK(m.processes == confine::Minimum::partial);
    CHECK(error_of("[policy.enforcement]\nnetwork = \"some\"\n").message ==
          "test.toml:2:11: policy.enforcement.network must be \"full\", \"partial\" or \"best-effort\"");
    CHECK(error_of("[policy.enforcement]\nmetadata = \"full\"\n").message ==
          "test.toml:2:1: unknown dimension 'metadata' in [policy.enforcement] (known: write, network, processes, read, protect, lifetime, limits)");
    CHECK(error_of("[policy]\nenforcement = \"full\"\n").message == "test.toml:2:15: policy.enforcement must be a table, not string");
}

TEST_CASE("[policy] deny_read and protect default to the credential stores and git's files, and an operator replaces them", "[config][secrets]") {
    const auto d = test::config_from("");
    CHECK(d.deny_read == std::vector<std::string>{"~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.docker", "~/.oci",
                                                  "~/.config/doctl", "~/.netrc", "~/.git-credentials", "~/.config/git/credentials",
                                                  "~/.config/gh/hosts.yml", "~/.config/hub", "~/.config/glab-cli", "~/.pypirc", "~/.npmrc",
                                                  "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.gem/credentials", "~/.composer/auth.json",
                                                  "~/.config/composer/auth.json", "~/.m2/settings-security.xml", "~/.config/containers/auth.json",
                                                  "~/.terraform.d/credentials.tfrc.json", "~/.vault-token", "~/.config/rclone", "~/.s3cfg",
                                                  "~/.boto", "~/.pgpass", "~/.my.cnf", "~/.mylogin.cnf", "~/.password-store",
                                                  "~/.local/share/keyrings", "~/.cache/huggingface/token", "~/.claude/.credentials.json",
                                                  "~/.codex/auth.json"});
    CHECK(d.protect == std::vector<std::string>{".git/hooks", ".git/config", ".gitmodules", ".bashrc", ".bash_profile", ".bash_login",
                                                ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".envrc", ".gitconfig",
                                                ".ripgreprc", ".npmrc", ".yarnrc", ".yarnrc.yml", ".aws/config", ".mcp.json", ".vscode", ".idea",
                                                ".claude", ".codex", ".agents", ".cursor", ".continue"});
    CHECK(d.unprotect.empty());
    CHECK(d.minimums.read == confine::Minimum::partial);
    CHECK(d.minimums.protect == confine::Minimum::partial);
    const auto c = test::config_from(
        "[policy]\ndeny_read = [\"/srv/keys\", \"~\"]\nprotect = []\nunprotect = [\".git/config\", \"~/x\"]\n[policy.enforcement]\nprotect = \"best-effort\"\n");
    CHECK(c.deny_read == std::vector<std::string>{"/srv/keys", "~"});
    CHECK(c.protect.empty());
    CHECK(c.unprotect == std::vector<std::string>{".git/config", "~/x"});
    CHECK(c.minimums.protect == confine::Minimum::best_effort);
    CHECK(error_of("[policy]\nunprotect = [\"../x\"]\n").message == "test.toml:2:14: policy.unprotect entry '../x' must not climb out of its root with '..'");
    CHECK(error_of("[policy]\nunprotect = \".git\"\n").message.find("policy.unprotect") != std::string::npos);
    CHECK(test::config_from("[policy]\nnetwork = \"allow\"\n").deny_read == d.deny_read);  // a key left unsaid keeps the default
    CHECK(error_of("[policy]\ndeny_read = [\"/a\", \"keys\"]\n").message ==
          "test.toml:2:20: policy.deny_read entry 'keys' must be an absolute path or begin with ~/");
    CHECK(error_of("[policy]\ndeny_read = \"~/.ssh\"\n").message == "test.toml:2:13: policy.deny_read must be an array of strings, not string");
    CHECK(error_of("[policy]\nprotect = [\"../outside\"]\n").message ==
          "test.toml:2:12: policy.protect entry '../outside' must not climb out of its root with '..'");
    CHECK(error_of("[policy]\nprotect = [\"\"]\n").message == "test.toml:2:12: every entry of policy.protect must not be empty");
}

TEST_CASE("a TOML syntax error names file, line and column", "[config]") {
    auto e = error_of("probe_timeout_ms = 10\n[platform.linux\n");
    CHECK(e.code == ErrorCode::config_syntax);
    CHECK_THAT(e.message, Catch::StartsWith("test.toml:2:"));
}

TEST_CASE("unknown keys are rejected at their position", "[config]") {
    auto top = error_of("probe_timeout_ms = 5\nbogus = 1\n");
    CHECK(top.code == ErrorCode::config_invalid);
    CHECK_THAT(top.message, Catch::StartsWith("test.toml:2:1: unknown key 'bogus' (known: "));
    auto in_platform = error_of("[platform.linux]\nchain = []\nchian = []\n");
    CHECK_THAT(in_platform.message, Catch::StartsWith("test.toml:3:1: unknown key 'chian' in [platform.linux]"));
    auto platform = error_of("[platform.linx]\nchain = []\n");
    CHECK_THAT(platform.message, Catch::StartsWith("test.toml:1:11: unknown platform 'linx'"));
}

TEST_CASE("probe_timeout_ms must be a positive integer", "[config]") {
    CHECK(error_of("probe_timeout_ms = 0").message ==
          "test.toml:1:20: probe_timeout_ms must be a positive number of milliseconds, got 0");
    CHECK(error_of("probe_timeout_ms = -5").message ==
          "test.toml:1:20: probe_timeout_ms must be a positive number of milliseconds, got -5");
    CHECK(error_of("probe_timeout_ms = \"2000\"").message == "test.toml:1:20: probe_timeout_ms must be an integer, not string");
    CHECK(error_of("probe_timeout_ms = 1.5").message == "test.toml:1:20: probe_timeout_ms must be an integer, not floating-point");
    CHECK_THAT(error_of("probe_timeout_ms = 600001").message, Catch::StartsWith("test.toml:1:20: probe_timeout_ms must be at most 600000"));
    CHECK(test::config_from("probe_timeout_ms = 1").probe_timeout_ms == 1);
}

TEST_CASE("plugin_dirs must be absolute, non-empty, single-line strings", "[config]") {
    CHECK(error_of("plugin_dirs = [\"/ok\", \"relative/dir\"]").message ==
          "test.toml:1:23: plugin_dirs entry 'relative/dir' must be an absolute path");
    CHECK(error_of("plugin_dirs = \"/opt\"").message == "test.toml:1:15: plugin_dirs must be an array of strings, not string");
    CHECK(error_of("plugin_dirs = [1]").message == "test.toml:1:16: every entry of plugin_dirs must be a string, not integer");
    CHECK(error_of("plugin_dirs = [\"\"]").message == "test.toml:1:16: every entry of plugin_dirs must not be empty");
    CHECK(error_of("plugin_dirs = [\"/a\\nb\"]").message == "test.toml:1:16: every entry of plugin_dirs must be a single line without NUL");
}

TEST_CASE("chain entries are valid, distinct runner names", "[config]") {
    CHECK(error_of("[platform.linux]\nchain = [\"bwrap\", \"../evil\"]").message ==
          "test.toml:2:19: invalid runner name '../evil' in platform.linux.chain (lower-case letters, digits, '-' and '_')");
    CHECK(error_of("[platform.linux]\nchain = [\"Bwrap\"]").code == ErrorCode::config_invalid);
    CHECK(error_of("[platform.linux]\nchain = [\"bwrap\", \"bwrap\"]").message ==
          "test.toml:2:19: runner 'bwrap' appears twice in platform.linux.chain");
    CHECK(error_of("[platform.linux]\nchain = \"bwrap\"").message ==
          "test.toml:2:9: platform.linux.chain must be an array of strings, not string");
    CHECK(error_of("platform = 3").message == "test.toml:1:12: platform must be a table of [platform.<os>] tables");
    CHECK(error_of("platform.linux = 3").message == "test.toml:1:18: platform.linux must be a table");
}

TEST_CASE("runner_failure_signatures requires runner_command", "[config]") {
    CHECK(error_of("[platform.linux]\nrunner_failure_signatures = [\"bwrap: \"]").message ==
          "test.toml:2:29: platform.linux.runner_failure_signatures requires runner_command");
}

TEST_CASE("runner_command requires at least one failure signature", "[config]") {
    CHECK(error_of("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]").message ==
          "test.toml:2:18: platform.linux.runner_command requires at least one runner_failure_signatures entry");
    CHECK(error_of("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = []").message ==
          "test.toml:3:29: platform.linux.runner_command requires at least one runner_failure_signatures entry");
    CHECK(error_of("[platform.linux]\nrunner_command = []\nrunner_failure_signatures = [\"x\"]").message ==
          "test.toml:2:18: platform.linux.runner_command must not be empty");
}

TEST_CASE("runner_command and signature entries are non-empty single lines", "[config]") {
    CHECK(error_of("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\", \"\"]\nrunner_failure_signatures = [\"x\"]").message ==
          "test.toml:2:37: every entry of platform.linux.runner_command must not be empty");
    CHECK(error_of("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"a\\nb\"]").message ==
          "test.toml:3:30: every entry of platform.linux.runner_failure_signatures must be a single line without NUL");
    CHECK(error_of("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"\"]").message ==
          "test.toml:3:30: every entry of platform.linux.runner_failure_signatures must not be empty");
    CHECK(error_of("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"  \"]").message ==
          "test.toml:3:30: every entry of platform.linux.runner_failure_signatures must contain a non-blank character");
    CHECK(error_of("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\\u0000x\"]\nrunner_failure_signatures = [\"x\"]").code ==
          ErrorCode::config_invalid);
    CHECK(error_of("[platform.linux]\nrunner_command = [3]\nrunner_failure_signatures = [\"x\"]").message ==
          "test.toml:2:19: every entry of platform.linux.runner_command must be a string, not integer");
}

TEST_CASE("runner_command must start with an absolute path", "[config]") {
    CHECK(error_of("[platform.linux]\nrunner_command = [\"bwrap\"]\nrunner_failure_signatures = [\"bwrap: \"]").message ==
          "test.toml:2:19: platform.linux.runner_command[0] must be an absolute path, got 'bwrap'");
}

TEST_CASE("a chain and a runner_command cannot be given together", "[config]") {
    CHECK(error_of("[platform.linux]\nchain = [\"bwrap\"]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"x\"]").message ==
          "test.toml:2:9: platform.linux sets both chain and runner_command; runner_command replaces the chain, so give only one");
}

TEST_CASE("runner tables hold strings, integers, booleans and arrays of strings", "[config]") {
    CHECK(error_of("[runner.Bad]\nx = 1").message == "test.toml:1:9: invalid runner name 'Bad' (lower-case letters, digits, '-' and '_')");
    CHECK(error_of("runner.landlock = 1").message == "test.toml:1:19: runner.landlock must be a table");
    CHECK(error_of("runner = []").message == "test.toml:1:10: runner must be a table of [runner.<name>] tables");
    CHECK(error_of("[runner.landlock]\nx = 1.5").message ==
          "test.toml:2:5: runner.landlock.x must be a string, integer, boolean or array of strings, not floating-point");
    CHECK(error_of("[runner.landlock]\nx = { a = 1 }").message ==
          "test.toml:2:5: runner.landlock.x must be a string, integer, boolean or array of strings, not table");
    CHECK(error_of("[runner.landlock]\nx = [1, 2]").message == "test.toml:2:6: every entry of runner.landlock.x must be a string, not integer");
    CHECK(error_of("[runner.landlock]\nlauncher = \"\"").message == "test.toml:2:12: runner.landlock.launcher must not be empty");
}

TEST_CASE("a configuration file that does not exist is an error, not a fallback", "[config]") {
    test::TempDir dir;
    auto missing = confine::load_config({.explicit_path = dir / "nope.toml", .read_environment = false});
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::config_not_found);
    CHECK(missing.error().message == (dir / "nope.toml").string() + ": configuration file not found (from --config)");
    auto env_missing = confine::load_config({.environment_value = (dir / "gone.toml").string()});
    REQUIRE_FALSE(env_missing);
    CHECK(env_missing.error().message == (dir / "gone.toml").string() + ": configuration file not found (from CONFINE_CONFIG)");
    auto relative = confine::load_config({.environment_value = "confine.toml"});
    REQUIRE_FALSE(relative);
    CHECK(relative.error().message == "CONFINE_CONFIG must be an absolute path, got 'confine.toml'");
}

TEST_CASE("configuration errors in a file name that file", "[config]") {
    test::TempDir dir;
    test::write_file(dir / "c.toml", "probe_timeout_ms = 0\n");
    auto cfg = confine::load_config_file(dir / "c.toml");
    REQUIRE_FALSE(cfg);
    CHECK_THAT(cfg.error().message, Catch::StartsWith((dir / "c.toml").string() + ":1:20: "));
    auto directory = confine::load_config_file(dir.path());
    REQUIRE_FALSE(directory);
    CHECK(directory.error().message == dir.path().string() + ": not a regular file");
}

TEST_CASE("a configuration file writable by group or others is refused", "[config][trust]") {
    test::TempDir dir;
    test::write_file(dir / "group.toml", "", fs::perms(0664));
    test::write_file(dir / "world.toml", "", fs::perms(0646));
    auto group = confine::load_config_file(dir / "group.toml");
    REQUIRE_FALSE(group);
    CHECK(group.error().code == ErrorCode::config_untrusted);
    CHECK(group.error().message == (dir / "group.toml").string() + ": refusing configuration: " + (dir / "group.toml").string() +
                                       " is writable by its group (mode 0664)");
    auto world = confine::load_config_file(dir / "world.toml");
    REQUIRE_FALSE(world);
    CHECK_THAT(world.error().message, Catch::EndsWith("is writable by others (mode 0646)"));
}

TEST_CASE("a configuration file larger than 1 MiB is refused", "[config]") {
    test::TempDir dir;
    test::write_file(dir / "big.toml", std::string((1 << 20) + 1, '#'));
    auto cfg = confine::load_config_file(dir / "big.toml");
    REQUIRE_FALSE(cfg);
    CHECK(cfg.error().message == (dir / "big.toml").string() + ": larger than 1 MiB");
}

TEST_CASE("configuration is looked up as --config, CONFINE_CONFIG, system file, embedded default", "[config]") {
    test::TempDir dir;
    test::write_file(dir / "explicit.toml", "probe_timeout_ms = 11\n");
    test::write_file(dir / "env.toml", "probe_timeout_ms = 22\n");
    test::write_file(dir / "system.toml", "probe_timeout_ms = 33\n");
    const fs::path absent = dir / "no-system.toml";

    auto pick = [&](confine::ConfigLookup lookup) {
        auto cfg = confine::load_config(lookup);
        REQUIRE(cfg);
        return cfg->source;
    };
    CHECK(pick({.explicit_path = dir / "explicit.toml", .environment_value = (dir / "env.toml").string(), .system_path = dir / "system.toml"}) ==
          (dir / "explicit.toml").string());
    CHECK(pick({.environment_value = (dir / "env.toml").string(), .system_path = dir / "system.toml"}) == (dir / "env.toml").string());
    CHECK(pick({.environment_value = "", .system_path = dir / "system.toml"}) == (dir / "system.toml").string());
    CHECK(pick({.read_environment = false, .system_path = dir / "system.toml"}) == (dir / "system.toml").string());
    CHECK(pick({.read_environment = false, .system_path = absent}) == "<embedded default>");

    // The real environment variable is read when the caller does not pass a value.
    EnvironmentGuard guard;
    ::setenv("CONFINE_CONFIG", (dir / "env.toml").c_str(), 1);
    CHECK(pick({.system_path = absent}) == (dir / "env.toml").string());
}

TEST_CASE("a confine.toml in the current directory is never read", "[config][security]") {
    test::TempDir dir;
    test::write_file(dir / "confine.toml", "[platform.linux]\nrunner_command = [\"/usr/bin/env\"]\nrunner_failure_signatures = [\"x\"]\n");
    fs::create_directories(dir / ".confine");
    test::write_file(dir / ".confine" / "confine.toml", "probe_timeout_ms = 1\n");
    EnvironmentGuard guard;
    ::unsetenv("CONFINE_CONFIG");
    fs::current_path(dir.path());
    auto cfg = confine::load_config({.system_path = dir / "absent" / "confine.toml"});
    REQUIRE(cfg);
    CHECK(cfg->source == "<embedded default>");
    CHECK(cfg->platforms.at("linux").runner_command.empty());
    CHECK(cfg->platforms.at("linux").chain == std::vector<std::string>{"bwrap", "landlock"});
}

TEST_CASE("a system configuration in a directory writable by others is refused", "[config][trust]") {
    test::TempDir dir;
    fs::create_directories(dir / "etc");
    fs::permissions(dir / "etc", fs::perms(0777));
    test::write_file(dir / "etc" / "confine.toml", "");
    auto cfg = confine::load_config({.read_environment = false, .system_path = dir / "etc" / "confine.toml"});
    REQUIRE_FALSE(cfg);
    CHECK(cfg.error().code == ErrorCode::config_untrusted);
    CHECK_THAT(cfg.error().message, Catch::Contains((dir / "etc").string() + " is writable by others (mode 0777)"));
}

TEST_CASE("runner names are lower-case letters, digits, dash and underscore", "[config]") {
    CHECK(confine::is_valid_runner_name("landlock"));
    CHECK(confine::is_valid_runner_name("my-runner_2"));
    CHECK_FALSE(confine::is_valid_runner_name(""));
    CHECK_FALSE(confine::is_valid_runner_name("-x"));
    CHECK_FALSE(confine::is_valid_runner_name("a/b"));
    CHECK_FALSE(confine::is_valid_runner_name(".."));
    CHECK_FALSE(confine::is_valid_runner_name("A"));
    CHECK_FALSE(confine::is_valid_runner_name(std::string(65, 'a')));
}

TEST_CASE("characters toml++ 3.3 cannot judge as whitespace are read safely: refused outside strings, kept whole inside", "[config]") {
    // U+00A1, U+3001 and U+FEBF: toml++'s whitespace test reaches __builtin_unreachable()
    // on them (tests/fuzz/README.md); in a comment or a string they are plain text.
    const std::string text = "# r\u00e9glages \u3001\n[runner.x]\nvalue = \"\u00a1/\u3001/\ufebf\" # \ufebf\n\"\u00a1st\" = ['\u00a1']\n";
    auto cfg = confine::parse_config(text, "mine.toml");
    REQUIRE(cfg);
    const auto& settings = cfg->runners.at("x").settings;
    REQUIRE(settings.size() == 2);
    CHECK(settings[0].string_value == "\u00a1/\u3001/\ufebf");
    CHECK(settings[1].key == "\u00a1st");
    CHECK(settings[1].where.line == 4);
    CHECK(settings[1].array_value == std::vector<std::string>{"\u00a1"});
    for (const std::string bad : {"\u00a1", "a = 1 \u3001", "a = 1A=\"\ufebf\""}) {
        auto refused = confine::parse_config(bad, "mine.toml");
        REQUIRE_FALSE(refused);
        CHECK(refused.error().code == confine::ErrorCode::config_syntax);
        CHECK(refused.error().message.starts_with("mine.toml:1:"));
    }
    // After a line-ending backslash in a multi-line string: TOML, read whole.
    auto continued = confine::parse_config("[runner.x]\nv = \"\"\"\\\n  \ufeef\"\"\"\n", "mine.toml");
    REQUIRE(continued);
    CHECK(continued->runners.at("x").settings.at(0).string_value == "\ufeef");
    // The stand-ins themselves (the private use area from U+E000 to U+EBED) are refused, as
    // characters and as escapes.
    for (const std::string stand_in : {"a = \"\ue000\"", "a = \"\\ue123\"", "# \uebed"}) {
        auto refused = confine::parse_config(stand_in, "mine.toml");
        REQUIRE_FALSE(refused);
        CHECK(refused.error().message == "mine.toml:1:" + std::to_string(stand_in.find_first_of("\\\xee") + 1) +
                                             ": a character of the private use area from U+E000 to U+EBED, or its escape");
    }
}

TEST_CASE("a configuration error is one line: control characters in it are written as hexadecimal escapes", "[config]") {
    auto cfg = confine::parse_config("[policy]\n\"a\\nb\\u001b[31m\" = 1\n", "mine.toml");
    REQUIRE_FALSE(cfg);
    CHECK(cfg.error().message.starts_with("mine.toml:2:"));
    CHECK(cfg.error().message.find('\n') == std::string::npos);
    CHECK(cfg.error().message.find('\x1b') == std::string::npos);
    CHECK(cfg.error().message.find("a\\x0ab") != std::string::npos);
}
