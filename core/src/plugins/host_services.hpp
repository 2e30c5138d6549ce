// The services the host hands to each runner it creates (confine_host in
// confine/sdk/abi.h): log, run a probe command with a time limit, canonicalise a path
// (docs/design.md §2). Internal to libconfine.
#pragma once

#include <confine/sdk/abi.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace confine::detail {

// One per runner instance: the services' context, and what they learn about a probe.
struct HostContext {
    std::string runner;
    confine_host host{};  // what the plugin is handed; its context points back here
    std::mutex mutex;
    // The running probe's own limit, which shortens every command it runs (guarded by mutex).
    std::chrono::steady_clock::time_point probe_deadline = std::chrono::steady_clock::time_point::max();
    std::atomic<bool> probe_timed_out{false};
    std::vector<std::filesystem::path> probe_programs;  // what the last probe ran (guarded by mutex)
    std::string setting_at_fault;  // the key the runner's failed create() named (guarded by mutex)
};

// The services for `runner`, ready to hand to its create().
std::unique_ptr<HostContext> make_host_context(const std::string& runner);

}  // namespace confine::detail
