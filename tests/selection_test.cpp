#include "support.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

using confine::ErrorCode;
namespace fs = std::filesystem;

namespace {

// A provider over `config_text`, with `dir` as its only plugin directory.
std::unique_ptr<confine::Provider> provider_for(const test::TempDir& dir, const std::string& config_text,
                                                std::string platform = "linux") {
    auto p = confine::Provider::create(test::config_from(config_text),
                                       {.platform = platform, .builtin_plugin_dirs = std::vector<fs::path>{dir.path()}});
    REQUIRE(p);
    return std::move(*p);
}

using test::chain;

const std::vector<std::string> true_argv{"true"};

}  // namespace

TEST_CASE("a platform without a chain fails closed", "[selection]") {
    test::TempDir dir;
    test::FakeLog log;
    auto provider = provider_for(dir, std::string(confine::embedded_default_config()), "freebsd");
    const auto& s = provider->selection();
    CHECK_FALSE(s.usable());
    REQUIRE(s.failure);
    CHECK(s.failure->code == ErrorCode::sandbox_unavailable);
    CHECK(s.failure->message == "no runner chain is configured for platform 'freebsd' (test.toml)");
    CHECK(provider->loaded_plugins().empty());
    auto wrapped = provider->wrap({confine::Mode::read_only, {}, {}}, true_argv);
    REQUIRE_FALSE(wrapped);
    CHECK(wrapped.error().code == ErrorCode::sandbox_unavailable);
}

TEST_CASE("an empty chain fails closed", "[selection]") {
    test::TempDir dir;
    test::install_fake(dir.path(), "usable");
    auto provider = provider_for(dir, "[platform.linux]\nchain = []\n");
    const auto& s = provider->selection();
    CHECK_FALSE(s.usable());
    CHECK(s.failure->message == "the runner chain for platform 'linux' is empty (test.toml)");
    CHECK(provider->loaded_plugins().empty());
}

TEST_CASE("a chain of one is selected without probing", "[selection]") {
    test::TempDir dir;
    test::FakeLog log;
    test::install_fake(dir.path(), "unusable");
    auto provider = provider_for(dir, chain({"unusable"}));
    const auto& s = provider->selection();
    REQUIRE(s.usable());
    CHECK(*s.runner == "unusable");
    CHECK(s.selected_without_probe);
    CHECK_FALSE(s.enforcement);
    REQUIRE(s.candidates.size() == 1);
    CHECK_FALSE(s.candidates[0].probed);
    CHECK(log.count("load unusable") == 1);
    CHECK(log.count("probe unusable") == 0);
}

TEST_CASE("diagnosing a chain of one probes it without changing the selection", "[selection]") {
    test::TempDir dir;
    test::FakeLog log;
    test::install_fake(dir.path(), "unusable");
    auto provider = provider_for(dir, chain({"unusable"}));
    auto d = provider->diagnose();
    CHECK_FALSE(d.usable());
    CHECK(d.failure->message == "runner 'unusable', the only one in the chain, is unusable: fake unusable says no");
    CHECK(d.candidates.at(0).probed);
    CHECK(log.count("probe unusable") == 1);
    CHECK(provider->selection().usable());

    test::install_fake(dir.path(), "partial");
    auto partial = provider_for(dir, chain({"partial"}))->diagnose();
    CHECK(partial.usable());
    CHECK(partial.enforcement == confine::Enforcement::partial);
}

TEST_CASE("a chain of one whose plugin cannot be had fails closed", "[selection]") {
    test::TempDir dir;
    auto missing = provider_for(dir, chain({"ghost"}));
    CHECK_FALSE(missing->selection().usable());
    CHECK(missing->selection().failure->message ==
          "runner 'ghost' cannot be used: no plugin for runner 'ghost': confine-runner-ghost.so is in none of " + dir.path().string());
    test::install_fake(dir.path(), "wrong-major");
    auto refused = provider_for(dir, chain({"wrong-major"}));
    CHECK_FALSE(refused->selection().usable());
    CHECK_THAT(refused->selection().failure->message, Catch::Contains("has a different major version"));
}

TEST_CASE("a longer chain is probed in order and the first usable runner wins", "[selection]") {
    test::TempDir dir;
    test::FakeLog log;
    for (auto n : {"unusable", "usable", "partial"}) test::install_fake(dir.path(), n);
    // It enforces every dimension in full: so does the selection.
    auto provider = provider_for(dir, chain({"unusable", "usable", "partial"}) + "[runner.usable]\nnetwork = \"full\"\nprocesses = \"full\"\nread = \"full\"\nprotect = \"full\"\nlifetime = \"full\"\n");
    const auto& s = provider->selection();
    REQUIRE(s.usable());
    CHECK(*s.runner == "usable");
    CHECK(s.enforcement == confine::Enforcement::full);
    CHECK_FALSE(s.selected_without_probe);
    REQUIRE(s.candidates.size() == 2);
    CHECK(s.candidates[0].verdict->reason == "fake unusable says no");
    CHECK(s.candidates[1].verdict->kind == confine::Verdict::Kind::full);
    // Later runners are neither loaded nor probed. A runner's table is judged before
    // anything is probed: its runner is created with it first, and that one is used.
    CHECK(provider->loaded_plugins() == std::vector<std::string>{"usable", "unusable"});
    // The selected one wraps a sample command, to judge the minimums by what it enforces.
    CHECK(log.lines() == std::vector<std::string>{"load usable", "create usable", "load unusable", "create unusable", "probe unusable", "probe usable",
                                                  "wrap usable"});
}

TEST_CASE("a partially enforcing runner is selected with partial enforcement", "[selection]") {
    test::TempDir dir;
    for (auto n : {"unusable", "partial"}) test::install_fake(dir.path(), n);
    auto provider = provider_for(dir, chain({"unusable", "partial"}));
    const auto& s = provider->selection();
    REQUIRE(s.usable());
    CHECK(*s.runner == "partial");
    CHECK(s.enforcement == confine::Enforcement::partial);
}

TEST_CASE("a runner whose plugin is missing or refused is skipped with its reason", "[selection]") {
    test::TempDir dir;
    for (auto n : {"wrong-major", "usable"}) test::install_fake(dir.path(), n);
    auto provider = provider_for(dir, chain({"ghost", "wrong-major", "usable"}));
    const auto& s = provider->selection();
    REQUIRE(s.usable());
    CHECK(*s.runner == "usable");
    REQUIRE(s.candidates.size() == 3);
    CHECK_FALSE(s.candidates[0].probed);
    CHECK_THAT(s.candidates[0].verdict->reason, Catch::StartsWith("no plugin for runner 'ghost'"));
    CHECK_THAT(s.candidates[1].verdict->reason, Catch::Contains("different major version"));
}

TEST_CASE("when no runner is usable, selection fails closed naming each reason", "[selection]") {
    test::TempDir dir;
    for (auto n : {"unusable", "thrower"}) test::install_fake(dir.path(), n);
    auto provider = provider_for(dir, chain({"unusable", "thrower", "ghost"}));
    const auto& s = provider->selection();
    CHECK_FALSE(s.usable());
    CHECK(s.failure->code == ErrorCode::sandbox_unavailable);
    CHECK(s.failure->message ==
          "no usable runner for platform 'linux': unusable: fake unusable says no; thrower: probe failed: runner plugin threw an "
          "exception: fake probe exploded; ghost: no plugin for runner 'ghost': confine-runner-ghost.so is in none of " +
              dir.path().string());
    auto wrapped = provider->wrap({confine::Mode::read_only, {}, {}}, true_argv);
    REQUIRE_FALSE(wrapped);
    CHECK(wrapped.error().message == s.failure->message);
}

TEST_CASE("a hanging probe is reported as timed out and the next runner is tried", "[selection]") {
    test::TempDir dir;
    for (auto n : {"hang", "inside-hang", "usable"}) test::install_fake(dir.path(), n);
    auto provider = provider_for(dir, "probe_timeout_ms = 150\n" + chain({"hang", "inside-hang", "usable"}) +
                                          "[runner.hang]\ncommand = [\"/bin/sleep\", \"300\"]\n");
    const auto& s = provider->selection();
    REQUIRE(s.usable());
    CHECK(*s.runner == "usable");
    CHECK(s.candidates[0].verdict->reason == "probe timed out after 150 ms");
    CHECK(s.candidates[1].verdict->reason == "probe timed out after 150 ms");
}

TEST_CASE("the selection is computed once, across threads", "[selection]") {
    test::TempDir dir;
    test::FakeLog log;
    for (auto n : {"unusable", "usable"}) test::install_fake(dir.path(), n);
    auto provider = provider_for(dir, chain({"unusable", "usable"}));
    std::vector<const confine::Selection*> seen(8);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < seen.size(); ++i)
        threads.emplace_back([&, i] { seen[i] = &provider->selection(); });
    for (auto& t : threads) t.join();
    for (auto* s : seen) CHECK(s == seen[0]);
    CHECK(*seen[0]->runner == "usable");
    CHECK(log.count("probe unusable") == 1);
    CHECK(log.count("probe usable") == 1);
    CHECK(log.count("load usable") == 1);
}

TEST_CASE("an unavailable outcome is cached too", "[selection]") {
    test::TempDir dir;
    test::FakeLog log;
    for (auto n : {"unusable", "refuser"}) test::install_fake(dir.path(), n);
    auto provider = provider_for(dir, chain({"unusable", "refuser"}));
    CHECK_FALSE(provider->selection().usable());
    CHECK_FALSE(provider->selection().usable());
    CHECK_FALSE(provider->wrap({confine::Mode::read_only, {}, {}}, true_argv));
    CHECK(log.count("probe unusable") == 1);
    CHECK(log.count("probe refuser") == 1);
}

TEST_CASE("a runner_command assertion replaces the chain and is never probed", "[selection][asserted]") {
    test::TempDir dir;
    test::FakeLog log;
    test::install_fake(dir.path(), "usable");
    auto provider = provider_for(dir, R"([platform.linux]
runner_command = ["/usr/bin/bwrap", "--unshare-net"]
runner_failure_signatures = ["bwrap: ", "company-wrapper: "]
[runner.usable]
[policy]
deny_read = []
)");
    const auto& s = provider->selection();
    REQUIRE(s.usable());
    CHECK(s.asserted);
    CHECK(*s.runner == "runner_command");
    CHECK(s.enforcement == confine::Enforcement::full);
    CHECK(s.selected_without_probe);
    CHECK(s.chain.empty());
    // The [runner.usable] table is judged by its runner (a configuration error is never a
    // fallback, to the asserted command either); nothing is probed.
    CHECK(provider->loaded_plugins() == std::vector<std::string>{"usable"});
    CHECK(log.lines() == std::vector<std::string>{"load usable", "create usable"});

    std::vector<std::string> argv{"make", "-j2"};
    auto ro = provider->wrap({confine::Mode::read_only, {}, {}}, argv);
    REQUIRE(ro);
    // After --new-session, root's device nodes (confine's own).
    const auto devices = test::device_binds();
    auto with_devices = [&devices](std::vector<std::string> v) {
        v.insert(v.begin() + 16, devices.begin(), devices.end());
        return v;
    };
    CHECK(ro->argv == with_devices({"/usr/bin/bwrap", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                    "--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL", "--new-session", "--unshare-net", "--seccomp", "{loopback-filter-fd}", "--", "make", "-j2"}));
    CHECK(ro->enforcement == confine::Enforcement::full);  // bubblewrap's network namespace and the network filter: nothing open
    CHECK(ro->dimensions.write == confine::Level::full);
    CHECK(ro->dimensions.network == confine::Level::full);
    CHECK(ro->dimensions.processes == confine::Level::full);
    // Both Linux dialects, and with the network confined the tools' words for its absence.
    std::vector<std::string> dialect{"read-only file system", "permission denied", "operation not permitted", "no such process", "erofs", "eacces", "eperm"};
    for (const auto& s : confine::sdk::network_denial_signatures()) dialect.push_back(s);
    CHECK(ro->denial_signatures == dialect);
    CHECK(ro->failure_rule.fatal_signatures == std::vector<std::string>{"bwrap: ", "company-wrapper: "});
    CHECK(ro->failure_rule.evidence_exit_codes.empty());
    CHECK(ro->failure_rule.informational_lines.empty());

    fs::create_directories(dir / "ws");
    fs::create_directories(dir / "cache");
    const std::string ws = (dir / "ws").string(), cache = (dir / "cache").string();
    auto rw = provider->wrap({confine::Mode::workspace_write, ws, {cache}}, argv);
    REQUIRE(rw);
    CHECK(rw->argv == with_devices({"/usr/bin/bwrap", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                    "--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL", "--new-session", "--unshare-net", "--seccomp", "{loopback-filter-fd}", "--tmpfs", "/tmp", "--bind-fd", "{dir-fd:" + ws + "}", ws, "--bind-fd", "{dir-fd:" + cache + "}", cache, "--", "make",
                                    "-j2"}));
    CHECK(rw->attestation.kind == confine::Attestation::Kind::none);
}

TEST_CASE("wrap goes through the selected runner", "[selection]") {
    test::TempDir dir;
    test::TempDir ws;
    test::install_fake(dir.path(), "usable");
    // No credential store to deny: the account's own home (~ is both homes) holds what it holds.
    auto provider = provider_for(dir, chain({"usable"}) + "[policy]\ndeny_read = []\n");
    std::vector<std::string> argv{"echo", "hi"};
    auto wrapped = provider->wrap({confine::Mode::workspace_write, ws.path(), {}}, argv);
    REQUIRE(wrapped);
    CHECK(wrapped->runner == "usable");
    CHECK(wrapped->argv == std::vector<std::string>{"/usr/bin/env", "FAKE_RUNNER=usable", "FAKE_MODE=workspace-write:" + ws.path().string(),
                                                    "--", "echo", "hi"});
}

TEST_CASE("a runner that cannot wrap fails closed at execution", "[selection]") {
    test::TempDir dir;
    for (auto n : {"bad-wrap", "thrower"}) test::install_fake(dir.path(), n);
    for (auto n : {"bad-wrap", "thrower"}) {
        INFO(n);
        auto wrapped = provider_for(dir, chain({n}))->wrap({confine::Mode::read_only, {}, {}}, true_argv);
        REQUIRE_FALSE(wrapped);
        CHECK(wrapped.error().code == ErrorCode::sandbox_unavailable);
    }
}

TEST_CASE("a bad policy is refused before any runner sees it", "[selection]") {
    test::TempDir dir;
    test::FakeLog log;
    test::install_fake(dir.path(), "usable");
    auto provider = provider_for(dir, chain({"usable"}));
    auto expect_invalid = [&](const confine::Policy& p, const std::vector<std::string>& argv, const std::string& message) {
        auto wrapped = provider->wrap(confine::PolicyRequest(p), argv);
        REQUIRE_FALSE(wrapped);
        CHECK(wrapped.error().code == ErrorCode::invalid_policy);
        CHECK(wrapped.error().message == message);
    };
    expect_invalid({confine::Mode::read_only, {}, {}}, {}, "no command to run");
    expect_invalid({confine::Mode::workspace_write, {}, {}}, true_argv, "workspace-write mode needs a workspace");
    expect_invalid({confine::Mode::workspace_write, "ws", {}}, true_argv, "workspace must be an absolute path: ws");
    expect_invalid({confine::Mode::workspace_write, dir.path(), {"rel"}}, true_argv, "writable root must be an absolute path: rel");
    expect_invalid({confine::Mode::workspace_write, dir / "absent", {}}, true_argv, "workspace does not exist: " + (dir / "absent").string());
    expect_invalid({confine::Mode::workspace_write, dir / "confine-runner-usable.so", {}}, true_argv,
                   "workspace is not a directory: " + (dir / "confine-runner-usable.so").string());
    expect_invalid({confine::Mode::workspace_write, dir.path(), {dir / "absent"}}, true_argv,
                   "writable root does not exist: " + (dir / "absent").string());
    expect_invalid({confine::Mode::read_only, {}, {"/x"}}, true_argv, "read-only mode cannot have writable roots");
    expect_invalid({confine::Mode::read_only, {}, {}}, {std::string("a\0b", 3)}, "a command argument contains a NUL byte");
    CHECK(log.count("load usable") == 0);
}

TEST_CASE("the default Linux chain fails closed when neither runner can work here", "[selection][builtin]") {
    test::TempDir dir;
    test::install_builtin(dir.path(), "bwrap");
    test::install_builtin(dir.path(), "landlock", false);
    auto provider = provider_for(dir, std::string(confine::embedded_default_config()) + test::absent_bwrap_setting(dir.path()));
    const auto& s = provider->selection();
    CHECK_FALSE(s.usable());
    CHECK(s.failure->message == "no usable runner for platform 'linux': bwrap: bubblewrap cannot be used: " + (dir / "absent" / "bwrap").string() +
                                    ": No such file or directory; landlock: landlock-run launcher not found at " +
                                    (dir / "landlock-run").string() + ": No such file or directory");
    auto wrapped = provider->wrap({confine::Mode::workspace_write, dir.path(), {}}, true_argv);
    REQUIRE_FALSE(wrapped);
    CHECK(wrapped.error().code == ErrorCode::sandbox_unavailable);
}

TEST_CASE("a runner below a dimension's minimum is skipped in the chain with that reason, and best-effort keeps it", "[selection][network]") {
    test::TempDir dir;
    for (auto n : {"usable", "partial"}) test::install_fake(dir.path(), n);
    const std::string below = chain({"usable", "partial"}) + "[runner.usable]\nnetwork = \"none\"\n";
    auto strict = provider_for(dir, below);
    const auto& s = strict->selection();
    REQUIRE(s.usable());
    CHECK(*s.runner == "partial");
    REQUIRE(s.candidates.size() == 2);
    CHECK(s.candidates[0].verdict->kind == confine::Verdict::Kind::unusable);
    CHECK(s.candidates[0].verdict->reason ==
          "runner 'usable' enforces network at level none, below the minimum partial ([policy.enforcement] network)");
    // The network allowed by the configuration: not asked of it, so it is chosen.
    auto allowing = provider_for(dir, below + "[policy]\nnetwork = \"allow\"\n");
    CHECK(allowing->selection().runner == std::optional<std::string>("usable"));
    auto lenient = provider_for(dir, below + "[policy.enforcement]\nnetwork = \"best-effort\"\n");
    CHECK(lenient->selection().runner == std::optional<std::string>("usable"));
    CHECK(lenient->selection().enforcement == confine::Enforcement::partial);
}

TEST_CASE("a built-in runner alone in its chain is selected without probing", "[selection][builtin]") {
    test::TempDir dir;
    for (auto n : {"seatbelt", "appcontainer"}) test::install_builtin(dir.path(), n);
    auto darwin = provider_for(dir, std::string(confine::embedded_default_config()), "darwin");
    CHECK(darwin->selection().runner == std::optional<std::string>("seatbelt"));
    CHECK(darwin->selection().selected_without_probe);
    // Seatbelt's profile leaves the user's other processes open: below the default minimum
    // for processes, nothing runs; accepted as best-effort, it wraps and says what it is.
    auto refused = darwin->wrap({confine::Mode::read_only, {}, {}}, true_argv);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::sandbox_unavailable);
    CHECK(refused.error().message ==
          "runner 'seatbelt' enforces processes at level none, below the minimum partial ([policy.enforcement] processes)");
    auto lenient = provider_for(dir, std::string(confine::embedded_default_config()) + "[policy.enforcement]\nprocesses = \"best-effort\"\n", "darwin");
    auto sb = lenient->wrap({confine::Mode::read_only, {}, {}}, true_argv);
    REQUIRE(sb);
    CHECK(sb->argv.front() == "/usr/bin/sandbox-exec");
    CHECK(sb->dimensions.processes == confine::Level::none);
    CHECK(sb->enforcement == confine::Enforcement::partial);
    auto windows = provider_for(dir, std::string(confine::embedded_default_config()), "windows");
    CHECK(windows->selection().runner == std::optional<std::string>("appcontainer"));
    // Read-only mode reads where the command runs, which here is no Windows path.
    auto ro = windows->wrap({confine::Mode::read_only, {}, {}}, true_argv);
    REQUIRE_FALSE(ro);
    CHECK_THAT(ro.error().message, Catch::EndsWith("not an absolute Windows path: " + std::filesystem::canonical(std::filesystem::current_path()).string()));
    // Its plan speaks Windows paths only; and here its launcher is nowhere.
    auto rw = windows->wrap({confine::Mode::workspace_write, dir.path(), {}}, true_argv);
    REQUIRE_FALSE(rw);
    CHECK(rw.error().code == ErrorCode::sandbox_unavailable);
    CHECK_FALSE(windows->diagnose().usable());
}

TEST_CASE("plugin directories from configuration come before the built-in one", "[selection]") {
    test::TempDir dir;
    auto provider = confine::Provider::create(test::config_from("plugin_dirs = [\"/opt/one\", \"/opt/two\"]\n"),
                                              {.builtin_plugin_dirs = std::vector<fs::path>{dir.path()}});
    REQUIRE(provider);
    CHECK((*provider)->plugin_dirs() == std::vector<fs::path>{"/opt/one", "/opt/two", dir.path()});
    // This program is compiled without an installed plugin directory: it looks beside itself.
    auto defaulted = confine::Provider::create(test::config_from(""));
    REQUIRE(defaulted);
    REQUIRE((*defaulted)->plugin_dirs().size() == 1);
    CHECK(fs::equivalent((*defaulted)->plugin_dirs()[0], BUILTIN_PLUGIN_DIR));
}

namespace {

using test::cached_provider;

}  // namespace

TEST_CASE("usable verdicts are kept across providers, and unusable runners are asked again", "[selection][cache]") {
    test::TempDir dir, home;
    test::FakeLog log;
    for (auto n : {"unusable", "partial"}) test::install_fake(dir.path(), n);
    const fs::path cache = home / "confine" / "verdicts";
    const std::string text = chain({"unusable", "partial"});
    {
        auto first = cached_provider(dir, text, cache);
        const auto& s = first->selection();
        REQUIRE(s.usable());
        CHECK_FALSE(s.candidates[1].from_cache);
    }
    CHECK(log.count("probe partial") == 1);
    REQUIRE(fs::exists(cache));
    CHECK((fs::status(cache).permissions() & fs::perms::all) == fs::perms(0600));
    CHECK((fs::status(cache.parent_path()).permissions() & fs::perms::all) == fs::perms(0700));
    CHECK(test::read_file(cache).starts_with("confine-verdicts 3\n"));

    auto again = cached_provider(dir, text, cache);
    const auto& s = again->selection();
    REQUIRE(s.usable());
    CHECK(*s.runner == "partial");
    CHECK(s.enforcement == confine::Enforcement::partial);
    CHECK(s.candidates[1].from_cache);
    CHECK_FALSE(s.candidates[1].probed);
    CHECK(s.candidates[0].probed);  // unusable: asked again
    CHECK(log.count("probe partial") == 1);
    CHECK(log.count("probe unusable") == 2);
    // Still loaded and created: the selected runner has to wrap.
    CHECK(again->loaded_plugins() == std::vector<std::string>{"unusable", "partial"});
}

TEST_CASE("a cached verdict is not used once a program its probe ran has changed", "[selection][cache]") {
    test::TempDir dir, home, bin;
    test::FakeLog log;
    test::install_fake(dir.path(), "unusable");
    test::install_fake(dir.path(), "runner");
    const fs::path probe_program = bin / "probe-tool";
    test::write_file(probe_program, "#!/bin/sh\nexit 0\n", fs::perms(0755));
    const fs::path cache = home / "verdicts";
    const std::string text = chain({"unusable", "runner"}) + "[runner.runner]\ncommand = [\"" + probe_program.string() + "\"]\n";
    CHECK(cached_provider(dir, text, cache)->selection().usable());
    CHECK(cached_provider(dir, text, cache)->selection().usable());
    CHECK(log.count("probe runner") == 1);  // the second time from the cache
    // The same path, another program: the verdict is not the new program's.
    test::write_file(probe_program, "#!/bin/sh\n# replaced\nexit 0\n", fs::perms(0755));
    CHECK(cached_provider(dir, text, cache)->selection().usable());
    CHECK(log.count("probe runner") == 2);
    CHECK(cached_provider(dir, text, cache)->selection().usable());
    CHECK(log.count("probe runner") == 2);
    // Gone: asked again, and now unusable.
    fs::remove(probe_program);
    CHECK_FALSE(cached_provider(dir, text, cache)->selection().usable());
    CHECK(log.count("probe runner") == 3);
}

TEST_CASE("a cached verdict is not used once its plugin file, settings or time limit change", "[selection][cache]") {
    test::TempDir dir, home;
    test::FakeLog log;
    test::install_fake(dir.path(), "unusable");
    test::install_fake(dir.path(), "usable");
    const fs::path cache = home / "verdicts";
    const std::string text = chain({"unusable", "usable"});
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 1);
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 1);

    cached_provider(dir, text + "[runner.usable]\nlabel = \"changed\"\n", cache)->selection();
    CHECK(log.count("probe usable") == 2);
    cached_provider(dir, "probe_timeout_ms = 999\n" + text, cache)->selection();
    CHECK(log.count("probe usable") == 3);
    test::install_fake(dir.path(), "usable");  // a new file in its place
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 4);
    cached_provider(dir, text, cache, std::chrono::seconds(0))->selection();  // expired
    CHECK(log.count("probe usable") == 5);
    cached_provider(dir, text, cache, std::chrono::seconds(3600), true)->selection();  // refresh
    CHECK(log.count("probe usable") == 6);
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 6);
}

TEST_CASE("a verdict cache others could write, or one that is not ours, is ignored", "[selection][cache]") {
    test::TempDir dir, home;
    test::FakeLog log;
    test::install_fake(dir.path(), "unusable");
    test::install_fake(dir.path(), "usable");
    const fs::path cache = home / "verdicts";
    const std::string text = chain({"unusable", "usable"});
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 1);
    fs::permissions(cache, fs::perms(0622));
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 2);
    fs::permissions(cache, fs::perms(0600));
    fs::permissions(home.path(), fs::perms(0777));
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 3);
    fs::permissions(home.path(), fs::perms(0755));

    test::write_file(cache, "garbage\tfull\t0\tx\n", fs::perms(0600));
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 4);
    CHECK(test::read_file(cache).starts_with("confine-verdicts 3\n"));
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 4);

    // Under /tmp, where a confined command may write, whoever owns it: never read, never kept.
    const fs::path tmp = "/tmp/confine-verdicts-test-" + std::to_string(::getpid());
    fs::create_directory(tmp);
    fs::permissions(tmp, fs::perms(0700));
    fs::copy_file(cache, tmp / "verdicts");
    cached_provider(dir, text, tmp / "verdicts")->selection();
    CHECK(log.count("probe usable") == 5);
    cached_provider(dir, text, tmp / "verdicts")->selection();
    CHECK(log.count("probe usable") == 6);
    fs::remove_all(tmp);
}

TEST_CASE("a timed-out or unusable probe is never kept", "[selection][cache]") {
    test::TempDir dir, home;
    test::FakeLog log;
    for (auto n : {"hang", "unusable"}) test::install_fake(dir.path(), n);
    const fs::path cache = home / "verdicts";
    const std::string text = "probe_timeout_ms = 100\n" + chain({"hang", "unusable"}) + "[runner.hang]\ncommand = [\"/bin/sleep\", \"300\"]\n";
    CHECK_FALSE(cached_provider(dir, text, cache)->selection().usable());
    CHECK_FALSE(cached_provider(dir, text, cache)->selection().usable());
    CHECK(log.count("probe hang") == 2);
    CHECK(log.count("probe unusable") == 2);
}

namespace {

// HOME pointed at `home` while it lives.
struct HomeAt {
    std::string before;
    explicit HomeAt(const fs::path& home) {
        if (const char* h = std::getenv("HOME")) before = h;
        ::setenv("HOME", home.c_str(), 1);
    }
    ~HomeAt() { ::setenv("HOME", before.c_str(), 1); }
};

// What the fake runner was given of `prefix` ("FAKE_DENY_READ=", "FAKE_PROTECT="), in order.
std::vector<std::string> given(const confine::WrapResult& w, const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& a : w.argv)
        if (a.starts_with(prefix)) out.push_back(a.substr(prefix.size()));
    return out;
}

}  // namespace

TEST_CASE("deny_read reaches the runner resolved, from the configuration and the call, and never hides a writable root", "[selection][secrets]") {
    test::TempDir dir;
    const test::Tree fixture{false};
    const test::TempDir& tree = fixture.root;
    test::install_fake(dir.path(), "usable");
    const fs::path home = fixture.home, ws = fixture.ws;
    fs::create_directories(home / ".ssh");
    fs::create_directories(home / "real-aws");
    fs::create_directory_symlink(home / "real-aws", home / ".aws");
    test::write_file(home / ".netrc", "secret\n");
    HomeAt at(home);
    // Explicit asks, which the fake enforces partially: the file lowers what they need.
    auto provider = provider_for(dir, chain({"usable"}) + "[policy]\ndeny_read = [\"~/.ssh\", \"~/.aws\", \"~/.kube\", \"~/.netrc\", \"~/.ssh/id_rsa\"]\n"
                                                          "[policy.enforcement]\nread = \"partial\"\n");
    std::vector<std::string> argv{"true"};
    confine::Policy policy{confine::Mode::workspace_write, ws, {}};
    policy.deny_read = {tree / "extra-absent", ws / ".env"};
    test::write_file(ws / ".env", "TOKEN=x\n");
    auto wrapped = provider->wrap(confine::PolicyRequest(policy), argv);
    REQUIRE(wrapped);
    // "~" is the caller's home, and the account's own (the user database's), which holds
    // what this machine puts there; a link is judged where it leads; what does not exist
    // is skipped; one within another already denied is dropped.
    std::vector<std::string> expected;
    const passwd* pw = ::getpwuid(::geteuid());
    std::error_code ec;
    const fs::path account = pw && pw->pw_dir ? fs::canonical(pw->pw_dir, ec) : fs::path();
    for (const auto& [name, in_tree] : std::vector<std::pair<std::string, fs::path>>{
             {".ssh", home / ".ssh"}, {".aws", home / "real-aws"}, {".kube", {}}, {".netrc", home / ".netrc"}}) {
        if (!in_tree.empty()) expected.push_back(in_tree.string());
        const fs::path theirs = account.empty() || account == fs::canonical(home) ? fs::path() : fs::canonical(account / name, ec);
        if (!theirs.empty() && !ec) expected.push_back(theirs.string());
    }
    expected.push_back((ws / ".env").string());
    CHECK(given(*wrapped, "FAKE_DENY_READ=") == expected);
    CHECK(wrapped->read_asked);
    CHECK(wrapped->dimensions.read == confine::Level::partial);

    // A denied path above the workspace, or the workspace itself: an error naming both.
    for (const fs::path& bad : {tree.path(), ws}) {
        confine::Policy hiding = policy;
        hiding.deny_read = {bad};
        auto refused = provider->wrap(confine::PolicyRequest(hiding), argv);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().code == ErrorCode::invalid_policy);
        CHECK(refused.error().message == "deny_read path " + bad.string() + (bad == ws ? " is" : " holds") + " the writable root " + ws.string() +
                                             ": denying it would hide the command's own workspace; remove it from deny_read or choose another workspace");
    }
    confine::Policy relative = policy;
    relative.deny_read = {"secrets"};
    CHECK(provider->wrap(confine::PolicyRequest(relative), argv).error().message == "deny_read path must be absolute or begin with ~/: secrets");
    confine::Policy root = policy;
    root.mode = confine::Mode::read_only;
    root.workspace.clear();
    root.deny_read = {"/"};
    CHECK(provider->wrap(confine::PolicyRequest(root), argv).error().message == "deny_read path / is the whole file system");

    // Nothing to deny: the dimension is not asked.
    auto empty = provider_for(dir, chain({"usable"}) + "[policy]\ndeny_read = []\n");
    auto plain = empty->wrap({confine::Mode::workspace_write, ws, {}}, argv);
    REQUIRE(plain);
    CHECK(given(*plain, "FAKE_DENY_READ=").empty());
    CHECK_FALSE(plain->read_asked);
}

TEST_CASE("protect reaches the runner resolved in each writable root, through a .git file, and refuses a link", "[selection][secrets]") {
    test::TempDir dir, tree("/var/tmp");
    test::install_fake(dir.path(), "usable");
    const fs::path ws = tree / "ws", extra = tree / "extra", main_repo = tree / "main";
    fs::create_directories(ws / ".git" / "hooks");
    test::write_file(ws / ".git" / "config", "[core]\n");
    fs::create_directories(extra);
    // A worktree: .git is a file naming the worktree's git directory, which names the
    // repository it belongs to (commondir).
    fs::create_directories(main_repo / ".git" / "hooks");
    test::write_file(main_repo / ".git" / "config", "[core]\n");
    fs::create_directories(main_repo / ".git" / "worktrees" / "extra");
    test::write_file(main_repo / ".git" / "worktrees" / "extra" / "commondir", "../..\n");
    test::write_file(extra / ".git", "gitdir: " + (main_repo / ".git" / "worktrees" / "extra").string() + "\n");
    auto provider = provider_for(dir, chain({"usable"}));  // the default protect list
    std::vector<std::string> argv{"true"};
    confine::Policy policy{confine::Mode::workspace_write, ws, {extra, main_repo}};
    auto wrapped = provider->wrap(confine::PolicyRequest(policy), argv);
    REQUIRE(wrapped);
    // Then what an entry under .git adds, each root's repositories whole (git_guard.hpp):
    // here the worktrees directory, and the worktree's commondir.
    const std::vector<std::string> git_set{(main_repo / ".git" / "worktrees").string(), (main_repo / ".git" / "worktrees" / "extra" / "commondir").string()};
    auto expected = std::vector<std::string>{(ws / ".git" / "hooks").string(), (extra / ".git").string(), (main_repo / ".git" / "hooks").string(),
                                             (ws / ".git" / "config").string(), (main_repo / ".git" / "config").string()};
    expected.insert(expected.end(), git_set.begin(), git_set.end());
    CHECK(given(*wrapped, "FAKE_PROTECT=") == expected);
    CHECK(wrapped->protect_asked);
    // The fake's default is none: the host puts the paths back after the run instead.
    CHECK(wrapped->own_protect == confine::Level::none);
    CHECK(wrapped->protect_restored);
    CHECK(wrapped->dimensions.protect == confine::Level::partial);
    REQUIRE(wrapped->protect_watch);

    // A commondir that is a FIFO (planted by a previous run) is not read, and holds nothing
    // up: it is held where it is, as the file it replaced was.
    fs::remove(main_repo / ".git" / "worktrees" / "extra" / "commondir");
    REQUIRE(::mkfifo((main_repo / ".git" / "worktrees" / "extra" / "commondir").c_str(), 0644) == 0);
    auto fifo = provider->wrap(confine::PolicyRequest(policy), argv);
    REQUIRE(fifo);
    CHECK(given(*fifo, "FAKE_PROTECT=") == expected);

    // Read-only mode: nothing is writable, nothing needs protecting.
    auto read_only = provider->wrap({confine::Mode::read_only, {}, {}}, argv);
    REQUIRE(read_only);
    CHECK(given(*read_only, "FAKE_PROTECT=").empty());
    CHECK_FALSE(read_only->protect_asked);

    // A protected path reached through a link inside the root: the command could replace
    // the link, so the run is refused.
    fs::remove_all(ws / ".git" / "hooks");
    fs::create_directories(tree / "shared-hooks");
    fs::create_directory_symlink(tree / "shared-hooks", ws / ".git" / "hooks");
    auto linked = provider->wrap(confine::PolicyRequest(policy), argv);
    REQUIRE_FALSE(linked);
    CHECK(linked.error().code == ErrorCode::invalid_policy);
    CHECK(linked.error().message == "cannot protect " + (ws / ".git" / "hooks").string() + ": " + (ws / ".git" / "hooks").string() +
                                        " is a symbolic link, which the command could replace; remove the link or the protect entry");
    fs::remove(ws / ".git" / "hooks");
    confine::Policy climbing{confine::Mode::workspace_write, ws, {}};
    climbing.protect = {"../x"};
    CHECK(provider->wrap(confine::PolicyRequest(climbing), argv).error().message == "protect path must not climb out of its root with '..': ../x");
}

TEST_CASE("a protect minimum of full skips a runner whose protected paths are put back after the run, and fails closed without another",
          "[selection][secrets]") {
    test::TempDir dir;
    for (auto n : {"usable", "partial"}) test::install_fake(dir.path(), n);
    const std::string runners = chain({"usable", "partial"}) + "[runner.partial]\nprotect = \"full\"\n";
    auto lenient = provider_for(dir, runners);
    CHECK(lenient->selection().runner == std::optional<std::string>("usable"));
    auto strict = provider_for(dir, runners + "[policy.enforcement]\nprotect = \"full\"\n");
    const auto& s = strict->selection();
    REQUIRE(s.usable());
    CHECK(*s.runner == "partial");
    CHECK(s.candidates[0].verdict->reason == "runner 'usable' enforces protect at level partial, below the minimum full ([policy.enforcement] protect)");
    auto alone = provider_for(dir, chain({"usable"}) + "[policy.enforcement]\nprotect = \"full\"\n");
    test::TempDir ws("/var/tmp");
    fs::create_directories(ws / ".git" / "hooks");
    auto unprotected = alone->wrap({confine::Mode::workspace_write, ws.path(), {}}, true_argv);
    REQUIRE_FALSE(unprotected);
    CHECK(unprotected.error().message == "runner 'usable' enforces protect at level partial, below the minimum full ([policy.enforcement] protect)");
    // The same for read: a runner that says none of it is below the default minimum.
    auto unread = provider_for(dir, chain({"usable"}) + "[runner.usable]\nread = \"none\"\n");
    test::TempDir tree("/var/tmp");
    fs::create_directories(tree / "ws");
    test::write_file(tree / "secret", "x");
    confine::Policy policy{confine::Mode::workspace_write, tree / "ws", {}};
    policy.deny_read = {tree / "secret"};
    auto refused = unread->wrap(confine::PolicyRequest(policy), true_argv);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::sandbox_unavailable);
    CHECK(refused.error().message == "runner 'usable' enforces read at level none, below the minimum partial ([policy.enforcement] read)");
}

TEST_CASE("a configuration error fails the selection and every wrap with its own error, wherever it is, never falling back", "[selection][config]") {
    test::TempDir dir;
    for (auto n : {"usable", "partial"}) test::install_fake(dir.path(), n);
    // A table the selected runner rejects, and one of a runner later in the chain, which
    // the chain would never have loaded.
    for (const std::string table : {"[runner.usable]\ncolour = 1\n", "[runner.partial]\ncolour = 1\n"}) {
        INFO(table);
        test::FakeLog log;
        auto provider = provider_for(dir, chain({"usable", "partial"}) + table);
        const auto& s = provider->selection();
        CHECK_FALSE(s.usable());
        REQUIRE(s.failure);
        CHECK(s.failure->code == ErrorCode::plugin_create_failed);
        CHECK(confine::is_configuration_error(s.failure->code));
        CHECK_THAT(s.failure->message, Catch::StartsWith("test.toml:4:1: runner.") && Catch::Contains("unknown setting 'colour'"));
        CHECK(log.count("probe usable") == 0);
        auto wrapped = provider->wrap({confine::Mode::read_only, {}, {}}, true_argv);
        REQUIRE_FALSE(wrapped);
        CHECK(wrapped.error().code == ErrorCode::plugin_create_failed);
        CHECK(wrapped.error().message == s.failure->message);
        // What check-config asks says the same.
        const auto judged = confine::judge_runner_settings(provider->config(), provider->plugin_dirs(), "linux");
        REQUIRE(judged.error);
        CHECK(judged.error->message == s.failure->message);
    }
    // A runner provided by two files, even one the chain would not reach.
    test::TempDir other;
    test::install_fake(other.path(), "partial");
    auto twice = confine::Provider::create(test::config_from(chain({"usable", "partial"})),
                                           {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{dir.path(), other.path()}});
    REQUIRE(twice);
    const auto& t = (*twice)->selection();
    CHECK_FALSE(t.usable());
    REQUIRE(t.failure);
    CHECK(t.failure->code == ErrorCode::plugin_duplicate);
    CHECK_THAT(t.failure->message, Catch::StartsWith("runner 'partial' is provided by more than one file: "));
    // A table of a runner not installed here is noted, not an error; a chain runner that
    // is not installed is skipped, as ever.
    auto absent = provider_for(dir, chain({"ghost", "usable"}) + "[runner.ghost]\nx = 1\n");
    CHECK(absent->selection().runner == std::optional<std::string>("usable"));
    const auto judged = confine::judge_runner_settings(absent->config(), absent->plugin_dirs(), "linux");
    CHECK_FALSE(judged.error);
    CHECK(judged.unchecked == std::vector<std::string>{"test.toml:3:1: runner.ghost: no plugin here to check its settings against"});
}

TEST_CASE("an explicit deny_read or protect that the runner cannot enforce fails closed naming it, unless the file lowers the minimum",
          "[selection][secrets][config]") {
    test::TempDir dir, tree("/var/tmp");
    for (auto n : {"usable", "partial"}) test::install_fake(dir.path(), n);
    const fs::path ws = tree / "ws";
    fs::create_directories(ws / ".git" / "hooks");
    test::write_file(ws / ".env", "TOKEN=x\n");
    test::write_file(ws / "ci.yml", "steps: []\n");
    confine::Policy deny{confine::Mode::workspace_write, ws, {}};
    deny.deny_read = {ws / ".env"};
    confine::Policy protect{confine::Mode::workspace_write, ws, {}};
    protect.protect = {ws / "ci.yml"};
    // The fake says read partial and protect none.
    auto provider = provider_for(dir, chain({"usable"}));
    auto refused = provider->wrap(confine::PolicyRequest(deny), true_argv);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::sandbox_unavailable);
    CHECK(refused.error().message == "runner 'usable' cannot keep " + (ws / ".env").string() +
                                         " unreadable, which the run's deny_read (--deny-read) asks explicitly: it enforces read there at level "
                                         "partial ([policy.enforcement] read = \"partial\" would accept it)");
    auto kept = provider->wrap(confine::PolicyRequest(protect), true_argv);
    REQUIRE_FALSE(kept);
    CHECK(kept.error().message == "runner 'usable' cannot keep " + (ws / "ci.yml").string() +
                                      " read-only, which the run's protect (--protect) asks explicitly: it enforces protect there at level "
                                      "none ([policy.enforcement] protect = \"best-effort\" would accept it)");
    // The default lists (.git/hooks here) are no explicit ask: the ordinary minimums apply.
    auto defaults = provider->wrap({confine::Mode::workspace_write, ws, {}}, true_argv);
    REQUIRE(defaults);
    CHECK(defaults->protect_asked);
    CHECK(defaults->dimensions.protect == confine::Level::partial);  // put back after the run by the host
    CHECK(defaults->protect_restored);
    // An entry the configuration file writes is explicit, named where it is written.
    auto written = provider_for(dir, chain({"usable"}) + "[policy]\ndeny_read = [\"" + (ws / ".env").string() + "\"]\n");
    auto from_file = written->wrap({confine::Mode::workspace_write, ws, {}}, true_argv);
    REQUIRE_FALSE(from_file);
    CHECK_THAT(from_file.error().message, Catch::Contains(" unreadable, which test.toml:4:") && Catch::Contains(": policy.deny_read asks explicitly"));
    // Lowered by the file: accepted, and reported.
    auto lowered = provider_for(dir, chain({"usable"}) + "[policy.enforcement]\nread = \"partial\"\nprotect = \"best-effort\"\n");
    auto accepted = lowered->wrap(confine::PolicyRequest(deny), true_argv);
    REQUIRE(accepted);
    CHECK(accepted->dimensions.read == confine::Level::partial);
    CHECK(lowered->wrap(confine::PolicyRequest(protect), true_argv));
    // In a chain, a later runner that can enforce it wraps the call instead.
    auto chained = provider_for(dir, chain({"usable", "partial"}) + "[runner.partial]\nread = \"full\"\nprotect = \"full\"\n");
    CHECK(chained->selection().runner == std::optional<std::string>("usable"));
    auto instead = chained->wrap(confine::PolicyRequest(deny), true_argv);
    REQUIRE(instead);
    CHECK(instead->runner == "partial");
    CHECK(instead->dimensions.read == confine::Level::full);
    auto plain = chained->wrap({confine::Mode::workspace_write, ws, {}}, true_argv);
    REQUIRE(plain);
    CHECK(plain->runner == "usable");
    // And the file's explicit asks skip the runner at selection.
    auto skipping = provider_for(dir, chain({"usable", "partial"}) + "[runner.partial]\nread = \"full\"\nprotect = \"full\"\n[policy]\nprotect = [\"ci.yml\"]\n");
    const auto& s = skipping->selection();
    CHECK(s.runner == std::optional<std::string>("partial"));
    CHECK_THAT(s.candidates.at(0).verdict->reason, Catch::Contains("asks protect explicitly"));
}

TEST_CASE("run() and spawn() return a configuration error as it is, and run nothing on any runner", "[selection][config]") {
    test::TempDir dir, tree("/var/tmp");
    for (auto n : {"usable", "partial"}) test::install_fake(dir.path(), n);
    // The selected runner is fine; a later one's table is not.
    auto provider = provider_for(dir, chain({"usable", "partial"}) + "[runner.partial]\ncolour = 1\n");
    const fs::path marker = tree / "ran";
    const std::vector<std::string> argv{"/usr/bin/touch", marker.string()};
    const confine::Policy policy{confine::Mode::workspace_write, tree.path(), {}};
    auto ran = confine::run(*provider, confine::PolicyRequest(policy), argv);
    REQUIRE_FALSE(ran);
    CHECK(ran.error().code == ErrorCode::plugin_create_failed);
    CHECK_THAT(ran.error().message, Catch::StartsWith("test.toml:4:1: runner.partial: unknown setting 'colour'"));
    auto spawned = confine::spawn(*provider, confine::PolicyRequest(policy), argv);
    REQUIRE_FALSE(spawned);
    CHECK(spawned.error().message == ran.error().message);
    CHECK_FALSE(fs::exists(marker));
}

// A runner that does not apply Policy::read_scope (the fake, as a plugin older than ABI
// 1.12) is given the scope again as deny_read entries: everything beside the way to a
// readable place, and its read level is the scope's.
TEST_CASE("a runner that does not apply the read scope gets it as deny_read entries, its read level the scope's", "[selection][secrets]") {
    test::TempDir dir, tree("/var/tmp");
    test::install_fake(dir.path(), "usable");
    const fs::path ws = tree / "ws";
    fs::create_directories(ws);
    fs::create_directories(tree / "beside");
    fs::create_directories(tree / "tools");
    test::write_file(tree / "note.txt", "x");
    auto provider = provider_for(dir, chain({"usable"}) + "[policy]\nread = \"scoped\"\nread_roots = [\"" + (tree / "tools").string() + "\"]\n");
    std::vector<std::string> argv{"true"};
    auto wrapped = provider->wrap({confine::Mode::workspace_write, ws, {}}, argv);
    REQUIRE(wrapped);
    CHECK(wrapped->read_scoped);
    CHECK(wrapped->dimensions.read_scope == wrapped->dimensions.read);
    const auto denied = given(*wrapped, "FAKE_DENY_READ=");
    auto has = [&](const fs::path& p) { return std::find(denied.begin(), denied.end(), p.string()) != denied.end(); };
    CHECK(has(tree / "beside"));
    CHECK(has(tree / "note.txt"));
    CHECK_FALSE(has(tree / "tools"));  // a read root
    CHECK_FALSE(has(ws));
    CHECK_FALSE(has("/usr"));
    CHECK_FALSE(has("/var/tmp"));  // on the way: walked, not hidden
    // Not scoped: none of it.
    auto open = provider_for(dir, chain({"usable"}))->wrap({confine::Mode::workspace_write, ws, {}}, argv);
    REQUIRE(open);
    CHECK_FALSE(open->read_scoped);
    const auto unscoped = given(*open, "FAKE_DENY_READ=");
    CHECK(std::find(unscoped.begin(), unscoped.end(), (tree / "beside").string()) == unscoped.end());
}
