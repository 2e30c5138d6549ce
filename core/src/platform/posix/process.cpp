#include "process.hpp"
#include "fd.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <optional>
#include <utility>

extern char** environ;

namespace confine::detail {
namespace {



// Appends what is readable; returns false on EOF or error.
bool drain(int fd, std::string& into, std::size_t limit) {
    char buf[16384];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            std::size_t room = into.size() < limit ? limit - into.size() : 0;
            into.append(buf, std::min(room, static_cast<std::size_t>(n)));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        return false;
    }
}

void record_status(BoundedRun& run, int status) {
    if (WIFEXITED(status)) {
        run.exited = true;
        run.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        run.signal = WTERMSIG(status);
    }
}

}  // namespace

BoundedRun run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       std::size_t capture_limit) {
    BoundedRun run;
    if (argv.empty()) {
        run.spawn_errno = EINVAL;
        return run;
    }
    Fd out_r, out_w, err_r, err_w;
    if (!make_pipe(out_r, out_w) || !make_pipe(err_r, err_w)) {
        run.spawn_errno = errno;
        return run;
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // The probe inherits nothing of the host but its three standard streams.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    // Its own process group, so that a time-out kills everything it started.
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, all_default;
    sigemptyset(&none);
    sigemptyset(&all_default);
    sigaddset(&all_default, SIGPIPE);
    sigaddset(&all_default, SIGINT);
    sigaddset(&all_default, SIGQUIT);
    sigaddset(&all_default, SIGTERM);
    sigaddset(&all_default, SIGCHLD);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all_default);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    out_w.reset();
    err_w.reset();
    if (rc != 0) {
        run.spawn_errno = rc;
        return run;
    }
    run.spawned = true;

    ::fcntl(out_r.get(), F_SETFL, O_NONBLOCK);
    ::fcntl(err_r.get(), F_SETFL, O_NONBLOCK);
    Fd pidfd(open_pidfd(pid));
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool out_open = true, err_open = true, reaped = false;
    std::optional<int> status;

    auto kill_group = [&] { ::kill(-pid, SIGKILL); };

    while (!reaped || out_open || err_open) {
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            if (!reaped) {
                run.timed_out = true;
                kill_group();
                int st = 0;
                while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
                status = st;
                reaped = true;
            }
            break;  // stop reading what stragglers outside the group might still hold
        }
        pollfd fds[3];
        nfds_t n = 0;
        int out_i = -1, err_i = -1, pid_i = -1;
        if (out_open) { out_i = static_cast<int>(n); fds[n++] = {out_r.get(), POLLIN, 0}; }
        if (err_open) { err_i = static_cast<int>(n); fds[n++] = {err_r.get(), POLLIN, 0}; }
        if (!reaped && pidfd.get() >= 0) { pid_i = static_cast<int>(n); fds[n++] = {pidfd.get(), POLLIN, 0}; }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
        // Without a pidfd the exit is noticed by polling waitpid every few milliseconds.
        int wait_ms = static_cast<int>(pidfd.get() >= 0 || reaped ? left : std::min<long long>(left, 5));
        int ready = ::poll(fds, n, wait_ms);
        if (ready < 0 && errno != EINTR) break;
        if (out_i >= 0 && (fds[out_i].revents & (POLLIN | POLLHUP | POLLERR)))
            out_open = drain(out_r.get(), run.out, capture_limit);
        if (err_i >= 0 && (fds[err_i].revents & (POLLIN | POLLHUP | POLLERR)))
            err_open = drain(err_r.get(), run.err, capture_limit);
        if (!reaped && (pid_i < 0 || (fds[pid_i].revents & POLLIN))) {
            // With a pidfd the exit is seen before reaping, so the group id cannot have
            // been reused yet: clear out anything the probe left behind, then reap.
            if (pid_i >= 0) kill_group();
            int st = 0;
            pid_t w = ::waitpid(pid, &st, pid_i >= 0 ? 0 : WNOHANG);
            if (w == pid) {
                status = st;
                reaped = true;
            }
        }
    }
    if (status) record_status(run, *status);
    return run;
}

}  // namespace confine::detail
