// Exec attestation by ptrace (docs/design.md §6): the child asks to be traced, and the
// parent follows the runner from its own exec to the command's, then lets it go.
#include "linux_features.hpp"
#include "wait_status.hpp"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace confine::detail {

int trace_me() noexcept { return ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 0 : errno; }

bool follow_execs(pid_t pid, std::uint32_t command_exec, Observation& o) {
    std::uint32_t execs = 0;
    for (;;) {
        int st = 0;
        const pid_t w = ::waitpid(pid, &st, __WALL);
        if (w < 0) {
            if (errno == EINTR) continue;
            o.attested = Observation::Attested::unavailable;
            o.attestation_detail = std::string("waitpid: ") + std::strerror(errno);
            return true;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            record_status(o, st);
            o.attested = Observation::Attested::runner_stopped;
            o.attestation_detail = std::to_string(execs) + " of " + std::to_string(command_exec) + " execs seen";
            return false;
        }
        if (!WIFSTOPPED(st)) continue;
        const int sig = WSTOPSIG(st);
        const int event = st >> 16;
        int inject = 0;
        if (execs == 0 && sig == SIGTRAP && event == 0) {
            // The stop after the runner's own exec, under PTRACE_TRACEME.
            execs = 1;
            ::ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
        } else if (sig == SIGTRAP && event == PTRACE_EVENT_EXEC) {
            ++execs;
        } else {
            siginfo_t info;
            // A group-stop has no siginfo: resume without a signal. Otherwise deliver it.
            if (::ptrace(PTRACE_GETSIGINFO, pid, nullptr, &info) == 0) inject = sig;
        }
        if (execs >= command_exec) {
            o.attested = Observation::Attested::reached_command;
            ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
            return true;
        }
        ::ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(inject)));
    }
}

}  // namespace confine::detail
