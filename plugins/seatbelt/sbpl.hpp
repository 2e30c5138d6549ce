// Seatbelt profiles (SBPL) for confine's policies: the rules of docs/design.md §4, every path a
// single string literal that reads back as exactly its bytes, or a refusal.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace confine::seatbelt {

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates, ≤ U+10FFFF).
inline bool valid_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || i + n > text.size()) return false;
        std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
        for (std::size_t k = 1; k < n; ++k) {
            const auto cc = static_cast<unsigned char>(text[i + k]);
            if ((cc >> 6) != 0x2) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n;
    }
    return true;
}

// `path` as one SBPL string literal: `"` and `\` escaped, everything else as is.
// Refused (with the reason): NUL and other control characters (a newline included —
// no real root needs one, and a profile reader must never see a line break inside a
// rule), and text that is not UTF-8.
inline std::expected<std::string, std::string> string_literal(std::string_view path) {
    if (path.find('\0') != std::string_view::npos) return std::unexpected(std::string("contains a NUL byte"));
    for (char ch : path) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7F) return std::unexpected(std::string("contains a control character (such as a newline or a tab)"));
    }
    if (!valid_utf8(path)) return std::unexpected(std::string("is not valid UTF-8"));
    std::string out;
    out.reserve(path.size() + 2);
    out.push_back('"');
    for (char ch : path) {
        if (ch == '"' || ch == '\\') out.push_back('\\');
        out.push_back(ch);
    }
    out.push_back('"');
    return out;
}

// The profile: allow by default; with the network confined, deny every network
// operation (outbound, inbound and bind, unix-domain sockets of host services included;
// a socketpair is not one); deny every file write, then allow writes to /dev/null (the
// file alone) and beneath each writable root. `roots` must already be canonical; they are
// de-duplicated and sorted, so equal policies give equal profiles.
inline std::expected<std::string, std::string> profile(std::vector<std::string> roots, bool network_none = true) {
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    std::string p = "(version 1)\n(allow default)\n";
    if (network_none) p += "(deny network*)\n";
    p += "(deny file-write*)\n(allow file-write* (literal \"/dev/null\"))\n";
    for (const auto& root : roots) {
        auto literal = string_literal(root);
        if (!literal) return std::unexpected("writable root " + root + " " + literal.error());
        p += "(allow file-write* (subpath " + *literal + "))\n";
    }
    return p;
}

}  // namespace confine::seatbelt
