// What the fuzz targets share: reading an input as a few choices and strings, and a
// property that fails loudly (the engine keeps the input that made it fail).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace confine::fuzz {

// A property that does not hold: said on stderr, then an abort, which every engine
// records as a crash with its input.
[[noreturn]] inline void fail(const char* property, std::string_view detail = {}) {
    std::fprintf(stderr, "property failed: %s\n", property);
    if (!detail.empty()) std::fprintf(stderr, "  %.*s\n", static_cast<int>(detail.size() > 2000 ? 2000 : detail.size()), detail.data());
    std::abort();
}

inline void require(bool holds, const char* property, std::string_view detail = {}) {
    if (!holds) fail(property, detail);
}

// The input, taken from the front: a byte for each choice, then strings that end at a
// separator byte (or the end), so that a corpus file reads as text.
class Input {
public:
    Input(const std::uint8_t* data, std::size_t size) : rest_(reinterpret_cast<const char*>(data), size) {}

    // A byte, 0 when there is none left.
    std::uint8_t byte() {
        if (rest_.empty()) return 0;
        const auto b = static_cast<std::uint8_t>(rest_.front());
        rest_.remove_prefix(1);
        return b;
    }
    // The bytes up to `separator` (taken, and dropped) or the end.
    std::string_view until(char separator) {
        const std::size_t at = rest_.find(separator);
        const std::string_view part = rest_.substr(0, at);
        rest_.remove_prefix(at == std::string_view::npos ? rest_.size() : at + 1);
        return part;
    }
    // Strings separated by `separator`, at most `most` of them: the rest goes in the last.
    std::vector<std::string> strings(char separator, std::size_t most) {
        std::vector<std::string> out;
        while (!rest_.empty() && out.size() + 1 < most) out.emplace_back(until(separator));
        if (!rest_.empty()) out.emplace_back(rest());
        return out;
    }
    std::string_view rest() {
        const std::string_view r = rest_;
        rest_ = {};
        return r;
    }
    bool empty() const { return rest_.empty(); }

private:
    std::string_view rest_;
};

}  // namespace confine::fuzz
