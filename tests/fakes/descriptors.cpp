// descriptors: a caller that leaks descriptors, and what a command can do with one.
//
//   descriptors leak [--no-close-range] N=append:FILE N=dir:DIR N=unix:SOCKET ... -- PROGRAM [ARG...]
//       opens each (a file for appending, a directory, a connection to a listening unix
//       socket) as descriptor N, inheritable, as a careless build tool or shell leaves
//       them, and executes PROGRAM; with --no-close-range (Linux), in a process where
//       close_range(2) fails with ENOSYS, as on a kernel older than 5.9
//   descriptors openat N PATH
//       creates or appends to PATH relative to directory descriptor N with openat(2) and
//       writes one line; says "ok" or why not (exit 0 either way)
//   descriptors list
//       prints the numbers of its open descriptors, in order, on one line
#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#endif
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

namespace {

int open_as(const std::string& kind, const std::string& path) {
    if (kind == "append") return ::open(path.c_str(), O_WRONLY | O_APPEND);
    if (kind == "dir") return ::open(path.c_str(), O_RDONLY | O_DIRECTORY);
    if (kind == "unix") {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) return -1;
        return fd;
    }
    errno = EINVAL;
    return -1;
}

// A seccomp filter under which close_range (436 on x86_64 and aarch64) fails with ENOSYS,
// for this process and everything it starts. False when it cannot be installed.
bool without_close_range() {
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 436, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
#else
    errno = ENOSYS;
    return false;
#endif
}

int leak(int argc, char** argv) {
    int i = 0;
    if (argc > 0 && std::strcmp(argv[0], "--no-close-range") == 0) {
        if (!without_close_range()) return std::fprintf(stderr, "descriptors: cannot refuse close_range: %s\n", std::strerror(errno)), 2;
        i = 1;
    }
    for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
        const std::string spec = argv[i];
        const auto eq = spec.find('='), colon = spec.find(':');
        if (eq == std::string::npos || colon == std::string::npos || colon < eq) return std::fprintf(stderr, "descriptors: bad %s\n", argv[i]), 2;
        const int target = std::atoi(spec.substr(0, eq).c_str());
        const int fd = open_as(spec.substr(eq + 1, colon - eq - 1), spec.substr(colon + 1));
        if (fd < 0) return std::fprintf(stderr, "descriptors: cannot open %s: %s\n", argv[i], std::strerror(errno)), 2;
        if (fd != target) {
            if (::dup2(fd, target) < 0) return std::fprintf(stderr, "descriptors: dup2: %s\n", std::strerror(errno)), 2;
            ::close(fd);
        }
        ::fcntl(target, F_SETFD, 0);
    }
    if (i + 1 >= argc) return std::fprintf(stderr, "descriptors: no program after --\n"), 2;
    ::execvp(argv[i + 1], argv + i + 1);
    std::fprintf(stderr, "descriptors: cannot execute %s: %s\n", argv[i + 1], std::strerror(errno));
    return 127;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "leak") == 0) return leak(argc - 2, argv + 2);
    if (argc == 4 && std::strcmp(argv[1], "openat") == 0) {
        const int fd = ::openat(std::atoi(argv[2]), argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        const bool ok = fd >= 0 && ::write(fd, "x\n", 2) == 2;
        std::printf("%s%s\n", ok ? "ok" : "refused: ", ok ? "" : std::strerror(errno));
        return 0;
    }
    if (argc == 2 && std::strcmp(argv[1], "list") == 0) {
        DIR* dir = ::opendir("/proc/self/fd");
        if (!dir) return std::fprintf(stderr, "descriptors: /proc/self/fd: %s\n", std::strerror(errno)), 2;
        std::set<int> open;
        while (const dirent* e = ::readdir(dir))
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9') open.insert(std::atoi(e->d_name));
        open.erase(::dirfd(dir));
        ::closedir(dir);
        std::string line;
        for (const int fd : open) line.append(line.empty() ? "" : " ").append(std::to_string(fd));
        std::printf("%s\n", line.c_str());
        return 0;
    }
    std::fprintf(stderr, "usage: descriptors leak N=KIND:PATH... -- PROGRAM [ARG...] | openat N PATH | list\n");
    return 2;
}
