// The offline runner's unit test, through the SDK's fake host (confine/sdk/testing.hpp):
// created, probed and asked to wrap as confine would, each wrap result judged by
// confine's own check of it. It starts no process and needs nothing but the SDK (no test
// framework either: it prints what failed and exits 1).
#include <confine/sdk/testing.hpp>

// The runner class is private to its file: the test compiles that file itself.
#include "offline_runner.cpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

namespace testing = confine::sdk::testing;

int failures = 0;

void expect(bool holds, const char* what) {
    if (holds) return;
    std::fprintf(stderr, "offline_runner_test: FAILED: %s\n", what);
    ++failures;
}

// A bubblewrap that passes the runner's trust check on any machine the test runs on:
// the test starts nothing, so any root-owned program stands in.
constexpr const char* trusted_program = "/usr/bin/env";

void settings_are_checked() {
    testing::FakeHost host;
    auto relative = testing::create<OfflineRunner>(host, {testing::string_setting("bwrap", "bin/bwrap")});
    expect(!relative && relative.error().setting == "bwrap", "a relative bwrap is refused, naming its key");
    auto unknown = testing::create<OfflineRunner>(host, {testing::bool_setting("fast", true)});
    expect(!unknown && unknown.error().setting == "fast", "an unknown setting is refused, naming its key");
}

void probe_runs_bubblewrap_offline() {
    testing::FakeHost host;
    auto runner = testing::create<OfflineRunner>(host, {testing::string_setting("bwrap", trusted_program)});
    expect(runner.has_value(), "the runner is created");
    if (!runner) return;
    host.answer_probes(testing::exited(1, "bwrap: No permissions to create a new namespace\n"));
    const sdk::Verdict verdict = (*runner)->probe(1000);
    expect(verdict.kind == sdk::Verdict::Kind::unusable, "a probe that fails makes the runner unusable");
    expect(verdict.reason == "bwrap: No permissions to create a new namespace", "the reason is bubblewrap's own line");
    expect(host.probes().size() == 1 && host.probes()[0].argv.back() == "true", "the probe confines `true`");
}

void wrap_is_what_confine_accepts() {
    testing::FakeHost host;
    auto runner = testing::create<OfflineRunner>(host, {testing::string_setting("bwrap", trusted_program)});
    if (!runner) return;
    sdk::Policy policy{sdk::Mode::workspace_write, "/srv/ws", {}};
    policy.network = sdk::Network::allow;  // this runner cuts the network even so
    const std::vector<std::string> command{"make", "test"};
    auto wrapped = (*runner)->wrap(policy, command);
    expect(wrapped.has_value(), "the runner wraps");
    if (!wrapped) return;
    const std::optional<std::string> refused = testing::check_wrap_result(*wrapped, command);
    expect(!refused, "confine accepts the wrap result");
    if (refused) std::fprintf(stderr, "offline_runner_test: confine refuses it: %s\n", refused->c_str());
    const sdk::Attestation& attestation = wrapped->attestation;
    expect(attestation.kind == sdk::Attestation::Kind::status_fd && wrapped->argv.at(attestation.status_argument) == "{status-fd}",
           "bubblewrap attests on the status descriptor");
    expect(std::find(wrapped->argv.begin(), wrapped->argv.end(), "--unshare-net") != wrapped->argv.end(), "the network is cut");
    expect(wrapped->dimensions.network == sdk::Level::full, "the network is reported as confined");

    // The check is the host's: a result confine would refuse is refused here too.
    sdk::WrapResult shortened = *wrapped;
    shortened.argv.pop_back();
    expect(testing::check_wrap_result(shortened, command).has_value(), "a result without the whole command is refused");
}

}  // namespace

int main() {
    settings_are_checked();
    probe_runs_bubblewrap_offline();
    wrap_is_what_confine_accepts();
    if (failures == 0) std::puts("offline_runner_test: ok");
    return failures == 0 ? 0 : 1;
}
