// The portable half of RunControl: who has started, and waiting until a run has.
#include "executor.hpp"

namespace confine::detail {

void RunControl::started(int pid, bool own_group, bool supervised, bool becomes_command, bool names_command) {
    {
        std::lock_guard lock(mutex_);
        pid_ = pid;
        own_group_ = own_group;
        supervised_ = supervised;
        becomes_command_ = becomes_command;
        names_command_ = names_command;
        settled_ = true;
    }
    settled_cv_.notify_all();
}

void RunControl::settle() {
    {
        std::lock_guard lock(mutex_);
        settled_ = true;
    }
    settled_cv_.notify_all();
}

void RunControl::wait_settled() {
    std::unique_lock lock(mutex_);
    settled_cv_.wait(lock, [this] { return settled_; });
}

}  // namespace confine::detail
