// Probe verdicts are not kept across invocations on Windows yet: every provider probes
// afresh (default_verdict_cache_file() finds no place for them there either).
#include "verdict_cache.hpp"

namespace confine::detail {

VerdictCache::VerdictCache(std::filesystem::path file, std::chrono::seconds max_age) : file_(std::move(file)), max_age_(max_age) {}

std::string VerdictCache::key(const std::string&, const std::filesystem::path&, const RunnerTable*, std::uint32_t) { return {}; }

std::optional<Verdict> VerdictCache::find(const std::string&) const { return std::nullopt; }

void VerdictCache::store(const std::string&, const Verdict&, const std::vector<std::filesystem::path>&) {}

std::optional<SampleLevels> VerdictCache::levels(const std::string&, const std::string&) const { return std::nullopt; }

void VerdictCache::store_levels(const std::string&, const SampleLevels&) {}

void VerdictCache::save() const {}

}  // namespace confine::detail
