#include <confine/execute.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace confine {

std::string_view to_string(OutcomeKind kind) noexcept {
    switch (kind) {
    case OutcomeKind::completed: return "completed";
    case OutcomeKind::task_failed: return "task_failed";
    case OutcomeKind::sandbox_unavailable: break;
    }
    return "sandbox_unavailable";
}

std::string_view to_string(Basis basis) noexcept {
    switch (basis) {
    case Basis::attestation: return "attestation";
    case Basis::rule: return "rule";
    case Basis::spawn_error: return "spawn_error";
    case Basis::selection: break;
    }
    return "selection";
}

namespace {

bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
    if (needle.empty()) return false;
    auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
    });
    return it != haystack.end();
}

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        auto nl = text.find('\n');
        lines.push_back(text.substr(0, nl));
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return lines;
}

struct Match {
    std::string line;
    std::string signature;
};

// The first stderr line that carries a fatal signature and is not an informational line.
std::optional<Match> fatal_line(const FailureRule& rule, std::string_view stderr_text) {
    for (std::string_view line : lines_of(stderr_text)) {
        if (std::find(rule.informational_lines.begin(), rule.informational_lines.end(), line) != rule.informational_lines.end())
            continue;
        for (const auto& sig : rule.fatal_signatures)
            if (contains_ignoring_case(line, sig)) return Match{std::string(line), sig};
    }
    return std::nullopt;
}

std::optional<std::string> denial_line(const WrapResult& wrap, std::string_view stderr_text) {
    for (std::string_view line : lines_of(stderr_text))
        for (const auto& sig : wrap.denial_signatures)
            if (contains_ignoring_case(line, sig)) return std::string(line);
    return std::nullopt;
}

// Whether a line of `text` contains `marker`.
bool line_with(std::string_view text, std::string_view marker) {
    const auto lines = lines_of(text);
    return std::any_of(lines.begin(), lines.end(), [&](std::string_view line) { return line.find(marker) != std::string_view::npos; });
}

// Whether the runner reached the command, as far as anything out of band says
// (docs/design.md §6), and why not or how it stopped.
struct OutOfBand {
    Observation::Attested what;
    std::string detail;
};

// What the executor saw itself decides, or else what the runner said on its status
// descriptor: the command ran iff a line there contains the runner's marker. A runner
// that exited without saying so stopped before the command. A runner ended by a signal
// before saying anything proves nothing either way (docs/design.md §5: never a runner
// failure by that alone): the rule decides then.
OutOfBand out_of_band(const WrapResult& wrap, const Observation& o) {
    if (!o.status_text) return {o.attested, o.attestation_detail};
    if (line_with(*o.status_text, wrap.attestation.status_marker)) return {Observation::Attested::reached_command, {}};
    if (o.exit_code) return {Observation::Attested::runner_stopped, "its status descriptor never reported the command"};
    return {Observation::Attested::unavailable, "the runner was ended by a signal before it reported"};
}

std::string status_text(const Observation& o) {
    if (o.exit_code) return "exit status " + std::to_string(*o.exit_code);
#if defined(_WIN32)
    if (o.signal) return std::string("signal ") + std::to_string(*o.signal);
#else
    if (o.signal) return std::string("signal ") + std::to_string(*o.signal) + " (" + strsignal(*o.signal) + ")";
#endif
    return "unknown status";
}

}  // namespace

Outcome classify(const WrapResult& wrap, const Observation& o) {
    Outcome out;
    out.runner = wrap.runner;
    out.enforcement = wrap.enforcement;
    out.exit_code = o.exit_code;
    out.signal = o.signal;
    out.timed_out = o.timed_out;
    const std::string runner_program = wrap.argv.empty() ? std::string("?") : wrap.argv.front();

    if (!o.spawned) {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::spawn_error;
        out.evidence = "cannot start runner '" + wrap.runner + "' (" + runner_program + "): " + std::strerror(o.spawn_errno);
        if (!o.attestation_detail.empty()) out.evidence += " (" + o.attestation_detail + ")";
        return out;
    }
    auto task = [&](Basis basis) {
        out.basis = basis;
        out.kind = o.exit_code == 0 ? OutcomeKind::completed : OutcomeKind::task_failed;
        if (out.kind == OutcomeKind::task_failed && o.stderr_seen) out.denial_hint = denial_line(wrap, o.stderr_text);
        return out;
    };
    const OutOfBand said = out_of_band(wrap, o);
    // A run the executor killed at its time limit is the task's failure: the command
    // (or the runner, if it hung) took too long, and nothing claims otherwise.
    if (o.timed_out) return task(said.what == Observation::Attested::unavailable ? Basis::rule : Basis::attestation);

    switch (said.what) {
    case Observation::Attested::reached_command:
        // The command was started by the runner: whatever it printed or returned is its own.
        return task(Basis::attestation);
    case Observation::Attested::runner_stopped: {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::attestation;
        std::optional<Match> m = o.stderr_seen ? fatal_line(wrap.failure_rule, o.stderr_text) : std::nullopt;
        if (m) {
            out.evidence = m->line;
            out.matched_rule = m->signature;
        } else if (!o.runner_message.empty()) {
            out.evidence = o.runner_message;
        } else {
            out.evidence = "runner '" + wrap.runner + "' ended with " + status_text(o) + " before starting the command" +
                           (said.detail.empty() ? "" : " (" + said.detail + ")");
        }
        return out;
    }
    case Observation::Attested::unavailable: break;
    }

    // Rule basis (docs/design.md §5): exit 0 or a signal is never a runner failure; otherwise the
    // status must be one the rule allows and a stderr line must carry a fatal signature.
    if (!o.exit_code || *o.exit_code == 0 || !o.stderr_seen) return task(Basis::rule);
    const auto& allowed = wrap.failure_rule.allowed_exit_codes;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *o.exit_code) == allowed.end()) return task(Basis::rule);
    if (auto m = fatal_line(wrap.failure_rule, o.stderr_text)) {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::rule;
        out.evidence = m->line;
        out.matched_rule = m->signature;
        return out;
    }
    return task(Basis::rule);
}

}  // namespace confine
