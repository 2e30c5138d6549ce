#include "needle_set.hpp"

#include <algorithm>
#include <bit>
#include <map>

#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define CONFINE_NEEDLES_SSSE3 1
#endif

namespace confine::detail {
namespace {

// Whether the bytes at `at` are `lower` (folded) when folded.
bool equal_folded(const char* at, std::string_view lower) {
    for (std::size_t j = 0; j < lower.size(); ++j)
        if (fold_ascii(at[j]) != static_cast<unsigned char>(lower[j])) return false;
    return true;
}

#if CONFINE_NEEDLES_SSSE3
// Asked once, at the first search: __builtin_cpu_supports would link libgcc's start-up
// probe of the processor into every program, run at each launch (cpuid is slow in a VM).
bool has_ssse3() {
    static const bool yes = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_SSSE3) != 0;
    }();
    return yes;
}

// From place `i`, 16 places a step, to the first step before `stop` where some place's
// `Width` bytes fit a bucket: its start, and per place the buckets that fit (`fit`,
// `places` one bit per place that has any). `stop` or past it when none does.
template <int Width>
__attribute__((target("ssse3"))) std::size_t sift_steps(const unsigned char* p, std::size_t i, std::size_t stop,
                                                        const unsigned char (*low)[16], const unsigned char (*high)[16],
                                                        unsigned char fit[16], unsigned& places) {
    const __m128i halves = _mm_set1_epi8(0x0f);
    __m128i low_of[Width], high_of[Width];
    for (int j = 0; j < Width; ++j) {
        low_of[j] = _mm_load_si128(reinterpret_cast<const __m128i*>(low[j]));
        high_of[j] = _mm_load_si128(reinterpret_cast<const __m128i*>(high[j]));
    }
    for (; i < stop; i += 16) {
        __m128i buckets = _mm_set1_epi8(-1);
        for (int j = 0; j < Width; ++j) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + j));
            const __m128i lo = _mm_and_si128(v, halves), hi = _mm_and_si128(_mm_srli_epi16(v, 4), halves);
            buckets = _mm_and_si128(buckets, _mm_and_si128(_mm_shuffle_epi8(low_of[j], lo), _mm_shuffle_epi8(high_of[j], hi)));
        }
        const unsigned none = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(buckets, _mm_setzero_si128())));
        if (none == 0xffff) continue;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(fit), buckets);
        places = ~none & 0xffff;
        return i;
    }
    return i;
}
#endif

// Per byte of a needle's start, the low and the high halves it may have (a letter's both
// cases), one bit per half.
struct Halves {
    std::uint16_t low[4] = {}, high[4] = {};

    void add(std::string_view start) {
        for (std::size_t j = 0; j < start.size(); ++j) {
            const auto c = static_cast<unsigned char>(start[j]);
            for (const unsigned char v : {c, static_cast<unsigned char>(c >= 'a' && c <= 'z' ? c - 32 : c)}) {
                low[j] |= static_cast<std::uint16_t>(1u << (v & 15));
                high[j] |= static_cast<std::uint16_t>(1u << (v >> 4));
            }
        }
    }
    // How many byte sequences pass: each byte's halves combine freely within a bucket.
    std::uint64_t passing(std::size_t width) const {
        std::uint64_t n = 1;
        for (std::size_t j = 0; j < width; ++j) n *= static_cast<std::uint64_t>(std::popcount(low[j]) * std::popcount(high[j]));
        return n;
    }
};

}  // namespace

NeedleSet::NeedleSet(std::vector<std::string> lower) : needles_(std::move(lower)) {
    std::size_t shortest = npos;
    for (const auto& n : needles_)
        if (!n.empty()) shortest = std::min(shortest, n.size());
    if (shortest == npos) return;
    width_ = std::min<std::size_t>(4, shortest);
    // Each distinct start goes to the bucket it widens least (the fewest sequences newly
    // let through, then the emptiest bucket), so that halves of unlike needles combine
    // as little as they can; needles that start alike share a bucket.
    Halves bucket_halves[8];
    std::map<std::string, unsigned, std::less<>> bucket_of;
    for (std::uint32_t k = 0; k < needles_.size(); ++k) {
        const std::string& n = needles_[k];
        if (n.empty()) continue;
        const std::string start = n.substr(0, width_);
        auto it = bucket_of.find(start);
        if (it == bucket_of.end()) {
            unsigned best = 0;
            std::uint64_t best_growth = ~std::uint64_t{0};
            for (unsigned b = 0; b < 8; ++b) {
                Halves with = bucket_halves[b];
                with.add(start);
                const std::uint64_t before = bucket_[b].empty() ? 0 : bucket_halves[b].passing(width_);
                const std::uint64_t growth = with.passing(width_) - before;
                if (growth < best_growth || (growth == best_growth && bucket_[b].size() < bucket_[best].size())) {
                    best = b;
                    best_growth = growth;
                }
            }
            bucket_halves[best].add(start);
            it = bucket_of.emplace(start, best).first;
        }
        bucket_[it->second].push_back(k);
    }
    for (unsigned b = 0; b < 8; ++b)
        for (std::size_t j = 0; j < width_; ++j)
            for (unsigned half = 0; half < 16; ++half) {
                if (bucket_halves[b].low[j] & (1u << half)) tables_.low[j][half] |= static_cast<unsigned char>(1u << b);
                if (bucket_halves[b].high[j] & (1u << half)) tables_.high[j][half] |= static_cast<unsigned char>(1u << b);
            }
}

unsigned char NeedleSet::sift(const unsigned char* at) const {
    unsigned char fit = 0xff;
    for (std::size_t j = 0; j < width_; ++j) fit &= tables_.low[j][at[j] & 15] & tables_.high[j][at[j] >> 4];
    return fit;
}

// The lowest wanted needle of `buckets` that starts at `at`.
NeedleSet::Hit NeedleSet::compare(std::string_view bytes, std::size_t at, unsigned buckets, const Wanted& wanted) const {
    Hit best;
    for (; buckets != 0; buckets &= buckets - 1)
        for (const std::uint32_t k : bucket_[std::countr_zero(buckets)]) {
            if (k >= best.index) break;
            const std::string& needle = needles_[k];
            if (needle.size() <= bytes.size() - at && equal_folded(bytes.data() + at, needle) && wanted(k)) {
                best = {at, k};
                break;
            }
        }
    return best;
}

NeedleSet::Hit NeedleSet::find_portable(std::string_view bytes, std::size_t from, const Wanted& wanted) const {
    if (width_ == 0 || bytes.size() < width_) return {};
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    for (std::size_t at = from; at <= bytes.size() - width_; ++at)
        if (const unsigned char buckets = sift(p + at); buckets != 0)
            if (const Hit hit = compare(bytes, at, buckets, wanted); hit.at != npos) return hit;
    return {};
}

NeedleSet::Hit NeedleSet::find(std::string_view bytes, std::size_t from, const Wanted& wanted) const {
#if CONFINE_NEEDLES_SSSE3
    // A step reads 16 + width_ - 1 bytes from its first place.
    const std::size_t reach = 16 + width_ - 1;
    if (width_ == 0 || !has_ssse3() || bytes.size() < reach) return find_portable(bytes, from, wanted);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::size_t stop = bytes.size() - reach + 1;
    std::size_t at = from;
    while (at < stop) {
        unsigned char fit[16];
        unsigned places = 0;
        at = width_ == 1   ? sift_steps<1>(p, at, stop, tables_.low, tables_.high, fit, places)
             : width_ == 2 ? sift_steps<2>(p, at, stop, tables_.low, tables_.high, fit, places)
             : width_ == 3 ? sift_steps<3>(p, at, stop, tables_.low, tables_.high, fit, places)
                           : sift_steps<4>(p, at, stop, tables_.low, tables_.high, fit, places);
        if (at >= stop) break;
        for (; places != 0; places &= places - 1) {
            const auto lane = static_cast<unsigned>(std::countr_zero(places));
            if (const Hit hit = compare(bytes, at + lane, fit[lane], wanted); hit.at != npos) return hit;
        }
        at += 16;
    }
    return find_portable(bytes, at, wanted);
#else
    return find_portable(bytes, from, wanted);
#endif
}

}  // namespace confine::detail
