// What Linux says of a process's place in the process tree, from /proc. Each answer is
// about the process a pidfd holds: it is read first, then the process is checked to be
// still alive, and a live process's number cannot have passed to another meanwhile.
// Internal to libconfine.
#pragma once

#include "fd.hpp"

#include <sys/types.h>

namespace confine::detail {

// Whether the process `pidfd` holds is still alive (not yet ended).
bool alive(int pidfd);

// The parent of the process `pidfd` holds (number `pid`), from the "PPid:" line of
// /proc/<pid>/status; 0 when it is gone or cannot be told.
pid_t parent_of(int pidfd, pid_t pid);

// Whether the process `pidfd` holds (number `pid`) is PID 1 of a PID namespace of its
// own, as bubblewrap's reaper is with --unshare-pid.
bool namespace_init(int pidfd, pid_t pid);

// The first child of the namespace init `init` (held by `init_fd`) that has not ended,
// held in `held` and judged to be the init's child while held, the init still alive; 0
// while there is none.
pid_t child_of_init(int init_fd, pid_t init, Fd& held);

}  // namespace confine::detail
