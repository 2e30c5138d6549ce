// The stderr scanner's search (core/src/run/needle_set.hpp): several signatures found in
// one pass, case-folded, 16 places a step where the processor can and one at a time
// elsewhere, against the plainest search there is.
#include "needle_set.hpp"

#include <catch2/catch.hpp>

#include <cctype>
#include <random>
#include <string>
#include <vector>

using confine::detail::fold_ascii;
using confine::detail::NeedleSet;

namespace {

const NeedleSet::Wanted every = [](std::size_t) { return true; };

// The first place at or after `from` where some wanted needle starts, and the lowest such.
NeedleSet::Hit plainly(const std::vector<std::string>& needles, std::string_view bytes, std::size_t from,
                       const NeedleSet::Wanted& wanted) {
    for (std::size_t at = from; at < bytes.size(); ++at)
        for (std::size_t k = 0; k < needles.size(); ++k) {
            const std::string& n = needles[k];
            if (n.empty() || n.size() > bytes.size() - at || !wanted(k)) continue;
            bool same = true;
            for (std::size_t j = 0; j < n.size() && same; ++j) same = fold_ascii(bytes[at + j]) == static_cast<unsigned char>(n[j]);
            if (same) return {at, k};
        }
    return {};
}

void check_every_start(const NeedleSet& set, const std::vector<std::string>& needles, std::string_view bytes,
                       const NeedleSet::Wanted& wanted = every) {
    for (std::size_t from = 0; from <= bytes.size(); ++from) {
        const NeedleSet::Hit want = plainly(needles, bytes, from, wanted);
        const NeedleSet::Hit fast = set.find(bytes, from, wanted), slow = set.find_portable(bytes, from, wanted);
        INFO("from " << from << " in \"" << bytes << "\"");
        CHECK(fast.at == want.at);
        CHECK(fast.index == want.index);
        CHECK(slow.at == want.at);
        CHECK(slow.index == want.index);
    }
}

}  // namespace

TEST_CASE("a needle set finds each needle in any case at every place, the first place and the lowest needle there", "[output][classify]") {
    const std::vector<std::string> needles = {"permission denied", "eacces", "eperm", "operation not permitted", "getaddrinfo e",
                                              "403 from proxy", "(from versions: none)", "landlock-run: "};
    const NeedleSet set(needles);
    for (std::size_t k = 0; k < needles.size(); ++k)
        for (const int pad : {0, 1, 7, 15, 16, 17, 31, 33}) {
            const auto before = static_cast<std::size_t>(pad);
            std::string upper = needles[k];
            for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            for (const std::string& form : {needles[k], upper}) {
                const std::string bytes = std::string(before, 'x') + form + std::string(before % 5, 'y');
                const NeedleSet::Hit fast = set.find(bytes, 0, every), slow = set.find_portable(bytes, 0, every);
                INFO(bytes);
                CHECK(fast.at == before);
                CHECK(fast.index == k);
                CHECK(slow.at == before);
                CHECK(slow.index == k);
            }
        }
    // One byte short at the end, or one byte wrong anywhere, is no hit.
    for (const std::string& n : needles)
        for (std::size_t wrong = 0; wrong < n.size(); ++wrong) {
            std::string near = std::string(20, '.') + n;
            near[20 + wrong] = near[20 + wrong] == '#' ? '%' : '#';
            CHECK(set.find(near, 0, every).at == NeedleSet::npos);
            CHECK(set.find(std::string(20, '.') + n.substr(0, n.size() - 1), 0, every).at == NeedleSet::npos);
        }
}

TEST_CASE("a needle set skips the needles it is told are no longer wanted, and finds the next one", "[output][classify]") {
    const std::vector<std::string> needles = {"eperm", "eperm: x", "denied"};
    const NeedleSet set(needles);
    const std::string bytes = "a EPERM: x then denied";
    CHECK(set.find(bytes, 0, every).index == 0);
    CHECK(set.find(bytes, 0, [](std::size_t k) { return k != 0; }).index == 1);
    CHECK(set.find(bytes, 0, [](std::size_t k) { return k == 2; }).at == bytes.find("denied"));
    CHECK(set.find(bytes, 0, [](std::size_t) { return false; }).at == NeedleSet::npos);
    check_every_start(set, needles, bytes, [](std::size_t k) { return k != 0; });
}

TEST_CASE("a needle set with short needles, none, or empty ones answers as the plain search does", "[output][classify]") {
    CHECK(NeedleSet().find("anything at all, long enough for a step", 0, every).at == NeedleSet::npos);
    CHECK(NeedleSet({""}).find("anything at all, long enough for a step", 0, every).at == NeedleSet::npos);
    for (const std::vector<std::string>& needles : std::vector<std::vector<std::string>>{{"x"}, {"ab", "b"}, {"", "q:"}, {"zz", "zzz"}}) {
        const NeedleSet set(needles);
        check_every_start(set, needles, "Xa-Bab...Q:zZZ b b  x--------------------------------ab");
    }
}

TEST_CASE("a needle set agrees with the plain search on random bytes, needles and starts", "[output][classify]") {
    std::mt19937 random(20261207);
    // A small alphabet with both cases and bytes past ASCII, so that needles are met often.
    const std::string alphabet = "aAbBcC:- \n\x80\xff";
    auto text = [&](std::size_t n) {
        std::string s(n, ' ');
        for (char& c : s) c = alphabet[random() % alphabet.size()];
        return s;
    };
    for (int round = 0; round < 300; ++round) {
        std::vector<std::string> needles(1 + random() % 12);
        for (std::string& n : needles) {
            n = text(1 + random() % 6);
            for (char& c : n) c = static_cast<char>(fold_ascii(c));
        }
        const std::string bytes = text(random() % 90);
        check_every_start(NeedleSet(needles), needles, bytes);
    }
}
