// The process side of running a wrapped command. Internal to libconfine; one
// implementation per OS under platform/.
#pragma once

#include <confine/execute.hpp>

#include "observation.hpp"
#if defined(_WIN32)
#include <confine/internal/windows_program.hpp>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

struct RunLimits;  // run_limits.hpp

struct ExecSpec {
    // The wrapped argv, or with `in_process` the command alone; argv[0] absolute or
    // found on PATH.
    std::vector<std::string> argv;
    // Applied by the child just before it executes the command: the attestation is
    // then the child's own error pipe, closed by the successful exec.
    const InProcess* in_process = nullptr;
    std::optional<std::vector<std::string>> environment;
    std::filesystem::path working_directory;
    bool background = false;     // own process group, stdin on /dev/null, stdout+stderr captured
    bool copy_stderr = false;    // foreground: stderr goes through a pipe and is copied to ours
    // With copy_stderr, where this process's stdout and stderr share a destination (one
    // file, one pipe: standard_outputs_shared): the command's stdout goes into the same
    // pipe, so that what it writes to both reaches that destination in the order written.
    bool merge_output = false;
    Attestation attestation;
    // The file the command was resolved to (absolute), as run() and spawn() found it:
    // exec attestation lets the runner go only at an exec of this file.
    std::filesystem::path command_file;
    // The runner's placeholder arguments (confine/wrap_result.hpp), filled in at the start:
    // the status descriptor (at the attestation's argument), directories the host opens
    // without following a link ({dir-fd:…}, {dir-path:…}), the network filter's program
    // ({network-filter-fd}, for bubblewrap's --seccomp).
    std::vector<Placeholder> placeholders;
    // With the network through the run's proxy: the network filter is the proxy program,
    // and `proxy_fd` (this process's, not inherited) is the descriptor whose copy fills
    // {proxy-fd}: the sandbox's side of the proxy's receiving socket.
    bool network_proxy = false;
    int proxy_fd = -1;
    // The caller's descriptors the command is handed, under the same numbers
    // (RunOptions::pass_fds); every other one above 2 is closed at the exec, but for those
    // the host hands the runner itself (status, directories, network filter).
    std::vector<int> pass_fds;
    std::optional<std::chrono::milliseconds> timeout;
    // At the time limit the run's processes get SIGTERM, and SIGKILL this much later.
    std::chrono::milliseconds kill_after{0};
    // Whether the host supervises the run (run_supervision): the runner is started under a
    // supervisor that ends every process of the run with it.
    bool supervised = false;
    std::function<void(int)> on_started;
    // Called before on_started with the runner's id when the runner will name its command
    // (RunOptions::on_command_awaited).
    std::function<void()> on_command_awaited;
    // What stderr is read for as it passes (docs/design.md §13), and how much of the
    // output a background run keeps.
    FailureRule failure_rule;
    std::vector<std::string> denial_signatures;
    std::vector<std::string> denial_paths;  // WrapResult::denial_paths
    RunOptions::Capture capture;
    // The run's limits (run_limits.hpp): applied by the runner's process before its exec;
    // its cgroup, if any, removed when the last holder lets go. nullptr: none.
    std::shared_ptr<const RunLimits> limits;
    // A pseudo-terminal of the run's own (own_terminal.hpp): its slave, the command's
    // stdin and stdout, its stderr unless copy_stderr, and the controlling terminal of the
    // runner's new session — unless the runner names its command (bubblewrap), whose
    // own new session takes it inside the sandbox. -1: none.
    int terminal = -1;
    std::string terminal_path;  // its slave's path: what fills {terminal-path}
    // Whether the command is to get a pseudo-terminal of the run's own: execute() makes
    // one and fills in `terminal` (without one, the command gets this process's).
    bool own_terminal = false;
};

// Shared with whoever may signal the run while it goes on (a background handle).
class RunControl {
public:
    // Signals the run's process group (background) or process (foreground), unless it
    // has already been reaped. A runner that names its command (a status-descriptor
    // runner such as bubblewrap, whose command has a session and a PID namespace of its
    // own) gets SIGKILL alone — a time limit, a kill: it ends the runner, and with it the
    // sandbox. Every other signal goes to the command's process group once the command
    // is located, so that the command can handle it; until then it is held, and passed
    // on when the command is located (dropped if the runner ends first): sent to the
    // runner, it would end the sandbox instead.
    void signal(int sig);
    // A time limit's first step: SIGTERM to every process of the run (where a supervisor
    // gathers them; else as signal(SIGTERM)).
    void terminate();
    // `supervised`: `pid` is the run's supervisor (spawn.hpp), which passes signals on to
    // the runner and ends the whole run when told.
    // `becomes_command`: the runner executes the command itself (exec attestation), so a
    // time limit's SIGTERM is for it too.
    // `names_command`: the runner will name its command (RunControl::command_located), and
    // signals but SIGKILL are held for it until then.
    void started(int pid, bool own_group, bool supervised = false, bool becomes_command = false, bool names_command = false);
    // The process the runner named as its command (0 or the runner's own: none any more).
    // Signals held for it are passed on now.
    void command_located(int pid);
    void exited();  // seen exiting, not reaped yet: the id cannot have been reused
    // Marks that the run either started or never will; wait_settled() returns then.
    void settle();
    void wait_settled();

private:
#if defined(_WIN32)
public:
    // The job the run's processes are in: signal() terminates it.
    void attach_job(void* job);

private:
    void* job_ = nullptr;
#endif
    std::mutex mutex_;
    std::condition_variable settled_cv_;
    int pid_ = 0;
    int command_ = 0;
    bool own_group_ = false;
    bool supervised_ = false;
    bool becomes_command_ = false;
    bool names_command_ = false;
    std::uint64_t held_ = 0;  // signals held for a command not located yet, one bit each
    bool done_ = false;
    bool settled_ = false;
};

struct Executed {
    Observation observed;
    // Background: what was kept of each stream, and how many bytes were not.
    std::string stdout_text;
    std::string stderr_text;
    std::uint64_t stdout_dropped = 0;
    std::uint64_t stderr_dropped = 0;
    // Foreground, stderr copied: what the runner wrote before its command existed, held
    // back and not copied yet. The caller copies it (copy_to_stderr) unless the outcome
    // says the runner stopped before the command: then it is the runner's own, and the
    // outcome carries it (docs/design.md §7: one line, not the same line twice).
    std::string held_stderr;
    // The command had a pseudo-terminal of the run's own (ExecSpec::own_terminal).
    bool own_terminal = false;
};

// Whether a foreground run here can give its command a pseudo-terminal of its own
// (RunOptions::own_terminal): this process's stdin and stdout are terminals and it is in
// its terminal's foreground. Never on Windows.
bool can_give_own_terminal();

// Where `name` is, as execvp would find it: a name with a slash as is, a bare name on
// the PATH of `environment` (nullopt: this process's). Relative paths are judged from
// `working_directory` (empty: the current one). When nowhere, `error` is ENOENT, or
// EACCES if something was there but cannot be executed.
std::optional<std::string> find_program(const std::string& name, const std::optional<std::vector<std::string>>& environment,
                                        const std::filesystem::path& working_directory, int& error);

#if defined(_WIN32)
// The file a command name starts on Windows (confine/internal/windows_program.hpp): PATH and
// PATHEXT of `environment` (nullopt: this process's), never the working directory for a
// bare name; a relative explicit path is made absolute from `working_directory` (empty:
// the current one). A batch file, or anything but a .exe or .com, is refused.
std::expected<std::string, windows::ProgramRefusal> resolve_windows_program(const std::string& name,
                                                                           const std::optional<std::vector<std::string>>& environment,
                                                                           const std::filesystem::path& working_directory);
#endif

// What the host's own supervision of a run gives of the `lifetime` dimension (docs/design.md
// §7), and the gap of a level below full, as a part of a wrap's `open` ("lifetime: ...").
// One implementation per platform: on Linux a supervisor process between the host and
// the runner (reaper.cpp), on Windows the run's job.
struct Supervision {
    Level lifetime = Level::none;
    std::string open;
    // The run's processes in a PID namespace of their own: a signal to any process outside
    // it finds none (ESRCH, "No such process"), whatever the runner.
    bool pid_namespace = false;
};
Supervision run_supervision(const WrapResult& wrapped);

// Whether this process's stdout and stderr share one destination in which the order of
// their writes is kept: one pipe or socket, or one regular file written through one open
// file description (or both appending). Never a terminal, which the command keeps as its
// own stdout (a program buffers and colours by it), nor another device. False on Windows.
bool standard_outputs_shared();

// Runs spec's argv and says what it observed; judges nothing (classify() does).
Executed execute(const ExecSpec& spec, RunControl& control);

// Writes `bytes` to this process's stderr, whole or until it fails; a reader that has
// gone ends nothing.
void copy_to_stderr(std::string_view bytes);
// The same, where SIGPIPE is already kept from ending this process; false if it failed.
bool write_to_stderr(std::string_view bytes);

// Confines the calling process with spec.in_process and replaces it with the command.
// Returns only when that failed, with what was observed (nothing has run).
Observation exec_in_place(const ExecSpec& spec);

}  // namespace confine::detail
