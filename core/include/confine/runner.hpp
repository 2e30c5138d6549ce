// Host-side vocabulary of one call: the policy, a probe's verdict, and the wrap
// result (DESIGN §1, §4).
#pragma once

#include <cstdint>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

enum class Mode { read_only, workspace_write };

// What one call may do. Passed with every call; never stored by a provider.
struct Policy {
    Mode mode = Mode::workspace_write;
    std::filesystem::path workspace;               // absolute; required for workspace-write
    std::vector<std::filesystem::path> writable;   // extra writable roots, absolute
};

enum class Enforcement { full, partial };

struct Verdict {
    enum class Kind { unusable, full, partial };
    Kind kind = Kind::unusable;
    std::string reason;  // why unusable; for usable verdicts an optional note

    bool usable() const noexcept { return kind != Kind::unusable; }
};

struct FailureRule {
    std::vector<std::int32_t> allowed_exit_codes;  // empty: a fatal line counts at any status
    std::vector<std::string> fatal_signatures;     // case-insensitive, per stderr line
    std::vector<std::string> informational_lines;  // exact whole lines, never evidence
};

// How the executor learns, out of band, that the runner reached the command.
struct Attestation {
    enum class Kind { none, exec, status_fd };
    Kind kind = Kind::none;
    std::uint32_t exec_index = 0;  // exec: the command is the runner process's Nth execve
    // status_fd: argv[status_argument] becomes the number of a descriptor the runner
    // reports on; the command ran iff a line written there contains status_marker.
    std::size_t status_argument = 0;
    std::string status_marker;
    // status_fd, optional: the key after which the runner writes the command's process
    // ID there; forwarded signals then go to the command (see RunOptions::on_started).
    std::string status_pid_key;
};

// Confinement the executor can apply to a process of its own (the child between fork
// and exec, or the caller itself) instead of running the runner's argv. `apply` is
// async-signal-safe and allocates nothing; 0 means the calling process is confined,
// otherwise `error` holds one line saying why.
struct InProcessConfinement {
    std::int32_t (*apply)(void* state, char* error, std::size_t error_size) = nullptr;
    void* state = nullptr;
    std::shared_ptr<void> keep_alive;  // the plugin's result and the plugin itself
};

struct WrapResult {
    std::string runner;              // the runner that wrapped, or "runner_command"
    std::vector<std::string> argv;   // runner argv + "--" + the caller's argv
    Enforcement enforcement = Enforcement::full;
    std::vector<std::string> denial_signatures;
    FailureRule failure_rule;
    Attestation attestation;
    std::optional<InProcessConfinement> in_process;
    std::size_t command_index = 0;  // where the caller's argv starts in `argv`
};

std::string_view to_string(Mode mode) noexcept;         // "read-only", "workspace-write"
std::string_view to_string(Enforcement e) noexcept;     // "full", "partial"
std::string_view to_string(Verdict::Kind kind) noexcept;  // "full", "partial", "unusable"

}  // namespace confine
