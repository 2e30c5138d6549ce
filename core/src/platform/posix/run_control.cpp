// The POSIX half of RunControl: a run is signalled with kill(), its process group when
// it has one of its own.
#include "executor.hpp"
#include "linux_features.hpp"

#include <signal.h>
#include <cerrno>
#include <unistd.h>

namespace confine::detail {

void RunControl::exited() {
    std::lock_guard lock(mutex_);
    done_ = true;
}

void RunControl::signal(int sig) {
    std::lock_guard lock(mutex_);
    if (pid_ <= 0 || done_) return;
    // The supervisor passes a signal on to the runner; SIGKILL ends every process of the
    // run instead, and the supervisor after them.
    if (supervised_) {
        ::kill(pid_, sig == SIGKILL ? reaper_signals().kill_run : sig);
        return;
    }
    // The command named by its runner, until the locator sees it end (then command_ is
    // cleared). In the moment between its end and that, its number is free; the kernel
    // hands out numbers in turn, so it would pass to another process only after pid_max
    // others had started in that moment.
    if (command_ > 0 && sig != SIGKILL) {
        ::kill(::getpgid(command_) == command_ ? -command_ : command_, sig);
        return;
    }
    // A background child that has not made its session yet has no group: it is alone.
    if (::kill(own_group_ ? -pid_ : pid_, sig) != 0 && errno == ESRCH && own_group_) ::kill(pid_, sig);
}

void RunControl::terminate() {
    {
        std::lock_guard lock(mutex_);
        if (pid_ <= 0 || done_) return;
        if (supervised_) {
            ::kill(pid_, reaper_signals().term_run);
            return;
        }
        // Every process below the runner: the command and all it started, not the runner
        // itself, which would end the sandbox before the command could handle its TERM
        // (bubblewrap; the init of its namespace ignores the signal) — unless the runner
        // became the command.
        if (becomes_command_) ::kill(own_group_ ? -pid_ : pid_, SIGTERM);
        if (signal_processes_below(pid_, SIGTERM) > 0 || becomes_command_) {
            signal_processes_below(pid_, SIGCONT);
            return;
        }
    }
    signal(SIGTERM);
}

}  // namespace confine::detail
