// Running a command confined, and telling a sandbox failure from a task failure
// with evidence (design.md §5, §6, §7).
//
//   auto provider = confine::Provider::create(std::move(config));
//   confine::PolicyRequest policy{confine::Mode::workspace_write, "/home/me/ws"};
//   // unsaid: network and tmp are the configuration's [policy] (confine/policy.hpp)
//   std::vector<std::string> argv{"make", "-j2"};
//   auto outcome = confine::run(**provider, policy, argv);
//   if (!outcome) ...                               // bad policy or configuration: nothing ran
//   else if (outcome->kind == confine::OutcomeKind::sandbox_unavailable) ...
//
//   auto process = confine::spawn(**provider, policy, argv, {.timeout = 30s});
//   process->kill(SIGTERM);  auto done = process->wait();  done.stdout_text ...
//   // (the last MiB of each stream by default; done.stdout_dropped says what was not kept)
#pragma once

#include <confine/environment.hpp>
#include <confine/error.hpp>
#include <confine/limits.hpp>
#include <confine/policy.hpp>
#include <confine/wrap_result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

class Provider;

enum class OutcomeKind {
    completed,            // the command ran confined and exited 0
    task_failed,          // the command ran confined and failed: its status is the answer
    sandbox_unavailable,  // the command did not run (confined): the runner failed
};

// What decided between runner failure and task outcome.
enum class Basis {
    attestation,  // the executor saw, out of band, whether the runner reached the command
    rule,         // the runner's failure rule applied to exit status and stderr
    spawn_error,  // the runner could not be started at all
    selection,    // no runner could be selected or could wrap the command
};

// One thing the run-end check moved aside (see Outcome::set_aside).
struct SetAside {
    std::filesystem::path path;      // where the command left it
    std::filesystem::path moved_to;  // where it is now: beside it, `NAME.confine-blocked-N`
    std::string error;               // why it could not be moved (moved_to then empty)
    // A protected path the runner could not keep read-only, which the command changed:
    // what it left there moved aside (moved_to), and the path put back as it was when the
    // run began (`error` says what could not be).
    bool restored = false;
};

// What the run's proxy saw of one host and port (the network through the proxy,
// Network::proxy): the connections made to it or refused, and the bytes each way.
struct NetworkRequest {
    std::string host;  // as the command named it, lower-case
    std::uint16_t port = 0;
    bool allowed = false;  // false: refused (not listed, or a name that leads where none may go)
    std::uint64_t bytes_up = 0;    // from the command to the host
    std::uint64_t bytes_down = 0;  // from the host to the command
    std::uint64_t connections = 0;
    std::string reason;  // why it was refused
};

struct Outcome : Asked {
    OutcomeKind kind = OutcomeKind::sandbox_unavailable;
    std::optional<int> exit_code;  // when it exited
    std::optional<int> signal;     // when it was killed by a signal
    bool timed_out = false;        // killed (with its process group) at the time limit
    // The limit that ended the command (limits.hpp): "memory" (the run's cgroup killed it
    // for its memory), "cpu" (the run's CPU time, or SIGXCPU), "file-size" (SIGXFSZ), "processes" (it failed
    // once the run's cgroup had refused a process); nullopt when none did, or none said.
    std::optional<std::string> limit;
    // The limits that may have ended a command that failed, where that cannot be told: a
    // resource limit the command sees refused as an error of its own — memory by
    // RLIMIT_AS (an allocation failing), processes by RLIMIT_NPROC (a fork failing),
    // open-files (an open failing) — never a kill. Empty when `limit` is set.
    std::vector<std::string> limit_possible;
    // One line saying how the time limit or a limit ended the run (which, its value, what
    // was done, how the command ended), or which may have; empty when neither did.
    std::string limit_note;
    std::string runner;
    std::optional<Enforcement> enforcement;  // full only when every dimension asked is
    // What the runner enforced of each dimension, once a wrap said; which of them the
    // policy asked is the wrap's (Asked: `network_asked` false when the policy allowed the
    // network, dimensions->network then means nothing).
    std::optional<Dimensions> dimensions;
    Tmp tmp = Tmp::unsaid;  // which /tmp the command got, once a wrap said (unsaid: it did not)
    Loopback loopback = Loopback::unsaid;  // with the network none, whether it had a loopback of its own
    // The names of the variables the environment filter left out of the command's
    // environment (run_environment()), sorted; never their values.
    std::vector<std::string> environment_removed;
    // The caller's descriptors handed on to the command (RunOptions::pass_fds), in the
    // order given; the command got no other beyond 0, 1 and 2.
    std::vector<int> passed_fds;
    // What the run-end check found where git would read it on the host and where nothing
    // stood when the run began (a repository's `commondir`, `config.worktree`, a `.git`
    // in a root inside a parent repository, a submodule's `.git`, an included
    // configuration file, ...): moved aside, never removed (docs/design.md §11).
    std::vector<SetAside> set_aside;
    Basis basis = Basis::selection;
    // For sandbox_unavailable: the matched fatal stderr line, or what the attestation,
    // spawn error or selection said. Empty otherwise.
    std::string evidence;
    std::string matched_rule;  // the fatal signature that matched, when a rule decided
    // For task_failed: the first stderr line in the runner's denial dialect, or one that
    // names a path the policy denies or protects with an error a refusal gives
    // (WrapResult::denial_paths) — the sandbox probably said no. A hint, never a runner
    // failure.
    std::optional<std::string> denial_hint;
    // With a denial hint confine can read further, one line saying what happened and what
    // to do (docs/design.md §13): a name that did not resolve with the network none, or a
    // host outside the run's allow_hosts (named, with the --allow-host that would let the
    // command reach it); apt's drop to its _apt user, which a confined command cannot make
    // (with the apt option that keeps it root). Unset otherwise.
    std::optional<std::string> denial_advice;
    // With the network through the run's proxy: what it saw, one entry per host, port and
    // verdict, in the order first seen (empty when the command reached for nothing).
    bool network_proxied = false;
    std::vector<NetworkRequest> network_requests;
    // The command had a pseudo-terminal of the run's own (RunOptions::own_terminal): a
    // host that stands for it at the caller's terminal ends with 128 + a signal that
    // ended it, as a terminal's program does, rather than by that signal.
    bool own_terminal = false;
    // With the network through the run's proxy: the connections it answered 503 because it
    // was serving as many as it serves at once (512) already.
    std::uint64_t network_over_limit = 0;
};

std::string_view to_string(OutcomeKind kind) noexcept;  // "completed", "task_failed", "sandbox_unavailable"
std::string_view to_string(Basis basis) noexcept;       // "attestation", "rule", "spawn_error", "selection"

struct RunOptions {
    // The run's time limit: when it passes, every process of the run gets SIGTERM, and
    // `kill_after` later SIGKILL (at once when kill_after is 0); the outcome says
    // timed_out. Unset, the configuration's ([policy] timeout, kill_after; kill_after
    // else 5 s). Where the host does not supervise the run (run_supervision: a runner
    // followed by exec attestation, a build without a supervisor) it is the runner's
    // process group that is signalled, so such a run gets a group of its own, out of
    // reach of a terminal's job control.
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<std::chrono::milliseconds> kill_after;
    // What the run may take (limits.hpp), over the configuration's [policy.limits]: an
    // entry set here replaces the configuration's of that name. The outcome's
    // dimensions.limits says how they were held, `limit` which one ended the command; a
    // level below [policy.enforcement] limits is sandbox_unavailable, and nothing runs.
    Limits limits;
    std::filesystem::path working_directory;           // empty: the current one
    // The environment the run starts from, "K=V" entries; nullopt: this process's. Either
    // way the configuration's [policy.env] filter applies to it (run_environment()): the
    // operator decides what a confined command may see, whoever calls.
    std::optional<std::vector<std::string>> environment;
    // On top of the filter, as `confinectl run --env` gives them: "NAME" passes the
    // starting environment's NAME through whatever the filter says; "NAME=VALUE" sets it.
    std::vector<std::string> environment_overrides;
    // Descriptors of this process handed on to the command, under the same numbers
    // (POSIX; each open, above 2, named once). The command gets descriptors 0, 1 and 2,
    // these, and nothing else this process holds or was left by its own caller: every
    // other one is closed when the runner (or, confined in place, the command) is
    // executed — but for those the host hands the runner itself (a status pipe,
    // directories, the network filter), which the runner keeps from the command. A bad
    // entry is USAGE, and nothing runs. Not available on Windows (USAGE when not empty).
    std::vector<int> pass_fds;
    // Called with the runner's process id as soon as it exists (e.g. to forward signals),
    // and again with the command's own when the runner reports it (a status-descriptor
    // runner such as bubblewrap), so that a forwarded signal reaches the command itself.
    std::function<void(int)> on_started;
    // Called before on_started with the runner's id when the runner will name its command
    // (a status-descriptor runner such as bubblewrap, whose command has a session and a
    // PID namespace of its own). on_started then gives the command's id once it is found,
    // and the runner's again when it has ended. While on_started's last id is the runner's,
    // a signal meant for the command is best held and passed on when the command is found:
    // the runner would end of it, and the sandbox with it (as Process::kill does; SIGKILL
    // aside, which is meant to).
    std::function<void()> on_command_awaited;
    // Called once the run is wrapped, before anything is started, with what the runner
    // enforces (e.g. to say that it is not the chain's first choice). run() and spawn().
    std::function<void(const WrapResult&)> on_wrapped;
    // Foreground: whether a failed run's outcome should carry a denial hint. Without
    // one, a runner that attests (so that no rule needs stderr) leaves stderr to the
    // command: not a byte of it goes through this process.
    bool denial_hint = true;
    // Background: how much of each of stdout and stderr is kept. Past `limit` bytes,
    // the head or the tail is kept, as `keep` says, and Finished counts what was
    // dropped; the classifier still reads all of stderr as it passes.
    struct Capture {
        std::size_t limit = std::size_t{1} << 20;  // 1 MiB per stream
        enum class Keep { head, tail };
        Keep keep = Keep::tail;  // the end of a build's output usually says what went wrong
    };
    Capture capture;
    // Foreground only: when the selected runner can confine in-process, confine the
    // calling process itself and replace it with the command — no fork, no parent
    // left. run() then returns only if that failed, with an Outcome saying why (this
    // process's descriptors above 2 but pass_fds are close-on-exec by then). Nothing is
    // left either to end what the command starts, to time it or to report on it: taken
    // only when the configuration accepts a run whose processes may outlive it
    // ([policy.enforcement] lifetime = "best-effort") and no timeout is set.
    bool exec_in_place = false;
    // Foreground only: when this process's stdin and stdout are terminals and it is in
    // the foreground of its terminal, the command gets a pseudo-terminal of the run's own
    // instead of the caller's (as ssh, script and `docker run -t` do): its slave is the
    // command's stdin, stdout and — when this process's stderr is a terminal too and the
    // runner attests — stderr, and its controlling terminal in a session of its own, with
    // job control there; this process puts its terminal in raw mode while the command
    // runs (restored at the end), relays the bytes both ways and the window size
    // (relay_window_size). The caller's terminal device is then none of the command's:
    // nothing it does reaches that terminal but through the relay. The command's stdout
    // and stderr are then one stream, as they are on any terminal. Not executed in place.
    bool own_terminal = false;
};

// The run's own terminal, if one is being relayed (RunOptions::own_terminal); each call
// is async-signal-safe, and does nothing when there is none. A host calls them from its
// signal handlers: on SIGWINCH, relay_window_size() gives the run's terminal this
// process's window size (true: taken, the command's terminal signals it; do not pass the
// signal on); before it stops or ends by a signal, release_terminal() gives the caller's
// terminal back its settings; once continued, retake_terminal() puts it in raw mode
// again.
bool relay_window_size() noexcept;
void release_terminal() noexcept;
void retake_terminal() noexcept;

// The environment run() and spawn() give the runner, and through it the command, on
// every runner and path: `options.environment` (or this process's), filtered by the
// provider's configuration ([policy.env]) with `options.environment_overrides` on top.
// INVALID_POLICY for a bad override. A host that runs a wrap itself gives the runner
// exactly `variables`, and no other variable.
std::expected<FilteredEnvironment, Error> run_environment(const Provider& provider, const RunOptions& options = {});

// The package managers' caches and settings of a run of `wrapped` (the provider's
// [policy.packages]; README, "Package installs"): in workspace-write mode, `environment`
// (run_environment()'s variables) with npm's, pip's and cargo's cache variables pointed
// beneath the workspace, and the copies of the user's settings they name written there
// — the directory made only for a run of a package manager (npm, pip, cargo; the
// wrap's command, or a shell's -c script naming one) or where it is already.
// A variable the caller names (`environment_overrides`, as RunOptions takes them) or the
// operator sets ([policy.env] set) stays as it is. run() and spawn() do this themselves;
// a host that runs a wrap itself calls it before it starts the runner.
void prepare_packages(const Provider& provider, const WrapResult& wrapped, std::span<const std::string> environment_overrides,
                      std::vector<std::string>& environment);

// Why `pass_fds` cannot be handed on (RunOptions::pass_fds): an entry that is not an open
// descriptor of this process, is 0, 1 or 2, or is named twice; nullopt when they can.
// With `open_here` false (a wrap a host runs itself, whose descriptors are its own) only
// the numbers are judged. One line naming the descriptor.
std::optional<Error> check_pass_fds(std::span<const int> pass_fds, bool open_here = true);

// run() and spawn() complete the policy as the provider does (Provider::complete()): what
// the request leaves unsaid is the configuration's ([policy] network, tmp, deny_read,
// protect), the terminal and the working directory the run's (PolicyRequest::terminal,
// RunOptions::working_directory); a runner that cannot give what it then asks fails
// closed (sandbox_unavailable), as confinectl does.
//
// run() and spawn() look the command up first, as a shell would (PATH from the
// environment it will get, relative paths from its working directory), so that a
// command that does not exist is the caller's error (COMMAND_NOT_FOUND,
// COMMAND_NOT_EXECUTABLE) and never mistaken for a runner failure. A configuration that
// is wrong (is_configuration_error: a [runner.<name>] table its runner rejects, a plugin
// provided twice) is returned as that error too: nothing runs, on no other runner.
//
// Runs in the foreground: stdin, stdout and stderr are the caller's. stderr goes through
// a pipe and this process where something must read it: always for a runner that cannot
// attest (its failure rule reads it), and for one that attests when a denial hint is
// wanted and stderr is not a terminal. Every byte reaches the caller unchanged, in large
// reads, and is read as it passes, in bounded memory. Otherwise the command writes to
// the caller's stderr itself.
std::expected<Outcome, Error> run(const Provider& provider, const PolicyRequest& policy,
                                  std::span<const std::string> argv, const RunOptions& options = {});

// What run() would refuse for this call, before anything starts: the same preparation
// (the environment filtered, the command looked up, the loader check, the policy
// completed, resolved and wrapped, the run's limits) without starting anything — a root
// that is refused, a plugin or configuration where the command could write, a runner
// below a minimum or unable to give what is asked. The error run() would return, or
// SANDBOX_UNAVAILABLE with the evidence of the outcome it would give; nullopt when run()
// would start the command. For `confinectl probe`, which judges the workspace a run there
// would get.
std::optional<Error> check_run(const Provider& provider, const PolicyRequest& policy, std::span<const std::string> argv,
                               const RunOptions& options = {});

struct Finished {
    Outcome outcome;
    std::string stdout_text;  // at most RunOptions::capture.limit bytes
    std::string stderr_text;
    std::uint64_t stdout_dropped = 0;  // bytes written past the limit and not kept
    std::uint64_t stderr_dropped = 0;
    bool truncated() const { return stdout_dropped != 0 || stderr_dropped != 0; }
};

// A command running in the background, in a session (and process group) of its own, so
// without a terminal, with stdin on /dev/null and its output captured.
class Process {
public:
    struct Impl;
    explicit Process(std::shared_ptr<Impl> impl);
    ~Process();  // kills the process group if it is still running, and waits
    Process(Process&&) noexcept;
    Process& operator=(Process&&) noexcept;

    // Sends `signal` to the whole process group. Under a runner that names its command
    // (bubblewrap), every signal but SIGKILL goes to the command's process group, so that
    // it can handle it; SIGKILL ends the runner, and the sandbox with it. No effect once
    // it has finished.
    void kill(int signal);
    // Waits for the end; the same result on every call.
    const Finished& wait();
    bool finished() const;

private:
    std::shared_ptr<Impl> impl_;
};

// Looks the command up as run() and spawn() do, with `options`' environment as it is
// (give it run_environment()'s variables to look up as a run would) and working
// directory: command_not_found (a name not on PATH, a path that is not there, "", a
// script whose interpreter is missing) or command_not_executable; nullopt when it can
// be executed. A host that runs a wrap by itself calls it first, so that a typo is said
// as the caller's error (126, 127) and never taken for a sandbox failure.
// On Windows it is looked up once, as docs/design.md §7 says (PATH and
// PATHEXT, never the working directory for a bare name), and a batch file (.bat, .cmd)
// is refused as command_not_executable, its line saying why and what to run instead.
std::optional<Error> check_command(std::span<const std::string> argv, const RunOptions& options = {});

// The command as check_command found it, for the runner to start: on Windows argv[0]
// replaced by the absolute path of the file found, so that the runner starts exactly
// the file that was checked; elsewhere argv as it is (execvp finds it again in the
// sandbox, by the same PATH). run(), spawn() and `confinectl wrap` wrap this argv.
std::expected<std::vector<std::string>, Error> resolve_command(std::span<const std::string> argv, const RunOptions& options = {});

std::expected<Process, Error> spawn(const Provider& provider, const PolicyRequest& policy,
                                    std::span<const std::string> argv, const RunOptions& options = {});

// The run-end check of a wrap (docs/design.md §11; README, "git: what protect holds"),
// for a host that runs the wrap's argv itself: call it once the runner has ended, as
// run() and spawn() do. What the command planted where git or another tool reads it, and
// where nothing stood when the wrap was made, is moved aside (never removed); a protected
// path the runner could not keep read-only (wrapped.protect_restored) that the command
// changed is moved aside and put back as it was (SetAside::restored). Each is returned;
// nothing when the wrap has no check (wrapped.git_watch and wrapped.protect_watch null).
// Nothing of the run may be alive then: under bubblewrap nothing is once the runner has
// ended; under Landlock only confine's supervisor ends what the command left running.
std::vector<SetAside> run_end_check(const WrapResult& wrapped);

}  // namespace confine
