// What confinectl does differently per OS: signals, and writing its report.
#pragma once

#include <atomic>
#include <expected>
#include <memory>
#include <filesystem>
#include <optional>
#include <string>

namespace confinectl {

// Keeps confinectl from being traced, read or entered through /proc by a process of the
// same user — a confined command included (docs/design.md §11: the supervisor cannot be
// entered). Processes it executes are dumpable again as usual.
void make_undumpable();

// Signals sent to confinectl by another process reach the process `child` names (when
// non-zero), and on POSIX its process group when that is not confinectl's own; so do the
// terminal's, where they do not reach it by themselves (docs/design.md §7). On Windows, a
// console event asks that runner to finish instead (finish_child_on_console_event).
void forward_signals(std::atomic<int>& child);
// The runner `child` is about to name will name its command (bubblewrap): while `child`
// names that runner, a signal is held rather than passed to it — it would end the
// sandbox — and passed on once `child` names the command (child_changed); dropped if the
// run ends first. Nothing to hold on Windows.
void await_command();
// `child` has changed: signals held for the command are passed on if it names it now.
void child_changed();

// The signal that interrupted the run without reaching the command as a signal (a
// Windows console event), if any: confinectl then ends with 128 + it. Never on POSIX,
// where the command itself gets the signal and its end is confinectl's.
std::optional<int> interrupted_by();

#ifdef _WIN32
// What confinectl does on a console event while a run is under way: asks the runner
// `child` names to finish and waits (internal/windows_finish.hpp); false — the event's
// default, the end of confinectl — when there is no runner or it has no such event.
bool finish_child_on_console_event(unsigned long event);
#endif

// The path of this program, as the kernel knows it: the command `probe` stands in for a
// run's, and what `probe --prove`'s canaries run.
std::string own_program();

// Ends confinectl by the signal that ended the command (no core file of its own).
[[noreturn]] void die_by(int sig);

// The report's file, fixed before the command runs: its directory is opened (and shown
// to take a new file) then, and the report is written through that directory, so that
// a command which replaces the directory, or a directory above it, by a link cannot
// redirect it. Written beside its name and renamed into place: a reader never sees
// half of it.
class ReportFile {
public:
    // The report file `path`, or one line saying why it cannot be written.
    static std::expected<ReportFile, std::string> open(const std::string& path);
    ReportFile(ReportFile&&) noexcept;
    ReportFile& operator=(ReportFile&&) noexcept;
    ~ReportFile();
    // Writes `text` and renames it into place; the error, if any, as one line.
    std::optional<std::string> write(const std::string& text);

private:
    struct Impl;
    explicit ReportFile(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Makes descriptor `fd` ready to take the report: open, not a standard stream, and
// never inherited by the command. The error, if any, as one line.
std::optional<std::string> prepare_report_descriptor(int fd);
std::optional<std::string> write_to_descriptor(int fd, const std::string& text);

}  // namespace confinectl
