#include "executor.hpp"
#include "fd.hpp"

#include <confine/sdk/terminal_filter_linux.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace confine::detail {

void RunControl::exited() {
    std::lock_guard lock(mutex_);
    done_ = true;
}

void RunControl::signal(int sig) {
    std::lock_guard lock(mutex_);
    if (pid_ <= 0 || done_) return;
    ::kill(own_group_ ? -pid_ : pid_, sig);
}

std::optional<std::string> find_program(const std::string& name, const std::optional<std::vector<std::string>>& environment,
                                        const std::filesystem::path& working_directory, int& error) {
    namespace fs = std::filesystem;
    // Judged where the exec will happen: relative paths from the working directory.
    auto usable = [&](const std::string& candidate) {
        fs::path p(candidate);
        if (p.is_relative() && !working_directory.empty()) p = working_directory / p;
        std::error_code ec;
        if (!fs::exists(p, ec)) return false;
        if (fs::is_directory(p, ec) || ::access(p.c_str(), X_OK) != 0) {
            error = EACCES;
            return false;
        }
        return true;
    };
    error = ENOENT;
    if (name.empty()) return std::nullopt;
    if (name.find('/') != std::string::npos) return usable(name) ? std::optional<std::string>(name) : std::nullopt;
    const char* own = std::getenv("PATH");
    std::string dirs = own ? own : "/usr/local/bin:/usr/bin:/bin";
    if (environment)
        for (const auto& e : *environment)
            if (e.starts_with("PATH=")) dirs = e.substr(5);
    for (std::size_t start = 0;;) {
        std::size_t end = dirs.find(':', start);
        std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
        if (usable(candidate)) return candidate;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return std::nullopt;
}

namespace {

// Why a child reported failure on its error pipe, before or instead of its exec.
enum class ChildStage : int { chdir = 1, trace = 2, exec = 3, confine = 4, terminal = 5 };
struct ChildReport {
    int stage;
    int error;
    char message[256];  // from an in-process confinement that failed
};

// Writes everything or gives up; used in the child, so: syscalls only.
void write_all(int fd, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

bool write_all_checked(int fd, const char* p, std::size_t size) {
    while (size) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}





void record_status(Observation& o, int status) {
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
}

// Kills the run at its time limit, from its own thread, so that every wait of the
// supervising thread can block.
class Watchdog {
public:
    Watchdog(std::optional<std::chrono::milliseconds> limit, RunControl& control) {
        if (!limit) return;
        thread_ = std::thread([this, deadline = std::chrono::steady_clock::now() + *limit, &control] {
            std::unique_lock lock(mutex_);
            if (!cv_.wait_until(lock, deadline, [this] { return stop_; })) {
                fired_ = true;
                control.signal(SIGKILL);
            }
        });
    }
    ~Watchdog() { stop(); }
    void stop() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }
    bool fired() {
        std::lock_guard lock(mutex_);
        return fired_;
    }

private:
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool fired_ = false;
};

// execve's argument and environment arrays for a spec, pointing into its strings.
class ExecArrays {
public:
    explicit ExecArrays(const ExecSpec& spec, const std::vector<std::string>* argv = nullptr) {
        for (const auto& a : argv ? *argv : spec.argv) argv_.push_back(const_cast<char*>(a.c_str()));
        argv_.push_back(nullptr);
        if (spec.environment) {
            for (const auto& e : *spec.environment) envp_.push_back(const_cast<char*>(e.c_str()));
            envp_.push_back(nullptr);
        }
    }
    char* const* argv() const { return argv_.data(); }
    char* const* envp() const { return envp_.empty() ? environ : envp_.data(); }

private:
    std::vector<char*> argv_, envp_;
};

// Follows the traced runner from its own exec to the command's exec, then lets go.
// Returns true when the process is still running (reached or detached); false when
// it ended, with its status recorded.
bool follow_execs(pid_t pid, std::uint32_t command_exec, Observation& o) {
    std::uint32_t execs = 0;
    for (;;) {
        int st = 0;
        pid_t w = ::waitpid(pid, &st, __WALL);
        if (w < 0) {
            if (errno == EINTR) continue;
            o.attested = Observation::Attested::unavailable;
            o.attestation_detail = std::string("waitpid: ") + std::strerror(errno);
            return true;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            record_status(o, st);
            o.attested = Observation::Attested::runner_stopped;
            o.attestation_detail = std::to_string(execs) + " of " + std::to_string(command_exec) + " execs seen";
            return false;
        }
        if (!WIFSTOPPED(st)) continue;
        const int sig = WSTOPSIG(st);
        const int event = st >> 16;
        int inject = 0;
        if (execs == 0 && sig == SIGTRAP && event == 0) {
            // The stop after the runner's own exec, under PTRACE_TRACEME.
            execs = 1;
            ::ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
        } else if (sig == SIGTRAP && event == PTRACE_EVENT_EXEC) {
            ++execs;
        } else {
            siginfo_t info;
            // A group-stop has no siginfo: resume without a signal. Otherwise deliver it.
            if (::ptrace(PTRACE_GETSIGINFO, pid, nullptr, &info) == 0) inject = sig;
        }
        if (execs >= command_exec) {
            o.attested = Observation::Attested::reached_command;
            ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
            return true;
        }
        ::ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(inject)));
    }
}

}  // namespace

namespace {

// struct pidfd_info and PIDFD_GET_INFO from linux/pidfd.h (Linux 6.13), which older
// system headers lack.
struct PidfdInfo {
    std::uint64_t mask, cgroupid;
    std::uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid, spare;
};
static_assert(sizeof(PidfdInfo) == 64, "PIDFD_INFO_SIZE_VER0");
constexpr unsigned long pidfd_get_info = _IOWR(0xFF, 11, PidfdInfo);

// The parent of the process a pidfd holds; 0 when it is gone or cannot be told.
pid_t parent_of(int pidfd, pid_t pid) {
    PidfdInfo info{};
    info.mask = 1;  // PIDFD_INFO_PID
    if (::ioctl(pidfd, pidfd_get_info, &info) == 0) return static_cast<pid_t>(info.ppid);
    if (errno == ESRCH) return 0;
    // An older kernel: /proc, which describes the held process only if it is still
    // alive once read (until then its number cannot go to another).
    char path[64], line[512];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    Fd proc(::open(path, O_RDONLY | O_CLOEXEC));
    const ssize_t n = proc.get() < 0 ? -1 : ::read(proc.get(), line, sizeof line - 1);
    if (n <= 0) return 0;
    line[n] = '\0';
    // "pid (name) state ppid ...": the name may hold anything, so read after its last ')'.
    const char* close = std::strrchr(line, ')');
    int parent = 0;
    char state = 0;
    if (!close || std::sscanf(close + 1, " %c %d", &state, &parent) != 2) return 0;
    return ::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) == 0 ? parent : 0;
}

// Whether the process `pidfd` holds is still alive (a number read about it before this
// still describes it: a live process's number cannot pass to another).
bool alive(int pidfd) { return ::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) == 0; }

// Reads a small /proc file whole into `buf` (NUL-terminated); its length, or -1.
ssize_t read_proc(const char* path, char* buf, std::size_t size) {
    Fd f(::open(path, O_RDONLY | O_CLOEXEC));
    if (f.get() < 0) return -1;
    std::size_t got = 0;
    while (got + 1 < size) {
        const ssize_t n = ::read(f.get(), buf + got, size - 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    buf[got] = '\0';
    return static_cast<ssize_t>(got);
}

// Whether the process `pidfd` holds is PID 1 of a PID namespace of its own, as
// bubblewrap's reaper is with --unshare-pid: its "NSpid:" line (its number in each
// namespace from this one down) has more than one number, and the last is 1.
bool namespace_init(int pidfd, pid_t pid) {
    char path[64], text[8192];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    if (read_proc(path, text, sizeof text) <= 0) return false;
    const char* line = std::strstr(text, "\nNSpid:");
    if (!line) return false;
    line += 7;
    int count = 0;
    long last = 0;
    for (char* end = nullptr;; line = end) {
        const long n = std::strtol(line, &end, 10);
        if (end == line) break;
        last = n;
        ++count;
        if (*end == '\n' || *end == '\0') break;
    }
    return count > 1 && last == 1 && alive(pidfd);
}

// The command below a PID namespace's init `init` (held by `init_fd`): the init's first
// child, the oldest (orphans the command leaves are reparented to the init after it),
// held in `held` and judged to be the init's child while held, the init still alive.
// 0 while the init has no child that has not already ended (it forks the command once
// the sandbox is set up).
pid_t child_of_init(int init_fd, pid_t init, Fd& held) {
    char path[96], text[256];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(init), static_cast<int>(init));
    if (read_proc(path, text, sizeof text) <= 0) return 0;
    char* end = nullptr;
    const long child = std::strtol(text, &end, 10);
    if (end == text || child <= 1 || child > 0x3fffffff) return 0;
    Fd fd(open_pidfd(static_cast<pid_t>(child)));
    if (fd.get() < 0 || parent_of(fd.get(), static_cast<pid_t>(child)) != init || !alive(init_fd)) return 0;
    pollfd ended{fd.get(), POLLIN, 0};
    if (::poll(&ended, 1, 0) != 0) return 0;  // an ended command the init has not reaped yet
    held = std::move(fd);
    return static_cast<pid_t>(child);
}

// The command's process ID, once the runner's status text names it after `key` and
// it is the runner's own child (judged while a pidfd holds the process, so that the
// number cannot meanwhile pass to another; that pidfd is left in `held`). nullopt while
// the text does not name it yet; 0 when it names something else or the process is gone.
std::optional<pid_t> reported_command(const std::string& text, const std::string& key, pid_t runner, Fd& held) {
    const std::size_t at = text.find(key);
    if (at == std::string::npos) return std::nullopt;
    std::size_t i = at + key.size();
    while (i < text.size() && std::strchr(" \t\":=", text[i])) ++i;
    long long number = 0;
    std::size_t digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 10; ++i, ++digits) number = number * 10 + (text[i] - '0');
    if (i == text.size()) return std::nullopt;  // the rest of the number may still be coming
    if (digits == 0 || number <= 1 || number > 0x3fffffff) return 0;
    const auto pid = static_cast<pid_t>(number);
    Fd fd(open_pidfd(pid));
    if (fd.get() < 0 || parent_of(fd.get(), pid) != runner) return 0;
    held = std::move(fd);
    return pid;
}

}  // namespace

Executed execute(const ExecSpec& spec, RunControl& control) {
    Executed result;
    Observation& o = result.observed;
    o.stderr_seen = spec.background || spec.copy_stderr;
    if (spec.argv.empty()) {
        o.spawned = false;
        o.spawn_errno = EINVAL;
        return result;
    }
    // The command itself (in-process path) is looked up as the launcher would, with its
    // own environment's PATH; a runner program with this process's.
    int resolve_error = 0;
    auto program = find_program(spec.argv.front(), spec.in_process ? spec.environment : std::nullopt,
                                spec.in_process ? spec.working_directory : std::filesystem::path(), resolve_error);
    if (!program) {
        o.spawned = false;
        o.spawn_errno = resolve_error;
        return result;
    }

    const bool trace = spec.attestation.kind == Attestation::Kind::exec;
    const bool status_fd = spec.attestation.kind == Attestation::Kind::status_fd;
    // A time limit kills a whole process group, so a run with one gets its own group.
    const bool own_group = spec.background || spec.timeout.has_value();

    Fd report_r, report_w, out_r, out_w, err_r, err_w, null_in, status_r, status_w;
    if (!make_pipe(report_r, report_w)) {
        o.spawned = false;
        o.spawn_errno = errno;
        return result;
    }
    // The runner's argv with its placeholders filled in (the status descriptor's number,
    // the directories' descriptors), when it has any.
    std::vector<std::string> filled_argv;
    // The runner's status descriptor: its number replaces the placeholder argument.
    // Kept above the standard descriptors, which the child rearranges.
    if (status_fd) {
        if (!make_pipe(status_r, status_w) || (status_w.get() <= 2 && (status_w = Fd(::fcntl(status_w.get(), F_DUPFD_CLOEXEC, 3))).get() < 0)) {
            o.spawned = false;
            o.spawn_errno = errno;
            return result;
        }
        filled_argv = spec.argv;
        if (spec.attestation.status_argument >= filled_argv.size()) {
            o.spawned = false;
            o.spawn_errno = EINVAL;
            return result;
        }
        filled_argv[spec.attestation.status_argument] = std::to_string(status_w.get());
    }

    // Directories the runner is handed as descriptors: opened here without following a
    // link anywhere in the path (the host resolved each root, so a link now is one swapped
    // in since), kept above the standard descriptors, their numbers in place of the
    // placeholder arguments.
    std::vector<Fd> directories;
    if (!spec.directory_arguments.empty()) {
        if (!status_fd) filled_argv = spec.argv;
        for (const auto& [index, path, as_path] : spec.directory_arguments) {
            Fd dir(trust::open_without_links(path, O_PATH | O_DIRECTORY));
            if (dir.get() >= 0 && dir.get() <= 2) dir = Fd(::fcntl(dir.get(), F_DUPFD_CLOEXEC, 3));
            if (dir.get() < 0 || index >= filled_argv.size()) {
                o.spawned = false;
                o.spawn_errno = dir.get() < 0 ? errno : EINVAL;
                o.attestation_detail = "cannot open the writable root " + path;
                return result;
            }
            filled_argv[index] = (as_path ? "/proc/self/fd/" : "") + std::to_string(dir.get());
            directories.push_back(std::move(dir));
        }
    }

    // Everything the child needs is built here: between fork and exec it allocates nothing.
    const ExecArrays arrays(spec, status_fd || !directories.empty() ? &filled_argv : nullptr);
    const std::string cwd = spec.working_directory.string();
    if (spec.background) {
        null_in = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (null_in.get() < 0 || !make_pipe(out_r, out_w)) {
            o.spawned = false;
            o.spawn_errno = errno;
            return result;
        }
    }
    if ((spec.background || spec.copy_stderr) && !make_pipe(err_r, err_w)) {
        o.spawned = false;
        o.spawn_errno = errno;
        return result;
    }

    // Every runner is started by a forked child that prepares what it inherits: a runner
    // confined in-process applies its confinement there, every other runner gets the
    // terminal filter (DESIGN §11: no terminal injection on any runner or path, whether
    // or not the mechanism refuses it itself).
    pid_t pid = -1;
    {
        sigset_t all, saved;
        sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &saved);
        pid = ::fork();
        if (pid == 0) {
            // Child: async-signal-safe calls only, no allocation, no logging.
            if (own_group) ::setpgid(0, 0);
            if (null_in.get() >= 0) ::dup2(null_in.get(), 0);
            if (out_w.get() >= 0) ::dup2(out_w.get(), 1);
            if (err_w.get() >= 0) ::dup2(err_w.get(), 2);
            // Handlers the host installed must not run here; exec resets them anyway.
            for (int s = 1; s < NSIG; ++s) {
                struct sigaction sa;
                if (::sigaction(s, nullptr, &sa) == 0 && sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL) {
                    sa.sa_handler = SIG_DFL;
                    sa.sa_flags = 0;
                    ::sigaction(s, &sa, nullptr);
                }
            }
            ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
            if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
                ChildReport r{static_cast<int>(ChildStage::chdir), errno, {}};
                write_all(report_w.get(), &r, sizeof r);
                ::_exit(127);
            }
            // The one descriptor the runner inherits on purpose (it keeps it from the command).
            if (status_w.get() >= 0) ::fcntl(status_w.get(), F_SETFD, 0);
            for (const Fd& dir : directories) ::fcntl(dir.get(), F_SETFD, 0);
            if (trace && ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) {
                ChildReport r{static_cast<int>(ChildStage::trace), errno, {}};
                write_all(report_w.get(), &r, sizeof r);
                ::_exit(125);
            }
            if (!spec.in_process) {
                // Allowed as is with CAP_SYS_ADMIN (root, and what bubblewrap needs then);
                // otherwise with no_new_privs, which the kernel requires for a filter.
                int rc = terminal::install_injection_filter();
                if (rc == -EACCES && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) rc = terminal::install_injection_filter();
                if (rc < 0) {
                    ChildReport r{static_cast<int>(ChildStage::terminal), -rc, {}};
                    write_all(report_w.get(), &r, sizeof r);
                    ::_exit(125);
                }
            }
            if (spec.in_process) {
                ChildReport r{static_cast<int>(ChildStage::confine), 0, {}};
                if (spec.in_process->apply(spec.in_process->state, r.message, sizeof r.message) != 0) {
                    r.message[sizeof r.message - 1] = '\0';
                    write_all(report_w.get(), &r, sizeof r);
                    ::_exit(125);
                }
            }
            ::execve(program->c_str(), arrays.argv(), arrays.envp());
            ChildReport r{static_cast<int>(ChildStage::exec), errno, {}};
            write_all(report_w.get(), &r, sizeof r);
            ::_exit(127);
        }
        const int fork_errno = errno;
        ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
        if (pid < 0) {
            o.spawned = false;
            o.spawn_errno = fork_errno;
            return result;
        }
    }
    if (own_group) ::setpgid(pid, pid);  // also here, so that no signal can race the child's own call
    control.started(pid, own_group);
    if (spec.on_started) spec.on_started(pid);
    report_w.reset();
    out_w.reset();
    err_w.reset();
    null_in.reset();
    status_w.reset();
    directories.clear();
    Watchdog watchdog(spec.timeout, control);

    // The error pipe closes at the successful exec; a report means the runner never ran.
    ChildReport report{};
    std::size_t got = 0;
    while (got < sizeof report) {
        ssize_t n = ::read(report_r.get(), reinterpret_cast<char*>(&report) + got, sizeof report - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    if (got == sizeof report) {
        int st = 0;
        while (::waitpid(pid, &st, __WALL) < 0 && errno == EINTR) {}
        control.exited();
        const bool confined = spec.in_process && (report.stage == static_cast<int>(ChildStage::confine) ||
                                                  report.stage == static_cast<int>(ChildStage::exec));
        if (confined) {
            // The in-process runner stopped before the command: its own report says why.
            record_status(o, st);
            o.attested = Observation::Attested::runner_stopped;
            report.message[sizeof report.message - 1] = '\0';
            o.runner_message = report.stage == static_cast<int>(ChildStage::exec)
                                   ? std::string("exec failed: ") + std::strerror(report.error)
                                   : std::string(report.message);
            return result;
        }
        o.spawned = false;
        o.spawn_errno = report.error;
        if (report.stage == static_cast<int>(ChildStage::trace)) o.attestation_detail = "cannot trace the runner to attest it";
        if (report.stage == static_cast<int>(ChildStage::chdir)) o.attestation_detail = "cannot enter the working directory " + cwd;
        if (report.stage == static_cast<int>(ChildStage::terminal)) o.attestation_detail = "cannot install the terminal filter";
        return result;
    }
    // With an in-process runner, the error pipe closed by the exec is the attestation.
    if (spec.in_process) o.attested = Observation::Attested::reached_command;

    bool running = true;
    if (trace) running = follow_execs(pid, std::max<std::uint32_t>(spec.attestation.exec_index, 1), o);

    // Output is drained while waiting, so that a command writing a lot on both
    // streams never blocks on a full pipe.
    sigset_t pipe_only, before_pipe;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &before_pipe);
    Fd pidfd(running ? open_pidfd(pid) : -1);
    bool out_open = out_r.get() >= 0, err_open = err_r.get() >= 0, status_open = status_r.get() >= 0, copy_ok = true;
    std::optional<int> status;
    std::string status_text;
    bool command_pid_known = false;
    // With a PID namespace of its own (bubblewrap's --unshare-pid), the runner names its
    // reaper, PID 1 there: a signal from outside to a namespace's init is dropped unless
    // it handles it, so the command is its child, looked for (briefly, without blocking
    // the output) until the init forks it. Until then signals go to the runner as before.
    // Once found it is held, so that its end is seen: signals then go back to the runner,
    // whose number cannot pass to another before it is waited for, and the init's next
    // child is looked for (a setuid bubblewrap's set-up helper comes before the command).
    Fd init_fd, command_fd;
    pid_t init_pid = 0;
    bool looking = false;
    std::chrono::steady_clock::time_point looking_since{};
    constexpr std::chrono::milliseconds look_fast(100), look_limit(10000);
    // Copied stderr is held back while the runner may still be setting up: a runner
    // whose command is an init's child (bubblewrap) has done all of its own set-up once
    // that child exists, so what it wrote before is its own — on a set-up failure, the
    // line the host then says once, as its evidence, rather than twice. Copied as soon as
    // the command is there, when the runner turns out not to say, or past a bound.
    constexpr std::size_t hold_limit = 64 * 1024;
    bool holding = spec.copy_stderr && status_fd && !spec.attestation.status_pid_key.empty() && spec.on_started;
    std::size_t shown = 0;  // how much of the command's stderr has been copied
    auto show_stderr = [&] {
        if (holding || !spec.copy_stderr || shown >= o.stderr_text.size()) return;
        if (copy_ok) copy_ok = write_all_checked(2, o.stderr_text.data() + shown, o.stderr_text.size() - shown);
        shown = o.stderr_text.size();
    };
    auto stop_holding = [&] {
        holding = false;
        show_stderr();
    };
    auto look_for_command = [&] {
        if (!looking) return;
        if (!running || !alive(init_fd.get())) {
            looking = false;  // what was held waits for the outcome: the set-up may have failed
            return;
        }
        if (std::chrono::steady_clock::now() - looking_since > look_limit) {
            looking = false;
            stop_holding();
            return;
        }
        if (pid_t command = child_of_init(init_fd.get(), init_pid, command_fd)) {
            looking = false;
            stop_holding();
            spec.on_started(command);
        }
    };
    char buf[65536];
    while (running || out_open || err_open || status_open) {
        pollfd fds[5];
        nfds_t n = 0;
        int oi = -1, ei = -1, si = -1, pi = -1, ci = -1;
        if (out_open) { oi = static_cast<int>(n); fds[n++] = {out_r.get(), POLLIN, 0}; }
        if (err_open) { ei = static_cast<int>(n); fds[n++] = {err_r.get(), POLLIN, 0}; }
        if (status_open) { si = static_cast<int>(n); fds[n++] = {status_r.get(), POLLIN, 0}; }
        if (running && pidfd.get() >= 0) { pi = static_cast<int>(n); fds[n++] = {pidfd.get(), POLLIN, 0}; }
        if (running && command_fd.get() >= 0) { ci = static_cast<int>(n); fds[n++] = {command_fd.get(), POLLIN, 0}; }
        if (n == 0) {
            // Nothing to read and no pidfd: a blocking wait is all that is left.
            int st = 0;
            while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
            control.exited();
            status = st;
            running = false;
            break;
        }
        // Once the command has exited, take what its pipes already hold and stop: a
        // daemon it left behind may keep them open for ever.
        int timeout_ms = !running ? 0 : pi < 0 ? 10 : -1;
        if (looking && running) {
            const int step = std::chrono::steady_clock::now() - looking_since < look_fast ? 1 : 10;
            if (timeout_ms < 0 || timeout_ms > step) timeout_ms = step;
        }
        int ready = ::poll(fds, n, timeout_ms);
        if (ready < 0 && errno != EINTR) break;
        if (ready == 0 && !running) break;
        auto drain = [&](int fd, bool& open, std::string& into) {
            ssize_t r = ::read(fd, buf, sizeof buf);
            if (r > 0) {
                into.append(buf, static_cast<std::size_t>(r));
            } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                open = false;
            }
        };
        if (oi >= 0 && (fds[oi].revents & (POLLIN | POLLHUP | POLLERR))) drain(out_r.get(), out_open, result.stdout_text);
        if (ei >= 0 && (fds[ei].revents & (POLLIN | POLLHUP | POLLERR))) {
            drain(err_r.get(), err_open, o.stderr_text);
            if (o.stderr_text.size() - shown > hold_limit) holding = false;
            show_stderr();
        }
        if (si >= 0 && (fds[si].revents & (POLLIN | POLLHUP | POLLERR))) {
            drain(status_r.get(), status_open, status_text);
            if (status_text.size() > (1u << 20)) status_open = false;  // a status is a few lines
            if (!command_pid_known && !spec.attestation.status_pid_key.empty() && spec.on_started) {
                Fd held;
                if (auto command = reported_command(status_text, spec.attestation.status_pid_key, pid, held)) {
                    command_pid_known = true;
                    if (*command > 0 && namespace_init(held.get(), *command)) {
                        init_fd = std::move(held);
                        init_pid = *command;
                        looking = true;
                        looking_since = std::chrono::steady_clock::now();
                    } else {
                        stop_holding();  // nothing will say when its set-up is done
                        if (*command > 0) spec.on_started(*command);
                    }
                }
            }
        }
        if (ci >= 0 && (fds[ci].revents & (POLLIN | POLLHUP | POLLERR))) {
            command_fd.reset();
            spec.on_started(pid);
            looking = true;
            looking_since = std::chrono::steady_clock::now();
        }
        look_for_command();
        if (running && (pi < 0 || (fds[pi].revents & POLLIN))) {
            int st = 0;
            pid_t w = ::waitpid(pid, &st, pi >= 0 ? 0 : WNOHANG);
            if (w == pid) {
                control.exited();
                status = st;
                running = false;
            }
        }
    }
    {
        struct timespec zero {};
        while (::sigtimedwait(&pipe_only, nullptr, &zero) > 0) {}
        ::pthread_sigmask(SIG_SETMASK, &before_pipe, nullptr);
    }
    watchdog.stop();
    if (status) record_status(o, *status);
    o.timed_out = watchdog.fired();
    if (status_fd) {
        // What the runner said on its own channel decides. A runner ended by a signal
        // before saying anything proves nothing either way (DESIGN §5: never a runner
        // failure by that alone).
        const std::string& marker = spec.attestation.status_marker;
        bool reached = false;
        for (std::size_t at = 0; at < status_text.size() && !reached;) {
            std::size_t end = status_text.find('\n', at);
            if (end == std::string::npos) end = status_text.size();
            reached = std::string_view(status_text).substr(at, end - at).find(marker) != std::string_view::npos;
            at = end + 1;
        }
        if (reached) {
            o.attested = Observation::Attested::reached_command;
        } else if (o.exit_code) {
            o.attested = Observation::Attested::runner_stopped;
            o.attestation_detail = "its status descriptor never reported the command";
        } else {
            o.attestation_detail = "the runner was ended by a signal before it reported";
        }
    }
    // What was held is shown unless the runner stopped before the command: then it is
    // the runner's own, and the outcome carries it.
    if (o.attested != Observation::Attested::runner_stopped) stop_holding();
    return result;
}

Observation exec_in_place(const ExecSpec& spec) {
    Observation o;
    int resolve_error = 0;
    auto program = spec.argv.empty() ? std::nullopt : find_program(spec.argv.front(), spec.environment, spec.working_directory, resolve_error);
    if (!program || !spec.in_process) {
        o.spawned = false;
        o.spawn_errno = program ? EINVAL : resolve_error;
        return o;
    }
    const ExecArrays arrays(spec);
    if (!spec.working_directory.empty() && ::chdir(spec.working_directory.c_str()) != 0) {
        o.spawned = false;
        o.spawn_errno = errno;
        o.attestation_detail = "cannot enter the working directory " + spec.working_directory.string();
        return o;
    }
    char message[256] = {};
    if (spec.in_process->apply(spec.in_process->state, message, sizeof message) != 0) {
        message[sizeof message - 1] = '\0';
        o.attested = Observation::Attested::runner_stopped;
        o.runner_message = message;
        return o;
    }
    ::execve(program->c_str(), arrays.argv(), arrays.envp());
    o.attested = Observation::Attested::runner_stopped;
    o.runner_message = std::string("exec failed: ") + std::strerror(errno);
    return o;
}

}  // namespace confine::detail
