#include "platform.hpp"

#include <confine/execute.hpp>

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
#include <cstdint>
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

// Signals are passed on to the command (docs/design.md §7), each to the command's whole
// process group when that is not confinectl's own: under bubblewrap the command has a
// session of its own — its group is the PID namespace's init's, which ignores what it
// has no handler for — and bubblewrap a process group of its own, so that the terminal's
// signals reach neither; with a time limit, the runner has a group of its own. When the
// command shares confinectl's group (Landlock in the foreground), the terminal's signals
// have reached it already, and one sent by another process goes to the command alone.
// A runner that names its command (bubblewrap) is never signalled: until the command is
// located, a signal is held (await_command), and passed on when it is.
// Job control: Ctrl-Z stops the command's group (SIGSTOP: a group that has no parent in
// the terminal's session, as bubblewrap's has not, would have a SIGTSTP discarded by the
// kernel), then confinectl itself, as the shell expects; SIGCONT (`fg`) continues the
// command's group.
// With no command started yet, or none any more, the signal is confinectl's own: it
// ends confinectl by its default action, so that nothing starts after it (a stop stops
// it; a continuation and a resize do nothing).
std::atomic<bool> g_awaiting{false};
std::atomic<int> g_runner{0};
std::atomic<std::uint32_t> g_held{0};
std::atomic<unsigned> g_continued{0};
// Set while a continuation confinectl sent its own process group is on its way back to
// confinectl. Its sender cannot be told by si_pid: the kernel fills one siginfo for the
// whole group and sets its si_pid to 0 for each member that cannot see the sender (the
// supervisor and the command, in a PID namespace of their own) — and for every member
// after it, confinectl included. Taken for a new continuation, it would be passed on
// again, and again, without end.
std::atomic<bool> g_own_continuation{false};

constexpr std::uint32_t bit(int sig) { return sig > 0 && sig < 32 ? std::uint32_t{1} << sig : 0; }

// Whether `pid` is the runner that will name its command, not the command.
bool awaiting(int pid) {
    if (!g_awaiting.load()) return false;
    const int runner = g_runner.load();
    return runner == 0 || runner == pid;
}

// Passes `sig` on to the command `pid`; `from_terminal` when the kernel sent it (the
// terminal's keys, its resize or hang-up) rather than a process.
void pass_on(int sig, int pid, bool from_terminal) {
    const pid_t group = ::getpgid(pid);
    const bool own_group = group > 0 && group == ::getpgrp();
    const int runner = g_awaiting.load() ? g_runner.load() : 0;
    if (group <= 0 || (runner > 0 && runner != pid && group == ::getpgid(runner))) {
        ::kill(pid, sig == SIGTSTP && !own_group ? SIGSTOP : sig);  // gone, or going; or in the runner's group
    } else if (!own_group) {
        ::kill(-group, sig == SIGTSTP ? SIGSTOP : sig);
    } else if (sig == SIGCONT) {
        g_own_continuation = true;
        ::kill(0, SIGCONT);  // everything the stop stopped; confinectl's own is ignored
    } else if (!from_terminal) {
        ::kill(pid, sig);
    }
}

void hold(int sig) {
    if (sig == SIGCONT) g_held &= ~bit(SIGTSTP);
    if (sig == SIGTSTP) g_held &= ~bit(SIGCONT);
    g_held |= bit(sig);
}

// Passes on what is held, once `child` names the command.
void pass_held() {
    const int pid = g_child ? g_child->load() : 0;
    if (pid <= 0 || awaiting(pid)) return;
    const std::uint32_t held = g_held.exchange(0);
    for (int sig = 1; sig < 32; ++sig)
        if (held & bit(sig)) pass_on(sig, pid, false);
}

// Stops confinectl as SIGTSTP's default action would; true when it was stopped and has
// been continued since, false when the kernel discarded the stop (a process group with
// no parent in its session: nothing would ever continue it).
bool stop_self() {
    const unsigned continued = g_continued.load();
    // The caller's terminal as its shell expects it while confinectl is stopped, and the
    // run's own raw again once continued.
    confine::release_terminal();
    struct sigaction dfl {}, old {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGTSTP, &dfl, &old);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTSTP);
    ::raise(SIGTSTP);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);  // stops here, until continued
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    ::sigaction(SIGTSTP, &old, nullptr);
    confine::retake_terminal();
    return g_continued.load() != continued;
}

void forward(int sig, siginfo_t* info, void*) {
    const int saved = errno;
    // A process's signal has si_code SI_USER, SI_QUEUE, SI_TKILL (<= 0); the kernel's above.
    const bool from_terminal = info && info->si_code > 0;
    if (sig == SIGCONT) {
        ++g_continued;
        // What confinectl sent its own process group, passing a continuation on (a
        // standard signal: one pending SIGCONT stands for all sent meanwhile, and the
        // group is continued by it already).
        const bool own = g_own_continuation.exchange(false);
        if (info && !from_terminal && (own || info->si_pid == ::getpid())) {
            errno = saved;
            return;
        }
    }
    // The run's own terminal takes a resize itself, and signals its command's foreground.
    if (sig == SIGWINCH && confine::relay_window_size()) {
        errno = saved;
        return;
    }
    const int pid = g_child ? g_child->load() : 0;
    if (pid <= 0) {
        if (sig == SIGTSTP) stop_self();
        else if (sig != SIGCONT && sig != SIGWINCH) {
            struct rlimit no_core {0, 0};
            ::setrlimit(RLIMIT_CORE, &no_core);
            confine::release_terminal();
            ::signal(sig, SIG_DFL);
            ::raise(sig);
        }
        errno = saved;
        return;
    }
    if (awaiting(pid)) {
        hold(sig);
        // The command may have been named meanwhile, its held signals passed already.
        pass_held();
    } else {
        pass_on(sig, pid, from_terminal);
    }
    if (sig == SIGTSTP && !stop_self()) {
        // Never stopped, so never to be continued: neither is the command.
        g_held &= ~bit(SIGTSTP);
        const int now = g_child ? g_child->load() : 0;
        if (now > 0 && !awaiting(now) && ::getpgid(now) != ::getpgrp()) pass_on(SIGCONT, now, false);
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
    for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP}) ::sigaction(sig, &sa, nullptr);
}

void await_command() {
    g_runner = 0;
    g_awaiting = true;
}

void child_changed() {
    const int pid = g_child ? g_child->load() : 0;
    // The first process named after await_command() is the runner.
    if (g_awaiting.load() && pid > 0) {
        int none = 0;
        g_runner.compare_exchange_strong(none, pid);
    }
    pass_held();
}

std::optional<int> interrupted_by() { return std::nullopt; }

void die_by(int sig) {
    struct rlimit no_core {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // the command's core, if any, is its own; not ours
    confine::release_terminal();
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
