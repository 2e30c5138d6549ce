// Exec attestation by ptrace (docs/design.md §6): the child asks to be traced, and the
// parent follows the runner from its own exec to the command's, checks that this exec
// ran the command's file, then lets it go.
#include "linux_features.hpp"
#include "log.hpp"
#include "wait_status.hpp"

#include <elf.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <string>

namespace confine::detail {
namespace {

struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const FileId&) const = default;
};

std::optional<FileId> id_of(int fd) {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
}

std::optional<FileId> id_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
}

std::string proc(pid_t pid, const std::string& what) { return "/proc/" + std::to_string(pid) + "/" + what; }

// Closes a descriptor at the end of a scope.
struct Closing {
    int fd;
    ~Closing() {
        if (fd >= 0) ::close(fd);
    }
};

// The path the exec was asked for, as the kernel put it on the new program's stack
// (AT_EXECFN): for a script, the script, where /proc/PID/exe is its interpreter. Read at
// the exec-stop, before the program has run an instruction. Empty when unreadable.
std::string exec_path(pid_t pid) {
    const Closing auxv{::open(proc(pid, "auxv").c_str(), O_RDONLY | O_CLOEXEC)};
    if (auxv.fd < 0) return {};
    unsigned long address = 0;
    for (unsigned long entry[2]; ::read(auxv.fd, entry, sizeof entry) == static_cast<ssize_t>(sizeof entry) && entry[0] != AT_NULL;)
        if (entry[0] == AT_EXECFN) address = entry[1];
    if (address == 0) return {};
    const Closing mem{::open(proc(pid, "mem").c_str(), O_RDONLY | O_CLOEXEC)};
    char buf[PATH_MAX];
    const ssize_t n = mem.fd < 0 ? -1 : ::pread(mem.fd, buf, sizeof buf, static_cast<off_t>(address));
    if (n <= 0) return {};
    const auto* end = static_cast<const char*>(std::memchr(buf, '\0', static_cast<std::size_t>(n)));
    return end ? std::string(static_cast<const char*>(buf), end) : std::string();
}

// The file `path` names for process `pid`: an absolute one in its root (absolute links
// inside it resolved there too), a relative one from its working directory, a
// descriptor path (fexecve) in its descriptor table.
std::optional<FileId> id_for(pid_t pid, const std::string& path) {
    for (const std::string fds : {"/dev/fd/", "/proc/self/fd/"})
        if (path.starts_with(fds)) return id_of(proc(pid, "fd/" + path.substr(fds.size())));
    if (path.front() != '/') return id_of(proc(pid, "cwd/" + path));
    const Closing root{::open(proc(pid, "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (root.fd < 0) return std::nullopt;
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    const Closing file{static_cast<int>(::syscall(SYS_openat2, root.fd, path.c_str(), &how, sizeof how))};
    if (file.fd >= 0) return id_of(file.fd);
    if (errno == ENOSYS) return id_of(proc(pid, "root") + path);  // a kernel before 5.6
    return std::nullopt;
}

// What the exec that stopped `pid` ran.
struct SeenExec {
    std::string file;  // the program, or for a script the script the exec named
    std::optional<FileId> id;
    std::string interpreter;  // for a script: the program running it (/proc/PID/exe)
};

SeenExec seen_exec(pid_t pid) {
    SeenExec out;
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(proc(pid, "exe").c_str(), buf, sizeof buf);
    out.file = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("(unreadable)");
    out.id = id_of(proc(pid, "exe"));
    // A script exec: the file it named is not the program now running.
    if (const std::string named = exec_path(pid); !named.empty() && out.id)
        if (const auto named_id = id_for(pid, named); named_id && *named_id != *out.id) {
            out.interpreter = std::move(out.file);
            out.file = named;
            out.id = named_id;
        }
    return out;
}

// Ends `pid`, a process traced by this thread, and waits until it has: nothing it would
// have run after its current stop runs.
void end_traced(pid_t pid) {
    ::kill(pid, SIGKILL);
    int st = 0;
    while (::waitpid(pid, &st, __WALL) == pid ? !(WIFEXITED(st) || WIFSIGNALED(st)) : errno == EINTR) {}
}

// The runner, with its process group when it leads one of its own (a background run).
void end_runner(pid_t pid) {
    if (::getpgid(pid) == pid) ::kill(-pid, SIGKILL);
    end_traced(pid);
}

// One following of a runner's execs: what it has seen so far, and the verdicts it
// reaches (follow_execs's answer: true when the run may go on, false when the runner is
// ended or has ended).
struct Following {
    pid_t pid;
    std::uint32_t command_exec;
    std::optional<FileId> command_id;
    std::string command_name;
    Observation& o;
    std::uint32_t execs = 0;
    // Once the declared exec turned out not to be the command's: what it ran. The runner
    // is then followed on to say where the command's file came, but never let go.
    std::string wrong;
    std::uint32_t early = 0;  // the first exec before the declared one that ran the command's file

    bool fail(const std::string& where) {
        end_runner(pid);
        o.attested = Observation::Attested::wrong_exec;
        o.attestation_detail = wrong + "; " + where;
        return false;
    }

    // The runner can no longer be waited for.
    bool unwaitable() {
        o.attested = Observation::Attested::unavailable;
        o.attestation_detail = std::string("waitpid: ") + std::strerror(errno);
        if (!wrong.empty()) return fail("the runner could not be followed further");
        return true;
    }

    // The runner ended, with wait status `st`, before the command's exec.
    bool runner_ended(int st) {
        if (!wrong.empty()) {
            o.attested = Observation::Attested::wrong_exec;
            o.attestation_detail =
                wrong + "; the command's file " + command_name + " was never exec'd (the runner ended after exec " + std::to_string(execs) + ")";
            return false;
        }
        record_status(o, st);
        o.attested = Observation::Attested::runner_stopped;
        o.attestation_detail = std::to_string(execs) + " of " + std::to_string(command_exec) + " execs seen";
        // Declared too high: the command ran, traced, before the runner ended.
        if (early) o.attestation_detail += "; the command's file " + command_name + " was exec " + std::to_string(early);
        return false;
    }

    // Past a wrong exec only: the runner starts another process (or thread), where the
    // command could run unfollowed. Neither goes on.
    bool started_another() {
        unsigned long child = 0;
        if (::ptrace(PTRACE_GETEVENTMSG, pid, nullptr, &child) == 0 && child > 0) end_traced(static_cast<pid_t>(child));
        return fail("the command's file " + command_name + " was not among the runner's execs before it started another process (after exec " +
                    std::to_string(execs) + "), which is not followed");
    }

    // The runner stopped at an exec: a verdict, or nullopt to follow it on.
    std::optional<bool> exec_stop() {
        ++execs;
        const SeenExec seen = seen_exec(pid);
        const bool command = command_id && seen.id && *seen.id == *command_id;
        if (log_enabled(spdlog::level::debug))
            log_debug("exec {} seen: {}{}{}", execs, seen.file, seen.interpreter.empty() ? "" : " (a script, run by " + seen.interpreter + ")",
                      command ? " (the command's file)" : "");
        if (command && !early && execs < command_exec) early = execs;
        if (!wrong.empty()) {
            if (command) return fail("the command's file " + command_name + " was exec " + std::to_string(execs));
        } else if (execs >= command_exec) {
            if (command) {
                o.attested = Observation::Attested::reached_command;
                ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
                return true;
            }
            wrong = "runner declared the command at exec " + std::to_string(command_exec) + " but exec " + std::to_string(execs) + " ran " + seen.file;
            if (!command_id) return fail("the command's file " + command_name + " cannot be identified");
            // Followed further, with any process the runner starts stopped at its start.
            ::ptrace(PTRACE_SETOPTIONS, pid, nullptr,
                     reinterpret_cast<void*>(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE));
        }
        return std::nullopt;
    }
};

}  // namespace

int trace_me() noexcept { return ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 0 : errno; }

bool follow_execs(pid_t pid, std::uint32_t command_exec, const std::filesystem::path& command_file, Observation& o) {
    Following f{pid, command_exec, id_of(command_file.string()), command_file.empty() ? std::string("(unknown)") : command_file.string(), o};
    for (;;) {
        int st = 0;
        const pid_t w = ::waitpid(pid, &st, __WALL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return f.unwaitable();
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) return f.runner_ended(st);
        if (!WIFSTOPPED(st)) continue;
        const int sig = WSTOPSIG(st);
        const int event = st >> 16;
        int inject = 0;
        if (f.execs == 0 && sig == SIGTRAP && event == 0) {
            // The stop after the runner's own exec, under PTRACE_TRACEME.
            ::ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
            if (const auto verdict = f.exec_stop()) return *verdict;
        } else if (sig == SIGTRAP && event == PTRACE_EVENT_EXEC) {
            if (const auto verdict = f.exec_stop()) return *verdict;
        } else if (sig == SIGTRAP && (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK || event == PTRACE_EVENT_CLONE)) {
            return f.started_another();
        } else {
            siginfo_t info;
            // A group-stop has no siginfo: resume without a signal. Otherwise deliver it.
            if (::ptrace(PTRACE_GETSIGINFO, pid, nullptr, &info) == 0) inject = sig;
        }
        ::ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(inject)));
    }
}

}  // namespace confine::detail
