// Running a wrapped command on POSIX (executor.hpp): the units in order — find the
// program, spawn the runner (spawn.hpp), read the child's report (child_report.hpp),
// follow its execs where it attests by them (linux_features.hpp), then pump its output
// until it ends (output_pump.hpp). What is observed goes to the classifier, which
// decides the outcome (docs/design.md §5, §6).
#include "child_report.hpp"
#include "executor.hpp"
#include "linux_features.hpp"
#include "output_pump.hpp"
#include "output_sinks.hpp"
#include "own_terminal.hpp"
#include "run_limits.hpp"
#include "spawn.hpp"
#include "status_descriptor.hpp"
#include "wait_status.hpp"
#include "watchdog.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>

namespace confine::detail {
namespace {

std::nullopt_t refuse(Observation& o, SpawnRefusal why) {
    o.spawned = false;
    o.spawn_errno = why.error;
    o.attestation_detail = std::move(why.detail);
    return std::nullopt;
}

std::optional<StartedRunner> start(const ExecSpec& spec, Observation& o) {
    if (spec.argv.empty()) return refuse(o, {EINVAL, {}});
    if (auto missing = missing_feature(spec)) return refuse(o, {ENOSYS, std::move(*missing)});
    // The command itself (in-process path) is looked up as the launcher would, with its
    // own environment's PATH; a runner program with this process's.
    int resolve_error = 0;
    auto program = find_program(spec.argv.front(), spec.in_process ? spec.environment : std::nullopt,
                                spec.in_process ? spec.working_directory : std::filesystem::path(), resolve_error);
    if (!program) return refuse(o, {resolve_error, {}});
    auto runner = spawn_runner(spec, *program);
    if (!runner) return refuse(o, std::move(runner.error()));
    return std::move(*runner);
}

// Reads the runner's output until it ends: stdout captured (background), stderr
// captured and, in the foreground, copied to ours, the status descriptor's text kept for
// the classifier. Copied stderr is held back while the runner may still be setting up:
// a runner whose command the locator finds (bubblewrap's, an init's child) has done all
// of its own set-up once that command exists, so what it wrote before is its own — on a
// set-up failure, the line the host then says once, as its evidence, rather than twice.
// It is copied as soon as the command is there, when the runner turns out not to say,
// or past a bound; what is still held at the end goes to the caller in `held_stderr`.
void pump_runner_output(const ExecSpec& spec, StartedRunner& runner, bool running, RunControl& control, Executed& result,
                        OwnTerminal* terminal) {
    Observation& o = result.observed;
    StderrSink err(spec);
    CapturedOutput out(spec.capture);
    std::unique_ptr<CommandLocator> locator;
    if (runner.status.get() >= 0 && !spec.attestation.status_pid_key.empty())
        locator = locate_reported_command(
            runner.pid, spec.attestation.status_pid_key,
            [&spec, &control](int pid) {
                control.command_located(pid);
                if (spec.on_started) spec.on_started(pid);
            },
            [&err] { err.copy().release(); });
    if (locator) err.copy().hold();
    std::string status_text;
    OutputPump pump(runner.pid, running);
    pump.read({.fd = runner.out.get(), .take = [&out](std::string_view bytes) { out.take(bytes); }});
    pump.read({.fd = runner.err.get(), .take = [&err](std::string_view bytes) { err.take(bytes); }});
    pump.read(status_stream(runner.status.get(), status_text, locator.get()));
    if (terminal) pump.read(terminal->output());
    pump.companion = locator.get();
    pump.ended = [&control](bool) { control.exited(); };
    {
        const SigpipeBlocked quiet;
        if (const auto status = pump.run().status) record_status(o, runner_status(runner, *status));
        if (terminal) terminal->finish();
    }
    if (runner.status.get() >= 0) o.status_text = std::move(status_text);
    result.stdout_text = out.finish();
    result.stdout_dropped = out.dropped();
    err.finish(result);
}

}  // namespace

bool can_give_own_terminal() { return at_own_terminal(); }

Executed execute(const ExecSpec& given, RunControl& control) {
    Executed result;
    Observation& o = result.observed;
    o.stderr_seen = given.background || given.copy_stderr;
    // The run's own terminal, made at the last moment; given back (its settings too) on
    // every way out of here.
    std::optional<OwnTerminal> terminal;
    if (given.own_terminal && !given.background) terminal = OwnTerminal::open();
    ExecSpec with_terminal;
    if (terminal) {
        with_terminal = given;
        with_terminal.terminal = terminal->slave();
        with_terminal.terminal_path = terminal->slave_path();
    }
    const ExecSpec& spec = terminal ? with_terminal : given;
    const auto began = std::chrono::steady_clock::now();
    auto runner = start(spec, o);
    if (terminal) terminal->close_slave();
    if (!runner) return result;
    result.own_terminal = terminal.has_value();
    // A runner that names its command is signalled only to be killed (RunControl::signal).
    const bool names_command = reports_command(spec) && locates_reported_commands();
    control.started(runner->pid, runner->own_group, runner->supervised,
                    spec.in_process != nullptr || spec.attestation.kind == Attestation::Kind::exec, names_command);
    if (names_command && spec.on_command_awaited) spec.on_command_awaited();
    if (spec.on_started) spec.on_started(runner->pid);
    Watchdog watchdog(spec.timeout, spec.kill_after, control);
    if (child_reported_failure(runner->report.get(), runner->pid, spec, control, o,
                               [&runner](int status) { return runner_status(*runner, status); }))
        return result;
    // With an in-process runner, the error pipe closed by the exec is the attestation.
    if (spec.in_process) o.attested = Observation::Attested::reached_command;
    bool running = true;
    if (spec.attestation.kind == Attestation::Kind::exec)
        running = follow_execs(runner->pid, std::max<std::uint32_t>(spec.attestation.exec_index, 1), spec.command_file, o);
    if (terminal) terminal->start_relay();
    pump_runner_output(spec, *runner, running, control, result, terminal ? &*terminal : nullptr);
    watchdog.stop();
    o.timed_out = watchdog.fired();
    o.timeout_killed = watchdog.killed();
    if (spec.limits)
        spec.limits->judge_end(o, !spec.in_process && spec.attestation.kind != Attestation::Kind::exec, std::chrono::steady_clock::now() - began);
    return result;
}

}  // namespace confine::detail
