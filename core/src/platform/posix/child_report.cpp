#include "child_report.hpp"
#include "wait_status.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace confine::detail {
namespace {

// Writes everything or gives up; used in the child, so: system calls only.
void write_all(int fd, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

// The report whole, or how much of it came before the pipe closed.
std::size_t read_report(int fd, ChildReport& report) {
    std::size_t got = 0;
    while (got < sizeof report) {
        const ssize_t n = ::read(fd, reinterpret_cast<char*>(&report) + got, sizeof report - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    return got;
}

void observe(ChildReport& report, int status, const ExecSpec& spec, Observation& o) {
    const auto stage = static_cast<ChildStage>(report.stage);
    if (spec.in_process && (stage == ChildStage::confine || stage == ChildStage::exec)) {
        // The in-process runner stopped before the command: its own report says why.
        record_status(o, status);
        o.attested = Observation::Attested::runner_stopped;
        report.message[sizeof report.message - 1] = '\0';
        o.runner_message = stage == ChildStage::exec ? std::string("exec failed: ") + std::strerror(report.error)
                                                     : std::string(report.message);
        return;
    }
    o.spawned = false;
    o.spawn_errno = report.error;
    if (stage == ChildStage::trace) o.attestation_detail = "cannot trace the runner to attest it";
    if (stage == ChildStage::chdir) o.attestation_detail = "cannot enter the working directory " + spec.working_directory.string();
    if (stage == ChildStage::terminal) o.attestation_detail = "cannot install the terminal filter";
    if (stage == ChildStage::terminal_session) o.attestation_detail = "cannot make the run's own terminal the command's";
    if (stage == ChildStage::descriptors) o.attestation_detail = "cannot keep the caller's other descriptors from the command";
    if (stage == ChildStage::supervise) o.attestation_detail = "cannot start the run's supervisor";
    if (stage == ChildStage::limits) o.attestation_detail = std::string("cannot apply the run's limits: ") + std::strerror(report.error);
}

}  // namespace

void report_and_exit(int fd, const ChildReport& report, int code) noexcept {
    write_all(fd, &report, sizeof report);
    ::_exit(code);
}

void report_and_exit(int fd, ChildStage stage, int error, int code) noexcept {
    const ChildReport report{static_cast<int>(stage), error, {}};
    report_and_exit(fd, report, code);
}

bool child_reported_failure(int fd, pid_t pid, const ExecSpec& spec, RunControl& control, Observation& o,
                            const std::function<int(int)>& status_of) {
    ChildReport report{};
    if (read_report(fd, report) != sizeof report) return false;
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    control.exited();
    if (status_of) st = status_of(st);
    observe(report, st, spec, o);
    return true;
}

}  // namespace confine::detail
