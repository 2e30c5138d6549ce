// The paths the plugin loader gives the dynamic loader for a judged plugin file, and
// where the running program is: Linux in platform/linux/proc_paths.cpp, other POSIX
// systems (and the portable build) in platform/posix/judged_paths.cpp. Internal to
// libconfine.
#pragma once

#include <expected>
#include <filesystem>
#include <string>

namespace confine::detail {

// The path to load the plugin file `fd` by, which the trust walk judged and found at
// `real_path` (absolute, no link): on Linux one whose opening opens the file `fd` has
// open and no other (/proc/self/fd/N); elsewhere `real_path`, once it is shown to be
// still that file. Otherwise why not, in one line.
std::expected<std::filesystem::path, std::string> load_path(int fd, const std::filesystem::path& real_path);

// The path this program was started by, resolved; empty when this OS cannot say
// cheaply, and the caller asks the dynamic loader instead.
std::filesystem::path started_program();

}  // namespace confine::detail
