// An owned file descriptor, closed when it goes, and the close-on-exec pipes the process
// code makes. Internal to libconfine.
#pragma once

#include <confine/sdk/trust_posix.hpp>

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

// Held by this library around each of its forks and spawns, so that none of its
// children can inherit a descriptor make_pipe has made but not yet marked close-on-exec.
// Holds nothing where make_pipe is a single call (Linux).
[[nodiscard]] std::unique_lock<std::mutex> fork_guard();

}  // namespace confine::detail
