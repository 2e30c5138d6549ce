#include "run_cgroup.hpp"
#include "fd.hpp"
#include "log.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace confine::detail {
namespace fs = std::filesystem;
namespace {

// A small file of a cgroup, whole; "" where it cannot be read.
std::string read_small(const fs::path& file) {
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return {};
    std::string out;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || out.size() > (1u << 20)) break;
        out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
}

// Writes `text` to a file of a cgroup, which the kernel made with the cgroup (a file
// that is not there is a controller not given); errno's value when it cannot (0: done).
int write_small(const fs::path& file, const std::string& text) {
    Fd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) return errno;
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) return errno ? errno : EIO;
    return 0;
}

bool present(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
}

// Whether the space-separated `list` has `word`.
bool has_word(std::string_view list, std::string_view word) {
    std::size_t at = 0;
    while (at < list.size()) {
        const std::size_t end = std::min(list.find_first_of(" \n", at), list.size());
        if (list.substr(at, end - at) == word) return true;
        at = end + 1;
    }
    return false;
}

// A path of /proc/self/cgroup ("/a/b") under a mount point.
fs::path under(const fs::path& mount, std::string_view path) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    return path.empty() ? mount : mount / std::string(path);
}

std::string why_of(const std::string& what, const fs::path& where, int error) {
    return what + " " + where.string() + ": " + std::strerror(error);
}

// Kills every process in the cgroup `dir`: all at once where it can (cgroup.kill),
// else each of its cgroup.procs.
void kill_all(const fs::path& dir) {
    if (present(dir / "cgroup.kill") && write_small(dir / "cgroup.kill", "1") == 0) return;
    const std::string procs = read_small(dir / "cgroup.procs");
    std::size_t at = 0;
    while (at < procs.size()) {
        const std::size_t end = std::min(procs.find('\n', at), procs.size());
        const int pid = std::atoi(procs.substr(at, end - at).c_str());
        if (pid > 0) ::kill(pid, SIGKILL);
        at = end + 1;
    }
}

// This process's PID namespace, in the names of its run cgroups: a host's process ID
// means something only there.
std::string pid_namespace() {
    struct stat st {};
    return ::stat("/proc/self/ns/pid", &st) == 0 ? std::to_string(st.st_ino) : std::string("0");
}

std::string run_name() {
    static std::atomic<unsigned> counter{0};
    return "confine-run-" + pid_namespace() + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// Kills what is left in the cgroup `dir` until it is empty, then removes it. Bounded: a
// cgroup that will not go is said, never waited on for ever.
void remove_cgroup(const fs::path& dir) {
    for (int attempt = 0; attempt < 2000; ++attempt) {
        if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
        if (errno != EBUSY) break;
        kill_all(dir);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    log_warn("cannot remove the run's cgroup {}: {}", dir.string(), std::strerror(errno));
}

// The CPU time the processes of a run cgroup have used, in nanoseconds: v2's cpu.stat
// (there without the cpu controller), v1's cpuacct.usage.
std::uint64_t v2_used_ns(const fs::path& dir) { return event_count(read_small(dir / "cpu.stat"), "usage_usec") * 1000; }
std::uint64_t v1_used_ns(const fs::path& dir) { return std::strtoull(read_small(dir / "cpuacct.usage").c_str(), nullptr, 10); }

// How long a run cannot take to use `left` more CPU time: as long as it takes with every
// CPU of the machine busy with it. At least 10 ms (a run may pass its limit by that much
// on each CPU), at most 10 s.
std::chrono::nanoseconds soonest(std::uint64_t left) {
    const long cpus = std::max({::sysconf(_SC_NPROCESSORS_CONF), ::sysconf(_SC_NPROCESSORS_ONLN), 1L});
    const std::uint64_t ns = std::min<std::uint64_t>(left / static_cast<std::uint64_t>(cpus), 10'000'000'000ull);
    return std::max(std::chrono::nanoseconds(static_cast<std::int64_t>(ns)), std::chrono::nanoseconds(10'000'000));
}

// A cgroup of the run's, v1 or v2 alike: the directories made for it (removed with it,
// once whatever is left in them is killed), the descriptors of the cgroup.procs the
// runner's process joins by, and the watch of the run's CPU time. It is made in steps,
// and the first that fails is its failure: each later step does nothing, and finished()
// turns it into nullptr and the reason, with nothing of it left.
class RunCgroup : public RunGroup {
public:
    RunCgroup(const RunCgroup&) = delete;
    RunCgroup& operator=(const RunCgroup&) = delete;
    ~RunCgroup() override {
        if (watcher_.joinable()) {
            {
                std::lock_guard lock(mutex_);
                stop_ = true;
            }
            wake_.notify_all();
            watcher_.join();
        }
        for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) remove_cgroup(*it);
    }

    bool watches_cpu() const override { return watcher_.joinable(); }
    bool cpu_exceeded() const override { return exceeded_; }

    bool ok() const { return failure_.empty(); }
    const std::string& failure() const { return failure_; }

    // Takes `dir`, made by the caller, to be removed with the group.
    void adopt(const fs::path& dir) { dirs_.push_back(dir); }
    // The steps. Each says whether every step so far has held.
    bool make(const fs::path& dir) {
        if (!ok()) return false;
        if (::mkdir(dir.c_str(), 0755) != 0) return fail("cannot make", dir, errno);
        dirs_.push_back(dir);
        return true;
    }
    bool write(const fs::path& file, const std::string& text) {
        if (!ok()) return false;
        const int error = write_small(file, text);
        return error == 0 || fail("cannot write", file, error);
    }
    // Opens `dir`'s cgroup.procs, for the runner's process to join the cgroup by.
    bool join_by(const fs::path& dir, ChildLimits& child) {
        if (!ok()) return false;
        Fd fd(::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
        if (fd.get() < 0) return fail("cannot open", dir / "cgroup.procs", errno);
        child.cgroup_procs[child.cgroup_count++] = fd.get();
        procs_.push_back(std::move(fd));
        return true;
    }
    // Watches the run's CPU time in `dir` (as `used` reads it) from now on: past
    // `seconds`, every process of the cgroup is killed, and cpu_exceeded() says so. No
    // cgroup file ends a run at a total of CPU time (v2's cpu.max is a share of each
    // period: it slows a run, never ends it), so the host reads it: again at the soonest
    // moment the run could have used what is left, with every CPU busy.
    void watch_cpu(const fs::path& dir, std::uint64_t seconds, std::uint64_t (*used)(const fs::path&)) {
        if (!ok()) return;
        const std::uint64_t limit = seconds > UINT64_MAX / 1000000000ull ? UINT64_MAX : seconds * 1000000000ull;
        watcher_ = std::thread([this, dir, limit, used] {
            std::unique_lock lock(mutex_);
            std::chrono::nanoseconds wait{0};
            while (!wake_.wait_for(lock, wait, [this] { return stop_; })) {
                const std::uint64_t now = used(dir);
                wait = now < limit ? soonest(limit - now) : std::chrono::milliseconds(50);
                if (now < limit) continue;
                exceeded_ = true;
                kill_all(dir);
            }
        });
    }

protected:
    RunCgroup() = default;

private:
    bool fail(const std::string& what, const fs::path& where, int error) {
        failure_ = why_of(what, where, error);
        return false;
    }

    std::string failure_;
    std::vector<fs::path> dirs_;
    std::vector<Fd> procs_;
    std::thread watcher_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::atomic<bool> exceeded_{false};
};

// The group made, or nullptr and `why` not: nothing of it is left then (its directories
// removed, its descriptors closed, none of them for the runner's process).
std::unique_ptr<RunGroup> finished(std::unique_ptr<RunCgroup> group, ChildLimits& child, std::string& why) {
    if (group->ok()) return group;
    why = group->failure();
    child.cgroup_count = 0;
    return nullptr;
}

// cgroup v2: one directory holds the run's memory, processes and CPU time.
class CgroupV2 final : public RunCgroup {
public:
    // `limits` held in `dir`, a cgroup made for the run (and now the group's).
    CgroupV2(const fs::path& dir, const Limits& limits, ChildLimits& child) : dir_(dir) {
        adopt(dir);
        if (limits.memory && write(dir / "memory.max", std::to_string(*limits.memory)))
            (void)write_small(dir / "memory.swap.max", "0");  // the limit is memory, not memory and swap
        if (limits.processes) write(dir / "pids.max", std::to_string(*limits.processes));
        join_by(dir, child);
        if (limits.cpu) watch_cpu(dir, *limits.cpu, v2_used_ns);
        memory_ = limits.memory.has_value();
        pids_ = limits.processes.has_value();
    }
    bool out_of_memory() const override { return memory_ && event_count(read_small(dir_ / "memory.events"), "oom_kill") > 0; }
    bool processes_refused() const override { return pids_ && event_count(read_small(dir_ / "pids.events"), "max") > 0; }

private:
    fs::path dir_;
    bool memory_ = false, pids_ = false;
};

// cgroup v1: a directory of the run's in each hierarchy a limit needs: memory, pids, and
// cpuacct for its CPU time where the machine has one.
class CgroupV1 final : public RunCgroup {
public:
    CgroupV1(const CgroupPlaces& places, const Limits& limits, ChildLimits& child) {
        const std::string name = run_name();
        if (limits.memory) {
            memory_ = places.v1_memory / name;
            make(memory_);
            write(memory_ / "memory.limit_in_bytes", std::to_string(*limits.memory));
            // Memory and swap together, where swap is counted: the limit is memory.
            if (ok() && present(memory_ / "memory.memsw.limit_in_bytes"))
                (void)write_small(memory_ / "memory.memsw.limit_in_bytes", std::to_string(*limits.memory));
            join_by(memory_, child);
        }
        if (limits.processes) {
            pids_ = places.v1_pids / name;
            make(pids_);
            write(pids_ / "pids.max", std::to_string(*limits.processes));
            join_by(pids_, child);
        }
        // The run's CPU time where there is a cpuacct hierarchy; else each process's alone
        // (RLIMIT_CPU, run_limits.cpp).
        if (limits.cpu && !places.v1_cpuacct.empty()) {
            const fs::path cpu = places.v1_cpuacct / name;
            if (make(cpu) && join_by(cpu, child)) watch_cpu(cpu, *limits.cpu, v1_used_ns);
        }
    }
    bool out_of_memory() const override { return !memory_.empty() && event_count(read_small(memory_ / "memory.oom_control"), "oom_kill") > 0; }
    bool processes_refused() const override { return !pids_.empty() && event_count(read_small(pids_ / "pids.events"), "max") > 0; }

private:
    fs::path memory_, pids_;
};

// The run cgroups under `parent` whose host is gone (killed before it could remove
// them): what is left in each is killed, and it is removed. A host alive keeps its own,
// and a host of another PID namespace is never judged.
void sweep_stale(const fs::path& parent) {
    const std::string mine = "confine-run-" + pid_namespace() + "-";
    std::vector<fs::path> stale;
    std::error_code ec;
    for (fs::directory_iterator it(parent, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!name.starts_with(mine)) continue;
        const int host = std::atoi(name.c_str() + mine.size());
        if (host > 0 && host != ::getpid() && ::kill(host, 0) != 0 && errno == ESRCH) stale.push_back(it->path());
    }
    for (const auto& dir : stale) remove_cgroup(dir);
}

std::unique_ptr<RunGroup> make_v2(const fs::path& parent, const Limits& limits, ChildLimits& child, std::string& why) {
    // The controllers must be handed down from this process's cgroup, which a cgroup with
    // processes of its own may refuse (v2's rule: no processes where controllers are given).
    const std::string given = read_small(parent / "cgroup.subtree_control");
    std::string enable;
    if (limits.memory && !has_word(given, "memory")) enable += "+memory ";
    if (limits.processes && !has_word(given, "pids")) enable += "+pids ";
    if (!enable.empty())
        if (const int error = write_small(parent / "cgroup.subtree_control", enable)) {
            why = why_of("cannot enable the memory and pids controllers in", parent / "cgroup.subtree_control", error);
            return nullptr;
        }
    const fs::path dir = parent / run_name();
    if (::mkdir(dir.c_str(), 0755) != 0) {
        why = why_of("cannot make", dir, errno);
        return nullptr;
    }
    return hold_in_v2_cgroup(dir, limits, child, why);
}

std::unique_ptr<RunGroup> make_v1(const CgroupPlaces& places, const Limits& limits, ChildLimits& child, std::string& why) {
    if ((limits.memory && places.v1_memory.empty()) || (limits.processes && places.v1_pids.empty()) ||
        (!limits.memory && !limits.processes && places.v1_cpuacct.empty())) {
        why = "no cgroup v2 with the memory and pids controllers, nor v1 hierarchies of them, for this process";
        return nullptr;
    }
    return finished(std::make_unique<CgroupV1>(places, limits, child), child, why);
}

}  // namespace

std::uint64_t event_count(std::string_view text, std::string_view key) {
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string_view line = text.substr(at, end - at);
        if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ') {
            std::uint64_t n = 0;
            for (const char c : line.substr(key.size() + 1)) {
                if (c < '0' || c > '9') break;
                n = n * 10 + static_cast<std::uint64_t>(c - '0');
            }
            return n;
        }
        at = end + 1;
    }
    return 0;
}

CgroupPlaces find_cgroup_places(const fs::path& root, std::string_view self) {
    CgroupPlaces places;
    std::size_t at = 0;
    while (at < self.size()) {
        const std::size_t end = std::min(self.find('\n', at), self.size());
        const std::string_view line = self.substr(at, end - at);
        at = end + 1;
        const std::size_t first = line.find(':');
        const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos) continue;
        const std::string_view id = line.substr(0, first), controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
        if (id == "0" && controllers.empty()) {
            // The unified hierarchy: /sys/fs/cgroup itself, or /sys/fs/cgroup/unified beside v1.
            const fs::path mount = present(root / "cgroup.controllers") ? root : present(root / "unified" / "cgroup.controllers") ? root / "unified" : fs::path();
            if (mount.empty()) continue;
            const fs::path dir = under(mount, path);
            const std::string available = read_small(dir / "cgroup.controllers");
            if (has_word(available, "memory") && has_word(available, "pids")) places.v2 = dir;
            continue;
        }
        std::string list(controllers);
        for (char& c : list)
            if (c == ',') c = ' ';
        const fs::path dir = under(root / std::string(controllers), path);
        if (has_word(list, "memory") && present(dir / "memory.limit_in_bytes")) places.v1_memory = dir;
        if (has_word(list, "pids") && present(dir / "cgroup.procs")) places.v1_pids = dir;
        if (has_word(list, "cpuacct") && present(dir / "cpuacct.usage")) places.v1_cpuacct = dir;
    }
    return places;
}

std::unique_ptr<RunGroup> make_run_cgroup(const CgroupPlaces& places, const Limits& limits, ChildLimits& child, std::string& why) {
    for (const fs::path& parent : {places.v2, places.v1_memory, places.v1_pids, places.v1_cpuacct})
        if (!parent.empty()) sweep_stale(parent);
    std::string why_not_v2;
    if (!places.v2.empty()) {
        if (auto group = make_v2(places.v2, limits, child, why_not_v2)) return group;
    }
    auto group = make_v1(places, limits, child, why);
    if (!group && !why_not_v2.empty()) why = why_not_v2 + "; " + why;
    return group;
}

std::unique_ptr<RunGroup> hold_in_v2_cgroup(const fs::path& dir, const Limits& limits, ChildLimits& child, std::string& why) {
    return finished(std::make_unique<CgroupV2>(dir, limits, child), child, why);
}

std::unique_ptr<RunGroup> make_run_cgroup(const Limits& limits, ChildLimits& child, std::string& why) {
    return make_run_cgroup(find_cgroup_places("/sys/fs/cgroup", read_small("/proc/self/cgroup")), limits, child, why);
}

}  // namespace confine::detail
