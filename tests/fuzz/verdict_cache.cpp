// Fuzz target: the verdict cache's reader (core/src/platform/verdict_cache.hpp), the file a
// previous invocation left in the user's cache directory. Properties: never a crash;
// what is read is what the writer could have written (a key of 16 characters, a usable
// verdict, sample levels in range); what the writer writes for it reads back as the same
// entries.
#include "fuzz.hpp"

#include "verdict_cache.hpp"

using confine::fuzz::require;
using Cache = confine::detail::VerdictCache;

namespace {

bool same_levels(const confine::Dimensions& a, const confine::Dimensions& b) {
    return a.write == b.write && a.network == b.network && a.processes == b.processes && a.open == b.open && a.read == b.read &&
           a.protect == b.protect && a.lifetime == b.lifetime && a.limits == b.limits;
}

bool same(const Cache::Entry& a, const Cache::Entry& b) {
    if (a.verdict.kind != b.verdict.kind || a.verdict.reason != b.verdict.reason || a.at != b.at || a.programs != b.programs) return false;
    if (a.levels.has_value() != b.levels.has_value()) return false;
    if (!a.levels) return true;
    const auto &x = *a.levels, &y = *b.levels;
    return x.shape == y.shape && x.runner == y.runner && x.enforcement == y.enforcement && same_levels(x.dimensions, y.dimensions) && x.tmp == y.tmp &&
           x.attestation == y.attestation;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const Cache::Entries read = Cache::read_text(text);
    for (const auto& [key, e] : read) {
        require(key.size() == 16, "a key is 16 characters", key);
        require(e.verdict.usable(), "only usable verdicts are read");
        require(e.verdict.reason.find_first_of("\t\n\r") == std::string::npos, "a reason is one field of one line", e.verdict.reason);
    }
    const std::string written = Cache::to_text(read);
    const Cache::Entries again = Cache::read_text(written);
    require(again.size() == read.size(), "what is written reads back, every entry", written);
    for (const auto& [key, e] : read) {
        const auto it = again.find(key);
        require(it != again.end() && same(e, it->second), "what is written reads back as the same entry", written);
    }
    require(Cache::to_text(again) == written, "writing what was read back writes the same text");
    return 0;
}
