// Fuzz target: what the host reads of a runner's status descriptor (bubblewrap's
// --json-status-fd: the marker line and the command's process ID) and the classifier
// that judges it with the command's stderr (docs/design.md §5, §6). Properties: the
// process ID read from a growing text, once read, never changes as more arrives; the
// outcome follows from whether a line of the status carries the marker, as the design
// says; a run judged the sandbox's failure always says why.
#include "fuzz.hpp"

#include "classify.hpp"
#include "platform/posix/status_descriptor.hpp"

#include <confine/sdk/bwrap_profile.hpp>

using confine::fuzz::require;
using confine::Observation;
using confine::OutcomeKind;

namespace {

bool marker_line(std::string_view text, std::string_view marker) {
    for (std::size_t from = 0; from <= text.size();) {
        const std::size_t nl = std::min(text.find('\n', from), text.size());
        if (text.substr(from, nl - from).find(marker) != std::string_view::npos) return true;
        from = nl + 1;
    }
    return false;
}

// The process ID as the command locator reads it while the status grows: from the
// first prefix that names one, every longer prefix names the same.
void check_process_id(const std::string& text, const std::string& key) {
    std::optional<pid_t> first;
    for (std::size_t n = 0; n <= text.size(); ++n) {
        const auto got = confine::detail::reported_number(text.substr(0, n), key);
        if (first) require(got == first, "a process ID once read does not change as the status grows", text);
        else if (got) first = got;
        if (got) require(*got >= 0 && *got <= 0x3fffffff, "a process ID is 0 (none) or a valid one");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    confine::fuzz::Input in(data, size);
    const std::uint8_t flags = in.byte();
    const int exit_code = in.byte();
    const int signal = 1 + in.byte() % 64;
    Observation o;
    if (flags & 1) o.exit_code = exit_code;
    else o.signal = signal;
    o.timed_out = flags & 2;
    o.attested = static_cast<Observation::Attested>((flags >> 2) & 3);
    o.stderr_seen = flags & 16;
    const bool with_status = flags & 32;
    const std::string status(in.until('\xff'));
    if (with_status) o.status_text = status;

    confine::WrapResult wrap;
    wrap.runner = "bwrap";
    wrap.argv = {"/usr/bin/bwrap", "--", "/bin/true"};
    wrap.attestation = confine::sdk::bwrap_attestation(3);
    wrap.failure_rule.fatal_signatures = {"bwrap: ", "confine-loopback: "};
    wrap.denial_signatures = {"permission denied", "read-only file system"};
    if (o.stderr_seen) o.stderr_findings = confine::scan_stderr(wrap, in.rest());

    check_process_id(status.substr(0, 256), confine::sdk::bwrap_status_pid_key);

    const confine::Outcome out = confine::classify(wrap, o);
    const bool task = out.kind == OutcomeKind::completed || out.kind == OutcomeKind::task_failed;
    require(out.kind != OutcomeKind::sandbox_unavailable || !out.evidence.empty(), "the sandbox's failure says why");
    require(out.kind != OutcomeKind::completed || (o.exit_code && *o.exit_code == 0), "only an exit status 0 is a completed run");
    if (with_status && !o.timed_out) {
        const bool reached = marker_line(status, wrap.attestation.status_marker);
        if (reached) require(task && out.basis == confine::Basis::attestation, "a status with the marker makes every failure the command's");
        else if (o.exit_code) require(out.kind == OutcomeKind::sandbox_unavailable, "a runner that exits without the marker failed before the command");
        else require(task, "a runner ended by a signal before it reported proves nothing against the command");
    }
    if (o.timed_out && o.attested != Observation::Attested::wrong_exec) require(task, "a run ended at its time limit is the task's");
    if (!with_status && o.signal && o.attested == Observation::Attested::unavailable)
        require(task, "a signal alone is never the sandbox's failure");
    return 0;
}
