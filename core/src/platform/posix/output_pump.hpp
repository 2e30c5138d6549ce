// The one output pump on POSIX: reads a child's output descriptors to their end while
// it watches for the child's end, so that a child writing a lot on several streams never
// blocks on a full pipe. It serves the executor (a runner's stdout, stderr and status
// descriptor) and bounded runs (a probe's stdout and stderr); what each caller needs
// beyond reading comes in through hooks. Internal to libconfine.
//
//   OutputPump pump(pid, true);
//   pump.read({.fd = out, .take = keep_head(text, 1 << 20)});
//   pump.ended = [&](bool reaped) { ... };
//   auto done = pump.run();  // done.status: the wait status, once reaped
#pragma once

#include "fd.hpp"

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

// One descriptor the pump reads to its end, and what takes each read's bytes.
struct PumpStream {
    int fd = -1;  // -1: none
    std::function<void(std::string_view)> take;
};

// A `take` that appends to `into` up to `limit` bytes and drops the rest, so that the
// writer never blocks; `grew` is called after bytes were added.
std::function<void(std::string_view)> keep_head(std::string& into, std::size_t limit, std::function<void()> grew = {});

// What a caller adds to the pump's loop while the child runs: one more descriptor to
// watch, a bound on each sleep, and a step after each wake-up.
class PumpCompanion {
public:
    virtual ~PumpCompanion() = default;
    virtual int watched_fd() const { return -1; }  // -1: none
    virtual void watched_ready() {}
    virtual int wake_within_ms() const { return -1; }  // -1: no bound
    virtual void woke(bool running) { (void)running; }
};

class OutputPump {
public:
    // Watches `pid`, a child of this process; `running` false: it has been reaped already.
    OutputPump(pid_t pid, bool running);

    void read(PumpStream stream);  // a stream with fd -1 is left out

    // Called when the child is seen to have ended: with a pidfd before it is reaped (its
    // number still its own: reaped false), otherwise just after (reaped true).
    std::function<void(bool reaped)> ended;
    PumpCompanion* companion = nullptr;
    // Once the child has ended: take what its pipes already hold and stop (a daemon it
    // left behind may keep them open for ever), or read them to their end.
    enum class AfterExit { take_what_is_ready, read_to_end };
    AfterExit after_exit = AfterExit::take_what_is_ready;
    // Stops there, whatever is left, the child reaped or not.
    std::optional<std::chrono::steady_clock::time_point> deadline;

    struct Result {
        std::optional<int> status;  // the wait status, once reaped
        bool deadline_passed = false;
    };
    Result run();

private:
    struct Stream : PumpStream {
        bool open = true;
    };
    struct PollSet;
    PollSet poll_set() const;
    int sleep_ms(const PollSet& set) const;
    void take(const PollSet& set);
    void read_some(Stream& stream);
    void check_end(bool seen_ended);
    void wait_for_end();
    bool reading() const;

    pid_t pid_;
    bool running_;
    Fd pidfd_;
    std::vector<Stream> streams_;
    std::unique_ptr<char[]> buffer_;  // one large read at a time
    Result result_;
};

// SIGPIPE blocked for the calling thread while it lives: a copy to a stderr whose reader
// has gone fails with EPIPE instead of ending this process. A SIGPIPE that arrived
// meanwhile is discarded.
class SigpipeBlocked {
public:
    SigpipeBlocked();
    ~SigpipeBlocked();
    SigpipeBlocked(const SigpipeBlocked&) = delete;
    SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

private:
    sigset_t before_;
};

}  // namespace confine::detail
