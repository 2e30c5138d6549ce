// dgram-reach ABSTRACT_DGRAM PATH_DGRAM ABSTRACT_STREAM: what a confined command can reach
// with unix sockets that send to an address, printed as one line,
// "socket=R raw=R pair=R abstract=R path=R stream=R pair-stream=R pair-seqpacket=R", where R
// is "ok" or the errno's name:
// - socket, raw, pair: whether socket(AF_UNIX, SOCK_DGRAM), socket(AF_UNIX, SOCK_RAW) (which
//   AF_UNIX makes a datagram socket) and socketpair(AF_UNIX, SOCK_DGRAM) gave a socket;
// - abstract, path: whether any datagram was sent to the abstract unix socket
//   ABSTRACT_DGRAM, or to the unix socket at PATH_DGRAM, from each socket above, by
//   sendmsg(), sendmmsg() and sendto() with the destination (an end of a sequenced-packet
//   pair tries too, uncounted: its messages go to its peer); each datagram says how it
//   was sent ("socket sendmsg", ...), so that the host can tell which way got through;
// - stream: a connect to the abstract stream socket ABSTRACT_STREAM;
// - pair-stream, pair-seqpacket: bytes through a stream pair, and two messages through a
//   sequenced-packet pair, received with their boundaries.
// Run inside a sandbox by the escape tests, which check on the host side that nothing
// arrived (docs/design.md §12).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

const char* outcome(bool ok, int error) {
    if (ok) return "ok";
    const char* name = ::strerrorname_np(error);
    return name ? name : "error";
}

socklen_t address(const char* name, bool abstract, sockaddr_un& a) {
    a = {};
    a.sun_family = AF_UNIX;
    const std::size_t n = std::min(std::strlen(name), sizeof a.sun_path - 2);
    std::memcpy(a.sun_path + (abstract ? 1 : 0), name, n);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
}

// Sends `text` to `to` from `fd` three ways; whether any was sent, and the last error.
bool send_each_way(int fd, const std::string& from, const sockaddr_un& to, socklen_t size, int& error) {
    bool sent = false;
    auto note = [&](bool ok) {
        sent = sent || ok;
        if (!ok) error = errno;
    };
    std::string text = from + " sendmsg";
    iovec io{text.data(), text.size()};
    msghdr m{};
    m.msg_name = const_cast<sockaddr_un*>(&to);
    m.msg_namelen = size;
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    note(::sendmsg(fd, &m, MSG_DONTWAIT) >= 0);
    std::string text2 = from + " sendmmsg";
    iovec io2{text2.data(), text2.size()};
    mmsghdr mm{};
    mm.msg_hdr = m;
    mm.msg_hdr.msg_iov = &io2;
    note(::sendmmsg(fd, &mm, 1, MSG_DONTWAIT) == 1);
    const std::string text3 = from + " sendto";
    note(::sendto(fd, text3.data(), text3.size(), MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to), size) >= 0);
    return sent;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: dgram-reach ABSTRACT_DGRAM PATH_DGRAM ABSTRACT_STREAM\n");
        return 2;
    }
    struct Source {
        const char* name;
        int fd;
        int error;
    } sources[4]{};
    int pair[2] = {-1, -1}, seqpacket[2] = {-1, -1};
    sources[0] = {"socket", ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), errno};
    sources[1] = {"raw", ::socket(AF_UNIX, SOCK_RAW, 0), errno};
    sources[2] = {"pair", ::socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) == 0 ? pair[0] : -1, errno};
    sources[3] = {"seqpacket", ::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, seqpacket) == 0 ? seqpacket[0] : -1, errno};
    for (int i = 0; i < 3; ++i) std::printf("%s%s=%s", i ? " " : "", sources[i].name, outcome(sources[i].fd >= 0, sources[i].error));

    for (const bool abstract : {true, false}) {
        sockaddr_un to;
        const socklen_t size = address(argv[abstract ? 1 : 2], abstract, to);
        bool sent = false;
        int error = EBADF;
        for (int i = 0; i < 3; ++i)
            if (sources[i].fd >= 0) sent = send_each_way(sources[i].fd, sources[i].name, to, size, error) || sent;
        // A sequenced-packet socket sends to its peer, whatever address is given: tried
        // too, not counted (the host sees whether anything reached it).
        int ignored = 0;
        if (sources[3].fd >= 0) send_each_way(sources[3].fd, sources[3].name, to, size, ignored);
        std::printf(" %s=%s", abstract ? "abstract" : "path", outcome(sent, error));
    }

    const int stream = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un to;
    const socklen_t size = address(argv[3], true, to);
    const bool connected = stream >= 0 && ::connect(stream, reinterpret_cast<const sockaddr*>(&to), size) == 0;
    std::printf(" stream=%s", outcome(connected, errno));

    int bytes[2];
    char c = 0;
    const bool stream_pair = ::socketpair(AF_UNIX, SOCK_STREAM, 0, bytes) == 0 && ::send(bytes[0], "y", 1, 0) == 1 &&
                             ::recv(bytes[1], &c, 1, 0) == 1 && c == 'y';
    std::printf(" pair-stream=%s", outcome(stream_pair, errno));
    // The messages sent above by the sequenced-packet end went to its peer: drained first.
    char buffer[64];
    if (seqpacket[1] >= 0)
        while (::recv(seqpacket[1], buffer, sizeof buffer, MSG_DONTWAIT) > 0) {
        }
    const bool boundaries = seqpacket[0] >= 0 && ::send(seqpacket[0], "ab", 2, 0) == 2 && ::send(seqpacket[0], "c", 1, 0) == 1 &&
                            ::recv(seqpacket[1], buffer, sizeof buffer, 0) == 2 && ::recv(seqpacket[1], buffer, sizeof buffer, 0) == 1 &&
                            buffer[0] == 'c';
    std::printf(" pair-seqpacket=%s\n", outcome(boundaries, errno));
    return 0;
}
