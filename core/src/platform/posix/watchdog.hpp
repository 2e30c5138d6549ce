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

// Ends the run at its time limit (docs/design.md §7), from its own thread, so that every
// wait of the supervising thread can block: SIGTERM to every process of the run, then,
// `kill_after` later, SIGKILL to every one still there.
class Watchdog {
public:
    Watchdog(std::optional<std::chrono::milliseconds> limit, std::chrono::milliseconds kill_after, RunControl& control) {
        if (!limit) return;
        thread_ = std::thread([this, deadline = std::chrono::steady_clock::now() + *limit, kill_after, &control] {
            std::unique_lock lock(mutex_);
            if (cv_.wait_until(lock, deadline, [this] { return stop_; })) return;
            fired_ = true;
            if (kill_after.count() > 0) {
                control.terminate();
                if (cv_.wait_until(lock, std::chrono::steady_clock::now() + kill_after, [this] { return stop_; })) return;
            }
            killed_ = true;
            control.signal(SIGKILL);
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
    // Whether it came to SIGKILL (the run was still there `kill_after` after its SIGTERM,
    // or there was no SIGTERM to give).
    bool killed() {
        std::lock_guard lock(mutex_);
        return killed_;
    }

private:
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool fired_ = false;
    bool killed_ = false;
};

}  // namespace confine::detail
