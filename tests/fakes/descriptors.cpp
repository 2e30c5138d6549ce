// descriptors: a caller that leaks descriptors, and what a command can do with one.
//
//   descriptors leak N=append:FILE N=dir:DIR N=unix:SOCKET ... -- PROGRAM [ARG...]
//       opens each (a file for appending, a directory, a connection to a listening unix
//       socket) as descriptor N, inheritable, as a careless build tool or shell leaves
//       them, and executes PROGRAM
//   descriptors openat N PATH
//       creates or appends to PATH relative to directory descriptor N with openat(2) and
//       writes one line; says "ok" or why not (exit 0 either way)
//   descriptors list
//       prints the numbers of its open descriptors, in order, on one line
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
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

int leak(int argc, char** argv) {
    int i = 0;
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
        for (const int fd : open) line += (line.empty() ? "" : " ") + std::to_string(fd);
        std::printf("%s\n", line.c_str());
        return 0;
    }
    std::fprintf(stderr, "usage: descriptors leak N=KIND:PATH... -- PROGRAM [ARG...] | openat N PATH | list\n");
    return 2;
}
