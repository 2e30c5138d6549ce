// Finding the command behind a runner that names it on its status descriptor
// (linux_features.hpp, locate_reported_command).
//
// With a PID namespace of its own (bubblewrap's --unshare-pid), the runner names its
// reaper, PID 1 there: a signal from outside to a namespace's init is dropped unless it
// handles it, so the command is its child, looked for (briefly, without blocking the
// output) until the init forks it. Until then signals go to the runner. Once found the
// command is held, so that its end is seen: signals then go back to the runner, whose
// number cannot pass to another before it is waited for, and the init's next child is
// looked for (a setuid bubblewrap's set-up helper comes before the command).
#include "linux_features.hpp"
#include "process_tree.hpp"
#include "status_descriptor.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace confine::detail {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds look_fast(100), look_limit(10000);

// What the status text names after `key`: nothing yet (nullopt); `runner`'s own child,
// its process ID (judged while a pidfd holds the process, so that the number cannot
// meanwhile pass to another; that pidfd is left in `held`); a process that has already
// ended (gone); or something else (0).
constexpr pid_t gone = -1;
std::optional<pid_t> reported_command(const std::string& text, const std::string& key, pid_t runner, Fd& held) {
    const std::optional<pid_t> number = reported_number(text, key);
    if (!number || *number == 0) return number;
    Fd fd(open_pidfd(*number));
    if (fd.get() < 0) return errno == ESRCH ? gone : 0;
    if (parent_of(fd.get(), *number) != runner) return alive(fd.get()) ? 0 : gone;
    held = std::move(fd);
    return number;
}

class ReportedCommand final : public CommandLocator {
public:
    ReportedCommand(pid_t runner, std::string key, std::function<void(int)> on_started, std::function<void()> setup_done)
        : runner_(runner), key_(std::move(key)), on_started_(std::move(on_started)), setup_done_(std::move(setup_done)) {}

    void status_grew(const std::string& text) override {
        if (named_) return;
        Fd held;
        const std::optional<pid_t> command = reported_command(text, key_, runner_, held);
        if (!command) return;
        named_ = true;
        // Ended before it could be judged (a set-up that failed fast, or a command that
        // did): what was held waits for the outcome, which says whose it is.
        if (*command == gone) return;
        if (*command > 0 && namespace_init(held.get(), *command)) {
            init_fd_ = std::move(held);
            init_pid_ = *command;
            look_from_now();
            return;
        }
        setup_done_();  // nothing will say when its set-up is done
        if (*command > 0) on_started_(*command);
    }

    int watched_fd() const override { return command_fd_.get(); }

    // The command held has ended: signals go back to the runner, and the init's next
    // child is looked for.
    void watched_ready() override {
        command_fd_.reset();
        on_started_(runner_);
        look_from_now();
    }

    // 1, 2, 4 then 8 ms between looks, 10 past the first 100 ms: a command that starts at
    // once is found at once, and a short run is not woken every millisecond.
    int wake_within_ms() const override {
        if (!looking_) return -1;
        if (Clock::now() - looking_since_ >= look_fast) return 10;
        return 1 << std::min(looks_, 3);
    }

    void woke(bool running) override {
        if (!looking_) return;
        ++looks_;
        if (!running || !alive(init_fd_.get())) {
            looking_ = false;  // what was held waits for the outcome: the set-up may have failed
            return;
        }
        if (Clock::now() - looking_since_ > look_limit) {
            looking_ = false;
            setup_done_();
            return;
        }
        if (const pid_t command = child_of_init(init_fd_.get(), init_pid_, command_fd_)) {
            looking_ = false;
            setup_done_();
            on_started_(command);
        }
    }

private:
    void look_from_now() {
        looking_ = true;
        looking_since_ = Clock::now();
        looks_ = 0;
    }

    pid_t runner_;
    std::string key_;
    std::function<void(int)> on_started_;
    std::function<void()> setup_done_;
    bool named_ = false;  // the status text has named a process (or something else)
    Fd init_fd_, command_fd_;
    pid_t init_pid_ = 0;
    bool looking_ = false;
    int looks_ = 0;  // since looking began
    Clock::time_point looking_since_{};
};

}  // namespace

std::unique_ptr<CommandLocator> locate_reported_command(pid_t runner, std::string key, std::function<void(int)> on_started,
                                                        std::function<void()> setup_done) {
    return std::make_unique<ReportedCommand>(runner, std::move(key), std::move(on_started), std::move(setup_done));
}

bool locates_reported_commands() { return true; }

}  // namespace confine::detail
