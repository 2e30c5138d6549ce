// The paths a POSIX system names an open descriptor and the running program by, as the
// plugin loader needs them: Linux in platform/linux/proc_paths.cpp, other POSIX systems
// (and the portable build) in platform/posix/dev_fd_paths.cpp. Internal to libconfine.
#pragma once

#include <filesystem>

namespace confine::detail {

// A path whose opening opens the file `fd` has open (and no other file).
std::filesystem::path descriptor_path(int fd);

// The path this program was started by, resolved; empty when this OS cannot say
// cheaply, and the caller asks the dynamic loader instead.
std::filesystem::path started_program();

}  // namespace confine::detail
