#include "process_tree.hpp"
#include "linux_features.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace confine::detail {
namespace {

// Reads a small /proc file whole into `buf` (NUL-terminated); its length, or -1.
ssize_t read_proc(const char* path, char* buf, std::size_t size) {
    Fd f(::open(path, O_RDONLY | O_CLOEXEC));
    if (f.get() < 0) return -1;
    std::size_t got = 0;
    while (got + 1 < size) {
        const ssize_t n = ::read(f.get(), buf + got, size - 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    buf[got] = '\0';
    return static_cast<ssize_t>(got);
}

// The text after "\n<field>:" in a /proc status file, or nullptr. The fields before
// can hold no newline of their own: the kernel escapes the name.
const char* status_field(const char* text, const char* field) {
    char key[32];
    std::snprintf(key, sizeof key, "\n%s:", field);
    const char* at = std::strstr(text, key);
    return at ? at + std::strlen(key) : nullptr;
}

}  // namespace

bool alive(int pidfd) { return ::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) == 0; }

pid_t parent_of(int pidfd, pid_t pid) {
    char path[64], text[8192];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    if (read_proc(path, text, sizeof text) <= 0) return 0;
    const char* field = status_field(text, "PPid");
    if (!field) return 0;
    char* end = nullptr;
    const long parent = std::strtol(field, &end, 10);
    if (end == field || parent < 0) return 0;
    // Read first, judged after: alive now, the process read about is the one held.
    return alive(pidfd) ? static_cast<pid_t>(parent) : 0;
}

// Its "NSpid:" line (its number in each namespace from this one down) has more than one
// number, and the last is 1.
bool namespace_init(int pidfd, pid_t pid) {
    char path[64], text[8192];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    if (read_proc(path, text, sizeof text) <= 0) return false;
    const char* line = status_field(text, "NSpid");
    if (!line) return false;
    int count = 0;
    long last = 0;
    for (char* end = nullptr;; line = end) {
        const long n = std::strtol(line, &end, 10);
        if (end == line) break;
        last = n;
        ++count;
        if (*end == '\n' || *end == '\0') break;
    }
    return count > 1 && last == 1 && alive(pidfd);
}

// The init's first child is the oldest: orphans the command leaves are reparented to the
// init after it.
pid_t child_of_init(int init_fd, pid_t init, Fd& held) {
    char path[96], text[256];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(init), static_cast<int>(init));
    if (read_proc(path, text, sizeof text) <= 0) return 0;
    char* end = nullptr;
    const long child = std::strtol(text, &end, 10);
    if (end == text || child <= 1 || child > 0x3fffffff) return 0;
    Fd fd(open_pidfd(static_cast<pid_t>(child)));
    if (fd.get() < 0 || parent_of(fd.get(), static_cast<pid_t>(child)) != init || !alive(init_fd)) return 0;
    pollfd ended{fd.get(), POLLIN, 0};
    if (::poll(&ended, 1, 0) != 0) return 0;  // an ended command the init has not reaped yet
    held = std::move(fd);
    return static_cast<pid_t>(child);
}

}  // namespace confine::detail
