// The POSIX half of RunControl: a run is signalled with kill(), its process group when
// it has one of its own.
#include "executor.hpp"

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
    // The command named by its runner is held by the locator until it is seen ending
    // (then command_ is cleared), so its number cannot have passed to another process.
    if (command_ > 0 && sig != SIGKILL) {
        ::kill(::getpgid(command_) == command_ ? -command_ : command_, sig);
        return;
    }
    // A background child that has not made its session yet has no group: it is alone.
    if (::kill(own_group_ ? -pid_ : pid_, sig) != 0 && errno == ESRCH && own_group_) ::kill(pid_, sig);
}

}  // namespace confine::detail
