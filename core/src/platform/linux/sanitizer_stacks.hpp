// AddressSanitizer and the children that share this process's memory (reaper.cpp): the
// sanitizer keeps, per thread, the bounds of the stack the thread runs on, and a child
// started with CLONE_VM on a stack of its own (child_memory.hpp) is, for it, this
// thread. So it is told, through its fiber interface, when the thread moves onto the
// child's stack and when it is back (ChildMemory clears the marks a child's unfinished
// frames left, before the memory goes). In a build without the sanitizer, nothing.
// Internal to libconfine.
#pragma once

#include "linux_features.hpp"

#include <atomic>
#include <cstddef>

#if defined(CONFINE_UNDER_ASAN)
#include <sanitizer/common_interface_defs.h>
// Code of the supervisor that runs while the host goes on, on the same memory: the
// sanitizer's thread then stands for the host's stack, and a call that does not return
// must not ask it to clear a stack it does not know.
#define CONFINE_NOT_ADDRESS_SANITIZED __attribute__((no_sanitize("address")))
#else
#define CONFINE_NOT_ADDRESS_SANITIZED
#endif

namespace confine::detail {

class StackMove {
public:
    // In the parent, just before the clone: the thread goes onto `memory`'s stack `i`.
    void leave_for(const ChildMemory& memory, std::size_t i) noexcept {
#if defined(CONFINE_UNDER_ASAN)
        __sanitizer_start_switch_fiber(&fake_stack_, memory.bottom(i), memory.stack_size());
#else
        (void)memory, (void)i;
#endif
    }
    // In the child, before anything else: it is on that stack now.
    void arrive() noexcept {
#if defined(CONFINE_UNDER_ASAN)
        __sanitizer_finish_switch_fiber(nullptr, &from_bottom_, &from_size_);
        arrived_.store(true);
#endif
    }
    // In the parent, once the child is past its exec or gone, or never started: back on
    // the parent's own stack.
    void come_back() noexcept {
#if defined(CONFINE_UNDER_ASAN)
        if (!arrived_.load()) __sanitizer_finish_switch_fiber(nullptr, &from_bottom_, &from_size_);
        __sanitizer_start_switch_fiber(nullptr, from_bottom_, from_size_);
        __sanitizer_finish_switch_fiber(fake_stack_, nullptr, nullptr);
#endif
    }

private:
#if defined(CONFINE_UNDER_ASAN)
    void* fake_stack_ = nullptr;
    const void* from_bottom_ = nullptr;
    std::size_t from_size_ = 0;
    std::atomic<bool> arrived_{false};
#endif
};

}  // namespace confine::detail
