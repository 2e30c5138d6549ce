#include "classify.hpp"

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

// Whether a line of `text` contains `marker`.
bool line_with(std::string_view text, std::string_view marker) {
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        if (text.substr(0, nl).find(marker) != std::string_view::npos) return true;
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return false;
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

// What the outcome says whatever it is: the wrap's claims, and how the command ended.
Outcome claimed(const WrapResult& wrap, const Observation& o) {
    Outcome out;
    out.runner = wrap.runner;
    out.enforcement = wrap.enforcement;
    out.dimensions = wrap.dimensions;
    out.network_asked = wrap.network_asked;
    out.read_asked = wrap.read_asked;
    out.read_scoped = wrap.read_scoped;
    out.protect_asked = wrap.protect_asked;
    out.limits_asked = wrap.limits_asked;
    out.tmp = wrap.tmp;
    out.loopback = wrap.loopback;
    out.exit_code = o.exit_code;
    out.signal = o.signal;
    out.limit = o.limit;
    out.limit_possible = o.limit_possible;
    out.timed_out = o.timed_out;
    return out;
}

}  // namespace

Outcome classify(const WrapResult& wrap, const Observation& o) {
    Outcome out = claimed(wrap, o);
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
        if (out.kind == OutcomeKind::task_failed && o.stderr_seen) out.denial_hint = o.stderr_findings.denial_line;
        return out;
    };
    const OutOfBand said = out_of_band(wrap, o);
    // The runner's declared exec was not the command's: it was ended before it went on,
    // whatever else happened (a time limit included).
    if (said.what == Observation::Attested::wrong_exec) {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::attestation;
        out.evidence = said.detail.empty() ? "runner '" + wrap.runner + "' did not exec the command it declared" : said.detail;
        return out;
    }
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
        if (o.stderr_seen && o.stderr_findings.fatal_line) {
            out.evidence = *o.stderr_findings.fatal_line;
            out.matched_rule = o.stderr_findings.fatal_signature;
        } else if (!o.runner_message.empty()) {
            out.evidence = o.runner_message;
        } else {
            out.evidence = "runner '" + wrap.runner + "' ended with " + status_text(o) + " before starting the command" +
                           (said.detail.empty() ? "" : " (" + said.detail + ")");
        }
        return out;
    }
    case Observation::Attested::unavailable:
    case Observation::Attested::wrong_exec: break;
    }

    // Rule basis (docs/design.md §5): exit 0 or a signal is never a runner failure; otherwise the
    // status must be one the rule allows and a stderr line must carry a fatal signature.
    if (!o.exit_code || *o.exit_code == 0 || !o.stderr_seen) return task(Basis::rule);
    const auto& allowed = wrap.failure_rule.evidence_exit_codes;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *o.exit_code) == allowed.end()) return task(Basis::rule);
    if (const auto& found = o.stderr_findings; found.fatal_line) {
        out.kind = OutcomeKind::sandbox_unavailable;
        out.basis = Basis::rule;
        out.evidence = *found.fatal_line;
        out.matched_rule = found.fatal_signature;
        return out;
    }
    return task(Basis::rule);
}

}  // namespace confine
