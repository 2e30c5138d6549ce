// What the POSIX executor uses that only Linux offers, behind small functions. The Linux
// build implements them in platform/linux/; a build without that folder (macOS, or
// CONFINE_PORTABLE_POSIX) links platform/posix/without_linux.cpp instead, where a run
// that needs exec attestation by ptrace or in-process confinement is refused before
// anything starts (docs/design.md §3: fail closed), and the command behind a
// status-descriptor runner is not looked for (signals then go to the runner).
// Internal to libconfine.
#pragma once

#include "child_memory.hpp"

#include "executor.hpp"
#include "output_pump.hpp"

#include <confine/internal/network_filter_linux.hpp>

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace confine::detail {

// Why this build cannot run `spec` at all (it needs what only Linux offers), or nullopt.
std::optional<std::string> missing_feature(const ExecSpec& spec);

// In the forked child, between fork and exec: async-signal-safe, no allocation; 0 or an
// errno value.
int trace_me() noexcept;                 // be traced by the parent, which follows the execs
int install_terminal_filter() noexcept;  // docs/design.md §11: no terminal injection

// A descriptor of a file holding the network filter's program (network_filter_linux.hpp),
// at its start, close-on-exec: what bubblewrap's --seccomp reads. -1 with errno set
// (ENOSYS where there is no filter). `kind` says which program.
int network_filter_descriptor(network::Filter kind = network::Filter::closed);

// Follows the traced runner `pid` from its own exec to its `command_exec`th, the
// command's, and lets it go there only if that exec ran `command_file` (compared by
// device and inode; for a script, the script the exec named, not its interpreter)
// (docs/design.md §6). True when it is still running (the command reached, or the
// following failed: `o.attested` says which); false when it ended, its status recorded
// in `o`, or when it was ended because the declared exec was not the command's
// (Attested::wrong_exec, before the command ran any of its code).
bool follow_execs(pid_t pid, std::uint32_t command_exec, const std::filesystem::path& command_file, Observation& o);

// A descriptor that becomes readable when `pid`, a child, ends (before it is reaped); -1.
int open_pidfd(pid_t pid);

// Whether this process's descriptors `a` and `b` are one open file description (kcmp's
// KCMP_FILE): 1 if they are, 0 if not, -1 where that cannot be asked.
int same_open_file(int a, int b);

// Discards `sig` when it is pending for the calling thread, which blocks it.
void discard_pending(int sig);

// The run's supervisor (platform/linux/reaper.cpp, docs/design.md §7): the init of a PID
// namespace of the run's own where this process may make one, else a child subreaper.
enum class ReaperMode { pid_namespace, subreaper };
ReaperMode reaper_mode();

// The signals the host sends the supervisor: end the run gently (SIGTERM to every process
// of it), end it now (SIGKILL to every one), and — a subreaper's own death signal — the
// host is gone.
struct ReaperSignals {
    int term_run, kill_run, host_gone;
};
ReaperSignals reaper_signals();

struct ReaperPlan {
    bool pid_namespace = false;
    bool runner_group = false;  // the runner gets a process group of its own
    int reaped = -1;            // write end: the runner's wait status, once it ended
    int lifeline = -1;          // read end, whose write end only the host holds
    int host_end = -1;          // that write end, closed first thing in the supervisor
    int term_run = 0, kill_run = 0, host_gone = 0;
};

// Starts the supervisor, which starts the runner by calling `start_runner(runner_plan)`
// in a child of its own, and reports on `report_fd` (child_report.hpp) when it cannot.
// Where it can (x86-64, AArch64), the supervisor shares this process's memory for its
// whole life, on `memory`'s second stack, and the runner shares it until its exec, on
// the first: no copy of the host is made (docs/design.md §7). This function then returns
// only once the runner has executed or failed, seen on `report_read`, the read end of
// the report pipe; `report_fd`, its write end, it closes in this process in any case.
// In the parent: the supervisor's ID, or -1 with errno set. Called with every signal
// blocked; `memory` must outlive the supervisor.
pid_t start_reaper(const ReaperPlan& plan, void (*start_runner)(const void*), const void* runner_plan, int report_fd, int report_read,
                   ChildMemory& memory) noexcept;

// Waits until the supervisor `pid` is gone, killing it if it is not, before its stack
// goes (its memory is this process's): a run whose host never waited for it ends here.
// Where no supervisor shares this process's memory, nothing.
void end_supervisor(pid_t pid) noexcept;

// Starts `start(arg)` in a child that runs on `memory`'s first stack and shares this
// process's memory until its exec or its end, while the calling thread waits (Linux:
// a clone with CLONE_VM and CLONE_VFORK, as posix_spawn makes; elsewhere a fork). In
// the parent: the child's ID, or -1 with errno set. Called with every signal blocked.
pid_t start_child(void (*start)(const void*), const void* arg, ChildMemory& memory) noexcept;

// Whether children share this process's memory (start_child, start_reaper), and the
// size of each stack they run on (start_child needs one, start_reaper two). They do not
// without Linux. Under AddressSanitizer they do too, the sanitizer told of each move
// onto a child's stack (platform/linux/sanitizer_stacks.hpp): the sanitizer pass runs
// the path that ships.
#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
inline constexpr bool children_share_memory = true;
#else
inline constexpr bool children_share_memory = false;
#endif
inline constexpr std::size_t child_stack_size = std::size_t(256) << 10;

// Sends `sig` to every process below `root` (not to `root` itself), found through /proc;
// how many. Where /proc cannot say (a build without platform/linux), none.
int signal_processes_below(pid_t root, int sig);

// Finds the command below a runner that names the command's process ID on its status
// descriptor, so that a forwarded signal reaches the command itself (docs/design.md §7),
// and says when the runner's own set-up is over. It rides along with the output pump.
class CommandLocator : public PumpCompanion {
public:
    // After the status text grew: what it says now, whole.
    virtual void status_grew(const std::string& text) = 0;
};

// A locator for `runner`'s status text, whose number follows `key`: it calls
// `on_started` with each process signals should go to, and `setup_done` once the runner
// has done its own set-up or will not say. nullptr where the command cannot be found
// safely (nothing then says when set-up is done).
std::unique_ptr<CommandLocator> locate_reported_command(pid_t runner, std::string key, std::function<void(int)> on_started,
                                                        std::function<void()> setup_done);
// Whether locate_reported_command finds commands here (false: it gives nullptr, and
// signals meant for the command go to the runner).
bool locates_reported_commands();

}  // namespace confine::detail
