// The POSIX half of RunControl: a run is signalled with kill(), its process group when
// it has one of its own.
#include "executor.hpp"
#include "linux_features.hpp"

#include <signal.h>
#include <cerrno>
#include <unistd.h>

namespace confine::detail {
namespace {

constexpr std::uint64_t bit(int sig) { return sig > 0 && sig < 64 ? std::uint64_t{1} << sig : 0; }

// The command's whole process group: under bubblewrap the command is not its group's
// leader — its session and group are those of the PID namespace's init, which ignores
// what it has no handler for — so that a signal to the command alone would miss the
// processes it started (make's children). A command that shares this process's group,
// or its runner's, gets it alone: the runner is never signalled but to be killed. A
// terminal stop becomes SIGSTOP for another group: one with no parent in its session, as
// bubblewrap's command's has not, has the kernel discard a SIGTSTP.
void signal_command(int command, int runner, int sig) {
    const pid_t group = ::getpgid(command);
    if (group > 0 && group != ::getpgrp() && group != ::getpgid(runner)) ::kill(-group, sig == SIGTSTP ? SIGSTOP : sig);
    else ::kill(command, sig);
}

}  // namespace

void RunControl::exited() {
    std::lock_guard lock(mutex_);
    done_ = true;
    held_ = 0;  // the runner ended before its command was located: nothing to pass them to
}

void RunControl::command_located(int pid) {
    std::lock_guard lock(mutex_);
    command_ = pid == pid_ ? 0 : pid;
    if (command_ <= 0 || done_) return;
    for (int sig = 1; sig < 64 && held_; ++sig)
        if (held_ & bit(sig)) {
            held_ &= ~bit(sig);
            signal_command(command_, pid_, sig);
        }
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
    if (sig != SIGKILL && command_ > 0) {
        signal_command(command_, pid_, sig);
        return;
    }
    // Not located yet (or ended, and the next one looked for): held, never the runner's.
    if (sig != SIGKILL && names_command_) {
        // A stop and a continuation cancel each other: only the later one is kept.
        if (sig == SIGCONT) held_ &= ~(bit(SIGSTOP) | bit(SIGTSTP));
        if (sig == SIGSTOP || sig == SIGTSTP) held_ &= ~bit(SIGCONT);
        held_ |= bit(sig);
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
