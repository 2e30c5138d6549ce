// An operator's policy holds (confine/managed.hpp): the configuration in layers, each
// over the one before, key by key, with where each value comes from; and the managed
// layer, whose bounds no file, flag or library call below can cross — a crossing fails
// with one line naming it, the managed file and line, and what it allows; a tightening is
// taken; what the embedded default gives is brought within the bounds.
// End to end as `nobody`, against a managed file in /etc/confine of a mount namespace of
// the test's own (an overlay on /etc: the machine's /etc is never touched).
#include "default_config.hpp"
#include "support.hpp"

#include <confine/environment.hpp>
#include <confine/managed.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <fstream>

namespace fs = std::filesystem;
using confine::ErrorCode;

namespace {

// An /etc/confine of the test's: `files` (name, text) in `etc`, owned by root.
struct Etc {
    test::TempDir dir{"/var/tmp"};
    fs::path etc = dir / "etc";
    explicit Etc(std::initializer_list<std::pair<const char*, std::string>> files) {
        fs::create_directories(etc);
        for (const auto& [name, text] : files) {
            fs::create_directories((etc / name).parent_path());
            test::write_file(etc / name, text);
        }
    }
    std::expected<confine::Config, confine::Error> load(std::optional<fs::path> user = std::nullopt,
                                                        std::optional<fs::path> explicit_path = std::nullopt) const {
        return confine::load_config(
            {.explicit_path = explicit_path, .environment_value = "", .read_environment = false, .system_path = etc / "confine.toml", .user_path = user});
    }
};

const std::string team_policy = "runners = [\"bwrap\"]\n"                     // 1
                                "plugins = false\n"                           // 2
                                "network = \"hosts\"\n"                       // 3
                                "allow_hosts = [\"registry.npmjs.org\"]\n"    // 4
                                "deny_read = [\"/srv/team-secret\"]\n"        // 5
                                "protect = [\".git/hooks\", \".envrc\"]\n"    // 6
                                "env_exclude = [\"GITHUB_TOKEN\"]\n"          // 7
                                "env_inherit = \"core\"\n"                    // 8
                                "timeout = \"10m\"\n"                         // 9
                                "tmp = \"private\"\n"                         // 10
                                "[limits]\n"                                  // 11
                                "memory = \"2G\"\n"                           // 12
                                "processes = 512\n"                           // 13
                                "[enforcement]\n"                             // 14
                                "write = \"full\"\n"                          // 15
                                "read = \"full\"\n"                           // 16
                                "protect = \"full\"\n";                       // 17

}  // namespace

TEST_CASE("configuration layers apply key by key in order, each value with the file and line that wrote it", "[config][managed]") {
    Etc etc({{"confine.toml", "probe_timeout_ms = 33\n[policy]\ntimeout = \"1m\"\nnetwork = \"allow\"\n"},
             {"confine.d/20-b.toml", "[policy]\ntimeout = \"3m\"\n"},
             {"confine.d/10-a.toml", "[policy]\ntimeout = \"2m\"\ntmp = \"host\"\n"},
             {"confine.d/notes.txt", "not = toml at all ["},
             {"user.toml", "[policy]\nnetwork = \"none\"\n"},
             {"explicit.toml", "probe_timeout_ms = 11\n"}});
    auto cfg = etc.load(etc.etc / "user.toml", etc.etc / "explicit.toml");
    REQUIRE(cfg);
    CHECK(cfg->files == std::vector<fs::path>{etc.etc / "confine.toml", etc.etc / "confine.d/10-a.toml", etc.etc / "confine.d/20-b.toml",
                                              etc.etc / "user.toml", etc.etc / "explicit.toml"});
    CHECK(cfg->source == (etc.etc / "explicit.toml").string());
    CHECK(cfg->probe_timeout_ms == 11);
    CHECK(cfg->timeout == std::chrono::minutes(3));
    CHECK(cfg->tmp == confine::Tmp::host);
    CHECK(cfg->network == confine::Network::none);
    CHECK(cfg->origins.at("policy.timeout") == confine::SourcePosition{(etc.etc / "confine.d/20-b.toml").string(), 2, 1});
    CHECK(cfg->origins.at("policy.tmp") == confine::SourcePosition{(etc.etc / "confine.d/10-a.toml").string(), 3, 1});
    CHECK(cfg->origins.at("policy.network") == confine::SourcePosition{(etc.etc / "user.toml").string(), 2, 1});
    CHECK(cfg->origins.at("probe_timeout_ms") == confine::SourcePosition{(etc.etc / "explicit.toml").string(), 1, 1});
    // What no file writes is the embedded default's, and has no origin.
    CHECK(cfg->deny_read == confine::detail::compiled_default_config().deny_read);
    CHECK_FALSE(cfg->origins.contains("policy.deny_read"));
}

TEST_CASE("a layer's [platform] table replaces the one below whole, its origins too, and a bad layer names its file", "[config][managed]") {
    Etc etc({{"confine.toml", "[platform.linux]\nrunner_command = [\"/usr/bin/env\"]\nrunner_failure_signatures = [\"x\"]\n"},
             {"user.toml", "[platform.linux]\nchain = [\"landlock\"]\n"},
             {"bad.toml", "[policy]\nnetwork = \"sometimes\"\n"}});
    auto cfg = etc.load(etc.etc / "user.toml");
    REQUIRE(cfg);
    CHECK(cfg->platforms.at("linux").chain == std::vector<std::string>{"landlock"});
    CHECK(cfg->platforms.at("linux").runner_command.empty());
    CHECK_FALSE(cfg->origins.contains("platform.linux.runner_command"));
    CHECK(cfg->origins.at("platform.linux.chain").file == (etc.etc / "user.toml").string());
    auto bad = etc.load(etc.etc / "bad.toml");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == (etc.etc / "bad.toml").string() + ":2:11: policy.network must be \"none\" or \"allow\" (from the user's configuration)");
}

TEST_CASE("the managed layer brings the embedded default within its bounds and adds what must stay", "[config][managed]") {
    Etc etc({{"managed.toml", team_policy}});
    auto cfg = etc.load();
    REQUIRE(cfg);
    const std::string managed = (etc.etc / "managed.toml").string();
    CHECK(cfg->managed.files == std::vector<fs::path>{etc.etc / "managed.toml"});
    CHECK(cfg->platforms.at("linux").chain == std::vector<std::string>{"bwrap"});
    CHECK(cfg->timeout == std::chrono::minutes(10));
    CHECK(cfg->limits.memory == 2ull << 30);
    CHECK(cfg->limits.processes == 512u);
    CHECK(cfg->tmp == confine::Tmp::private_);
    CHECK(cfg->environment.inherit == confine::EnvInherit::core);
    CHECK(cfg->environment.held == std::vector<std::string>{"GITHUB_TOKEN"});
    CHECK(cfg->minimums.write == confine::Minimum::full);
    CHECK(cfg->minimums.read == confine::Minimum::full);
    CHECK(cfg->minimums.protect == confine::Minimum::full);
    CHECK(cfg->network == confine::Network::none);
    REQUIRE(std::find(cfg->deny_read.begin(), cfg->deny_read.end(), "/srv/team-secret") != cfg->deny_read.end());
    const auto at = std::find(cfg->deny_read.begin(), cfg->deny_read.end(), "/srv/team-secret") - cfg->deny_read.begin();
    CHECK(cfg->deny_read_where.at(static_cast<std::size_t>(at)) == confine::SourcePosition{managed, 5, 14});
    CHECK(std::find(cfg->protect.begin(), cfg->protect.end(), ".envrc") != cfg->protect.end());
    CHECK(confine::describe_bound(cfg->managed, "timeout") == "timeout at most 10m (" + managed + ":9:11)");
}

TEST_CASE("a file that crosses a managed bound fails with its line, the managed line and what it allows, and one that tightens is taken",
          "[config][managed]") {
    struct Case {
        const char* text;
        const char* names;  // what the line says of the user's value, after "user.toml:L:C: "
        const char* bound;  // what it says of the bound
    };
    const Case cases[] = {
        {"[policy]\nnetwork = \"allow\"\n", "2:1: policy.network = \"allow\"", "network at most \"hosts\" (allow_hosts: registry.npmjs.org)"},
        {"[policy]\nallow_hosts = [\"deb.debian.org\"]\n", "2:16: policy.allow_hosts entry \"deb.debian.org\"", "network at most \"hosts\""},
        {"[platform.linux]\nchain = [\"landlock\"]\n", "2:1: platform.linux.chain names \"landlock\"", "runners: only bwrap (MANAGED:1:11)"},
        {"plugin_dirs = [\"/opt/mine\"]\n", "1:1: plugin_dirs", "plugins = false (MANAGED:2:11)"},
        {"[policy]\ntimeout = \"2h\"\n", "2:1: policy.timeout = \"2h\"", "timeout at most 10m (MANAGED:9:11)"},
        {"[policy.limits]\nmemory = \"3G\"\n", "2:1: policy.limits.memory = 3G", "limits.memory at most 2G (MANAGED:12:10)"},
        {"[policy]\ntmp = \"host\"\n", "2:1: policy.tmp = \"host\"", "tmp must be \"private\" (MANAGED:10:7)"},
        {"[policy.env]\ninherit = \"all\"\n", "2:1: policy.env.inherit = \"all\"", "env_inherit at most \"core\" (MANAGED:8:15)"},
        {"[policy.env]\ninclude = [\"GITHUB_TOKEN\"]\n", "2:1: policy.env.include entry \"GITHUB_TOKEN\"", "env_exclude holds \"GITHUB_TOKEN\" (MANAGED:7:16)"},
        {"[policy.env.set]\nGITHUB_TOKEN = \"t\"\n", "2:1: policy.env.set.GITHUB_TOKEN", "env_exclude holds \"GITHUB_TOKEN\""},
        {"[policy]\nunprotect = [\".git\"]\n", "2:1: policy.unprotect entry \".git\"", "protect holds \".git/hooks\" (MANAGED:6:12)"},
        {"[policy.enforcement]\nwrite = \"partial\"\n", "2:1: policy.enforcement.write = \"partial\"", "enforcement.write at least \"full\" (MANAGED:15:9)"},
    };
    Etc etc({{"managed.toml", team_policy}});
    const std::string managed = (etc.etc / "managed.toml").string();
    for (const auto& c : cases) {
        test::write_file(etc.etc / "user.toml", c.text);
        auto cfg = etc.load(etc.etc / "user.toml");
        INFO(c.text);
        REQUIRE_FALSE(cfg);
        CHECK(cfg.error().code == ErrorCode::config_managed);
        std::string bound = c.bound;
        if (const auto at = bound.find("MANAGED"); at != std::string::npos) bound.replace(at, 7, managed);
        CHECK_THAT(cfg.error().message, Catch::StartsWith((etc.etc / "user.toml").string() + ":" + c.names + " crosses a managed bound: " + bound));
    }
    // Tighter than the bounds: taken as written.
    test::write_file(etc.etc / "user.toml",
                     "[policy]\ntimeout = \"5m\"\nallow_hosts = [\"registry.npmjs.org\"]\n[policy.limits]\nmemory = \"1G\"\n[policy.env]\ninherit = \"none\"\n");
    auto tighter = etc.load(etc.etc / "user.toml");
    REQUIRE(tighter);
    CHECK(tighter->timeout == std::chrono::minutes(5));
    CHECK(tighter->limits.memory == 1ull << 30);
    CHECK(tighter->limits.processes == 512u);
    CHECK(tighter->network == confine::Network::proxy);
    CHECK(tighter->environment.inherit == confine::EnvInherit::none);
    // The operator's own file is held to the bounds too.
    Etc crossed({{"managed.toml", team_policy}, {"confine.toml", "[policy]\nnetwork = \"allow\"\n"}});
    auto own = crossed.load();
    REQUIRE_FALSE(own);
    CHECK_THAT(own.error().message, Catch::StartsWith((crossed.etc / "confine.toml").string() + ":2:1: policy.network = \"allow\" crosses a managed bound"));
}

TEST_CASE("several managed files: each bound is the tightest any of them sets, with its line", "[config][managed]") {
    Etc etc({{"managed.toml", "timeout = \"10m\"\nnetwork = \"allow\"\n[enforcement]\nwrite = \"partial\"\n"},
             {"managed.d/50-team.toml", "timeout = \"20m\"\nnetwork = \"none\"\n[limits]\nmemory = \"1G\"\n[enforcement]\nwrite = \"full\"\n"},
             {"managed.d/60-more.toml", "runners = [\"bwrap\", \"landlock\"]\n"},
             {"managed.d/70-less.toml", "runners = [\"landlock\"]\n"}});
    auto cfg = etc.load();
    REQUIRE(cfg);
    const auto& m = cfg->managed;
    CHECK(m.files.size() == 4);
    CHECK(m.timeout == std::chrono::minutes(10));
    CHECK(m.where.at("timeout").file == (etc.etc / "managed.toml").string());
    CHECK(m.network == confine::Managed::NetworkBound::none);
    CHECK(m.where.at("network").file == (etc.etc / "managed.d/50-team.toml").string());
    CHECK(m.limits.memory == 1ull << 30);
    CHECK(m.enforcement.at("write") == confine::Minimum::full);
    CHECK(m.runners == std::vector<std::string>{"landlock"});
    CHECK(cfg->platforms.at("linux").chain == std::vector<std::string>{"landlock"});
}

TEST_CASE("a broken, untrusted or foreign managed file fails the configuration closed, naming the file and position", "[config][managed]") {
    struct Case {
        const char* text;
        const char* says;
    };
    const Case cases[] = {
        {"network = 3\n", ":1:11: network must be \"none\" or \"hosts\" or \"allow\""},
        {"networks = \"none\"\n", ":1:1: unknown key 'networks' in a managed file"},
        {"tmp = \"host\"\n", ":1:7: tmp must be \"private\""},
        {"[limits]\nmemory = \"lots\"\n", ":2:10: limits.memory"},
        {"[enforcement]\nwriting = \"full\"\n", ":2:1: unknown dimension 'writing'"},
        {"allow_hosts = [\"https://x.org\"]\n", ":1:16: allow_hosts: 'https://x.org' is not a host pattern"},
        {"deny_read = [\"relative\"]\n", ":1:14: deny_read entry 'relative' must be an absolute path"},
        {"timeout = \"forever\"\n", ":1:11: timeout 'forever' is not a duration"},
        {"network = \"none\"\n[", ":2:2:"},
    };
    for (const auto& c : cases) {
        Etc etc({{"managed.toml", c.text}});
        auto cfg = etc.load();
        INFO(c.text);
        REQUIRE_FALSE(cfg);
        CHECK(confine::is_configuration_error(cfg.error().code));
        CHECK_THAT(cfg.error().message, Catch::StartsWith((etc.etc / "managed.toml").string() + c.says));
    }
    if (::geteuid() != 0) test::skip_test("needs root to give a managed file to another user");
    Etc foreign({{"managed.toml", "network = \"none\"\n"}});
    REQUIRE(::chown((foreign.etc / "managed.toml").c_str(), test::nobody, test::nobody) == 0);
    auto cfg = foreign.load();
    REQUIRE_FALSE(cfg);
    CHECK(cfg.error().code == ErrorCode::config_untrusted);
    CHECK_THAT(cfg.error().message, Catch::Contains("is owned by uid 65534"));
    Etc open({{"managed.toml", "network = \"none\"\n"}});
    fs::permissions(open.etc / "managed.toml", fs::perms(0666));
    auto writable = open.load();
    REQUIRE_FALSE(writable);
    CHECK(writable.error().code == ErrorCode::config_untrusted);
}

TEST_CASE("what a call asks beyond the configuration crosses the managed layer by name, and within it, it is taken", "[config][managed]") {
    Etc etc({{"managed.toml", team_policy}});
    auto cfg = etc.load();
    REQUIRE(cfg);
    const std::string managed = (etc.etc / "managed.toml").string();
    const std::map<std::string, std::string> flags{{"network", "--network"}, {"allow_hosts", "--allow-host"}, {"tmp", "--tmp"},
                                                   {"timeout", "--timeout"}, {"limits", "--limit"},            {"env", "--env"},
                                                   {"unprotect", "--unprotect"}, {"plugin", "--plugin"}};
    auto says = [&](confine::ManagedAsk ask) { return confine::managed_crossing(*cfg, ask, flags).value_or("(taken)"); };
    CHECK(says({.network = confine::Network::allow}) ==
          "--network allow crosses a managed bound: network at most \"hosts\" (allow_hosts: registry.npmjs.org) (" + managed + ":4:15)");
    CHECK_THAT(says({.allow_hosts = {"deb.debian.org"}}), Catch::StartsWith("--allow-host deb.debian.org crosses a managed bound"));
    CHECK_THAT(says({.allow_hosts = {"*.npmjs.org"}}), Catch::StartsWith("--allow-host *.npmjs.org crosses"));
    CHECK_THAT(says({.allow_hosts = {"registry.npmjs.org:8443"}}), Catch::StartsWith("--allow-host registry.npmjs.org:8443 crosses"));
    CHECK(says({.allow_hosts = {"registry.npmjs.org"}}) == "(taken)");
    CHECK(says({.allow_hosts = {"registry.npmjs.org:443"}}) == "(taken)");
    CHECK(says({.tmp = confine::Tmp::host}) == "--tmp host crosses a managed bound: tmp must be \"private\" (" + managed + ":10:7)");
    CHECK(says({.tmp = confine::Tmp::private_}) == "(taken)");
    CHECK(says({.timeout = std::chrono::hours(100)}) == "--timeout 100h crosses a managed bound: timeout at most 10m (" + managed + ":9:11)");
    CHECK(says({.timeout = std::chrono::minutes(5)}) == "(taken)");
    confine::Limits big, small;
    REQUIRE_FALSE(confine::set_limit(big, "memory", "100G"));
    REQUIRE_FALSE(confine::set_limit(small, "processes", "64"));
    CHECK(says({.limits = big}) == "--limit memory=100G crosses a managed bound: limits.memory at most 2G (" + managed + ":12:10)");
    CHECK(says({.limits = small}) == "(taken)");
    CHECK(says({.env = {"GITHUB_TOKEN"}}) == "--env GITHUB_TOKEN crosses a managed bound: env_exclude holds \"GITHUB_TOKEN\" (" + managed + ":7:16)");
    CHECK(says({.env = {"GITHUB_TOKEN=mine"}}) == "--env GITHUB_TOKEN crosses a managed bound: env_exclude holds \"GITHUB_TOKEN\" (" + managed + ":7:16)");
    CHECK(says({.env = {"GIT*", "HOME"}}) == "(taken)");  // a pattern: what is held stays out (below)
    CHECK(says({.unprotect = {".envrc"}}) == "--unprotect .envrc crosses a managed bound: protect holds \".envrc\" (" + managed + ":6:26)");
    CHECK(says({.unprotect = {".git"}}) == "--unprotect .git crosses a managed bound: protect holds \".git/hooks\" (" + managed + ":6:12)");
    CHECK(says({.unprotect = {".git/config"}}) == "(taken)");
    // An absolute one may name a root, or a path in one: it could lift a relative entry.
    CHECK_THAT(says({.unprotect = {"/work/ws"}}), Catch::StartsWith("--unprotect /work/ws crosses a managed bound: protect holds"));
    CHECK_THAT(says({.unprotect = {"/work/ws/.envrc"}}), Catch::StartsWith("--unprotect /work/ws/.envrc crosses a managed bound"));
    CHECK_THAT(says({.unprotect = {"~/ws"}}), Catch::StartsWith("--unprotect ~/ws crosses a managed bound"));
    CHECK(says({.plugin = true}) == "--plugin crosses a managed bound: plugins = false (" + managed + ":2:11)");
    // With no managed layer, nothing is bounded.
    CHECK_FALSE(confine::managed_crossing(test::config_from(""), {.network = confine::Network::allow}));
}

TEST_CASE("a name the managed layer holds out reaches no command: not through an override, a pattern, include or set", "[config][managed]") {
    confine::EnvironmentPolicy policy;
    policy.include = {"GITHUB_*"};
    policy.set = {{"GITHUB_TOKEN", "from-set"}};
    policy.held = {"GITHUB_TOKEN"};
    const std::vector<std::string> env{"GITHUB_TOKEN=secret", "GITHUB_USER=me", "HOME=/h"};
    for (const auto& overrides : {std::vector<std::string>{"GITHUB_TOKEN"}, {"GIT*"}, {"GITHUB_TOKEN=other"}, {}}) {
        auto out = confine::filter_environment(policy, env, overrides);
        REQUIRE(out);
        const std::string asked = overrides.empty() ? std::string("none") : overrides.front();
        INFO(asked);
        for (const auto& v : out->variables) CHECK_FALSE(v.starts_with("GITHUB_TOKEN="));
        CHECK(std::find(out->variables.begin(), out->variables.end(), "GITHUB_USER=me") != out->variables.end());
    }
}

TEST_CASE("a library call whose policy crosses the managed layer is refused, as the flags are", "[config][managed]") {
    Etc etc({{"managed.toml", team_policy}});
    auto cfg = etc.load();
    REQUIRE(cfg);
    cfg->plugin_dirs = {BUILTIN_PLUGIN_DIR};
    auto provider = confine::Provider::create(*cfg);
    REQUIRE(provider);
    confine::PolicyRequest request;
    request.mode = confine::Mode::read_only;
    request.network = confine::Network::allow;
    const std::vector<std::string> argv{"/bin/true"};
    auto wrapped = (*provider)->wrap(request, argv);
    REQUIRE_FALSE(wrapped);
    CHECK(wrapped.error().code == ErrorCode::config_managed);
    CHECK_THAT(wrapped.error().message, Catch::StartsWith("network allow crosses a managed bound"));
    confine::PolicyRequest plain;
    plain.mode = confine::Mode::read_only;
    auto named = (*provider)->wrap_with("landlock", plain, argv);
    REQUIRE_FALSE(named);
    CHECK(named.error().code == ErrorCode::config_managed);
    CHECK_THAT(named.error().message, Catch::StartsWith("the runner landlock crosses a managed bound: runners: only bwrap"));
}

namespace {

// Runs confinectl as `nobody` with /etc/confine holding what `etc` holds (ownership
// kept), in a mount namespace of its own: an overlay on /etc, so the machine's own /etc
// is never written.
struct ManagedMachine {
    test::Installed confine;
    test::TempDir scratch{"/var/tmp"};
    fs::path etc;

    explicit ManagedMachine(fs::path etc_dir) : etc(std::move(etc_dir)) {}

    // With `journal` set, a journal of the namespace's own takes the first datagram sent to
    // /run/systemd/journal/socket (a tmpfs on /run) and writes it to that file.
    test::Result run(std::vector<std::string> args, std::vector<std::string> env = {}, const fs::path& journal = {}) const {
        static const std::string script =
            "set -e\n"
            "src=$1 scratch=$2 journal=$3\n"
            "shift 3\n"
            "mount -t tmpfs tmpfs \"$scratch\"\n"
            "mkdir \"$scratch/u\" \"$scratch/w\"\n"
            "mount -t overlay overlay -o \"lowerdir=/etc,upperdir=$scratch/u,workdir=$scratch/w\" /etc\n"
            "mkdir -p /etc/confine\n"
            "cp -a \"$src/.\" /etc/confine/\n"
            "[ -n \"$journal\" ] || exec \"$@\"\n"
            "mount -t tmpfs tmpfs /run\n"
            "mkdir -p /run/systemd/journal\n"
            "python3 -c '\n"
            "import os, socket, sys\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
            "s.bind(\"/run/systemd/journal/socket\")\n"
            "os.chmod(\"/run/systemd/journal/socket\", 0o666)\n"
            "open(\"/run/journal-ready\", \"w\").close()\n"
            "s.settimeout(30)\n"
            "open(sys.argv[1], \"wb\").write(s.recv(1 << 22))\n"
            "' \"$journal\" &\n"
            "while [ ! -e /run/journal-ready ]; do sleep 0.05; done\n"
            "status=0\n"
            "\"$@\" || status=$?\n"
            "wait\n"
            "exit $status\n";
        std::vector<std::string> prefix{"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script, "sh", etc.string(),
                                        scratch.path().string(), journal.string()};
        for (const auto& a : test::as_user(true)) prefix.push_back(a);
        return confine.run(std::move(args), std::move(env), prefix);
    }
};

void require_managed_machine() {
    test::require_user_switch();
    test::require_bwrap();
    if (!fs::exists("/usr/bin/unshare")) test::skip_test("needs unshare from util-linux");
}

// The team policy, with `secret` denied.
std::string team_policy_denying(const fs::path& secret) {
    std::string text = team_policy;
    text.replace(text.find("/srv/team-secret"), std::string("/srv/team-secret").size(), secret.string());
    return text;
}

}  // namespace

TEST_CASE("as nobody, every way around a managed policy is refused with its line, and the command never runs", "[e2e][managed][linux-only]") {
    require_managed_machine();
    test::Tree tree(true);
    const fs::path secret = tree.outside_file;
    Etc etc({{"managed.toml", team_policy_denying(secret)}});
    ManagedMachine machine(etc.etc);
    // The user's own files: theirs, not under /tmp, as a user keeps them.
    const fs::path mine = tree.home / "mine.toml";
    test::write_file(mine, "[policy]\nnetwork = \"allow\"\ndeny_read = []\n");
    fs::create_directories(tree.home / "xdg" / "confine");
    test::write_file(tree.home / "xdg" / "confine" / "confine.toml", "[policy]\nnetwork = \"allow\"\n");
    test::give_to_nobody(tree.home);
    const fs::path marker = tree.ws / "ran";
    const std::string bound = "/etc/confine/managed.toml:";
    struct Way {
        std::vector<std::string> flags;
        std::vector<std::string> env;
        std::string says;
    };
    const std::vector<Way> ways{
        {{"--config", mine.string()}, {}, mine.string() + ":2:1: policy.network = \"allow\" crosses a managed bound: network at most \"hosts\""},
        {{}, {"CONFINE_CONFIG=" + mine.string()}, mine.string() + ":2:1: policy.network = \"allow\" crosses a managed bound"},
        {{}, {"XDG_CONFIG_HOME=" + (tree.home / "xdg").string()}, (tree.home / "xdg/confine/confine.toml").string() + ":2:1: policy.network = \"allow\" crosses"},
        {{"--network", "allow"}, {}, "--network allow crosses a managed bound: network at most \"hosts\" (allow_hosts: registry.npmjs.org)"},
        {{"--allow-host", "deb.debian.org"}, {}, "--allow-host deb.debian.org crosses a managed bound"},
        {{"--env", "GITHUB_TOKEN"}, {}, "--env GITHUB_TOKEN crosses a managed bound: env_exclude holds \"GITHUB_TOKEN\""},
        {{"--limit", "memory=100G"}, {}, "--limit memory=100G crosses a managed bound: limits.memory at most 2G"},
        {{"--timeout", "100h"}, {}, "--timeout 100h crosses a managed bound: timeout at most 10m"},
        {{"--tmp", "host"}, {}, "--tmp host crosses a managed bound: tmp must be \"private\""},
        {{"--unprotect", ".envrc"}, {}, "--unprotect .envrc crosses a managed bound: protect holds \".envrc\""},
    };
    for (const auto& way : ways) {
        std::vector<std::string> args{"run", "--workspace", tree.ws.string()};
        args.insert(args.end(), way.flags.begin(), way.flags.end());
        args.insert(args.end(), {"--", "/usr/bin/touch", marker.string()});
        auto r = machine.run(args, way.env);
        INFO(way.says << "\n" << r.err);
        CHECK(r.exit_code == 125);
        CHECK(test::line_count(r.err) == 1);
        CHECK_THAT(r.err, Catch::StartsWith("confinectl: " + way.says));
        CHECK_THAT(r.err, Catch::Contains(bound));
        CHECK_FALSE(fs::exists(marker));
    }
    // A plugin the user names, too.
    const fs::path landlock = machine.confine.plugin_dir() / "confine-runner-landlock.so";
    auto plugin = machine.run({"--plugin", landlock.string(), "run", "--workspace", tree.ws.string(), "--", "/usr/bin/touch", marker.string()});
    CHECK(plugin.exit_code == 125);
    CHECK_THAT(plugin.err, Catch::StartsWith("confinectl: --plugin crosses a managed bound: plugins = false (" + bound + "2:11)"));
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("as nobody under a managed policy, what the operator holds stays held, and what tightens it is taken", "[e2e][managed][linux-only]") {
    require_managed_machine();
    test::Tree tree(true);
    const fs::path secret = tree.outside_file;
    Etc etc({{"managed.toml", team_policy_denying(secret)}});
    ManagedMachine machine(etc.etc);
    // The user's file lowers nothing it may not: deny_read emptied, the token left alone.
    const fs::path mine = tree.home / "mine.toml";
    test::write_file(mine, "[policy]\ndeny_read = []\n[policy.env]\ninherit = \"none\"\ninclude = [\"PATH\", \"GITHUB_*\"]\n");
    test::give_to_nobody(tree.home);
    auto r = machine.run({"run", "--config", mine.string(), "--workspace", tree.ws.string(), "--timeout", "5m", "--limit", "memory=1G",
                          "--network", "none", "--", "/bin/sh", "-c", "cat \"$1\"; env", "sh", secret.string()},
                         {"GITHUB_TOKEN=ghp_secret", "GITHUB_USER=me"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);  // the status of env, which runs last
    CHECK_THAT(r.out, !Catch::Contains("original"));
    CHECK_THAT(r.out, !Catch::Contains("ghp_secret"));
    CHECK_THAT(r.out, Catch::Contains("GITHUB_USER=me"));
    CHECK_THAT(r.err, Catch::Contains(secret.string()));
}

TEST_CASE("as nobody, a broken managed file, or one the user owns, fails every command closed, naming it", "[e2e][managed][linux-only]") {
    require_managed_machine();
    test::Tree tree(true);
    const fs::path marker = tree.ws / "ran";
    Etc broken({{"managed.toml", "network = \"none\"\ntimeout = \"soon\"\n"}});
    ManagedMachine machine(broken.etc);
    const std::string line = "confinectl: /etc/confine/managed.toml:2:11: timeout 'soon' is not a duration";
    for (const auto& args : {std::vector<std::string>{"run", "--workspace", tree.ws.string(), "--", "/usr/bin/touch", marker.string()},
                             std::vector<std::string>{"probe"},
                             std::vector<std::string>{"wrap", "--json", "--workspace", tree.ws.string(), "--", "/usr/bin/touch", marker.string()}}) {
        auto r = machine.run(args);
        INFO(args.front() << ": " << r.err);
        CHECK(r.exit_code == 125);
        CHECK_THAT(r.err, Catch::StartsWith(line));
    }
    CHECK_FALSE(fs::exists(marker));
    Etc theirs({{"managed.toml", "network = \"allow\"\n"}});
    REQUIRE(::chown((theirs.etc / "managed.toml").c_str(), test::nobody, test::nobody) == 0);
    ManagedMachine owned(theirs.etc);
    auto r = owned.run({"run", "--workspace", tree.ws.string(), "--", "/usr/bin/touch", marker.string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("/etc/confine/managed.toml: refusing managed configuration: /etc/confine/managed.toml is owned by uid 65534, not root"));
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("confinectl config shows each value in effect with where it comes from, and probe --json carries it", "[e2e][managed][linux-only]") {
    require_managed_machine();
    test::Tree tree(true);
    Etc etc({{"managed.toml", team_policy_denying(tree.outside_file)}, {"confine.toml", "[policy]\nkill_after = \"2s\"\n"}});
    ManagedMachine machine(etc.etc);
    const fs::path mine = tree.home / "mine.toml";
    test::write_file(mine, "[policy]\ntimeout = \"5m\"\n");
    test::give_to_nobody(tree.home);
    auto r = machine.run({"config", "--json", "--config", mine.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["files"] == nlohmann::json({"/etc/confine/confine.toml", mine.string()}));
    CHECK(doc["managed"]["files"] == nlohmann::json({"/etc/confine/managed.toml"}));
    CHECK(doc["managed"]["bounds"]["timeout"] == "timeout at most 10m (/etc/confine/managed.toml:9:11)");
    std::map<std::string, std::pair<nlohmann::json, std::string>> settings;
    std::vector<std::pair<std::string, std::string>> denied;
    for (const auto& s : doc["settings"]) {
        settings[s["key"]] = {s["value"], s["origin"]};
        if (s["key"] == "policy.deny_read[]") denied.emplace_back(s["value"], s["origin"]);
    }
    CHECK(settings["policy.timeout"] == std::pair<nlohmann::json, std::string>{"5m", mine.string() + ":2:1"});
    CHECK(settings["policy.kill_after"] == std::pair<nlohmann::json, std::string>{"2s", "/etc/confine/confine.toml:2:1"});
    CHECK(settings["policy.tmp"] == std::pair<nlohmann::json, std::string>{"private", "managed /etc/confine/managed.toml:10:7"});
    CHECK(settings["policy.limits.memory"].second == "managed /etc/confine/managed.toml:12:10");
    CHECK(settings["policy.enforcement.network"] == std::pair<nlohmann::json, std::string>{"partial", "default"});
    CHECK(settings["platform.linux.chain"].first == nlohmann::json({"bwrap"}));
    CHECK(std::find(denied.begin(), denied.end(), std::pair<std::string, std::string>{tree.outside_file.string(), "managed /etc/confine/managed.toml:5:14"}) !=
          denied.end());
    CHECK(std::find(denied.begin(), denied.end(), std::pair<std::string, std::string>{"~/.ssh", "default"}) != denied.end());
    // The text form says the same, a line each.
    auto text = machine.run({"config", "--config", mine.string()});
    REQUIRE(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("# managed: /etc/confine/managed.toml\n"));
    CHECK_THAT(text.out, Catch::Contains("policy.timeout = \"5m\""));
    CHECK_THAT(text.out, Catch::Contains("  # " + mine.string() + ":2:1\n"));
    // probe --json: the same document under "effective".
    auto probe = machine.run({"probe", "--json", "--config", mine.string(), "--workspace", tree.ws.string()});
    INFO(probe.err);
    const auto probed = nlohmann::json::parse(probe.out);
    CHECK(probed["effective"]["managed"]["files"] == nlohmann::json({"/etc/confine/managed.toml"}));
    CHECK(probed["effective"]["settings"] == doc["settings"]);
}

namespace {

// The fields of a native journal datagram: KEY=VALUE lines (no binary fields here).
std::map<std::string, std::string> journal_fields(const fs::path& datagram) {
    std::ifstream in(datagram, std::ios::binary);
    std::map<std::string, std::string> out;
    for (std::string line; std::getline(in, line);)
        if (const auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
    return out;
}

// The records a user's file holds, one JSON document per line.
std::vector<nlohmann::json> records_in(const fs::path& file) {
    std::ifstream in(file);
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
}

}  // namespace

TEST_CASE("as nobody under a managed policy that requires records, every run is recorded, refused ones too, in the file and the journal",
          "[e2e][managed][linux-only]") {
    require_managed_machine();
    if (!fs::exists("/usr/bin/python3")) test::skip_test("needs python3 for the journal of the test's own");
    test::Tree tree(true);
    test::TempDir logs{"/var/tmp"};
    const fs::path dir = logs / "confine";
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms(01733));
    Etc etc({{"managed.toml", "records = \"" + dir.string() + "\"\njournal = true\n" + team_policy_denying(tree.outside_file)},
             {"confine.toml", "[policy.env.set]\nDEPLOY_KEY_VALUE = \"hunter2\"\n"}});
    ManagedMachine machine(etc.etc);
    const fs::path datagram = logs / "journal";
    // A run that completes: the file's line and the journal's fields.
    auto ran = machine.run({"run", "--workspace", tree.ws.string(), "--", "/bin/sh", "-c", "exit 3"}, {}, datagram);
    INFO(ran.err);
    REQUIRE(ran.exit_code == 3);
    const fs::path mine = dir / "nobody.jsonl";
    auto records = records_in(mine);
    REQUIRE(records.size() == 1);
    const auto& r = records[0];
    for (const char* key : {"time", "duration_ms", "user", "host", "version", "command", "working_directory", "workspace", "configuration", "policy",
                            "runner", "dimensions", "outcome", "exit_code", "exit_status", "timed_out", "limit", "denial_hint", "network_requests"})
        CHECK(r.contains(key));
    CHECK(r["user"]["name"] == "nobody");
    CHECK(r["user"]["uid"] == test::nobody);
    CHECK(r["command"] == nlohmann::json({"/bin/sh", "-c", "exit 3"}));
    CHECK(r["workspace"] == tree.ws.string());
    CHECK(r["outcome"] == "task_failed");
    CHECK(r["exit_status"] == 3);
    CHECK(r["runner"] == "bwrap");
    CHECK(r["configuration"]["managed"][0]["path"] == "/etc/confine/managed.toml");
    CHECK_THAT(r["configuration"]["managed"][0]["hash"].get<std::string>(), Catch::StartsWith("fnv1a64:"));
    CHECK((fs::status(mine).permissions() & fs::perms::all) == fs::perms(0600));
    // A value the configuration sets is named, never written down.
    CHECK_THAT(r.dump(), !Catch::Contains("hunter2"));
    CHECK_THAT(r.dump(), Catch::Contains("DEPLOY_KEY_VALUE"));
    const auto fields = journal_fields(datagram);
    CHECK(fields.at("SYSLOG_IDENTIFIER") == "confinectl");
    CHECK(fields.at("CONFINE_OUTCOME") == "task_failed");
    CHECK(fields.at("CONFINE_EXIT_STATUS") == "3");
    CHECK(fields.at("CONFINE_RUNNER") == "bwrap");
    CHECK(fields.at("CONFINE_USER") == "nobody");
    CHECK(nlohmann::json::parse(fields.at("CONFINE_RECORD"))["command"] == r["command"]);
    // Refused by a bound, and by a user's file that does not load: recorded with the line.
    auto crossed = machine.run({"run", "--workspace", tree.ws.string(), "--network", "allow", "--", "/bin/true"});
    CHECK(crossed.exit_code == 125);
    const fs::path broken = tree.home / "broken.toml";
    test::write_file(broken, "[policy]\nnetwork = 1\n");
    test::give_to_nobody(tree.home);
    auto bad = machine.run({"run", "--config", broken.string(), "--workspace", tree.ws.string(), "--", "/bin/true"}, {}, datagram);
    CHECK(bad.exit_code == 125);
    records = records_in(mine);
    REQUIRE(records.size() == 3);
    CHECK(records[1]["outcome"] == "refused");
    CHECK(records[1]["error"]["code"] == "CONFIG_MANAGED");
    CHECK_THAT(records[1]["error"]["message"].get<std::string>(), Catch::StartsWith("--network allow crosses a managed bound"));
    CHECK(records[2]["outcome"] == "refused");
    CHECK(records[2]["configuration"].is_null());
    CHECK_THAT(records[2]["error"]["message"].get<std::string>(), Catch::StartsWith(broken.string() + ":2:11: policy.network must be"));
    CHECK(journal_fields(datagram).at("CONFINE_OUTCOME") == "refused");
    // A user's file cannot turn the records off.
    const fs::path quiet = tree.home / "quiet.toml";
    test::write_file(quiet, "[report]\nrecords = \"\"\n");
    test::give_to_nobody(tree.home);
    auto off = machine.run({"run", "--config", quiet.string(), "--workspace", tree.ws.string(), "--", "/bin/true"});
    CHECK(off.exit_code == 125);
    CHECK_THAT(off.err, Catch::StartsWith("confinectl: " + quiet.string() + ":2:1: report.records = \"\" crosses a managed bound: records must be \"" +
                                          dir.string() + "\""));
}

TEST_CASE("the report of a run refused before it started says why, a configuration error too", "[e2e][managed][linux-only]") {
    test::Installed confine;
    test::TempDir dir{"/var/tmp"};
    const fs::path broken = dir / "broken.toml", report = dir / "report.json";
    test::write_file(broken, "[policy]\nnetwork = 1\n");
    auto r = confine.run({"run", "--config", broken.string(), "--report", report.string(), "--", "/bin/true"});
    CHECK(r.exit_code == 125);
    REQUIRE(fs::exists(report));
    std::ifstream in(report);
    const auto doc = nlohmann::json::parse(in);
    CHECK(doc["error"]["code"] == "CONFIG_INVALID");
    CHECK_THAT(doc["error"]["message"].get<std::string>(), Catch::StartsWith(broken.string() + ":2:11:"));
}

TEST_CASE("the user's own file is judged as every configuration file: one the run could write is refused, and so is one others can write",
          "[e2e][managed][linux-only]") {
    test::require_bwrap();
    test::Installed confine;
    test::Tree tree(false);
    // In the workspace: the command could rewrite the file the next run reads.
    const fs::path in_ws = tree.ws / ".config";
    fs::create_directories(in_ws / "confine");
    test::write_file(in_ws / "confine" / "confine.toml", "[policy]\ntimeout = \"5m\"\n");
    auto r = confine.run({"run", "--workspace", tree.ws.string(), "--", "/bin/true"}, {"XDG_CONFIG_HOME=" + in_ws.string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("the configuration " + (in_ws / "confine" / "confine.toml").string() + " lies in " + tree.ws.string()));
    // Writable by others: refused as it is read.
    const fs::path open = tree.home / ".config";
    fs::create_directories(open / "confine");
    test::write_file(open / "confine" / "confine.toml", "[policy]\ntimeout = \"5m\"\n", fs::perms(0666));
    auto w = confine.run({"run", "--workspace", tree.ws.string(), "--", "/bin/true"}, {"XDG_CONFIG_HOME=" + open.string()});
    CHECK(w.exit_code == 125);
    CHECK_THAT(w.err, Catch::Contains("refusing configuration"));
    CHECK_THAT(w.err, Catch::Contains("(from the user's configuration)"));
    // Where it may be trusted, it is read, over the defaults.
    fs::permissions(open / "confine" / "confine.toml", fs::perms(0644));
    auto c = confine.run({"config"}, {"XDG_CONFIG_HOME=" + open.string()});
    CHECK(c.exit_code == 0);
    CHECK_THAT(c.out, Catch::Contains("policy.timeout = \"5m\""));
}

TEST_CASE("with scoped reads required, the read roots are bounded: the managed list, else the default's", "[config][managed]") {
    Etc etc({{"managed.toml", "read = \"scoped\"\nread_roots = [\"~/.cargo\", \"/opt/tools\"]\n"}, {"user.toml", "[policy]\nread_roots = [\"/home\"]\n"}});
    const std::string managed = (etc.etc / "managed.toml").string();
    auto crossed = etc.load(etc.etc / "user.toml");
    REQUIRE_FALSE(crossed);
    CHECK(crossed.error().message == (etc.etc / "user.toml").string() +
                                         ":2:1: policy.read_roots entry \"/home\" crosses a managed bound: read_roots: only ~/.cargo /opt/tools (" + managed + ":2:14)");
    test::write_file(etc.etc / "user.toml", "[policy]\nread_roots = [\"/opt/tools/bin\", \"~/.cargo\"]\n");
    auto within = etc.load(etc.etc / "user.toml");
    REQUIRE(within);
    CHECK(within->read_scoped);
    CHECK(within->read_roots == std::vector<std::string>{"/opt/tools/bin", "~/.cargo"});
    // The default's roots outside the managed list are cut.
    auto plain = etc.load();
    REQUIRE(plain);
    CHECK(plain->read_roots == std::vector<std::string>{"~/.cargo"});
    CHECK(confine::managed_crossing(*plain, {.read_roots = {"/"}}, {{"read_roots", "--read-root"}}) ==
          "--read-root / crosses a managed bound: read_roots: only ~/.cargo /opt/tools (" + managed + ":2:14)");
    CHECK_FALSE(confine::managed_crossing(*plain, {.read_roots = {"/opt/tools/lib"}}));
    // Without a managed list, the default's is the bound.
    Etc bare({{"managed.toml", "read = \"scoped\"\n"}});
    auto defaults = bare.load();
    REQUIRE(defaults);
    CHECK_THAT(confine::managed_crossing(*defaults, {.read_roots = {"/srv"}}).value_or(""), Catch::StartsWith("read_roots /srv crosses a managed bound: read_roots: only ~/.gitconfig"));
    CHECK_FALSE(confine::managed_crossing(*defaults, {.read_roots = {"~/.cargo/bin"}}));
}

TEST_CASE("as nobody, with scoped reads required, --read all and a read root beyond the operator's are refused with their lines",
          "[e2e][managed][linux-only]") {
    require_managed_machine();
    test::Tree tree(true);
    Etc etc({{"managed.toml", "read = \"scoped\"\nread_roots = [\"~/.cargo\"]\n"}});
    ManagedMachine machine(etc.etc);
    const fs::path marker = tree.ws / "ran";
    for (const auto& [flags, says] : {std::pair{std::vector<std::string>{"--read", "all"}, std::string("--read all crosses a managed bound: read must be \"scoped\"")},
                                      std::pair{std::vector<std::string>{"--read-root", "/"}, std::string("--read-root / crosses a managed bound: read_roots: only ~/.cargo")}}) {
        std::vector<std::string> args{"run", "--workspace", tree.ws.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/usr/bin/touch", marker.string()});
        auto r = machine.run(args);
        INFO(r.err);
        CHECK(r.exit_code == 125);
        CHECK_THAT(r.err, Catch::StartsWith("confinectl: " + says));
        CHECK_FALSE(fs::exists(marker));
    }
    // Within the bound, the run is scoped: the home outside the roots is not read.
    test::write_file(tree.home / "private.txt", "mine");
    test::give_to_nobody(tree.home);
    auto r = machine.run({"run", "--workspace", tree.ws.string(), "--", "/bin/cat", (tree.home / "private.txt").string()}, {tree.home_entry()});
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.out, !Catch::Contains("mine"));
}
