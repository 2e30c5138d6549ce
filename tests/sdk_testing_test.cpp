// A runner unit-tested as its author would, without confine: the example third-party
// runner (examples/runner-plugin) compiled into the test, created, probed and asked to
// wrap through the SDK's fake host (confine/sdk/testing.hpp). And the usage example of
// confine/sdk/plugin.hpp, which tests/sdk_example builds, is the header's comment.
#include <confine/sdk/testing.hpp>

// The runner class is private to its file: the test compiles that file itself.
#include "../examples/runner-plugin/offline_runner.cpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace confine::sdk::testing;

namespace {

// A program that passes the runner's trust check on any machine the tests run on.
constexpr const char* trusted_program = "/usr/bin/env";

bool contains(const std::vector<std::string>& argv, const std::string& item) {
    return std::find(argv.begin(), argv.end(), item) != argv.end();
}

}  // namespace

TEST_CASE("the fake host hands a runner's create a setting error naming its key", "[sdk][testing]") {
    FakeHost host;
    auto relative = create<OfflineRunner>(host, {string_setting("bwrap", "bin/bwrap")});
    REQUIRE_FALSE(relative);
    CHECK(relative.error().message == "setting 'bwrap' must be an absolute path, got 'bin/bwrap'");
    CHECK(relative.error().code == CONFINE_E_INVALID_ARGUMENT);
    CHECK(relative.error().setting == "bwrap");
    CHECK(host.setting_at_fault() == "bwrap");

    auto unknown = create<OfflineRunner>(host, {string_setting("bwrap", trusted_program), bool_setting("fast", true)});
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message == "unknown setting 'fast'");
    CHECK(unknown.error().setting == "fast");

    auto wrong_type = create<OfflineRunner>(host, {int_setting("bwrap", 1)});
    REQUIRE_FALSE(wrong_type);
    CHECK(wrong_type.error().message == "setting 'bwrap' must be a string, not an integer");
    CHECK(wrong_type.error().setting == "bwrap");

    CHECK(create<OfflineRunner>(host, {string_setting("bwrap", trusted_program)}));
    CHECK(host.setting_at_fault().empty());  // a creation that succeeds names none
}

TEST_CASE("a runner's probe runs through the fake host, which answers as the test scripts it", "[sdk][testing]") {
    FakeHost host;
    auto runner = create<OfflineRunner>(host, {string_setting("bwrap", trusted_program)});
    REQUIRE(runner);

    SECTION("the probe command succeeds") {
        host.answer_probes(exited(0));
        CHECK((*runner)->probe(1500).kind == confine::sdk::Verdict::Kind::full);
        REQUIRE(host.probes().size() == 1);
        const auto& call = host.probes()[0];
        CHECK(call.timeout_ms == 1500);
        CHECK(call.argv.front() == trusted_program);
        CHECK(call.argv.at(1) == "--unshare-net");
        REQUIRE(call.argv.size() >= 2);
        CHECK(call.argv[call.argv.size() - 2] == "--");
        CHECK(call.argv.back() == "true");
    }
    SECTION("the runner's own first line is the reason it is unusable") {
        host.answer_probes(exited(1, "bwrap: No permissions to create a new namespace\nmore\n"));
        auto v = (*runner)->probe(1000);
        CHECK(v.kind == confine::sdk::Verdict::Kind::unusable);
        CHECK(v.reason == "bwrap: No permissions to create a new namespace");
    }
    SECTION("each command gets what the script says of it") {
        host.answer_probes([](const ProbeCall& call) -> std::expected<confine::sdk::ProbeRun, confine::sdk::Error> {
            if (call.argv.front() == trusted_program) return timed_out();
            return exited(0);
        });
        CHECK((*runner)->probe(1000).reason == "bubblewrap probe timed out");
    }
    SECTION("a program that cannot start, a signal, a host that cannot run probes") {
        host.answer_probes(not_started(ENOENT));
        CHECK((*runner)->probe(1000).reason == std::string("cannot start bubblewrap: ") + std::strerror(ENOENT));
        host.answer_probes(killed(9));
        CHECK((*runner)->probe(1000).reason == "bubblewrap was killed by signal 9");
        FakeHost silent;
        auto other = create<OfflineRunner>(silent, {string_setting("bwrap", trusted_program)});
        REQUIRE(other);
        CHECK((*other)->probe(1000).reason == "host could not run the probe");
        CHECK(silent.probes().size() == 1);
    }
}

TEST_CASE("a runner created with the fake host wraps a command", "[sdk][testing]") {
    FakeHost host;
    auto runner = create<OfflineRunner>(host, {string_setting("bwrap", trusted_program)});
    REQUIRE(runner);
    confine::sdk::Policy policy{confine::sdk::Mode::read_only, {}, {}};
    policy.network = confine::sdk::Network::allow;  // this runner confines the network even so
    const std::vector<std::string> command{"ls", "-l"};
    auto wrapped = (*runner)->wrap(policy, command);
    REQUIRE(wrapped);
    CHECK(wrapped->argv.front() == trusted_program);
    CHECK(contains(wrapped->argv, "--unshare-net"));
    CHECK(std::vector<std::string>(wrapped->argv.end() - 3, wrapped->argv.end()) == std::vector<std::string>{"--", "ls", "-l"});
    CHECK(wrapped->dimensions.network != confine::sdk::Level::none);
    CHECK(host.probes().empty());  // a wrap spawns nothing
}

TEST_CASE("the fake host records log lines and answers canonicalisation as scripted", "[sdk][testing]") {
    FakeHost host;
    host.host().log(CONFINE_LOG_WARN, "older kernel");
    REQUIRE(host.log_lines().size() == 1);
    CHECK(host.log_lines()[0].level == CONFINE_LOG_WARN);
    CHECK(host.log_lines()[0].message == "older kernel");

    host.canonical("/work/link", "/work/real");
    CHECK(host.host().canonicalize("/work/link") == "/work/real");
    auto missing = host.host().canonicalize("/nowhere");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message == "/nowhere: No such file or directory");
    CHECK(host.canonicalized() == std::vector<std::string>{"/work/link", "/nowhere"});
}

TEST_CASE("the usage example of the SDK header is the source file the tests build", "[sdk]") {
    std::ifstream header(SOURCE_DIR "/include/confine/sdk/plugin.hpp");
    std::ifstream example(SOURCE_DIR "/tests/sdk_example/my_runner.cpp");
    REQUIRE(header);
    REQUIRE(example);
    // The comment from its #include to its CONFINE_RUNNER_PLUGIN line, uncommented.
    std::string line, from_header;
    bool in = false;
    while (std::getline(header, line)) {
        if (line == "//   #include <confine/sdk/plugin.hpp>") in = true;
        if (!in) continue;
        from_header += (line == "//" ? std::string() : line.substr(line.starts_with("//   ") ? 5 : 0)) + "\n";
        if (line.starts_with("//   CONFINE_RUNNER_PLUGIN(")) break;
    }
    std::stringstream file;
    file << example.rdbuf();
    const std::string text = file.str();
    const auto start = text.find("#include <confine/sdk/plugin.hpp>");
    REQUIRE(start != std::string::npos);
    CHECK(from_header.find("strings_or") != std::string::npos);
    CHECK(from_header == text.substr(start));
}

TEST_CASE("the SDK names a refused setting only to a host whose services include setting_at_fault", "[sdk][testing][abi]") {
    FakeHost host;
    // The same services as a host older than ABI 1.9 hands them: without the last one.
    confine_host older = *host.c_host();
    older.struct_size = offsetof(confine_host, setting_at_fault);
    confine_setting relative{};
    relative.key = "bwrap";
    relative.kind = CONFINE_SETTING_STRING;
    relative.string_value = "bin/bwrap";
    confine_runner_config config{};
    config.struct_size = sizeof config;
    config.settings = &relative;
    config.settings_count = 1;
    void* instance = nullptr;
    char* error = nullptr;
    using Entry = confine::sdk::detail::Entry<OfflineRunner>;
    CHECK(Entry::create(&older, &config, &instance, &error) == CONFINE_E_INVALID_ARGUMENT);
    CHECK(host.setting_at_fault().empty());
    REQUIRE(error);
    CHECK(std::string(error) == "setting 'bwrap' must be an absolute path, got 'bin/bwrap'");
    Entry::free_string(error);
    error = nullptr;
    CHECK(Entry::create(host.c_host(), &config, &instance, &error) == CONFINE_E_INVALID_ARGUMENT);
    CHECK(host.setting_at_fault() == "bwrap");
    Entry::free_string(error);
}

TEST_CASE("a runner handed an older host's shorter policy through the C entry point reads each field that host lacks as its default",
          "[sdk][testing][abi]") {
    FakeHost host;
    auto runner = create<OfflineRunner>(host, {string_setting("bwrap", trusted_program)});
    REQUIRE(runner);
    // What a host of this ABI would ask, in full: the network confined, the host's /tmp,
    // a path denied, a working directory. Fields past an older host's struct_size are
    // whatever lies in its memory there: here, these same values, which must not be read.
    const std::string workspace = "/var", denied = "/etc", cwd = "/var";
    const char* denied_items[] = {denied.c_str()};
    confine_policy full{};
    full.struct_size = sizeof full;
    full.mode = CONFINE_MODE_WORKSPACE_WRITE;
    full.workspace = workspace.c_str();
    full.network = CONFINE_NETWORK_NONE;
    full.tmp = CONFINE_TMP_HOST;
    full.terminal = 1;
    full.deny_read = {denied_items, 1};
    full.working_directory = cwd.c_str();
    const std::vector<std::string> command{"true"};
    auto has_run = [](const std::vector<std::string>& argv, std::vector<std::string> run) {
        return std::search(argv.begin(), argv.end(), run.begin(), run.end()) != argv.end();
    };

    auto newest = wrap_through_abi(**runner, full, command);
    REQUIRE(newest);
    CHECK(has_run(*newest, {"--seccomp", "{loopback-filter-fd}"}));  // the network confined
    CHECK(has_run(*newest, {"--bind", "/tmp", "/tmp"}));            // the host's /tmp, as asked
    CHECK(has_run(*newest, {"--tmpfs", denied}));                   // the denied path masked

    confine_policy abi_1_0 = full;  // mode, workspace and writable roots only
    abi_1_0.struct_size = CONFINE_POLICY_SIZE_1_0;
    auto oldest = wrap_through_abi(**runner, abi_1_0, command);
    REQUIRE(oldest);
    CHECK_FALSE(contains(*oldest, "--seccomp"));  // no network asked: allowed, no filter
    CHECK(has_run(*oldest, {"--tmpfs", "/tmp"}));                         // neither /tmp asked: the profile's own
    CHECK_FALSE(contains(*oldest, denied));                              // nothing denied
    CHECK(has_run(*oldest, {"--bind-fd", "{dir-fd:" + workspace + "}", workspace}));

    confine_policy abi_1_6 = full;  // network, tmp and terminal, but nothing denied
    abi_1_6.struct_size = CONFINE_POLICY_SIZE_1_6;
    auto middle = wrap_through_abi(**runner, abi_1_6, command);
    REQUIRE(middle);
    CHECK(has_run(*middle, {"--seccomp", "{loopback-filter-fd}"}));
    CHECK(has_run(*middle, {"--bind", "/tmp", "/tmp"}));
    CHECK_FALSE(contains(*middle, denied));

    // A size that ends inside a field reads none of it; one short of the oldest layout is refused.
    confine_policy torn = full;
    torn.struct_size = CONFINE_POLICY_SIZE_1_6 + 1;
    auto halfway = wrap_through_abi(**runner, torn, command);
    REQUIRE(halfway);
    CHECK_FALSE(contains(*halfway, denied));
    confine_policy too_short = full;
    too_short.struct_size = CONFINE_POLICY_SIZE_1_0 - 1;
    auto refused = wrap_through_abi(**runner, too_short, command);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == CONFINE_E_INVALID_ARGUMENT);
    CHECK_THAT(refused.error().message, Catch::Contains("malformed"));
}
