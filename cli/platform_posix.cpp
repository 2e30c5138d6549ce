#include "platform.hpp"

#include <fcntl.h>
#include <signal.h>
#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#define CONFINECTL_LINUX_CALLS 1
#include <sys/prctl.h>
#elif defined(__APPLE__)
#include <sys/ptrace.h>
#include <sys/types.h>
#endif
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>

namespace confinectl {
namespace {

std::atomic<int>* g_child = nullptr;

// The report's directory, opened to create and rename beneath it, never to read it.
#ifdef CONFINECTL_LINUX_CALLS
constexpr int directory_handle = O_PATH | O_DIRECTORY;
#elif defined(O_SEARCH)
constexpr int directory_handle = O_SEARCH | O_DIRECTORY;
#else
constexpr int directory_handle = O_RDONLY | O_DIRECTORY;
#endif

// Random bits for a temporary name; false when the system has none to give now.
bool random_bits(unsigned& bits) {
#ifdef CONFINECTL_LINUX_CALLS
    return ::getrandom(&bits, sizeof bits, GRND_NONBLOCK) == sizeof bits;
#else
    return ::getentropy(&bits, sizeof bits) == 0;
#endif
}

// Signals sent by another process are passed on to the command (to the runner until the
// command is known). Those the terminal sends reach the command by themselves when it is
// in confinectl's process group (Landlock, no time limit); when it is not — bubblewrap's
// command has a session of its own, and bubblewrap a process group of its own so that
// the terminal's signals do not end it — they are passed on to the command's process
// group, as the terminal would have sent them (docs/design.md §7).
// With no command started yet, or none any more, the signal is confinectl's own: it
// ends confinectl by its default action, so that nothing starts after it.
void forward(int sig, siginfo_t* info, void*) {
    const int saved = errno;
    const int pid = g_child ? g_child->load() : 0;
    if (pid <= 0) {
        struct rlimit no_core {0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        ::signal(sig, SIG_DFL);
        ::raise(sig);
        return;
    }
    if (info && (info->si_code == SI_USER || info->si_code == SI_QUEUE)) {
        ::kill(pid, sig);
    } else {
        const pid_t group = ::getpgid(pid);
        if (group > 0 && group != ::getpgrp()) ::kill(group == pid ? -pid : pid, sig);
    }
    errno = saved;
}

}  // namespace

void make_undumpable() {
#ifdef CONFINECTL_LINUX_CALLS
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#elif defined(__APPLE__)
    // macOS's analogue: no tracer may attach to confinectl from now on (ptrace's
    // attach is refused; it does not govern task ports, which macOS guards itself).
    ::ptrace(PT_DENY_ATTACH, 0, nullptr, 0);
#else
    // A portable build elsewhere (Linux included) has no such call: confinectl stays
    // traceable by the user's own processes, and only a runner that puts the command in
    // a PID namespace of its own (bubblewrap) keeps it out (docs/design.md §11).
#endif
}

void forward_signals(std::atomic<int>& child) {
    g_child = &child;
    struct sigaction sa {};
    sa.sa_sigaction = &forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) ::sigaction(sig, &sa, nullptr);
}

std::optional<int> interrupted_by() { return std::nullopt; }

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

struct ReportFile::Impl {
    int dir = -1;
    std::string name;
    ~Impl() {
        if (dir >= 0) ::close(dir);
    }
    // A new, empty temporary file beside the report, or -1 with errno set.
    int create_temp(std::string& temp) const {
        for (int attempt = 0; attempt < 100; ++attempt) {
            // Unpredictable, so that the command cannot have taken the name first (it
            // could only make the attempt fail: O_EXCL and O_NOFOLLOW follow nothing).
            unsigned bits = 0;
            if (!random_bits(bits)) bits ^= static_cast<unsigned>(::getpid()) * 2654435761u + attempt;
            char suffix[16];
            std::snprintf(suffix, sizeof suffix, ".%08x", bits);
            temp = "." + name + suffix;
            const int fd = ::openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd >= 0 || errno != EEXIST) return fd;
        }
        return -1;
    }
};

ReportFile::ReportFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ReportFile::ReportFile(ReportFile&&) noexcept = default;
ReportFile& ReportFile::operator=(ReportFile&&) noexcept = default;
ReportFile::~ReportFile() = default;

std::expected<ReportFile, std::string> ReportFile::open(const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    auto impl = std::make_unique<Impl>();
    impl->name = target.filename().string();
    if (impl->name.empty() || impl->name == "." || impl->name == "..") return std::unexpected(path + ": names a directory, not a file");
    const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    impl->dir = ::open(dir.c_str(), directory_handle | O_CLOEXEC);
    if (impl->dir < 0) return std::unexpected(path + ": cannot open its directory " + dir.string() + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstatat(impl->dir, impl->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode)) return std::unexpected(path + ": is a directory");
        // The report replaces what the name holds: a device, a pipe or a socket (--report
        // /dev/null) would be lost, and is refused instead.
        if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
            return std::unexpected(path + ": is not a regular file, and a report would replace it (--report-fd N writes to a descriptor)");
    }
    // Shown now that a file can be made there, rather than after the command has run.
    std::string temp;
    const int fd = impl->create_temp(temp);
    if (fd < 0) return std::unexpected(path + ": cannot write in " + dir.string() + ": " + std::strerror(errno));
    ::close(fd);
    ::unlinkat(impl->dir, temp.c_str(), 0);
    return ReportFile(std::move(impl));
}

std::optional<std::string> ReportFile::write(const std::string& text) {
    std::string temp;
    const int fd = impl_->create_temp(temp);
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
    // renameat replaces whatever the name holds now, a link included, and follows none.
    if (ok && ::renameat(impl_->dir, temp.c_str(), impl_->dir, impl_->name.c_str()) == 0) return std::nullopt;
    saved = errno ? errno : saved;
    ::unlinkat(impl_->dir, temp.c_str(), 0);
    return std::string(std::strerror(saved));
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

std::string own_program() {
#if defined(__APPLE__)
    char path[4096];
    std::uint32_t size = sizeof path;
    return ::_NSGetExecutablePath(path, &size) == 0 ? std::string(path) : std::string();
#else
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : path.string();
#endif
}

}  // namespace confinectl
