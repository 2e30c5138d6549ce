#include "platform.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace confinectl {
namespace {

std::atomic<int>* g_child = nullptr;

// Those the terminal sends already reach the command (it shares confinectl's process
// group); only signals sent by another process are passed on.
void forward(int sig, siginfo_t* info, void*) {
    const int pid = g_child ? g_child->load() : 0;
    if (pid > 0 && info && (info->si_code == SI_USER || info->si_code == SI_QUEUE)) ::kill(pid, sig);
}

}  // namespace

void forward_signals(std::atomic<int>& child) {
    g_child = &child;
    struct sigaction sa {};
    sa.sa_sigaction = &forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) ::sigaction(sig, &sa, nullptr);
}

void die_by(int sig) {
    struct rlimit no_core {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // the command's core, if any, is its own; not ours
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    std::_Exit(128 + sig);
}

std::optional<std::string> write_file_atomically(const std::string& path, const std::string& text) {
    namespace fs = std::filesystem;
    fs::path target(path);
    std::string temp = (target.parent_path().empty() ? fs::path(".") : target.parent_path()).string() + "/." +
                       target.filename().string() + ".XXXXXX";
    int fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) return std::string(std::strerror(errno));
    bool ok = true;
    for (std::size_t off = 0; ok && off < text.size();) {
        ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        if (ok) off += static_cast<std::size_t>(n);
    }
    int saved = errno;
    ok = ::close(fd) == 0 && ok;
    if (ok && ::rename(temp.c_str(), path.c_str()) == 0) return std::nullopt;
    saved = errno ? errno : saved;
    ::unlink(temp.c_str());
    return std::string(std::strerror(saved));
}

std::optional<std::string> cannot_write_in(const std::filesystem::path& dir) {
    if (::access(dir.c_str(), W_OK) != 0) return std::string(std::strerror(errno));
    return std::nullopt;
}

std::optional<std::string> prepare_report_descriptor(int fd) {
    const int flags = fd < 0 ? -1 : ::fcntl(fd, F_GETFD);
    if (flags < 0) return "--report-fd " + std::to_string(fd) + " is not an open file descriptor";
    if (fd <= 2) return std::string("--report-fd must not be standard input, output or error");
    ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    return std::nullopt;
}

std::optional<std::string> write_to_descriptor(int fd, const std::string& text) {
    for (std::size_t off = 0; off < text.size();) {
        ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return std::string(std::strerror(errno));
        off += static_cast<std::size_t>(n);
    }
    return std::nullopt;
}

}  // namespace confinectl
