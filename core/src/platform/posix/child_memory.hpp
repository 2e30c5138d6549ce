// Stacks for children that share the host's memory until their exec (docs/design.md §7):
// a child started that way costs no copy of the host's page tables and no copy-on-write
// faults afterwards, which a fork of the host does. Each stack has a page below it that
// no one may touch, so that a child that overflows its stack dies rather than write into
// the host's memory. Internal to libconfine.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <utility>

// A build under AddressSanitizer (gcc says so one way, clang another).
#if defined(__SANITIZE_ADDRESS__)
#define CONFINE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONFINE_UNDER_ASAN 1
#endif
#endif
#if defined(CONFINE_UNDER_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace confine::detail {

class ChildMemory {
public:
    ChildMemory() = default;
    // `stacks` stacks of `size` bytes each (a multiple of the page size), one above the
    // other, each with its guard page; empty() when the memory cannot be had.
    ChildMemory(std::size_t stacks, std::size_t size) noexcept {
        const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        const std::size_t length = stacks * (size + page);
        int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#if defined(MAP_NORESERVE)
        flags |= MAP_NORESERVE;
#endif
#if defined(MAP_STACK)
        flags |= MAP_STACK;
#endif
        void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, flags, -1, 0);
        if (base == MAP_FAILED) return;
        base_ = static_cast<char*>(base);
        length_ = length;
        size_ = size;
        page_ = page;
        for (std::size_t i = 0; i < stacks; ++i)
            if (::mprotect(base_ + i * (size + page), page, PROT_NONE) != 0) {
                release();
                return;
            }
    }
    ChildMemory(ChildMemory&& o) noexcept
        : base_(std::exchange(o.base_, nullptr)), length_(std::exchange(o.length_, 0)), size_(o.size_), page_(o.page_) {}
    ChildMemory& operator=(ChildMemory&& o) noexcept {
        if (this != &o) {
            release();
            base_ = std::exchange(o.base_, nullptr);
            length_ = std::exchange(o.length_, 0);
            size_ = o.size_;
            page_ = o.page_;
        }
        return *this;
    }
    ~ChildMemory() { release(); }

    bool empty() const noexcept { return base_ == nullptr; }
    // The top of stack `i` (stacks grow down), 16-byte aligned; its lowest byte; its size.
    void* top(std::size_t i) const noexcept { return base_ + (i + 1) * (size_ + page_); }
    const void* bottom(std::size_t i) const noexcept { return base_ + i * (size_ + page_) + page_; }
    std::size_t stack_size() const noexcept { return size_; }
    // Gives the memory back: only once no child runs on it any more. Under
    // AddressSanitizer, its marks of the frames left there go first: the next mapping
    // at this address would otherwise inherit them.
    void release() noexcept {
#if defined(CONFINE_UNDER_ASAN)
        if (base_) __asan_unpoison_memory_region(base_, length_);
#endif
        if (base_) ::munmap(base_, length_);
        base_ = nullptr;
        length_ = 0;
    }

private:
    char* base_ = nullptr;
    std::size_t length_ = 0, size_ = 0, page_ = 0;
};

}  // namespace confine::detail
