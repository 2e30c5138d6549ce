// Where there is no /proc (macOS, the BSDs, the portable build): a plugin is loaded by
// the path the trust walk judged, checked again just before the load, and the running
// program is left to the dynamic loader to tell.
#include "platform/posix/descriptor_paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace fs = std::filesystem;

namespace confine::detail {

// What this gives up against Linux's /proc/self/fd/N: the loader opens the file by its
// path, not through the descriptor that was judged. The path has no link in it and every
// directory on it was judged writable only by root and the caller, so only they could
// put another file there; the check below catches one put there before it, not one put
// there between the check and the loader's own open and taken away again after.
std::expected<fs::path, std::string> load_path(int fd, const fs::path& real_path) {
    struct stat judged {}, now {};
    if (::fstat(fd, &judged) != 0) return std::unexpected(std::string("cannot stat the judged file: ") + std::strerror(errno));
    const int again = ::open(real_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (again < 0) return std::unexpected(real_path.string() + ": cannot open: " + std::strerror(errno));
    const bool same = ::fstat(again, &now) == 0 && now.st_dev == judged.st_dev && now.st_ino == judged.st_ino;
    ::close(again);
    if (!same) return std::unexpected(real_path.string() + " changed after it was judged");
    return real_path;
}

fs::path started_program() { return {}; }

}  // namespace confine::detail
