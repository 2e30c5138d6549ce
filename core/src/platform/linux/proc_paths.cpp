// Linux names a descriptor and the running program in /proc (and the program in its
// auxiliary vector).
#include "platform/posix/descriptor_paths.hpp"

#include <sys/auxv.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

namespace fs = std::filesystem;

namespace confine::detail {

std::expected<fs::path, std::string> load_path(int fd, const fs::path&) { return "/proc/self/fd/" + std::to_string(fd); }

fs::path started_program() {
    // The file this program runs from, resolved by the kernel in one call; where /proc is
    // not mounted, the path it was started by, resolved one component at a time (a
    // relative one is left to the caller: the working directory may have changed).
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf);
    if (n > 0 && static_cast<std::size_t>(n) < sizeof buf) return fs::path(buf, buf + n);
    if (const auto* started = reinterpret_cast<const char*>(::getauxval(AT_EXECFN)); started && *started == '/')
        if (::realpath(started, buf)) return buf;
    return {};
}

}  // namespace confine::detail
