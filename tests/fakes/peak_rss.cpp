// peak-rss FILE -- ARGV...: runs ARGV with this process's standard streams, waits for it,
// writes to FILE the peak resident memory in KiB of it and the descendants it waited for
// (wait4's ru_maxrss), and exits as it did (128 + the signal if one ended it).
//
// A child's peak counts the memory of the process that forked it (it starts as a copy):
// measured from this small process, the figure is the command's own, not its caller's.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc < 4 || std::strcmp(argv[2], "--") != 0) {
        std::fprintf(stderr, "usage: peak-rss FILE -- ARGV...\n");
        return 2;
    }
    const pid_t pid = ::fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        ::execv(argv[3], argv + 3);
        std::fprintf(stderr, "peak-rss: cannot run %s: %s\n", argv[3], std::strerror(errno));
        ::_exit(127);
    }
    int status = 0;
    rusage usage{};
    while (::wait4(pid, &status, 0, &usage) < 0)
        if (errno != EINTR) return 2;
    if (FILE* out = std::fopen(argv[1], "w")) {
        std::fprintf(out, "%ld\n", usage.ru_maxrss);
        std::fclose(out);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
