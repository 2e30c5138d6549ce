// Bounded runs (probes) on POSIX: posix_spawn, then the output pump with a deadline.
#include "process.hpp"
#include "fd.hpp"
#include "output_pump.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

extern char** environ;

namespace confine::detail {
namespace {

// Starts the probe: stdin on /dev/null, stdout and stderr on `out` and `err`, in a
// process group of its own, with default signal handling. 0 or an errno value.
int spawn_probe(const std::vector<std::string>& argv, int out, int err, pid_t& pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out, 1);
    posix_spawn_file_actions_adddup2(&actions, err, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // The probe inherits nothing of the host but its three standard streams.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    // Its own process group, so that a time-out kills everything it started.
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, all_default;
    sigemptyset(&none);
    sigemptyset(&all_default);
    for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGCHLD}) sigaddset(&all_default, sig);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all_default);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int rc = 0;
    {
        const auto guard = fork_guard();
        rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

void record_status(sdk::ProbeRun& run, int status) {
    if (WIFEXITED(status)) {
        run.exited = true;
        run.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        run.signal = WTERMSIG(status);
    }
}

}  // namespace

sdk::ProbeRun run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       std::size_t capture_limit) {
    sdk::ProbeRun run;
    if (argv.empty()) {
        run.spawn_errno = EINVAL;
        return run;
    }
    Fd out_r, out_w, err_r, err_w;
    if (!make_pipe(out_r, out_w) || !make_pipe(err_r, err_w)) {
        run.spawn_errno = errno;
        return run;
    }
    pid_t pid = -1;
    const int rc = spawn_probe(argv, out_w.get(), err_w.get(), pid);
    out_w.reset();
    err_w.reset();
    if (rc != 0) {
        run.spawn_errno = rc;
        return run;
    }
    run.spawned = true;

    OutputPump pump(pid, true);
    pump.read({.fd = out_r.get(), .take = keep_head(run.stdout_text, capture_limit)});
    pump.read({.fd = err_r.get(), .take = keep_head(run.stderr_text, capture_limit)});
    // Seen ending before it is reaped, the probe's group id cannot have been reused yet:
    // clear out anything it left behind, then reap.
    pump.ended = [pid](bool reaped) {
        if (!reaped) ::kill(-pid, SIGKILL);
    };
    pump.after_exit = OutputPump::AfterExit::read_to_end;
    pump.deadline = std::chrono::steady_clock::now() + timeout;
    const OutputPump::Result pumped = pump.run();
    std::optional<int> status = pumped.status;
    if (!status && pumped.deadline_passed) {
        run.timed_out = true;
        ::kill(-pid, SIGKILL);
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        status = st;
    }
    if (status) record_status(run, *status);
    return run;
}

}  // namespace confine::detail
