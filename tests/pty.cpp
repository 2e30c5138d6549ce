#include "pty.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto patience = std::chrono::seconds(20);

// Reads exactly `size` bytes from `fd` within `ms`; false otherwise.
bool read_exactly(int fd, void* into, std::size_t size, int ms) {
    auto* out = static_cast<char*>(into);
    const auto until = Clock::now() + std::chrono::milliseconds(ms);
    std::size_t got = 0;
    while (got < size) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
        const ssize_t n = ::read(fd, out + got, size - got);
        if (n == 0) return false;
        if (n > 0) got += static_cast<std::size_t>(n);
        else if (errno != EINTR && errno != EAGAIN) return false;
    }
    return true;
}

// The session leader, from fork on: the shell's part. Async-signal-safe calls only.
[[noreturn]] void lead_session(const char* slave_name, char* const* argv, int status_w, int release_r) {
    if (::setsid() < 0) ::_exit(120);
    const int slave = ::open(slave_name, O_RDWR);
    if (slave < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0) ::_exit(121);
    for (int fd = 0; fd <= 2; ++fd)
        if (::dup2(slave, fd) < 0) ::_exit(122);
    if (slave > 2) ::close(slave);
    const pid_t job = ::fork();
    if (job == 0) {
        // The job: a process group of its own, in the terminal's foreground, with the
        // signals a login shell's job starts with.
        ::setpgid(0, 0);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTTOU);
        ::sigprocmask(SIG_BLOCK, &set, nullptr);
        ::tcsetpgrp(0, ::getpid());
        for (int sig = 1; sig < 32; ++sig)
            if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
        sigemptyset(&set);
        ::sigprocmask(SIG_SETMASK, &set, nullptr);
        ::close(status_w);
        ::close(release_r);
        ::execve(argv[0], argv, environ);
        ::_exit(127);
    }
    if (job < 0) ::_exit(123);
    ::setpgid(job, job);
    (void)!::write(status_w, &job, sizeof job);
    int status = 0;
    while (::waitpid(job, &status, 0) < 0 && errno == EINTR) {
    }
    (void)!::write(status_w, &status, sizeof status);
    // Held until the test lets go: the session, and the terminal, outlive the job, so that
    // nothing left of it gets the hang-up a session's end would send.
    char c;
    while (::read(release_r, &c, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
}

}  // namespace

PtyJob::PtyJob(const std::vector<std::string>& argv, bool for_nobody) {
    REQUIRE_FALSE(argv.empty());
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master_ >= 0);
    ::fcntl(master_, F_SETFD, FD_CLOEXEC);
    REQUIRE(::grantpt(master_) == 0);
    REQUIRE(::unlockpt(master_) == 0);
    const char* name = ::ptsname(master_);
    REQUIRE(name != nullptr);
    const std::string slave_name = name;
    terminal_ = slave_name;
    if (for_nobody) REQUIRE(::chown(slave_name.c_str(), nobody, static_cast<gid_t>(-1)) == 0);
    winsize size{24, 80, 0, 0};
    ::ioctl(master_, TIOCSWINSZ, &size);
    int status[2], release[2];
    REQUIRE(::pipe(status) == 0);
    REQUIRE(::pipe(release) == 0);
    for (const int fd : {status[0], status[1], release[0], release[1]}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    // Built before the fork: the child allocates nothing.
    std::vector<std::string> args = argv;
    std::vector<char*> pointers;
    for (auto& a : args) pointers.push_back(a.data());
    pointers.push_back(nullptr);
    leader_ = ::fork();
    REQUIRE(leader_ >= 0);
    if (leader_ == 0) {
        ::close(master_);
        ::close(status[0]);
        ::close(release[1]);
        lead_session(slave_name.c_str(), pointers.data(), status[1], release[0]);
    }
    ::close(status[1]);
    ::close(release[0]);
    status_ = status[0];
    release_ = release[1];
    ::fcntl(master_, F_SETFL, O_NONBLOCK);
    REQUIRE(read_exactly(status_, &job_, sizeof job_, 10000));
}

PtyJob::~PtyJob() {
    if (!ended_ && job_ > 0) {
        ::kill(-job_, SIGKILL);
        ::kill(job_, SIGKILL);
    }
    if (release_ >= 0) ::close(release_);
    if (leader_ > 0) {
        ::kill(leader_, SIGKILL);
        ::waitpid(leader_, nullptr, 0);
    }
    if (status_ >= 0) ::close(status_);
    if (master_ >= 0) ::close(master_);
}

void PtyJob::type(std::string_view keys) const {
    REQUIRE(::write(master_, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size()));
}

void PtyJob::resize(unsigned short rows, unsigned short columns) const {
    winsize size{rows, columns, 0, 0};
    REQUIRE(::ioctl(master_, TIOCSWINSZ, &size) == 0);
}

bool PtyJob::read_for(int ms) {
    pollfd p{master_, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return true;
    char buf[4096];
    const ssize_t n = ::read(master_, buf, sizeof buf);
    if (n <= 0) return n < 0 && (errno == EAGAIN || errno == EINTR);
    for (ssize_t i = 0; i < n; ++i)
        if (buf[i] != '\r') screen_ += buf[i];
    return true;
}

bool PtyJob::expect(const std::string& text) {
    const auto until = Clock::now() + patience;
    for (;;) {
        if (const auto at = screen_.find(text, matched_); at != std::string::npos) {
            matched_ = at + text.size();
            return true;
        }
        if (Clock::now() > until) return false;
        if (!read_for(50)) ::usleep(50000);  // the terminal has no writer left: only wait
    }
}

std::optional<Result> PtyJob::wait() {
    if (ended_) return ended_;
    const auto until = Clock::now() + patience;
    while (Clock::now() < until) {
        read_for(20);
        pollfd p{status_, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0) continue;
        int status = 0;
        if (!read_exactly(status_, &status, sizeof status, 1000)) return std::nullopt;
        for (int quiet = 0; quiet < 3;) {
            const std::size_t before = screen_.size();
            if (!read_for(20)) break;
            quiet = screen_.size() == before ? quiet + 1 : 0;
        }
        Result r;
        if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        else r.signal = WTERMSIG(status);
        r.out = screen_;
        ended_ = r;
        return ended_;
    }
    return std::nullopt;
}

}  // namespace test
