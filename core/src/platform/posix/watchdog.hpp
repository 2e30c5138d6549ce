// A run's time limit. Internal to libconfine.
#pragma once

#include "executor.hpp"

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace confine::detail {

// Kills the run (its process group, docs/design.md §7) at its time limit, from its own
// thread, so that every wait of the supervising thread can block.
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
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;
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

}  // namespace confine::detail
