#include "support.hpp"

#include <confine/sdk/abi.h>
#include <confine/plugins.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <sstream>

using confine::ErrorCode;
namespace fs = std::filesystem;

namespace {

confine::Error load_error(const fs::path& file, const std::string& runner) {
    auto plugin = confine::load_plugin(file, runner);
    if (plugin) FAIL(file << " was loaded");
    return plugin.error();
}

std::unique_ptr<confine::PluginRunner> runner_from(const fs::path& file, const std::string& runner,
                                             const confine::RunnerTable* settings = nullptr) {
    auto plugin = confine::load_plugin(file, runner);
    REQUIRE(plugin);
    auto r = (*plugin)->create_runner(settings);
    if (!r) FAIL(r.error().message);
    return std::move(*r);
}

}  // namespace

TEST_CASE("plugin file names carry their runner name", "[loader]") {
    CHECK(confine::plugin_file_name("landlock") == "confine-runner-landlock.so");
    CHECK(confine::runner_name_from_file("/x/confine-runner-bwrap.so") == "bwrap");
    CHECK(confine::runner_name_from_file("/x/confine-runner-.so").empty());
    CHECK(confine::runner_name_from_file("/x/confine-runner-Bad.so").empty());
    CHECK(confine::runner_name_from_file("/x/libfoo.so").empty());
}

TEST_CASE("a well-formed plugin loads and describes itself", "[loader]") {
    test::TempDir dir;
    auto file = test::install_fake(dir.path(), "usable");
    auto plugin = confine::load_plugin(file, "usable");
    REQUIRE(plugin);
    const auto& info = (*plugin)->info();
    CHECK(info.runner_name == "usable");
    CHECK(info.version == "9.9.9");
    CHECK(info.summary == "fake runner for tests");
    CHECK(info.abi_major == CONFINE_ABI_MAJOR);
    CHECK(info.abi_minor == CONFINE_ABI_MINOR);
    CHECK(info.file == file);
}

TEST_CASE("a plugin missing its exports is refused, naming the file and the symbols", "[loader][abi]") {
    test::TempDir dir;
    auto none = load_error(test::install_fake(dir.path(), "no-exports"), "no-exports");
    CHECK(none.code == ErrorCode::plugin_missing_export);
    CHECK(none.message == (dir / "confine-runner-no-exports.so").string() + ": missing exported symbol(s): confine_plugin_abi, confine_plugin");
    auto no_abi = load_error(test::install_fake(dir.path(), "no-abi"), "no-abi");
    CHECK(no_abi.message == (dir / "confine-runner-no-abi.so").string() + ": missing exported symbol(s): confine_plugin_abi");
    auto no_desc = load_error(test::install_fake(dir.path(), "no-desc"), "no-desc");
    CHECK(no_desc.message == (dir / "confine-runner-no-desc.so").string() + ": missing exported symbol(s): confine_plugin");
}

TEST_CASE("a plugin of another ABI major version is refused before any of its code runs", "[loader][abi]") {
    test::TempDir dir;
    test::FakeLog log;
    auto e = load_error(test::install_fake(dir.path(), "wrong-major"), "wrong-major");
    CHECK(e.code == ErrorCode::plugin_abi_major_mismatch);
    CHECK(e.message == (dir / "confine-runner-wrong-major.so").string() + ": plugin ABI 2." + std::to_string(CONFINE_ABI_MINOR) + " has a different major version than this host's 1." + std::to_string(CONFINE_ABI_MINOR));
    CHECK(log.count("load wrong-major") == 0);
}

TEST_CASE("a plugin built for a newer ABI minor version is refused", "[loader][abi]") {
    test::TempDir dir;
    test::FakeLog log;
    auto e = load_error(test::install_fake(dir.path(), "newer-minor"), "newer-minor");
    CHECK(e.code == ErrorCode::plugin_abi_minor_newer);
    CHECK(e.message == (dir / "confine-runner-newer-minor.so").string() + ": plugin ABI 1." + std::to_string(CONFINE_ABI_MINOR + 1) + " is newer than this host's 1." + std::to_string(CONFINE_ABI_MINOR));
    CHECK(log.count("load newer-minor") == 0);
}

TEST_CASE("a plugin whose descriptor size is unknown is refused", "[loader][abi]") {
    test::TempDir dir;
    test::FakeLog log;
    auto e = load_error(test::install_fake(dir.path(), "oversized"), "oversized");
    CHECK(e.code == ErrorCode::plugin_descriptor_size_unknown);
    const auto size = sizeof(confine_plugin_descriptor);
    CHECK(e.message == (dir / "confine-runner-oversized.so").string() + ": descriptor size " + std::to_string(size + 64) + " (declared " +
                           std::to_string(size + 64) + ") is not the size " + std::to_string(size) + " of ABI 1." + std::to_string(CONFINE_ABI_MINOR));
    CHECK(log.count("load oversized") == 0);
}

TEST_CASE("a plugin without the ABI marker is refused", "[loader][abi]") {
    test::TempDir dir;
    auto e = load_error(test::install_fake(dir.path(), "bad-magic"), "bad-magic");
    CHECK(e.code == ErrorCode::plugin_missing_export);
    CHECK_THAT(e.message, Catch::EndsWith("exports confine_plugin_abi without the confine ABI marker"));
}

TEST_CASE("a plugin whose descriptor names another runner than its file is refused", "[loader]") {
    test::TempDir dir;
    auto e = load_error(test::install_fake(dir.path(), "mismatch"), "mismatch");
    CHECK(e.code == ErrorCode::plugin_name_mismatch);
    CHECK(e.message == (dir / "confine-runner-mismatch.so").string() + ": descriptor names runner 'other' but the file name says 'mismatch'");
}

TEST_CASE("a file that is not a shared object is refused", "[loader]") {
    test::TempDir dir;
    test::write_file(dir / "confine-runner-text.so", "#!/bin/sh\necho not a library\n", fs::perms(0755));
    auto e = load_error(dir / "confine-runner-text.so", "text");
    CHECK(e.code == ErrorCode::plugin_load_failed);
    CHECK(e.message == (dir / "confine-runner-text.so").string() + ": cannot load: not an ELF shared object");
}

TEST_CASE("a plugin file writable by group or others is refused", "[loader][trust]") {
    test::TempDir dir;
    auto file = test::install_fake(dir.path(), "usable");
    fs::permissions(file, fs::perms(0775));
    auto group = load_error(file, "usable");
    CHECK(group.code == ErrorCode::plugin_untrusted);
    CHECK(group.message == file.string() + ": refusing plugin: " + file.string() + " is writable by its group (mode 0775)");
    fs::permissions(file, fs::perms(0757));
    CHECK(load_error(file, "usable").message == file.string() + ": refusing plugin: " + file.string() + " is writable by others (mode 0757)");
}

TEST_CASE("a plugin file without its execute permission is refused, saying so", "[loader][trust]") {
    test::TempDir dir;
    auto file = test::install_fake(dir.path(), "usable");
    fs::permissions(file, fs::perms(0644));
    auto e = load_error(file, "usable");
    CHECK(e.code == ErrorCode::plugin_not_executable);
    CHECK(e.message == file.string() + ": refusing plugin: it is not executable (mode 0644)");
    CHECK(confine::error_code_name(e.code) == "PLUGIN_NOT_EXECUTABLE");
}

TEST_CASE("a plugin in a directory writable by others is refused", "[loader][trust]") {
    test::TempDir dir;
    fs::create_directories(dir / "open");
    auto file = test::install_fake(dir / "open", "usable");
    fs::permissions(dir / "open", fs::perms(0777));
    auto e = load_error(file, "usable");
    CHECK(e.code == ErrorCode::plugin_untrusted);
    CHECK(e.message == file.string() + ": refusing plugin: " + (dir / "open").string() + " is writable by others (mode 0777)");
    // Sticky does not help the plugin's own directory: others could still add files.
    fs::permissions(dir / "open", fs::perms(01777));
    CHECK(load_error(file, "usable").code == ErrorCode::plugin_untrusted);
}

TEST_CASE("a plugin below a group-writable ancestor directory is refused", "[loader][trust]") {
    test::TempDir dir;
    fs::create_directories(dir / "shared" / "plugins");
    auto file = test::install_fake(dir / "shared" / "plugins", "usable");
    fs::permissions(dir / "shared", fs::perms(0775));
    auto e = load_error(file, "usable");
    CHECK(e.message == file.string() + ": refusing plugin: " + (dir / "shared").string() + " is writable by its group (mode 0775)");
}

TEST_CASE("a plugin reached through a symlink is judged where it really lives", "[loader][trust]") {
    test::TempDir dir;
    fs::create_directories(dir / "open");
    fs::create_directories(dir / "plugins");
    auto real = test::install_fake(dir / "open", "usable");
    fs::permissions(dir / "open", fs::perms(0777));
    fs::create_symlink(real, dir / "plugins" / "confine-runner-usable.so");
    auto e = load_error(dir / "plugins" / "confine-runner-usable.so", "usable");
    CHECK(e.code == ErrorCode::plugin_untrusted);
    CHECK_THAT(e.message, Catch::Contains((dir / "open").string() + " is writable by others"));
}

TEST_CASE("a plugin path through a linked directory, or with '..' after a link, is judged where it resolves", "[loader][trust]") {
    test::TempDir dir;
    fs::create_directories(dir / "open" / "plugins" / "deeper");
    test::install_fake(dir / "open" / "plugins", "usable");
    fs::permissions(dir / "open", fs::perms(0777));
    test::install_fake(dir.path(), "usable");  // where '..' would lead if read lexically: trusted
    fs::create_directory_symlink(dir / "open" / "plugins", dir / "linked");
    fs::create_directory_symlink(dir / "open" / "plugins" / "deeper", dir / "deep");
    for (const fs::path& path : {dir / "linked" / "confine-runner-usable.so", dir / "deep" / ".." / "confine-runner-usable.so"}) {
        INFO(path);
        auto e = load_error(path, "usable");
        CHECK(e.code == ErrorCode::plugin_untrusted);
        CHECK_THAT(e.message, Catch::Contains((dir / "open").string() + " is writable by others"));
    }
}

TEST_CASE("a plugin owned by another non-root user is refused", "[loader][trust]") {
    if (::geteuid() != 0) test::skip_test("needs root to give a file to another user");
    test::TempDir dir;
    auto file = test::install_fake(dir.path(), "usable");
    REQUIRE(::chown(file.c_str(), 65534, 65534) == 0);
    auto e = load_error(file, "usable");
    CHECK(e.code == ErrorCode::plugin_untrusted);
    CHECK(e.message == file.string() + ": refusing plugin: " + file.string() + " is owned by uid 65534, neither root nor the current user");
    REQUIRE(::chown(file.c_str(), 0, 0) == 0);
    REQUIRE(::chown(dir.path().c_str(), 65534, 65534) == 0);
    CHECK(load_error(file, "usable").message ==
          file.string() + ": refusing plugin: " + dir.path().string() + " is owned by uid 65534, neither root nor the current user");
}

TEST_CASE("one runner name in two plugin directories is an error naming both files", "[loader]") {
    test::TempDir a, b;
    test::install_fake(a.path(), "usable");
    test::install_fake(b.path(), "usable");
    confine::PluginSearch search({a.path(), b.path()});
    auto located = search.locate("usable");
    REQUIRE_FALSE(located);
    CHECK(located.error().code == ErrorCode::plugin_duplicate);
    CHECK(located.error().message == "runner 'usable' is provided by more than one file: " + (a / "confine-runner-usable.so").string() +
                                         ", " + (b / "confine-runner-usable.so").string());
    auto entries = search.scan();
    REQUIRE(entries.size() == 2);
    for (const auto& e : entries) {
        REQUIRE_FALSE(e.loaded);
        CHECK(e.loaded.error().code == ErrorCode::plugin_duplicate);
    }
}

TEST_CASE("one directory listed twice is not a duplicate", "[loader]") {
    test::TempDir a;
    test::install_fake(a.path(), "usable");
    confine::PluginSearch search({a.path(), a.path() / "." });
    auto located = search.locate("usable");
    REQUIRE(located);
    CHECK(*located == a / "confine-runner-usable.so");
}

TEST_CASE("a runner with no plugin file names the directories searched", "[loader]") {
    test::TempDir a;
    confine::PluginSearch search({a.path()});
    auto located = search.locate("ghost");
    REQUIRE_FALSE(located);
    CHECK(located.error().code == ErrorCode::plugin_not_found);
    CHECK(located.error().message == "no plugin for runner 'ghost': confine-runner-ghost.so is in none of " + a.path().string());
}

TEST_CASE("scanning reports every plugin and every refusal", "[loader]") {
    test::TempDir dir;
    test::install_fake(dir.path(), "usable");
    test::install_fake(dir.path(), "wrong-major");
    test::write_file(dir / "README", "not a plugin");
    auto entries = confine::PluginSearch({dir.path()}).scan();
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].runner_name == "usable");
    CHECK(entries[0].loaded);
    CHECK(entries[1].runner_name == "wrong-major");
    REQUIRE_FALSE(entries[1].loaded);
    CHECK(entries[1].loaded.error().code == ErrorCode::plugin_abi_major_mismatch);
}

TEST_CASE("an exception inside an SDK plugin becomes an error, not a crash", "[loader][abi]") {
    test::TempDir dir;
    auto runner = runner_from(test::install_fake(dir.path(), "thrower"), "thrower");
    auto verdict = runner->probe(2000);
    CHECK_FALSE(verdict.usable());
    CHECK(verdict.reason == "probe failed: runner plugin threw an exception: fake probe exploded");
    std::vector<std::string> argv{"true"};
    auto wrapped = runner->wrap({confine::Mode::read_only, {}, {}}, argv);
    REQUIRE_FALSE(wrapped);
    CHECK(wrapped.error().code == ErrorCode::plugin_call_failed);
    CHECK_THAT(wrapped.error().message, Catch::EndsWith("wrap failed: runner plugin threw an exception: fake wrap exploded"));
}

TEST_CASE("an exception thrown straight through the C ABI is caught by the host", "[loader][abi]") {
    test::TempDir dir;
    auto runner = runner_from(test::install_fake(dir.path(), "raw-throw"), "raw-throw");
    auto verdict = runner->probe(2000);
    CHECK_FALSE(verdict.usable());
    CHECK(verdict.reason == "plugin threw an exception across the ABI boundary during its probe");
}

TEST_CASE("a plugin written against the C ABI alone works", "[loader][abi]") {
    test::TempDir dir;
    auto runner = runner_from(test::install_fake(dir.path(), "raw-ok"), "raw-ok");
    auto verdict = runner->probe(2000);
    CHECK(verdict.kind == confine::Verdict::Kind::full);
    CHECK(verdict.reason == "raw ok");
    std::vector<std::string> argv{"true"};
    auto wrapped = runner->wrap({confine::Mode::read_only, {}, {}}, argv);
    REQUIRE_FALSE(wrapped);
    CHECK_THAT(wrapped.error().message, Catch::EndsWith("wrap failed: raw cannot wrap"));
}

TEST_CASE("runner settings reach the plugin, which rejects keys it does not know", "[loader]") {
    test::TempDir dir;
    auto file = test::install_fake(dir.path(), "usable");
    auto good = test::config_from("[runner.usable]\nlabel = \"from settings\"\n");
    auto runner = runner_from(file, "usable", &good.runners.at("usable"));
    CHECK(runner->probe(2000).reason == "from settings");

    auto bad = test::config_from("\n[runner.usable]\nbogus = 1\n");
    auto plugin = confine::load_plugin(file, "usable");
    REQUIRE(plugin);
    auto refused = (*plugin)->create_runner(&bad.runners.at("usable"));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::plugin_create_failed);
    CHECK(refused.error().message == "test.toml:3:1: runner.usable: unknown setting 'bogus' (plugin " + file.string() + ")");
}

TEST_CASE("a setting a runner refuses is reported at its own key's line and column", "[loader]") {
    test::TempDir dir;
    // Why the fake `runner` refuses to be created with the configuration `text`.
    auto refusal = [&](const std::string& runner, const std::string& text) {
        auto plugin = confine::load_plugin(test::install_fake(dir.path(), runner), runner);
        REQUIRE(plugin);
        auto cfg = test::config_from(text);
        auto refused = (*plugin)->create_runner(&cfg.runners.at(runner));
        REQUIRE_FALSE(refused);
        return refused.error().message;
    };
    CHECK(refusal("usable", "probe_timeout_ms = 2000\n\n[runner.usable]\nlabel = \"x\"\n\n  flag   = \"yes\"\ncount = 1\n") ==
          "test.toml:6:3: runner.usable: setting 'flag' must be a boolean, not a string (plugin " + (dir / "confine-runner-usable.so").string() + ")");
    // An error that names no key stays at the table: a plugin older than ABI 1.9 names none.
    CHECK(refusal("abi-1-0", "\n[runner.abi-1-0]\nlabel = 1\nrefuse = true\n") ==
          "test.toml:2:1: runner.abi-1-0: setting 'refuse' refused (plugin " + (dir / "confine-runner-abi-1-0.so").string() + ")");
}

TEST_CASE("a wrap result carries argv, enforcement, denial signatures and the failure rule", "[loader]") {
    test::TempDir dir;
    auto runner = runner_from(test::install_fake(dir.path(), "partial"), "partial");
    std::vector<std::string> argv{"sh", "-c", "echo \"$1\"", "--", "a b"};
    auto wrapped = runner->wrap({confine::Mode::workspace_write, "/work space", {"/extra"}}, argv);
    REQUIRE(wrapped);
    CHECK(wrapped->runner == "partial");
    CHECK(wrapped->argv == std::vector<std::string>{"/usr/bin/env", "FAKE_RUNNER=partial", "FAKE_MODE=workspace-write:/work space",
                                                    "FAKE_WRITABLE=/extra", "--", "sh", "-c", "echo \"$1\"", "--", "a b"});
    CHECK(wrapped->enforcement == confine::Enforcement::partial);
    CHECK(wrapped->denial_signatures == std::vector<std::string>{"fake denied"});
    CHECK(wrapped->failure_rule.evidence_exit_codes == std::vector<std::int32_t>{125});
    CHECK(wrapped->failure_rule.fatal_signatures == std::vector<std::string>{"fake-runner: "});
    CHECK(wrapped->failure_rule.informational_lines == std::vector<std::string>{"fake-runner: note"});
}

TEST_CASE("a wrap that does not pass the command verbatim after -- is refused", "[loader][security]") {
    test::TempDir dir;
    auto runner = runner_from(test::install_fake(dir.path(), "bad-wrap"), "bad-wrap");
    std::vector<std::string> argv{"true"};
    auto wrapped = runner->wrap({confine::Mode::read_only, {}, {}}, argv);
    REQUIRE_FALSE(wrapped);
    CHECK(wrapped.error().code == ErrorCode::plugin_bad_result);
    CHECK_THAT(wrapped.error().message, Catch::EndsWith("wrap result does not end with \"--\" and the command verbatim"));
}

TEST_CASE("the host runs a probe command and hands back its status and output", "[loader][host]") {
    test::TempDir dir;
    auto file = test::install_fake(dir.path(), "runner");
    auto cfg = test::config_from(R"([runner.runner]
command = ["/bin/sh", "-c", "echo out; echo err >&2; exit 0"]
)");
    CHECK(runner_from(file, "runner", &cfg.runners.at("runner"))->probe(5000).reason ==
          "spawned=1 errno=0 exit=0 signal=0 timed_out=0 stdout=out\n stderr=err\n");
    auto failing = test::config_from("[runner.runner]\ncommand = [\"/bin/sh\", \"-c\", \"exit 3\"]\n");
    auto v = runner_from(file, "runner", &failing.runners.at("runner"))->probe(5000);
    CHECK_FALSE(v.usable());
    CHECK(v.reason == "spawned=1 errno=0 exit=3 signal=0 timed_out=0 stdout= stderr=");
    auto missing = test::config_from("[runner.runner]\ncommand = [\"/nonexistent/prog\"]\n");
    CHECK(runner_from(file, "runner", &missing.runners.at("runner"))->probe(5000).reason ==
          "spawned=0 errno=2 exit=-1 signal=0 timed_out=0 stdout= stderr=");
    auto by_name = test::config_from("[runner.runner]\ncommand = [\"true\"]\n");
    CHECK(runner_from(file, "runner", &by_name.runners.at("runner"))->probe(5000).usable());
}

TEST_CASE("the host canonicalises paths for plugins", "[loader][host]") {
    test::TempDir dir;
    auto file = test::install_fake(dir.path(), "canonical");
    fs::create_directories(dir / "real");
    fs::create_directory_symlink(dir / "real", dir / "link");
    auto cfg = test::config_from("[runner.canonical]\npath = \"" + (dir / "link" / ".." / "link").string() + "\"\n");
    CHECK(runner_from(file, "canonical", &cfg.runners.at("canonical"))->probe(2000).reason == fs::canonical(dir / "real").string());
    auto missing = test::config_from("[runner.canonical]\npath = \"" + (dir / "absent").string() + "\"\n");
    auto v = runner_from(file, "canonical", &missing.runners.at("canonical"))->probe(2000);
    CHECK_FALSE(v.usable());
    CHECK_THAT(v.reason, Catch::StartsWith("canonicalize failed: " + (dir / "absent").string() + ": "));
}

TEST_CASE("a probe command that hangs is killed with its whole process group", "[loader][host]") {
    test::TempDir dir;
    auto file = test::install_fake(dir.path(), "hang");
    const fs::path pids = dir / "pids";
    auto cfg = test::config_from("[runner.hang]\ncommand = [\"/bin/sh\", \"-c\", \"echo $$ > " + pids.string() +
                                 "; sleep 300 & echo $! >> " + pids.string() + "; wait\"]\n");
    auto v = runner_from(file, "hang", &cfg.runners.at("hang"))->probe(300);
    CHECK_FALSE(v.usable());
    CHECK(v.reason == "probe timed out after 300 ms");
    std::istringstream in(test::read_file(pids));
    int shell = 0, sleeper = 0;
    in >> shell >> sleeper;
    REQUIRE(shell > 0);
    REQUIRE(sleeper > 0);
    // Gone, or at most a zombie waiting for its reaper: neither can run any more.
    auto alive = [](int pid) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string line;
        if (!std::getline(stat, line)) return false;
        auto close = line.rfind(')');
        return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
    };
    for (int i = 0; i < 200 && alive(sleeper); ++i) ::usleep(10000);
    CHECK_FALSE(alive(shell));
    CHECK_FALSE(alive(sleeper));
}

TEST_CASE("a probe that hangs inside the plugin itself is abandoned at its limit", "[loader][host]") {
    test::TempDir dir;
    auto runner = runner_from(test::install_fake(dir.path(), "inside-hang"), "inside-hang");
    auto v = runner->probe(200);
    CHECK_FALSE(v.usable());
    CHECK(v.reason == "probe timed out after 200 ms");
}

TEST_CASE("the appcontainer runner away from Windows: unusable, and no POSIX path in its plan", "[loader][builtin]") {
    test::TempDir dir;
    auto runner = test::builtin_runner(dir.path(), "appcontainer");
    auto v = runner->probe(2000);
    CHECK(v.kind == confine::Verdict::Kind::unusable);
    CHECK(v.reason == "appcontainer-run launcher not found at " + (dir / "appcontainer-run").string());
    std::vector<std::string> argv{"true"};
    auto wrapped = runner->wrap({confine::Mode::workspace_write, dir.path().string(), {}}, argv);
    REQUIRE_FALSE(wrapped);
    CHECK_THAT(wrapped.error().message, Catch::EndsWith("wrap failed: not an absolute Windows path: " + dir.path().string()));
}

TEST_CASE("built-in runners accept their documented settings and reject others", "[loader][builtin]") {
    auto cfg = test::config_from(R"([runner.landlock]
launcher = "/usr/lib/confine/landlock-run"
[runner.bwrap]
program = "/usr/bin/bwrap"
[runner.seatbelt]
program = "/usr/bin/sandbox-exec"
[runner.appcontainer]
launcher = "/opt/confine/appcontainer-run"
)");
    test::TempDir dir;
    for (const auto& [name, table] : cfg.runners) {
        INFO(name);
        auto plugin = confine::load_plugin(test::install_builtin(dir.path(), name), name);
        REQUIRE(plugin);
        CHECK((*plugin)->create_runner(&table));
    }
    auto bad = test::config_from("[runner.bwrap]\nprogram = 5\n");
    auto plugin = confine::load_plugin(dir / "confine-runner-bwrap.so", "bwrap");
    REQUIRE(plugin);
    auto refused = (*plugin)->create_runner(&bad.runners.at("bwrap"));
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::StartsWith("test.toml:2:1: runner.bwrap: setting 'program' must be a string"));
}

TEST_CASE("a plugin built for ABI 1.0 still loads, and its shorter wrap result is read as 1.0", "[loader][abi]") {
    test::TempDir dir;
    auto plugin = confine::load_plugin(test::install_fake(dir.path(), "abi-1-0"), "abi-1-0");
    REQUIRE(plugin);
    CHECK((*plugin)->info().abi_minor == 0);
    auto runner = (*plugin)->create_runner(nullptr);
    REQUIRE(runner);
    std::vector<std::string> argv{"echo", "x"};
    // It would not know that the network was asked of it: with the network confined it
    // is refused, with it allowed it wraps as it always did.
    auto unknowing = (*runner)->wrap({confine::Mode::read_only, {}, {}}, argv);
    REQUIRE_FALSE(unknowing);
    CHECK(unknowing.error().code == confine::ErrorCode::sandbox_unavailable);
    CHECK_THAT(unknowing.error().message, Catch::Contains("plugin ABI 1.0 cannot be asked to confine the network (ABI 1.5 can)"));
    auto wrapped = (*runner)->wrap({confine::Mode::read_only, {}, {}, confine::Network::allow}, argv);
    REQUIRE(wrapped);
    CHECK(wrapped->argv == std::vector<std::string>{"/usr/bin/env", "--", "echo", "x"});
    CHECK(wrapped->attestation.kind == confine::Attestation::Kind::none);
}

TEST_CASE("an ABI 1.5 plugin does not say which /tmp it gives, so a policy that asks for one kind refuses it", "[loader][abi]") {
    test::TempDir dir;
    test::install_fake(dir.path(), "abi-1-5");
    // Nothing to deny (an ABI 1.5 plugin cannot be asked to), whatever the account's home holds.
    auto provider = confine::Provider::create(test::config_from("[platform.linux]\nchain = [\"abi-1-5\"]\n[policy]\ndeny_read = []\n"),
                                              {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{dir.path()}});
    REQUIRE(provider);
    std::vector<std::string> argv{"echo", "x"};
    confine::Policy policy{confine::Mode::read_only, {}, {}};
    auto either = (*provider)->wrap(confine::PolicyRequest(policy), argv);
    REQUIRE(either);
    CHECK(either->tmp == confine::Tmp::unsaid);
    CHECK(either->dimensions.processes == confine::Level::full);
    for (const auto asked : {confine::Tmp::private_, confine::Tmp::host}) {
        policy.tmp = asked;
        auto refused = (*provider)->wrap(confine::PolicyRequest(policy), argv);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().code == confine::ErrorCode::sandbox_unavailable);
        CHECK(refused.error().message == std::string("runner 'abi-1-5' does not say which /tmp it gives (plugin ABI older than 1.6), and the policy asks for ") +
                                             (asked == confine::Tmp::host ? "the host's" : "a private one") + " ([policy] tmp, --tmp)");
    }
}

TEST_CASE("an ABI 1.3 plugin's status attestation is read without a process-ID key, and a key that is not one line is refused", "[loader][abi]") {
    test::TempDir dir;
    std::vector<std::string> argv{"echo", "x"};
    auto plugin = confine::load_plugin(test::install_fake(dir.path(), "abi-1-3"), "abi-1-3");
    REQUIRE(plugin);
    CHECK((*plugin)->info().abi_minor == 3);
    auto runner = (*plugin)->create_runner(nullptr);
    REQUIRE(runner);
    auto wrapped = (*runner)->wrap({confine::Mode::read_only, {}, {}, confine::Network::allow}, argv);
    REQUIRE(wrapped);
    CHECK(wrapped->attestation.kind == confine::Attestation::Kind::status_fd);
    CHECK(wrapped->attestation.status_argument == 1);
    CHECK(wrapped->attestation.status_marker == "done");
    CHECK(wrapped->attestation.status_pid_key.empty());

    auto bad = confine::load_plugin(test::install_fake(dir.path(), "bad-pid-key"), "bad-pid-key");
    REQUIRE(bad);
    auto bad_runner = (*bad)->create_runner(nullptr);
    REQUIRE(bad_runner);
    auto refused = (*bad_runner)->wrap({confine::Mode::read_only, {}, {}}, argv);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == confine::ErrorCode::plugin_bad_result);
    CHECK_THAT(refused.error().message, Catch::Contains("malformed wrap result (status process-ID key)"));
}
