// A configurable runner plugin for tests, built with the SDK. Compile definitions:
//   FAKE_RUNNER_NAME  the runner name in its descriptor
//   FAKE_BEHAVIOR     one of the FAKE_* values below
// Every load, creation, probe and wrap is appended to the file named by CONFINE_FAKE_LOG,
// so tests can prove what was (not) loaded, probed or wrapped.
#include <confine/sdk/plugin.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#define FAKE_FULL 1
#define FAKE_PARTIAL 2
#define FAKE_UNUSABLE 3
#define FAKE_RUN 4          // probe runs setting `command` through the host; full when it exits 0
#define FAKE_HANG_INSIDE 5  // probe sleeps in the plugin itself
#define FAKE_THROW 6        // probe and wrap throw
#define FAKE_BAD_WRAP 7     // wrap drops the command
#define FAKE_CANONICAL 8    // probe canonicalises setting `path` through the host

namespace sdk = confine::sdk;

namespace {

void note(const std::string& what) {
    const char* log = std::getenv("CONFINE_FAKE_LOG");
    if (!log || !*log) return;
    if (FILE* f = std::fopen(log, "a")) {
        std::fprintf(f, "%s %s\n", what.c_str(), FAKE_RUNNER_NAME);
        std::fclose(f);
    }
}

// Runs when the dynamic loader maps the file: the first plugin code that can run.
[[gnu::constructor]] void on_load() { note("load"); }

// Its `[runner.<name>]` settings, each read with the SDK's typed helpers.
struct FakeSettings {
    std::vector<std::string> command;  // FAKE_RUN: what the probe runs
    std::string path;                  // FAKE_CANONICAL: what the probe canonicalises
    std::string label;                 // the note of a full verdict
    std::string launcher;              // set: wrap like the Landlock runner, through it
    bool attest = false;               // with a launcher: attest by its exec
    bool show_workdir = false;         // with a launcher: pass it `--workdir <policy's working directory>`
    std::int64_t exec_index = 2;       // with attest: the exec declared as the command's
    bool flag = false;
    std::int64_t count = 0;
    // What a wrap says it enforces of network, processes, read, protect and lifetime: "none", "partial" or "full";
    // of write too, where set (else full with full enforcement, partial otherwise); and what it says is left open.
    std::string network = "partial", processes = "partial", read = "partial", protect = "none", lifetime = "partial";
    std::string write, open = "what a fake leaves open";
};

// Moves a read value into `into`, or gives its error.
template <class T>
std::optional<sdk::Error> take(std::expected<T, sdk::Error> value, T& into) {
    if (!value) return value.error();
    into = std::move(*value);
    return std::nullopt;
}

std::expected<FakeSettings, sdk::Error> read_settings(const sdk::Settings& settings) {
    if (auto bad = settings.reject_unknown({"command", "path", "flag", "count", "label", "launcher", "attest", "show_workdir", "exec_index", "network", "processes", "read", "protect", "lifetime", "write", "open"}))
        return std::unexpected(*bad);
    FakeSettings out;
    for (const auto& bad : {take(settings.strings_or("command", {}), out.command), take(settings.string_or("path", ""), out.path),
                            take(settings.string_or("label", ""), out.label), take(settings.string_or("launcher", ""), out.launcher),
                            take(settings.bool_or("attest", false), out.attest), take(settings.bool_or("flag", false), out.flag),
                            take(settings.bool_or("show_workdir", false), out.show_workdir),
                            take(settings.int_or("count", 0), out.count), take(settings.int_or("exec_index", 2), out.exec_index), take(settings.string_or("network", "partial"), out.network),
                            take(settings.string_or("processes", "partial"), out.processes), take(settings.string_or("read", "partial"), out.read),
                            take(settings.string_or("protect", "none"), out.protect), take(settings.string_or("lifetime", "partial"), out.lifetime),
                            take(settings.string_or("write", ""), out.write), take(settings.string_or("open", "what a fake leaves open"), out.open)})
        if (bad) return std::unexpected(*bad);
    return out;
}

class FakeRunner final : public sdk::Runner {
public:
    FakeRunner(sdk::Host host, FakeSettings settings) : host_(host), settings_(std::move(settings)) {}

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        note("create");
        auto settings = read_settings(config.settings);
        if (!settings) return std::unexpected(settings.error());
        return std::make_unique<FakeRunner>(host, std::move(*settings));
    }

    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        note("probe");
        switch (FAKE_BEHAVIOR) {
        case FAKE_PARTIAL: return sdk::Verdict::partial("older feature set");
        case FAKE_UNUSABLE: return sdk::Verdict::unusable(std::string("fake ") + FAKE_RUNNER_NAME + " says no");
        case FAKE_RUN: {
            if (settings_.command.empty()) return sdk::Verdict::unusable("no command setting");
            auto run = host_.run_probe(settings_.command, timeout_ms);
            if (!run) return sdk::Verdict::unusable(run.error().message);
            std::string summary = "spawned=" + std::to_string(run->spawned) + " errno=" + std::to_string(run->spawn_errno) +
                                  " exit=" + std::to_string(run->exit_code) + " signal=" + std::to_string(run->signal) +
                                  " timed_out=" + std::to_string(run->timed_out) + " stdout=" + run->stdout_text +
                                  " stderr=" + run->stderr_text;
            if (run->exited && run->exit_code == 0) return sdk::Verdict::full(summary);
            return sdk::Verdict::unusable(summary);
        }
        case FAKE_HANG_INSIDE: std::this_thread::sleep_for(std::chrono::seconds(30)); return sdk::Verdict::full();
        case FAKE_THROW: throw std::runtime_error("fake probe exploded");
        case FAKE_CANONICAL: {
            auto canonical = host_.canonicalize(settings_.path);
            if (!canonical) return sdk::Verdict::unusable("canonicalize failed: " + canonical.error().message);
            return sdk::Verdict::full(*canonical);
        }
        default: break;
        }
        return sdk::Verdict::full(settings_.label);
    }

    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        note("wrap");
        if (FAKE_BEHAVIOR == FAKE_THROW) throw std::runtime_error("fake wrap exploded");
        auto r = wrapped(policy, argv);
        auto level = [](const std::string& name) {
            return name == "full" ? sdk::Level::full : name == "partial" ? sdk::Level::partial : sdk::Level::none;
        };
        const sdk::Level write = !settings_.write.empty() ? level(settings_.write)
                                 : r.enforcement == sdk::Enforcement::full ? sdk::Level::full
                                                                           : sdk::Level::partial;
        r.dimensions = {write, level(settings_.network), level(settings_.processes), settings_.open, level(settings_.read), level(settings_.protect),
                        level(settings_.lifetime)};
        return r;
    }

private:
    sdk::WrapResult wrapped(const sdk::Policy& policy, std::span<const std::string> argv) const {
        sdk::WrapResult r;
        if (!settings_.launcher.empty()) {
            // Shaped like the Landlock runner: a launcher that execs the command.
            r.argv = {settings_.launcher};
            if (settings_.show_workdir) r.argv.insert(r.argv.end(), {"--workdir", policy.working_directory.string()});
            r.argv.push_back("--");
            r.argv.insert(r.argv.end(), argv.begin(), argv.end());
            r.enforcement = sdk::Enforcement::partial;
            r.denial_signatures = {"permission denied"};
            r.failure_rule.evidence_exit_codes = {125};
            r.failure_rule.fatal_signatures = {"landlock-run: "};
            r.failure_rule.informational_lines = {"landlock-run: partial enforcement (older Landlock ABI)"};
            if (settings_.attest) r.attestation = sdk::Attestation::exec(static_cast<std::uint32_t>(settings_.exec_index));
            return r;
        }
        r.argv = {"/usr/bin/env", std::string("FAKE_RUNNER=") + FAKE_RUNNER_NAME,
                  std::string("FAKE_MODE=") + (policy.mode == sdk::Mode::workspace_write ? "workspace-write:" + policy.workspace.string() : "read-only")};
        for (const auto& w : policy.writable) r.argv.push_back("FAKE_WRITABLE=" + w.string());
        for (const auto& d : policy.deny_read) r.argv.push_back("FAKE_DENY_READ=" + d.string());
        for (const auto& p : policy.protect) r.argv.push_back("FAKE_PROTECT=" + p.string());
        if (FAKE_BEHAVIOR != FAKE_BAD_WRAP) {
            r.argv.push_back("--");
            r.argv.insert(r.argv.end(), argv.begin(), argv.end());
        }
        r.enforcement = FAKE_BEHAVIOR == FAKE_PARTIAL ? sdk::Enforcement::partial : sdk::Enforcement::full;
        r.denial_signatures = {"fake denied"};
        r.failure_rule.evidence_exit_codes = {125};
        r.failure_rule.fatal_signatures = {"fake-runner: "};
        r.failure_rule.informational_lines = {"fake-runner: note"};
        return r;
    }

private:
    sdk::Host host_;
    FakeSettings settings_;
};

}  // namespace

CONFINE_RUNNER_PLUGIN(FakeRunner, FAKE_RUNNER_NAME, "9.9.9", "fake runner for tests")
