// A library named by LD_PRELOAD, for the escape suite's loader cases. The quiet build does
// nothing; the marking build (PRELOAD_MARKS) appends, when loaded, the path of the program
// that loaded it to the file CONFINE_TEST_PRELOAD_MARKER names — which only a process
// outside every sandbox can do, as the marker lies outside every writable root.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace {

__attribute__((constructor)) void loaded() {
#if defined(PRELOAD_MARKS)
    const char* marker = std::getenv("CONFINE_TEST_PRELOAD_MARKER");
    if (!marker) return;
    const int fd = ::open(marker, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[512];
    ssize_t n = ::readlink("/proc/self/exe", line, sizeof line - 1);
    if (n < 0) n = 0;
    line[n] = '\n';
    (void)::write(fd, line, static_cast<std::size_t>(n) + 1);
    ::close(fd);
#endif
}

}  // namespace
