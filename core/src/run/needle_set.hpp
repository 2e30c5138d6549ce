// Several strings searched for at once, without regard to ASCII case, in one pass over the
// bytes however many there are: the stderr scanner's search (stderr_scan.hpp). Internal
// to libconfine.
//
//   NeedleSet set({"permission denied", "eacces"});      // each already folded
//   NeedleSet::Hit hit = set.find(bytes, 0, [](std::size_t) { return true; });
//   if (hit.at != NeedleSet::npos) ... set[hit.index] starts at bytes[hit.at] ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

// ASCII case folding, as the classifier has always matched (the "C" locale's tolower).
inline unsigned char fold_ascii(char c) {
    const auto u = static_cast<unsigned char>(c);
    return static_cast<unsigned char>(u + (static_cast<unsigned char>(u - 'A') < 26 ? 32 : 0));
}

// How it finds them: each needle is put in one of 8 buckets (the one it widens least),
// and for each of the first `width` bytes of a needle (up to 4, the shortest needle's
// length at most) two tables of 16 entries say, per bucket, which low and which high
// halves of a byte may stand there (a letter's both cases). Every place in the bytes is
// sifted by those tables, 16 places a step where the processor can look a byte's halves
// up 16 at a time (SSSE3's pshufb), one at a time elsewhere; only a place whose bytes fit
// some bucket's halves is compared with that bucket's needles. The places sifted, and
// what is compared, are the same on both ways; only the speed differs.
class NeedleSet {
public:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    struct Hit {
        std::size_t at = npos;     // where the needle starts in the bytes searched
        std::size_t index = npos;  // which needle: the lowest of those starting there
    };
    // Which needles are still looked for; asked only of a needle that matches.
    using Wanted = std::function<bool(std::size_t index)>;

    // Every needle folded (fold_ascii) and not empty; an empty one is never found.
    explicit NeedleSet(std::vector<std::string> lower = {});

    std::size_t size() const { return needles_.size(); }
    const std::string& operator[](std::size_t index) const { return needles_[index]; }

    // The first place at or after `from` where a wanted needle starts.
    Hit find(std::string_view bytes, std::size_t from, const Wanted& wanted) const;
    // The same, sifting one place at a time whatever the processor can do (find's last
    // places, and tests).
    Hit find_portable(std::string_view bytes, std::size_t from, const Wanted& wanted) const;

private:
    struct Tables {
        alignas(16) unsigned char low[4][16] = {};
        alignas(16) unsigned char high[4][16] = {};
    };
    unsigned char sift(const unsigned char* at) const;
    Hit compare(std::string_view bytes, std::size_t at, unsigned buckets, const Wanted& wanted) const;

    std::vector<std::string> needles_;
    std::vector<std::uint32_t> bucket_[8];  // the needles of each bucket, lowest index first
    Tables tables_;
    std::size_t width_ = 0;                 // the bytes of a place the tables sift: 0 when nothing can be found
};

}  // namespace confine::detail
