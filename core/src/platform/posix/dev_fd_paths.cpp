// Where there is no /proc (macOS, the BSDs, the portable build): "/dev/fd/N" names an
// open descriptor, and the running program is left to the dynamic loader to tell.
#include "platform/posix/descriptor_paths.hpp"

#include <string>

namespace fs = std::filesystem;

namespace confine::detail {

fs::path descriptor_path(int fd) { return "/dev/fd/" + std::to_string(fd); }

fs::path started_program() { return {}; }

}  // namespace confine::detail
