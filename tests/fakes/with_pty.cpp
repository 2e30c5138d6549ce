// with-pty: runs a command on a fresh pseudo-terminal that is its controlling terminal
// (stdin, stdout and stderr), as an interactive shell's command would be, and then
// tells what the command left queued on that terminal's input — what the shell would
// have read as the next typed line.
//
//   with-pty <command> [args...]
//
// stdout: everything the command wrote on the terminal (echo included), with the
// terminal's carriage returns removed. stderr: one line `queued: <bytes>` once the
// command has ended. Exit status: the command's (128 + signal when killed).
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "with-pty: %s: %s\n", what, std::strerror(errno));
    std::exit(2);
}

void copy_out(int master) {
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(master, buf, sizeof buf);
        if (n <= 0) return;
        std::string text(buf, static_cast<std::size_t>(n));
        std::erase(text, '\r');
        std::fwrite(text.data(), 1, text.size(), stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: with-pty <command> [args...]\n");
        return 2;
    }
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) die("posix_openpt");
    const char* name = ::ptsname(master);
    if (!name) die("ptsname");
    // Held open here until the end, so that the terminal and its input queue outlive
    // the command.
    int slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) die(name);

    pid_t pid = ::fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        if (::setsid() < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0) die("controlling terminal");
        for (int fd = 0; fd <= 2; ++fd)
            if (::dup2(slave, fd) < 0) die("dup2");
        ::execvp(argv[1], argv + 1);
        std::fprintf(stderr, "with-pty: cannot run %s: %s\n", argv[1], std::strerror(errno));
        ::_exit(127);
    }

    ::fcntl(master, F_SETFL, O_NONBLOCK);
    int status = 0;
    for (;;) {
        pollfd p{master, POLLIN, 0};
        ::poll(&p, 1, 50);
        copy_out(master);
        pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) die("waitpid");
    }
    ::usleep(50 * 1000);
    copy_out(master);
    std::fflush(stdout);

    // Non-canonical, non-blocking: the whole input queue is readable, a partial line too.
    termios t{};
    if (::tcgetattr(slave, &t) != 0) die("tcgetattr");
    t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    if (::tcsetattr(slave, TCSANOW, &t) != 0) die("tcsetattr");
    ::fcntl(slave, F_SETFL, O_NONBLOCK);
    std::string queued;
    char buf[4096];
    for (ssize_t n; (n = ::read(slave, buf, sizeof buf)) > 0;) queued.append(buf, static_cast<std::size_t>(n));
    std::fprintf(stderr, "queued: %s\n", queued.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
