// What the executor observes of one run (the platform layer's result), which the
// classifier judges (run/classify.hpp) and the run's limits read: how the command ended,
// what the runner attested, and what its stderr carried as it passed. Internal to
// libconfine.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace confine {

// Evidence lines taken from a command's stderr (a fatal line, a denial hint) are cut to
// this many bytes, at a UTF-8 character boundary, and "…" is appended to a line that was
// cut. Informational lines are compared whole, whatever their length.
inline constexpr std::size_t evidence_line_max = 4096;

// What the classifier needs of a run's stderr, found as the stream passed (design.md §13):
// the first line that carries one of the failure rule's fatal signatures and is not one
// of its informational lines, and the first line in the runner's denial dialect.
// Signatures match case-insensitively (ASCII) anywhere in a line; lines end at '\n', and
// a last line without one counts.
struct StderrFindings {
    std::optional<std::string> fatal_line;  // cut to evidence_line_max
    std::string fatal_signature;            // the rule's first signature the line carries
    std::optional<std::string> denial_line;  // cut to evidence_line_max
};

// What the executor observed of one run, for the classifier, which judges it.
struct Observation {
    bool spawned = true;
    int spawn_errno = 0;
    std::optional<int> exit_code;
    std::optional<int> signal;
    bool timed_out = false;
    bool timeout_killed = false;       // the time limit came to SIGKILL (after its SIGTERM, or without one)
    std::optional<std::string> limit;  // the limit that ended the command (Outcome::limit)
    std::vector<std::string> limit_possible;  // limits that may have, untold (Outcome::limit_possible)
    std::string limit_how;  // how `limit` ended it, in words
    // What the executor saw itself of whether the runner reached the command: the
    // in-process path's error pipe, or the runner's execs followed (exec attestation).
    // wrong_exec: the exec the runner declared as the command's ran another file, so the
    // runner was ended there, before it was let go (attestation_detail says which execs).
    enum class Attested { unavailable, reached_command, runner_stopped, wrong_exec };
    Attested attested = Attested::unavailable;
    std::string attestation_detail;  // why unavailable, how the runner stopped, or which exec was wrong
    std::string runner_message;      // what an in-process runner said when it failed
    bool stderr_seen = false;        // whether stderr_findings come from the run's stderr
    StderrFindings stderr_findings;
    // A runner that attests on a status descriptor (Attestation::Kind::status_fd): what
    // it wrote there (up to 1 MiB), a channel the command cannot write to; nullopt for
    // any other run. The classifier looks in it for the runner's marker
    // (design.md §6).
    std::optional<std::string> status_text;
};

}  // namespace confine
