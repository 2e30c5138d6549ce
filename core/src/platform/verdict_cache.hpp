// Probe verdicts kept across invocations, per user (docs/design.md §3). Internal to libconfine.
//
// Only usable verdicts are kept, and reused only while everything that could change
// them is unchanged: they are keyed by the runner, the plugin file's identity, the
// runner's settings, the probe's time limit, the kernel and the user. A stale verdict
// can only ever fail closed: the runner then fails when it runs. With a verdict, what
// the runner's wrap of the selection's sample command said it enforces (SampleLevels),
// so that a selection from the cache judges the configuration's minimums without a wrap.
#pragma once

#include <confine/config.hpp>
#include <confine/wrap_result.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

// What a runner's wrap of the selection's sample command reported (the Provider's
// below-minimum check): the fields of the wrap that the check reads, for the sample
// policy `shape` names.
struct SampleLevels {
    std::string shape;  // the sample policy, in the Provider's words
    std::string runner;
    Enforcement enforcement = Enforcement::full;
    Dimensions dimensions;
    Tmp tmp = Tmp::unsaid;
    Attestation::Kind attestation = Attestation::Kind::none;
};

class VerdictCache {
public:
    // Reads `file` if it exists and can be trusted (owned by the caller, not writable by
    // others, in a directory likewise); otherwise starts empty and will not write.
    VerdictCache(std::filesystem::path file, std::chrono::seconds max_age);

    // The key of a runner's verdict; empty when the plugin file cannot be examined. The
    // plugin file's identity is the one the loader recorded when it loaded that file
    // (loaded_plugin_identity), else what is at its path now.
    static std::string key(const std::string& runner, const std::filesystem::path& plugin_file, const RunnerTable* settings,
                           std::uint32_t probe_timeout_ms);

    // A usable verdict younger than max_age whose probed programs are still the same
    // files (path, device, inode, size, modification time), or nothing.
    std::optional<Verdict> find(const std::string& key) const;
    // Usable verdicts only, with the programs the probe ran (PluginRunner::probed_programs):
    // replacing or changing one of them, a runner's binary, makes the verdict stale.
    void store(const std::string& key, const Verdict& verdict, const std::vector<std::filesystem::path>& programs = {});
    // The sample levels kept with the verdict under `key` for the sample `shape`, or
    // nothing: ask only once find(key) gave the verdict.
    std::optional<SampleLevels> levels(const std::string& key, const std::string& shape) const;
    // Keeps `levels` with the verdict under `key` (stored or found before).
    void store_levels(const std::string& key, const SampleLevels& levels);
    // Writes the entries back (atomically) if anything was stored.
    void save() const;

    // One verdict as the file keeps it.
    struct Entry {
        Verdict verdict;
        std::int64_t at = 0;                 // seconds since the epoch
        std::vector<std::string> programs;   // "path\x1fidentity" of each probed program
        std::optional<SampleLevels> levels;
    };
    using Entries = std::map<std::string, Entry>;
    // The file's text read (anything of it that is not a well-formed entry is dropped;
    // another version's file, or one larger than the cache ever writes, gives nothing),
    // and the text that save() writes for `entries` (the newest ones it keeps). What
    // to_text writes, read_text reads back as the same entries. POSIX builds.
    static Entries read_text(std::string_view text);
    static std::string to_text(const Entries& entries);

private:
    std::filesystem::path file_;
    std::chrono::seconds max_age_;
    bool writable_ = false;
    bool dirty_ = false;
    Entries entries_;
};

}  // namespace confine::detail
