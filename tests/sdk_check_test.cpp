// What a plugin author's tests get from the SDK alone: check_wrap_result refuses each
// wrap result the host refuses, one case per check, and passes a good one; what the
// SDK hands the host of a runner's enforcement and dimensions; the program-trust rule
// with the policy's paths.
#include <confine/sdk/program_trust.hpp>
#include <confine/sdk/testing.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace sdk = confine::sdk;
using sdk::testing::check_wrap_result;

namespace {

const std::vector<std::string> command{"make", "test"};

// A result the host accepts: a runner's program, a status descriptor at argument 2, a
// directory placeholder, "--" and the command; bubblewrap's marker and key.
sdk::WrapResult good() {
    sdk::WrapResult r;
    r.argv = {"/usr/bin/runner", "--status", "{status-fd}", "--bind", "{dir-fd:/srv/ws}", "/srv/ws", "--", "make", "test"};
    r.attestation = sdk::Attestation::status_fd(2, "\"exit-code\"", "\"child-pid\"");
    r.failure_rule.fatal_signatures = {"runner: "};
    return r;
}

// The refusal of `r`, which must be refused.
std::string refusal(const sdk::WrapResult& r) {
    const auto refused = check_wrap_result(r, command);
    if (!refused) FAIL("the result was accepted");
    return *refused;
}

}  // namespace

TEST_CASE("check_wrap_result accepts a result confine runs", "[sdk][testing][check]") {
    CHECK_FALSE(check_wrap_result(good(), command));
    sdk::WrapResult exec = good();
    exec.argv[2] = "3";  // no status descriptor: not a placeholder, just an argument
    for (std::uint32_t index : {1u, 16u}) {
        exec.attestation = sdk::Attestation::exec(index);
        CHECK_FALSE(check_wrap_result(exec, command));
    }
    sdk::WrapResult none = exec;
    none.attestation = sdk::Attestation::none();
    CHECK_FALSE(check_wrap_result(none, command));
    // The command's own arguments are never read as placeholders.
    const std::vector<std::string> odd{"{dir-fd:}", "{status-fd}"};
    sdk::WrapResult r = good();
    r.argv.resize(r.argv.size() - 2);
    r.argv.insert(r.argv.end(), odd.begin(), odd.end());
    CHECK_FALSE(check_wrap_result(r, odd));
    // A marker of 256 bytes, and no process-ID key, are well formed.
    r = good();
    r.attestation = sdk::Attestation::status_fd(2, std::string(256, 'm'));
    CHECK_FALSE(check_wrap_result(r, command));
}

TEST_CASE("check_wrap_result refuses a result that does not end with -- and the command verbatim", "[sdk][testing][check]") {
    const std::string expected = "wrap result does not end with \"--\" and the command verbatim";
    const std::vector<std::vector<std::string>> spoiled{
        {"/usr/bin/runner", "--", "test", "make"},          // reordered
        {"/usr/bin/runner", "--", "make"},                  // shortened
        {"/usr/bin/runner", "--", "make", "check"},         // rewritten
        {"/usr/bin/runner", "-", "make", "test"},           // no "--"
        {"/usr/bin/runner", "--", "make", "test", "-k"},    // added to
        {"--", "make", "test"},                             // no runner before "--"
        {"make", "test"},
    };
    for (const auto& argv : spoiled) {
        INFO(argv.size() << " arguments, the last " << argv.back());
        sdk::WrapResult r;
        r.argv = argv;
        CHECK(refusal(r) == expected);
    }
}

TEST_CASE("check_wrap_result refuses an exec attestation outside 1 to 16", "[sdk][testing][check]") {
    sdk::WrapResult r = good();
    r.argv[2] = "3";
    for (std::uint32_t index : {0u, 17u, std::numeric_limits<std::uint32_t>::max()}) {
        r.attestation = sdk::Attestation::exec(index);
        CHECK(refusal(r) == "malformed wrap result (attestation exec index " + std::to_string(index) + ")");
    }
}

TEST_CASE("check_wrap_result refuses a status descriptor that is not one of the runner's own arguments", "[sdk][testing][check]") {
    sdk::WrapResult r = good();  // the "--" at argument 6
    for (std::uint32_t index : {0u, 6u, 7u, 8u, 100u}) {
        r.attestation.status_argument = index;
        CHECK(refusal(r) == "malformed wrap result (status descriptor argument " + std::to_string(index) + ")");
    }
}

TEST_CASE("check_wrap_result refuses a status marker that is not one non-empty line of at most 256 bytes", "[sdk][testing][check]") {
    sdk::WrapResult r = good();
    for (const std::string& marker : {std::string(), std::string("done\n"), std::string("do\nne"), std::string(257, 'm')}) {
        r.attestation.status_marker = marker;
        CHECK(refusal(r) == "malformed wrap result (status marker)");
    }
}

TEST_CASE("check_wrap_result refuses a process-ID key that is not one line of at most 256 bytes", "[sdk][testing][check]") {
    sdk::WrapResult r = good();
    for (const std::string& key : {std::string("child\npid"), std::string(257, 'k')}) {
        r.attestation.status_pid_key = key;
        CHECK(refusal(r) == "malformed wrap result (status process-ID key)");
    }
}

TEST_CASE("check_wrap_result refuses a malformed placeholder among the runner's arguments", "[sdk][testing][check]") {
    sdk::WrapResult r = good();
    r.argv[4] = "{dir-fd:srv/ws}";
    CHECK(refusal(r) == "malformed wrap result (argument 4: malformed placeholder '{dir-fd:srv/ws}': the directory's path must be absolute)");
    r.argv[4] = "{dir-fd:/srv/ws";
    CHECK(refusal(r) == "malformed wrap result (argument 4: malformed placeholder '{dir-fd:/srv/ws': it does not end with '}')");
}

TEST_CASE("check_wrap_result refuses a {status-fd} where the attestation puts no status descriptor", "[sdk][testing][check]") {
    sdk::WrapResult r = good();
    r.argv[4] = "{status-fd}";
    CHECK(refusal(r) == "malformed wrap result (argument 4 is {status-fd}, but the attestation names argument 2)");
    r = good();
    r.attestation = sdk::Attestation::none();
    CHECK(refusal(r) == "malformed wrap result (argument 2 is {status-fd}, but the attestation names no status descriptor)");
}

TEST_CASE("check_wrap_result refuses a placeholder of another kind where the status descriptor goes", "[sdk][testing][check]") {
    sdk::WrapResult r = good();
    r.argv[2] = "{network-filter-fd}";
    CHECK(refusal(r) == "malformed wrap result (argument 2, where the attestation puts the status descriptor, is a network-filter-fd placeholder)");
}

TEST_CASE("check_wrap_result refuses a placeholder as the runner's program", "[sdk][testing][check]") {
    sdk::WrapResult r = good();
    r.argv[0] = "{dir-path:/usr/bin}";
    CHECK(refusal(r) == "malformed wrap result (argument 0, the runner's program, is a placeholder)");
}

TEST_CASE("check_wrap_result refuses a list longer than the host reads", "[sdk][testing][check]") {
    sdk::WrapResult r = good();
    r.denial_signatures.assign(sdk::max_result_list_items, "denied");
    CHECK_FALSE(check_wrap_result(r, command));
    r.denial_signatures.push_back("one more");
    CHECK(refusal(r) == "malformed wrap result (lists)");
    r = good();
    r.argv.insert(r.argv.begin() + 1, sdk::max_result_list_items, "-v");
    r.attestation.status_argument += static_cast<std::uint32_t>(sdk::max_result_list_items);
    CHECK(refusal(r) == "malformed wrap result (lists)");
}

namespace {

// The C result the SDK hands the host for `r` (the plugin's side of the boundary).
struct InC {
    std::unique_ptr<sdk::detail::OwnedWrapResult> owned;
    explicit InC(const sdk::WrapResult& r) : owned(sdk::detail::wrap_result_to_c(r)) {}
    const confine_wrap_result& operator*() const { return *owned; }
};

}  // namespace

TEST_CASE("a runner that says its dimensions has each level passed on as it says it, whatever its enforcement", "[sdk][abi]") {
    sdk::WrapResult r = good();
    r.enforcement = sdk::Enforcement::partial;  // as the guide once said: its network is partial
    r.dimensions = {sdk::Level::full, sdk::Level::partial, sdk::Level::full, "network: a gap", sdk::Level::full, sdk::Level::none,
                    sdk::Level::full};
    const InC c(r);
    CHECK((*c).enforcement == CONFINE_ENFORCEMENT_PARTIAL);
    CHECK((*c).write_level == CONFINE_LEVEL_FULL);  // not lowered: its write is full
    CHECK((*c).network_level == CONFINE_LEVEL_PARTIAL);
    CHECK((*c).processes_level == CONFINE_LEVEL_FULL);
    CHECK((*c).read_level == CONFINE_LEVEL_FULL);
    CHECK((*c).protect_level == CONFINE_LEVEL_NONE);
    CHECK((*c).lifetime_level == CONFINE_LEVEL_FULL);
    CHECK(std::string((*c).dimensions_open) == "network: a gap");
    // Said down to the defaults' levels, with what is open: still said.
    r.dimensions = {};
    r.dimensions.open = "network, processes: not confined";
    const InC said(r);
    CHECK((*said).write_level == CONFINE_LEVEL_FULL);
    CHECK((*said).network_level == CONFINE_LEVEL_NONE);
}

TEST_CASE("a runner that says nothing of its dimensions says nothing of them in C, and the host takes its enforcement for its write", "[sdk][abi]") {
    sdk::WrapResult r = good();
    for (const auto enforcement : {sdk::Enforcement::partial, sdk::Enforcement::full}) {
        r.enforcement = enforcement;
        const InC c(r);
        CHECK((*c).enforcement == (enforcement == sdk::Enforcement::partial ? CONFINE_ENFORCEMENT_PARTIAL : CONFINE_ENFORCEMENT_FULL));
        for (const std::int32_t level : {(*c).write_level, (*c).network_level, (*c).processes_level, (*c).read_level, (*c).protect_level,
                                         (*c).lifetime_level})
            CHECK(level == CONFINE_LEVEL_UNSAID);
        CHECK((*c).dimensions_open == nullptr);
    }
}

namespace {

// A directory of the test's own under /var/tmp (root-owned and sticky above it, as the
// trust rule accepts), removed after the test.
struct Scratch {
    std::filesystem::path dir;
    Scratch() {
        char name[] = "/var/tmp/confine-sdk-trust-XXXXXX";
        REQUIRE(::mkdtemp(name));
        dir = name;
        std::filesystem::permissions(dir, std::filesystem::perms(0755));
    }
    ~Scratch() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    std::filesystem::path program(const std::string& name, unsigned mode) const {
        const auto p = dir / name;
        std::ofstream(p) << "#!/bin/sh\n";
        std::filesystem::permissions(p, std::filesystem::perms(mode));
        return p;
    }
};

}  // namespace

TEST_CASE("untrusted_program takes the program and the writable roots as paths, as the policy holds them", "[sdk][trust]") {
    const Scratch s;
    const std::filesystem::path ok = s.program("runner", 0755), plain = s.program("plain", 0644);
    // The policy's own types: a path and a list of paths.
    sdk::Policy policy{sdk::Mode::workspace_write, s.dir, {std::filesystem::path("/srv/other")}};
    std::vector<std::filesystem::path> writable{policy.workspace};
    writable.insert(writable.end(), policy.writable.begin(), policy.writable.end());
    const auto in_root = sdk::untrusted_program(ok, writable);
    REQUIRE(in_root);
    CHECK(*in_root == sdk::untrusted_program(ok.string(), std::vector<std::string>{s.dir.string(), "/srv/other"}).value_or(""));
    CHECK(in_root->find(s.dir.string()) != std::string::npos);
    // Outside every root it is trusted; not executable, it is not, by either spelling.
    CHECK_FALSE(sdk::untrusted_program(ok, policy.writable));
    CHECK_FALSE(sdk::untrusted_program(ok));
    CHECK_FALSE(sdk::untrusted_program(ok.c_str()));
    REQUIRE(sdk::untrusted_program(plain));
    CHECK(*sdk::untrusted_program(plain) == plain.string() + " is not executable");
    CHECK(sdk::untrusted_program(plain) == sdk::untrusted_program(plain.string()));
    // A program named in a setting and not there yet is left to the probe; one there is judged.
    CHECK_FALSE(sdk::untrusted_named_program(s.dir / "absent"));
    CHECK(sdk::untrusted_named_program(plain) == sdk::untrusted_named_program(plain.string()));
    CHECK(sdk::untrusted_named_program(plain.c_str()).has_value());
}
