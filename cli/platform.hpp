// What confinectl does differently per OS: signals, and writing its report.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>

namespace confinectl {

// Signals sent to confinectl by another process reach the process `child` names (when
// non-zero). Where the OS has no such signals, nothing.
void forward_signals(std::atomic<int>& child);

// Ends confinectl by the signal that ended the command (no core file of its own).
[[noreturn]] void die_by(int sig);

// Writes `text` beside `path` and renames it into place: a reader never sees half of
// it. The error, if any, as one line.
std::optional<std::string> write_file_atomically(const std::string& path, const std::string& text);

// Why `dir` cannot take a new file, if it cannot.
std::optional<std::string> cannot_write_in(const std::filesystem::path& dir);

// Makes descriptor `fd` ready to take the report: open, not a standard stream, and
// never inherited by the command. The error, if any, as one line.
std::optional<std::string> prepare_report_descriptor(int fd);
std::optional<std::string> write_to_descriptor(int fd, const std::string& text);

}  // namespace confinectl
