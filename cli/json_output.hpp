// confinectl's JSON documents. Each is built here and nowhere else in confinectl, so
// that a field changes in one place, together with docs/confinectl.1 which documents
// them. Every document carries "schema_version"; an absent value is null, never a
// missing key. Each function returns the document as confinectl writes it, the final
// newline included.
#pragma once

#include <confine/execute.hpp>
#include <confine/plugins.hpp>
#include <confine/prove.hpp>
#include <confine/provider.hpp>

#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace confinectl {

// `probe --json`: the platform, the configuration in effect (`config`: the last file read,
// or "<embedded default>"; `effective`: every value with its origin, the files read and
// the managed layer's files and bounds, as `config --json` gives them), the chain
// or the asserted runner command, each candidate's verdict, the selection and, when
// nothing is usable, why; the workspace judged (empty: none, read-only mode) and the line
// `run` would refuse with there (`run_refused`), or null. Indented.
std::string probe_json(const confine::Selection& selection, const confine::Config& config, const std::string& workspace,
                       const std::optional<std::string>& run_refused);
// {"schema_version": 1, "error": {"code": "SANDBOX_UNAVAILABLE", "message": ...}}
std::string error_json(confine::ErrorCode code, const std::string& message);

// `plugins --json`: the directories searched, in order, and every plugin file found
// there, loaded (version, ABI, summary) or refused (the error). Indented.
std::string plugins_json(std::span<const std::filesystem::path> dirs,
                         std::span<const confine::PluginSearch::Entry> entries);

// `wrap --json`: what a host that spawns the command itself needs — the argv, the
// enforcement, the denial signatures, the failure rule, how to attest, and the
// environment to give the runner (`environment`: its variables, the names removed and
// the names set), and the descriptors (`pass_fds`) the host may hand on to the command
// besides 0, 1, 2 and the placeholders' — it must close every other one itself. Indented.
// An argv or a variable that is not UTF-8 is an error: it cannot be carried exactly.
std::expected<std::string, std::string> wrap_json(const confine::WrapResult& wrapped, const confine::FilteredEnvironment& environment,
                                                  std::span<const int> pass_fds = {});

// `probe --prove --json`: the runner, the policy's network, and each check with its
// dimension, what was expected, what was observed, whether it held, its outcome (held,
// open, over-claim), the level the runner reported, what the runner says it leaves open
// of the dimension, and the words that name the check's hole; and the count of each
// outcome (`summary`).
std::string proof_json(const confine::Proof& proof);

// The report `run --report` and `run --report-fd` write after the command: its outcome
// and what decided it. One line. Text that is not UTF-8 (a command's stderr line) is
// carried with U+FFFD in place of each byte that is not. `skipped`: the runners of the
// chain passed over before the one that ran, each with why it cannot work here.
std::string run_report_json(const confine::Outcome& outcome, const std::vector<confine::Candidate>& skipped = {});

}  // namespace confinectl
