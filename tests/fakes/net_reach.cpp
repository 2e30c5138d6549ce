// net-reach TCP_PORT UDP_PORT ABSTRACT_NAME UNIX_PATH: what a confined command can reach
// through sockets, printed as one line, "tcp=R udp=R abstract=R path=R socketpair=R
// own_tcp4=R own_tcp6=R own_udp=R", where R is "ok" or the errno's name: a TCP connect to
// 127.0.0.1:TCP_PORT, a UDP datagram sent to 127.0.0.1:UDP_PORT, a connect to the abstract
// unix socket ABSTRACT_NAME and to the unix socket at UNIX_PATH, a byte through a
// socketpair; then the command's own loopback: a TCP server of its own on 127.0.0.1 and on
// ::1, each connected to and a byte passed, and a UDP datagram to itself on 127.0.0.1. Run
// inside a sandbox by the escape tests, which check on the host side that nothing arrived
// (docs/design.md §12).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

const char* outcome(bool ok) {
    if (ok) return "ok";
    const char* name = ::strerrorname_np(errno);
    return name ? name : "error";
}

sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

bool tcp(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    const sockaddr_in a = loopback(port);
    return ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
}

bool udp(int port) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return false;
    const sockaddr_in a = loopback(port);
    return ::sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 1;
}

bool unix_socket(const char* name, bool abstract) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::size_t n = std::strlen(name);
    if (n + 2 > sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return false;
    }
    std::memcpy(a.sun_path + (abstract ? 1 : 0), name, n);
    const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
    return ::connect(fd, reinterpret_cast<const sockaddr*>(&a), size) == 0;
}

bool pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return false;
    char c = 0;
    return ::send(fds[0], "y", 1, 0) == 1 && ::recv(fds[1], &c, 1, 0) == 1 && c == 'y';
}

// A server of this process's own on the loopback of `family`, connected to, a byte passed.
bool own_tcp(int family) {
    const int server = ::socket(family, SOCK_STREAM, 0);
    if (server < 0) return false;
    sockaddr_storage a{};
    socklen_t size = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (family == AF_INET) {
        auto* v4 = reinterpret_cast<sockaddr_in*>(&a);
        v4->sin_family = AF_INET;
        v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
        auto* v6 = reinterpret_cast<sockaddr_in6*>(&a);
        v6->sin6_family = AF_INET6;
        v6->sin6_addr = in6addr_loopback;
    }
    if (::bind(server, reinterpret_cast<sockaddr*>(&a), size) != 0 || ::listen(server, 1) != 0 ||
        ::getsockname(server, reinterpret_cast<sockaddr*>(&a), &size) != 0)
        return false;
    const int client = ::socket(family, SOCK_STREAM, 0);
    if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&a), size) != 0) return false;
    const int accepted = ::accept(server, nullptr, nullptr);
    char c = 0;
    return accepted >= 0 && ::send(client, "z", 1, 0) == 1 && ::recv(accepted, &c, 1, 0) == 1 && c == 'z';
}

// A datagram to a UDP socket of this process's own on 127.0.0.1.
bool own_udp() {
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return false;
    sockaddr_in a = loopback(0);
    socklen_t size = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), size) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) != 0) return false;
    char c = 0;
    return ::sendto(fd, "u", 1, 0, reinterpret_cast<sockaddr*>(&a), size) == 1 && ::recv(fd, &c, 1, 0) == 1 && c == 'u';
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: net-reach TCP_PORT UDP_PORT ABSTRACT_NAME UNIX_PATH\n");
        return 2;
    }
    std::printf("tcp=%s", outcome(tcp(std::atoi(argv[1]))));
    std::printf(" udp=%s", outcome(udp(std::atoi(argv[2]))));
    std::printf(" abstract=%s", outcome(unix_socket(argv[3], true)));
    std::printf(" path=%s", outcome(unix_socket(argv[4], false)));
    std::printf(" socketpair=%s", outcome(pair()));
    std::printf(" own_tcp4=%s", outcome(own_tcp(AF_INET)));
    std::printf(" own_tcp6=%s", outcome(own_tcp(AF_INET6)));
    std::printf(" own_udp=%s\n", outcome(own_udp()));
    return 0;
}
