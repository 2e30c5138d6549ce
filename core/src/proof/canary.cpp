// What a canary does inside the sandbox (confine::canary_main, confine/prove.hpp): one
// step each run, its outcome printed for the host, which judges by the world, not by it.
#include <confine/prove.hpp>

#include "canary.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#include <sys/ptrace.h>
#define CONFINE_PROVE_PTRACE 1
#endif

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace confine {
namespace {

namespace fs = std::filesystem;
using proving::loopback;
using proving::stat_state_and_start;
using proving::unix_address;

// What the canary saw, for a human reading along; the proof itself is the host's view.
std::string outcome(bool ok) { return ok ? std::string("ok") : std::string("refused: ") + std::strerror(errno); }

// A process tracing another: attach, write one word of its memory, detach. `arg` is
// "PID:ADDRESS" (hexadecimal), the host's word to set.
bool trace_step(const std::string& arg) {
#ifdef CONFINE_PROVE_PTRACE
    const auto colon = arg.find(':');
    if (colon == std::string::npos) {
        errno = EINVAL;
        return false;
    }
    const pid_t pid = static_cast<pid_t>(std::atoi(arg.c_str()));
    const auto address = static_cast<std::uintptr_t>(std::strtoull(arg.c_str() + colon + 1, nullptr, 16));
    if (::ptrace(PTRACE_ATTACH, pid, nullptr, nullptr) != 0) return false;
    int status = 0;
    ::waitpid(pid, &status, __WALL);
    const bool poked = ::ptrace(PTRACE_POKEDATA, pid, reinterpret_cast<void*>(address), reinterpret_cast<void*>(1)) == 0;
    const int saved = errno;
    ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
    errno = saved;
    return poked;
#else
    (void)arg;
    errno = ENOSYS;
    return false;
#endif
}

// What a read or a listing found, printed after "ok " for the host to look at.
std::string found;
// The canary of the environment: what it sees of the variable `name`, its value included,
// so that the host can tell whether the value reached it.
std::string environment_step(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return value ? std::string("ok: ") + name + " is " + value : "refused: " + name + " is not set";
}

// Starts a daemon meant to outlive the run: a session of its own, its parent gone (a
// double fork), SIGTERM and SIGHUP ignored, no descriptor of the run's. `found` is its
// process ID and start time as the host's /proc has them ("PID START"), so that the host
// can tell it from a process that took its number since.
bool daemon_step() {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return false;
    const pid_t first = ::fork();
    if (first < 0) return false;
    if (first == 0) {
        ::setsid();
        if (::fork() != 0) ::_exit(0);
        ::signal(SIGTERM, SIG_IGN);
        ::signal(SIGHUP, SIG_IGN);
        // /proc/self is the host's number where the run has a PID namespace of its own.
        char self[32] = {0}, stat[1024] = {0};
        (void)!::readlink("/proc/self", self, sizeof self - 1);
        if (const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC); fd >= 0) {
            (void)!::read(fd, stat, sizeof stat - 1);
            ::close(fd);
        }
        char state = 0;
        unsigned long long start = 0;
        if (!stat_state_and_start(stat, state, start)) start = 0;
        char line[96];
        const int n = std::snprintf(line, sizeof line, "%s %llu", self, start);
        (void)!::write(pipe_fds[1], line, static_cast<std::size_t>(n));
        const int null = ::open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
        for (int fd = 3; fd < 1024; ++fd) ::close(fd);
        for (;;) ::pause();
    }
    ::close(pipe_fds[1]);
    ::waitpid(first, nullptr, 0);
    char line[96] = {0};
    const ssize_t n = ::read(pipe_fds[0], line, sizeof line - 1);
    ::close(pipe_fds[0]);
    if (n <= 0) return false;
    found.assign(line, static_cast<std::size_t>(n));
    return true;
}

// The bytes of the file `arg`, into `found`.
bool read_step(const std::string& arg) {
    std::ifstream in(arg, std::ios::binary);
    if (!in) return false;
    found.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return true;
}

// The names in the directory `arg`, into `found`.
bool list_step(const std::string& arg) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(arg, ec)) found += entry.path().filename().string() + " ";
    if (ec) errno = ec.value();
    return !ec;
}

// The file `arg` emptied and written anew.
bool overwrite_step(const std::string& arg) {
    const int fd = ::open(arg.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return false;
    const bool written = ::write(fd, "replaced\n", 9) == 9;
    return ::close(fd) == 0 && written;
}

// A TCP connection, or a UDP datagram, to the loopback's port `arg`.
bool loopback_step(bool tcp, const std::string& arg) {
    const int fd = ::socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (fd < 0) return false;
    const sockaddr_in a = loopback(std::atoi(arg.c_str()));
    if (tcp) return ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    return ::sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 1;
}

// A tunnel to `arg` (host:port) through the run's proxy, which HTTP_PROXY names
// (http://127.0.0.1:PORT): true when the proxy answered 200 to the CONNECT.
bool proxied_step(const std::string& arg) {
    const char* proxy = std::getenv("HTTP_PROXY");
    const std::string_view prefix = "http://127.0.0.1:";
    if (!proxy || !std::string_view(proxy).starts_with(prefix)) return false;
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in a = loopback(std::atoi(proxy + prefix.size()));
    if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) return false;
    const std::string request = "CONNECT " + arg + " HTTP/1.1\r\nHost: " + arg + "\r\n\r\n";
    if (::send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) return false;
    char answer[64] = {};
    std::size_t got = 0;
    for (ssize_t n = 0; got < 12 && (n = ::recv(fd, answer + got, sizeof answer - 1 - got, 0)) > 0;) got += static_cast<std::size_t>(n);
    ::close(fd);
    return std::string_view(answer, got).starts_with("HTTP/1.1 200") || std::string_view(answer, got).starts_with("HTTP/1.0 200");
}

// A connection to the unix stream socket `arg`, abstract or by path.
bool unix_connect_step(const std::string& arg, bool abstract) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_un a;
    const socklen_t size = unix_address(arg, abstract, a);
    return ::connect(fd, reinterpret_cast<const sockaddr*>(&a), size) == 0;
}

// A datagram to the unix socket `arg`, abstract or by path, from every kind of unix
// datagram socket the canary can make: one of its own, and an end of a pair (which sends
// to any address given too).
bool datagram_step(const std::string& arg, bool abstract) {
    sockaddr_un a;
    const socklen_t size = unix_address(arg, abstract, a);
    int pair[2] = {-1, -1};
    const int own = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    int error = errno;
    if (::socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) != 0) error = errno;
    bool sent = false;
    for (const int fd : {own, pair[0]}) {
        if (fd < 0) continue;
        char byte = 'x';
        iovec io{&byte, 1};
        msghdr m{};
        m.msg_name = &a;
        m.msg_namelen = size;
        m.msg_iov = &io;
        m.msg_iovlen = 1;
        if (::sendmsg(fd, &m, 0) == 1) sent = true;
        else error = errno;
    }
    errno = error;
    return sent;
}

// `bytes` bytes to the file `arg`, a block at a time; a file-size limit ends this process
// (SIGXFSZ) at the limit.
bool fill_step(const std::string& arg, const std::string& bytes) {
    const int fd = ::open(arg.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    static const char block[4096] = {};
    long long left = std::atoll(bytes.c_str());
    bool written = true;
    for (; left > 0 && written; left -= static_cast<long long>(sizeof block)) written = ::write(fd, block, sizeof block) > 0;
    return ::close(fd) == 0 && written;
}

bool canary_step(const std::string& what, const std::string& arg, const std::string& arg2) {
    if (what == "rename") return ::rename(arg.c_str(), arg2.c_str()) == 0;
    if (what == "read") return read_step(arg);
    if (what == "list") return list_step(arg);
    if (what == "overwrite") return overwrite_step(arg);
    if (what == "trace") return trace_step(arg);
    if (what == "write") {
        const int fd = ::open(arg.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        return fd >= 0 && ::close(fd) == 0;
    }
    if (what == "tcp" || what == "udp") return loopback_step(what == "tcp", arg);
    if (what == "proxied") return proxied_step(arg);
    if (what == "abstract" || what == "unix") return unix_connect_step(arg, what == "abstract");
    if (what == "dgram-abstract" || what == "dgram-path") return datagram_step(arg, what == "dgram-abstract");
    if (what == "fill") return fill_step(arg, arg2);
    if (what == "chmod") return ::chmod(arg.c_str(), 0600) == 0;
    if (what == "signal") return ::kill(std::atoi(arg.c_str()), SIGTERM) == 0;
    if (what == "daemon") return daemon_step();
    if (what == "descriptor") return ::write(std::atoi(arg.c_str()), "leaked\n", 7) == 7;
    errno = EINVAL;
    return false;
}

}  // namespace

int canary_main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "canary: WHAT ARG [ARG] expected\n");
        return 2;
    }
    if (std::strcmp(argv[0], "env") == 0) {
        std::printf("%s\n", environment_step(argv[1]).c_str());
        return 0;
    }
    const bool ok = canary_step(argv[0], argv[1], argc == 3 ? argv[2] : "");
    std::printf("%s%s%s\n", outcome(ok).c_str(), found.empty() ? "" : " ", found.c_str());
    return 0;
}

}  // namespace confine
