// confine-loopback: the first program in a sandbox of its own network namespace when the
// network goes through the run's proxy (docs/design.md §12). It binds the proxy's port on
// the namespace's loopback, hands the listening socket to the host's proxy over a unix
// socket the host gave it, and executes the command:
//
//   confine-loopback [--port <port> --fd <n>] [--terminal] -- <argv>...
//
// The proxy, outside the sandbox, then accepts the command's connections on that socket:
// the command reaches it at 127.0.0.1:<port>, and nothing else outside, without any socket
// of the sandbox's own reaching a unix socket of the host (the network filter refuses
// those). The descriptor is closed before the exec: the command never holds it. It reads
// no configuration and no environment variable.
//
// With --terminal (a run with a pseudo-terminal of its own, docs/design.md §7), it also
// gives the command its stdin, that terminal, as the controlling terminal of a session of
// its own: bubblewrap's --new-session leaves the command none, and job control (a shell's
// Ctrl-Z, Ctrl-C to the foreground job only) needs one. The host handed the terminal
// to no session outside: it is the run's alone.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int setup_failure = 125;

[[noreturn]] void fatal(const char* what, int error = 0) {
    char line[512];
    std::snprintf(line, sizeof line, "confine-loopback: %s%s%s\n", what, error ? ": " : "", error ? std::strerror(error) : "");
    ssize_t ignored = ::write(2, line, std::strlen(line));
    (void)ignored;
    std::_Exit(setup_failure);
}

// A decimal number from 1 to `max`; 0 otherwise.
long number(const char* text, long max) {
    if (!text || !*text || std::strlen(text) > 9) return 0;
    long n = 0;
    for (const char* p = text; *p; ++p) {
        if (*p < '0' || *p > '9') return 0;
        n = n * 10 + (*p - '0');
    }
    return n <= max ? n : 0;
}

// The listener handed over: one byte, the socket in SCM_RIGHTS.
void hand_over(int channel, int listener) {
    char byte = 'L';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &listener, sizeof(int));
    ssize_t sent;
    do sent = ::sendmsg(channel, &msg, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent != 1) fatal("cannot hand the listener to the run's proxy", sent < 0 ? errno : EIO);
}

// The loopback listener on `port`, handed over on descriptor `channel`.
void loopback(long port, long channel) {
    const int fd = static_cast<int>(channel);
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) fatal("--fd: not an open descriptor", errno);
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) fatal("cannot make the loopback listener", errno);
    const int on = 1;
    (void)::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) fatal("cannot bind 127.0.0.1", errno);
    if (::listen(listener, 128) != 0) fatal("cannot listen on 127.0.0.1", errno);
    hand_over(fd, listener);
    ::close(listener);
    ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    constexpr const char* usage = "usage: confine-loopback [--port <port> --fd <n>] [--terminal] -- <argv>...";
    long port = 0, channel = 0;
    bool terminal = false, network = false;
    int command = -1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) {
            command = i + 1;
            break;
        }
        if (std::strcmp(argv[i], "--terminal") == 0) {
            terminal = true;
            continue;
        }
        const bool is_port = std::strcmp(argv[i], "--port") == 0, is_fd = std::strcmp(argv[i], "--fd") == 0;
        if ((!is_port && !is_fd) || i + 1 >= argc) fatal(usage);
        (is_port ? port : channel) = number(argv[++i], is_port ? 65535 : 1000000);
        network = true;
    }
    if ((network && (port == 0 || channel < 3)) || (!network && !terminal) || command < 0 || command >= argc) fatal(usage);
    if (network) loopback(port, channel);
    if (terminal && (::setsid() < 0 || ::ioctl(0, TIOCSCTTY, 0) != 0)) fatal("cannot make the run's terminal the command's", errno);
    ::execvp(argv[command], argv + command);
    fatal("exec failed", errno);
}
