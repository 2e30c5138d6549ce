// An owned file descriptor, closed when it goes, and the close-on-exec pipes the process
// code makes. Internal to libconfine.
#pragma once

#include <confine/sdk/trust_posix.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <mutex>

namespace confine::detail {

// The owned descriptor of the trust rule's header, under the name the process code uses.
using Fd = trust::Descriptor;

// A pipe whose two ends are close-on-exec; false (errno set) when it cannot be made.
// Every descriptor the executor makes must be close-on-exec from the moment it exists:
// another thread may fork a confined command at any time, and what it inherits that
// command holds. Linux makes both ends so in one call (platform/linux/descriptors.cpp);
// the portable version (platform/posix/without_linux.cpp) says what it does instead.
bool make_pipe(Fd& read_end, Fd& write_end);

// Writes all `size` bytes to `fd`, again after EINTR; false when a write fails or writes
// nothing.
inline bool write_all(int fd, const char* p, std::size_t size) {
    while (size) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// Leaves the next exec only descriptors 0, 1 and 2 and the `count` descriptors of
// `kept`: every other descriptor above 2 becomes close-on-exec, and those of `kept` stop
// being so (docs/design.md §11: the command gets only what the policy gives, nothing the
// caller leaked). Async-signal-safe, no allocation: the forked child calls it between
// fork and exec. 0, or an errno value when it could not (the exec must not happen then).
// Linux marks them all in one call (close_range); elsewhere each open descriptor up to
// the limit on open files is marked.
int inherit_only(const int* kept, std::size_t count) noexcept;

// Held by this library around each of its forks and spawns, so that none of its
// children can inherit a descriptor make_pipe has made but not yet marked close-on-exec.
// Holds nothing where make_pipe is a single call (Linux).
[[nodiscard]] std::unique_lock<std::mutex> fork_guard();

}  // namespace confine::detail
