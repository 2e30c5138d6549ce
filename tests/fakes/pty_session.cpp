// pty-session: runs a command on a fresh pseudo-terminal that is its controlling
// terminal, as a user at a terminal would, and types into it by a script: each step
// waits for text on the screen or types keys (Ctrl-C included, which the terminal turns
// into SIGINT for its foreground process group).
//
//   pty-session STEP... -- <command> [args...]
//
//   expect=TEXT   wait until the screen, since the last match, shows TEXT (20 s at most)
//   send=TEXT     type TEXT; \n, \r, \\ and \xNN are understood
//   sleep=MS      wait MS milliseconds, reading the screen
//
// stdout: the whole screen (carriage returns removed). stderr: one line, `exit: N` or
// `signal: N`, once the command has ended, or why the script stopped. Exit status: 0
// when every step happened and the command ended within 20 s of the last, else 3.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto patience = std::chrono::seconds(20);

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "pty-session: %s: %s\n", what, std::strerror(errno));
    std::exit(2);
}

std::string unescape(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\' || i + 1 == text.size()) {
            out += text[i];
            continue;
        }
        const char c = text[++i];
        if (c == 'n') out += '\n';
        else if (c == 'r') out += '\r';
        else if (c == 'x' && i + 2 < text.size()) {
            out += static_cast<char>(std::strtol(text.substr(i + 1, 2).c_str(), nullptr, 16));
            i += 2;
        } else out += c;
    }
    return out;
}

struct Screen {
    int master;
    std::string text;         // everything shown, carriage returns removed
    std::size_t matched = 0;  // where the next expect starts looking

    // Reads what is there within `ms`; false at the end of the terminal's output.
    bool read_for(int ms) {
        pollfd p{master, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) return true;
        char buf[4096];
        const ssize_t n = ::read(master, buf, sizeof buf);
        if (n <= 0) return n < 0 && (errno == EAGAIN || errno == EINTR);
        for (ssize_t i = 0; i < n; ++i)
            if (buf[i] != '\r') text += buf[i];
        return true;
    }
};

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> steps;
    int i = 1;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) steps.emplace_back(argv[i]);
    if (i + 1 >= argc) {
        std::fprintf(stderr, "usage: pty-session STEP... -- <command> [args...]\n");
        return 2;
    }
    char** command = argv + i + 1;

    const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) die("posix_openpt");
    const char* name = ::ptsname(master);
    if (!name) die("ptsname");
    const pid_t pid = ::fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        const int slave = ::open(name, O_RDWR);
        if (slave < 0 || ::setsid() < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0) die("controlling terminal");
        winsize size{24, 80, 0, 0};
        ::ioctl(slave, TIOCSWINSZ, &size);
        for (int fd = 0; fd <= 2; ++fd)
            if (::dup2(slave, fd) < 0) die("dup2");
        if (slave > 2) ::close(slave);
        ::execvp(command[0], command);
        std::fprintf(stderr, "pty-session: cannot run %s: %s\n", command[0], std::strerror(errno));
        ::_exit(127);
    }
    ::fcntl(master, F_SETFL, O_NONBLOCK);
    Screen screen{master, {}};
    auto stop = [&](const std::string& why) {
        int status = 0;
        std::string state = "still running";
        if (::waitpid(pid, &status, WNOHANG) == pid)
            state = WIFEXITED(status) ? "had exited " + std::to_string(WEXITSTATUS(status)) : "had ended by signal " + std::to_string(WTERMSIG(status));
        else {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        std::fwrite(screen.text.data(), 1, screen.text.size(), stdout);
        std::fprintf(stderr, "pty-session: %s (the command %s)\n", why.c_str(), state.c_str());
        return 3;
    };

    for (const std::string& step : steps) {
        const auto eq = step.find('=');
        const std::string kind = step.substr(0, eq), arg = eq == std::string::npos ? "" : unescape(step.substr(eq + 1));
        if (kind == "expect") {
            const auto until = Clock::now() + patience;
            for (;;) {
                const auto at = screen.text.find(arg, screen.matched);
                if (at != std::string::npos) {
                    screen.matched = at + arg.size();
                    break;
                }
                if (Clock::now() > until || !screen.read_for(50)) return stop("timed out waiting for '" + arg + "'");
            }
        } else if (kind == "send") {
            if (::write(master, arg.data(), arg.size()) != static_cast<ssize_t>(arg.size())) die("write");
        } else if (kind == "sleep") {
            const auto until = Clock::now() + std::chrono::milliseconds(std::atoi(arg.c_str()));
            while (Clock::now() < until) screen.read_for(10);
        } else {
            return stop("unknown step '" + step + "'");
        }
    }

    const auto until = Clock::now() + patience;
    int status = 0;
    for (;;) {
        screen.read_for(20);
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (Clock::now() > until) return stop("the command did not end");
    }
    // What is still on its way to the screen: until the terminal closes or stays quiet.
    for (int quiet = 0; quiet < 3;) {
        const std::size_t before = screen.text.size();
        if (!screen.read_for(20)) break;
        quiet = screen.text.size() == before ? quiet + 1 : 0;
    }
    std::fwrite(screen.text.data(), 1, screen.text.size(), stdout);
    if (WIFEXITED(status)) std::fprintf(stderr, "exit: %d\n", WEXITSTATUS(status));
    else std::fprintf(stderr, "signal: %d\n", WTERMSIG(status));
    return 0;
}
