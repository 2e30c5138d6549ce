#include "run_cgroup.hpp"
#include "fd.hpp"
#include "log.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

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

// Writes `text` to a cgroup's file; errno's value when it cannot (0: done). A cgroup
// file system makes no file (a controller not given has none, and O_CREAT then fails
// alike); a tree that stands for one in a test does.
int write_small(const fs::path& file, const std::string& text) {
    Fd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
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

class Cgroup final : public RunGroup {
public:
    explicit Cgroup(bool v2) : v2_(v2) {}
    Cgroup(const Cgroup&) = delete;
    Cgroup& operator=(const Cgroup&) = delete;

    ~Cgroup() override {
        if (watcher_.joinable()) {
            {
                std::lock_guard lock(mutex_);
                stop_ = true;
            }
            wake_.notify_all();
            watcher_.join();
        }
        for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) remove(*it);
    }

    // Watches the run's CPU time in `dir` from now on: past `seconds`, every process of
    // the cgroup is killed, and cpu_exceeded() says so.
    void watch_cpu(const fs::path& dir, std::uint64_t seconds) {
        cpu = dir;
        const std::uint64_t limit_ns = seconds > UINT64_MAX / 1000000000ull ? UINT64_MAX : seconds * 1000000000ull;
        watcher_ = std::thread([this, limit_ns] {
            std::unique_lock lock(mutex_);
            while (!wake_.wait_for(lock, std::chrono::milliseconds(50), [this] { return stop_; })) {
                if (used_ns() < limit_ns) continue;
                exceeded_ = true;
                kill_all(cpu);
            }
        });
    }

    // Takes `dir`, made before, to be removed.
    void adopt(const fs::path& dir) { dirs_.push_back(dir); }
    // Makes `dir` (a cgroup of the run), kept to be removed.
    int make(const fs::path& dir) {
        if (::mkdir(dir.c_str(), 0755) != 0) return errno;
        dirs_.push_back(dir);
        return 0;
    }
    // Opens `dir`'s cgroup.procs, for the runner's process to join it by.
    int open_procs(const fs::path& dir, ChildLimits& child) {
        Fd fd(::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));  // as write_small
        if (fd.get() < 0) return errno;
        child.cgroup_procs[child.cgroup_count++] = fd.get();
        procs_.push_back(std::move(fd));
        return 0;
    }

    fs::path memory, pids, cpu;  // the run's cgroup holding each, for its events

    bool out_of_memory() const override {
        if (memory.empty()) return false;
        return event_count(read_small(memory / (v2_ ? "memory.events" : "memory.oom_control")), "oom_kill") > 0;
    }
    bool processes_refused() const override { return !pids.empty() && event_count(read_small(pids / "pids.events"), "max") > 0; }
    bool watches_cpu() const override { return watcher_.joinable(); }
    bool cpu_exceeded() const override { return exceeded_; }

private:
    // Kills what is left in `dir` until it is empty, then removes it. Bounded: a cgroup
    // that will not go is said, never waited on for ever.
    static void remove(const fs::path& dir) {
        for (int attempt = 0; attempt < 2000; ++attempt) {
            if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
            if (errno != EBUSY) break;
            kill_all(dir);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        log_warn("cannot remove the run's cgroup {}: {}", dir.string(), std::strerror(errno));
    }

    // The CPU time the run's processes have used, in nanoseconds.
    std::uint64_t used_ns() const {
        if (v2_) return event_count(read_small(cpu / "cpu.stat"), "usage_usec") * 1000;
        return std::strtoull(read_small(cpu / "cpuacct.usage").c_str(), nullptr, 10);
    }

    bool v2_;
    std::vector<fs::path> dirs_;
    std::vector<Fd> procs_;
    std::thread watcher_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::atomic<bool> exceeded_{false};
};

// This process's PID namespace, in the names of its run cgroups: a host's process ID
// means something only there.
std::string pid_namespace() {
    struct stat st {};
    return ::stat("/proc/self/ns/pid", &st) == 0 ? std::to_string(st.st_ino) : std::string("0");
}

// The run cgroups under `parent` whose host is gone (killed before it could remove
// them): what is left in each is killed, and it is removed. A host alive keeps its own,
// and a host of another PID namespace is never judged.
void sweep_stale(const fs::path& parent) {
    const std::string mine = "confine-run-" + pid_namespace() + "-";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with(mine)) continue;
        const int host = std::atoi(name.c_str() + mine.size());
        if (host <= 0 || host == ::getpid() || ::kill(host, 0) == 0 || errno != ESRCH) continue;
        Cgroup stale(false);
        stale.adopt(entry.path());
    }
}

std::string run_name() {
    static std::atomic<unsigned> counter{0};
    return "confine-run-" + pid_namespace() + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
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
    auto group = std::make_unique<Cgroup>(true);
    const fs::path dir = parent / run_name();
    if (const int error = group->make(dir)) {
        why = why_of("cannot make", dir, error);
        return nullptr;
    }
    if (limits.memory) {
        if (const int error = write_small(dir / "memory.max", std::to_string(*limits.memory))) {
            why = why_of("cannot write", dir / "memory.max", error);
            return nullptr;
        }
        (void)write_small(dir / "memory.swap.max", "0");  // the limit is memory, not memory and swap
        group->memory = dir;
    }
    if (limits.processes) {
        if (const int error = write_small(dir / "pids.max", std::to_string(*limits.processes))) {
            why = why_of("cannot write", dir / "pids.max", error);
            return nullptr;
        }
        group->pids = dir;
    }
    if (const int error = group->open_procs(dir, child)) {
        why = why_of("cannot open", dir / "cgroup.procs", error);
        child.cgroup_count = 0;
        return nullptr;
    }
    if (limits.cpu) group->watch_cpu(dir, *limits.cpu);  // cpu.stat's usage is there without the cpu controller
    return group;
}

std::unique_ptr<RunGroup> make_v1(const CgroupPlaces& places, const Limits& limits, ChildLimits& child, std::string& why) {
    if ((limits.memory && places.v1_memory.empty()) || (limits.processes && places.v1_pids.empty()) ||
        (!limits.memory && !limits.processes && places.v1_cpuacct.empty())) {
        why = "no cgroup v2 with the memory and pids controllers, nor v1 hierarchies of them, for this process";
        return nullptr;
    }
    auto group = std::make_unique<Cgroup>(false);
    const std::string name = run_name();
    if (limits.memory) {
        const fs::path dir = places.v1_memory / name;
        if (const int error = group->make(dir)) {
            why = why_of("cannot make", dir, error);
            return nullptr;
        }
        if (const int error = write_small(dir / "memory.limit_in_bytes", std::to_string(*limits.memory))) {
            why = why_of("cannot write", dir / "memory.limit_in_bytes", error);
            return nullptr;
        }
        // Memory and swap together, where swap is counted: the limit is memory.
        if (present(dir / "memory.memsw.limit_in_bytes")) (void)write_small(dir / "memory.memsw.limit_in_bytes", std::to_string(*limits.memory));
        if (const int error = group->open_procs(dir, child)) {
            why = why_of("cannot open", dir / "cgroup.procs", error);
            child.cgroup_count = 0;
            return nullptr;
        }
        group->memory = dir;
    }
    if (limits.processes) {
        const fs::path dir = places.v1_pids / name;
        if (const int error = group->make(dir)) {
            why = why_of("cannot make", dir, error);
            child.cgroup_count = 0;
            return nullptr;
        }
        if (const int error = write_small(dir / "pids.max", std::to_string(*limits.processes))) {
            why = why_of("cannot write", dir / "pids.max", error);
            child.cgroup_count = 0;
            return nullptr;
        }
        if (const int error = group->open_procs(dir, child)) {
            why = why_of("cannot open", dir / "cgroup.procs", error);
            child.cgroup_count = 0;
            return nullptr;
        }
        group->pids = dir;
    }
    // The run's CPU time, where there is a cpuacct hierarchy; else each process's alone.
    if (limits.cpu && !places.v1_cpuacct.empty()) {
        const fs::path dir = places.v1_cpuacct / name;
        if (group->make(dir) == 0 && group->open_procs(dir, child) == 0) group->watch_cpu(dir, *limits.cpu);
        else log_debug("no CPU time of the run as a whole: cannot make {}: {}", dir.string(), std::strerror(errno));
    }
    if (!limits.memory && !limits.processes && !group->watches_cpu()) {
        why = "cannot make a cgroup of the cpuacct hierarchy for the run";
        return nullptr;
    }
    return group;
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

std::unique_ptr<RunGroup> make_run_cgroup(const Limits& limits, ChildLimits& child, std::string& why) {
    return make_run_cgroup(find_cgroup_places("/sys/fs/cgroup", read_small("/proc/self/cgroup")), limits, child, why);
}

}  // namespace confine::detail
