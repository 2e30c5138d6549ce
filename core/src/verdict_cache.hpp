// Probe verdicts kept across invocations, per user (docs/design.md §3). Internal to libconfine.
//
// Only usable verdicts are kept, and reused only while everything that could change
// them is unchanged: they are keyed by the runner, the plugin file's identity, the
// runner's settings, the probe's time limit, the kernel and the user. A stale verdict
// can only ever fail closed: the runner then fails when it runs.
#pragma once

#include <confine/config.hpp>
#include <confine/wrap_result.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace confine::detail {

class VerdictCache {
public:
    // Reads `file` if it exists and can be trusted (owned by the caller, not writable by
    // others, in a directory likewise); otherwise starts empty and will not write.
    VerdictCache(std::filesystem::path file, std::chrono::seconds max_age);

    // The key of a runner's verdict; empty when the plugin file cannot be examined.
    static std::string key(const std::string& runner, const std::filesystem::path& plugin_file, const RunnerTable* settings,
                           std::uint32_t probe_timeout_ms);

    // A usable verdict younger than max_age whose probed programs are still the same
    // files (path, device, inode, size, modification time), or nothing.
    std::optional<Verdict> find(const std::string& key) const;
    // Usable verdicts only, with the programs the probe ran (PluginRunner::probed_programs):
    // replacing or changing one of them, a runner's binary, makes the verdict stale.
    void store(const std::string& key, const Verdict& verdict, const std::vector<std::filesystem::path>& programs = {});
    // Writes the entries back (atomically) if anything was stored.
    void save() const;

private:
    struct Entry {
        Verdict verdict;
        std::int64_t at = 0;                 // seconds since the epoch
        std::vector<std::string> programs;   // "path\x1fidentity" of each probed program
    };
    std::filesystem::path file_;
    std::chrono::seconds max_age_;
    bool writable_ = false;
    bool dirty_ = false;
    std::map<std::string, Entry> entries_;
};

}  // namespace confine::detail
