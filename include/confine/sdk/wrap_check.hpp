// What the host refuses in a runner's wrap result (confine-plugin(7), THE WRAP RESULT,
// PLACEHOLDERS): the checks confine applies to every result before it runs anything, and
// for which it fails the call closed (PLUGIN_BAD_RESULT). One copy: the host calls it on
// every wrap, and a runner's own tests call it through sdk::testing::check_wrap_result
// (confine/sdk/testing.hpp), so that a test refuses what confine would.
//
//   auto wrapped = runner.wrap(policy, command);
//   if (auto refused = confine::sdk::wrap_result_refusal(*wrapped, command))
//       ...  // "wrap result does not end with "--" and the command verbatim", ...
//
// What only a result in C can get wrong (a null item, a size, a value outside an enum)
// is the host's reader's to refuse; a result the SDK marshals never has it.
#pragma once

#include <confine/sdk/placeholders.hpp>
#include <confine/sdk/vocabulary.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine::sdk {

// The most items in any list of a wrap result (its argv, signatures, lines, statuses):
// a malformed result must not make the host walk arbitrary memory.
inline constexpr std::size_t max_result_list_items = std::size_t{1} << 16;

// The exec attestation's index: from 1 (the runner's own exec) to this.
inline constexpr std::uint32_t max_exec_index = 16;

// The longest status marker or process-ID key, in bytes.
inline constexpr std::size_t max_status_text = 256;

// The placeholders among the runner's own arguments in `argv` (after its program, before
// the "--" at command_index - 1), in argument order: the status descriptor at the
// argument a status_fd `attestation` names, whatever its text (the ABI lets the runner
// choose it), and every other argument parse_placeholder reads as a placeholder. Why not,
// in one line: a malformed placeholder, {status-fd} where the attestation names no status
// descriptor, a placeholder of another kind where it does, a placeholder as the program.
inline std::expected<std::vector<Placeholder>, std::string> runner_placeholders(std::span<const std::string> argv,
                                                                                     std::size_t command_index,
                                                                                     const Attestation& attestation) {
    const bool status = attestation.kind == Attestation::Kind::status_fd;
    const std::size_t end = std::min(command_index == 0 ? 0 : command_index - 1, argv.size());
    std::vector<Placeholder> out;
    for (std::size_t i = 0; i < end; ++i) {
        auto parsed = parse_placeholder(argv[i]);
        const std::string where = "argument " + std::to_string(i);
        if (!parsed) return std::unexpected(where + ": " + parsed.error());
        if (status && i == attestation.status_argument) {
            if (*parsed && (*parsed)->kind != PlaceholderKind::status_fd)
                return std::unexpected(where + ", where the attestation puts the status descriptor, is a " +
                                       std::string(placeholder_name((*parsed)->kind)) + " placeholder");
            out.push_back({PlaceholderKind::status_fd, {}, i});
            continue;
        }
        if (!*parsed) continue;
        if (i == 0) return std::unexpected(where + ", the runner's program, is a placeholder");
        if ((*parsed)->kind == PlaceholderKind::status_fd)
            return std::unexpected(where + " is {status-fd}, but the attestation names " +
                                   (status ? "argument " + std::to_string(attestation.status_argument) : std::string("no status descriptor")));
        out.push_back({(*parsed)->kind, std::move((*parsed)->path), i});
    }
    return out;
}

namespace detail {

// The command must reach the runner verbatim after "--": a plugin may not drop, reorder
// or rewrite what the caller asked to run, and "--" is not the runner itself.
inline bool ends_with_command(std::span<const std::string> argv, std::span<const std::string> command) {
    const std::size_t tail = command.size() + 1;
    return argv.size() > tail && argv[argv.size() - tail] == "--" &&
           std::equal(command.begin(), command.end(), argv.end() - static_cast<std::ptrdiff_t>(command.size()));
}

// A non-empty line of at most max_status_text bytes.
inline bool one_line(std::string_view text) {
    return !text.empty() && text.size() <= max_status_text && text.find_first_of(std::string_view("\n\0", 2)) == std::string_view::npos;
}

// The attestation's own refusal: an exec index out of its range; a status descriptor that
// is not one of the runner's own arguments (after its program, before the "--" at
// command_index - 1), or a marker or process-ID key that is not one line.
inline std::optional<std::string> attestation_refusal(const Attestation& a, std::size_t command_index) {
    switch (a.kind) {
    case Attestation::Kind::none: return std::nullopt;
    case Attestation::Kind::exec:
        if (a.exec_index < 1 || a.exec_index > max_exec_index)
            return "malformed wrap result (attestation exec index " + std::to_string(a.exec_index) + ")";
        return std::nullopt;
    case Attestation::Kind::status_fd:
        if (a.status_argument < 1 || std::size_t{a.status_argument} + 1 >= command_index)
            return "malformed wrap result (status descriptor argument " + std::to_string(a.status_argument) + ")";
        if (!one_line(a.status_marker)) return "malformed wrap result (status marker)";
        if (!a.status_pid_key.empty() && !one_line(a.status_pid_key)) return "malformed wrap result (status process-ID key)";
        return std::nullopt;
    }
    return "malformed wrap result (attestation)";
}

}  // namespace detail

// Why the host refuses `result` as the wrap of `command`, in the one line it says (its
// error is PLUGIN_BAD_RESULT and nothing runs), or nullopt when it accepts it:
// - a list longer than max_result_list_items: "malformed wrap result (lists)";
// - an argv that does not end with "--" and the command verbatim, with at least the
//   runner's program before it: "wrap result does not end with "--" and the command verbatim";
// - an exec attestation outside 1..max_exec_index: "malformed wrap result (attestation
//   exec index N)";
// - a status attestation whose argument is the program, the "--" or beyond ("malformed
//   wrap result (status descriptor argument N)"), whose marker is not one non-empty line of
//   at most max_status_text bytes ("(status marker)"), or whose process-ID key, when
//   given, is not ("(status process-ID key)");
// - a placeholder that is malformed or out of its place (runner_placeholders): "malformed
//   wrap result (argument N: ...)".
// Accepted, the runner's placeholders are put in `placeholders` where one is given.
inline std::optional<std::string> wrap_result_refusal(const WrapResult& result, std::span<const std::string> command,
                                                      std::vector<Placeholder>* placeholders = nullptr) {
    const FailureRule& rule = result.failure_rule;
    for (const std::size_t size : {result.argv.size(), result.denial_signatures.size(), rule.fatal_signatures.size(),
                                   rule.informational_lines.size(), rule.evidence_exit_codes.size()})
        if (size > max_result_list_items) return "malformed wrap result (lists)";
    if (!detail::ends_with_command(result.argv, command)) return "wrap result does not end with \"--\" and the command verbatim";
    const std::size_t command_index = result.argv.size() - command.size();
    if (auto wrong = detail::attestation_refusal(result.attestation, command_index)) return wrong;
    auto found = runner_placeholders(result.argv, command_index, result.attestation);
    if (!found) return "malformed wrap result (" + found.error() + ")";
    if (placeholders) *placeholders = std::move(*found);
    return std::nullopt;
}

}  // namespace confine::sdk
