// TOML text made safe for toml++ 3.3 (Debian 12's), whose whitespace test
// (is_non_ascii_horizontal_whitespace) reaches __builtin_unreachable() — undefined
// behaviour — for about three thousand characters beyond ASCII (U+00A1 to U+0499,
// U+2C4E to U+3047 and U+FB06 to U+FEFE, a few excepted), which it asks about wherever
// it reads outside a string: in a comment's neighbourhood, after a backslash in a
// string, through a malformed value. Each such character is replaced, before toml++
// reads the text, by a stand-in of its own in the private use area that the test
// answers safely, and put back in every key and string toml++ gives and every message
// it makes.
// A text that holds one of the stand-ins itself, as a character or as an escape
// (\uE000), is refused (its position given).
// Internal to libconfine.
#pragma once

#include <toml++/toml.h>

#include <confine/error.hpp>

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

namespace toml_text {

inline constexpr char32_t stand_in_base = 0xE000;
inline constexpr char32_t block = 0x3FA;  // toml++'s table: blocks of this many from U+00A0
inline constexpr char32_t blocks[] = {0xA0, 0xA0 + 11 * block, 0xA0 + 63 * block};

// toml++'s own test, as its table has it: the characters it cannot answer for.
inline bool unsafe(char32_t c) {
    if (c < 0xA0 || c > 0xFEFF || c == 0xA0 || c == 0x3000 || c == 0xFEFF) return false;
    const std::uint64_t i = (static_cast<std::uint64_t>(c) - 0xA0) / block;
    return i == 0 || i == 11 || i == 63;
}

inline bool is_stand_in(char32_t c) { return c >= stand_in_base && c < stand_in_base + 3 * block; }

// One UTF-8 character at `at` (its code point and length), or length 0 where the bytes
// are not one (passed on as they are: toml++ refuses them itself).
inline std::pair<char32_t, std::size_t> decode(std::string_view s, std::size_t at) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[at + k]); };
    const unsigned char c = b(0);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || at + n > s.size()) return {0, 0};
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(k) >> 6) != 0x2) return {0, 0};
        cp = (cp << 6) | (b(k) & 0x3F);
    }
    // An overlong form, a surrogate or beyond U+10FFFF is no character: toml++ refuses it.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return {0, 0};
    return {cp, n};
}

inline void encode(char32_t cp, std::string& out) {  // cp below U+10000 here
    if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
    } else {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    }
    out += static_cast<char>(0x80 | (cp & 0x3F));
}

// `text` with each character of `from` replaced as `to` says; others as they are.
template <typename From, typename To>
std::string map(std::string_view text, From from, To to) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto [cp, n] = decode(text, i);
        if (n > 1 && from(cp)) {
            encode(to(cp), out);
            i += n;
        } else {
            out += text[i];
            ++i;
        }
    }
    return out;
}

}  // namespace toml_text

// Where a stand-in already stands in `text`: line and column from 1, in characters.
struct TextPosition {
    std::size_t line = 1, column = 1;
};

namespace toml_text {

// Whether `text` at `i` is an escape \uXXXX or \UXXXXXXXX that names a stand-in (in a
// literal string it is no escape, and is refused all the same).
inline bool escaped_stand_in(std::string_view text, std::size_t i) {
    if (text[i] != '\\' || i + 1 >= text.size() || (text[i + 1] != 'u' && text[i + 1] != 'U')) return false;
    const std::size_t digits = text[i + 1] == 'u' ? 4 : 8;
    if (i + 2 + digits > text.size()) return false;
    std::uint64_t cp = 0;
    for (std::size_t k = 0; k < digits; ++k) {
        const char h = text[i + 2 + k];
        const int v = h >= '0' && h <= '9' ? h - '0' : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10 : -1;
        if (v < 0) return false;
        cp = cp * 16 + static_cast<std::uint64_t>(v);
    }
    return cp <= 0xFFFF && is_stand_in(static_cast<char32_t>(cp));
}

}  // namespace toml_text

// `text` with its unsafe characters replaced by their stand-ins, or the position of a
// stand-in it holds itself, as a character or as an escape.
inline std::expected<std::string, TextPosition> toml_stand_ins(std::string_view text) {
    using namespace toml_text;
    TextPosition at;
    for (std::size_t i = 0; i < text.size();) {
        const auto [cp, n] = decode(text, i);
        if ((n > 1 && is_stand_in(cp)) || escaped_stand_in(text, i)) return std::unexpected(at);
        if (text[i] == '\n') ++at.line, at.column = 1;
        else ++at.column;
        i += n ? n : 1;
    }
    return map(text, unsafe, [](char32_t cp) {
        const std::size_t k = cp < blocks[1] ? 0 : cp < blocks[2] ? 1 : 2;
        return static_cast<char32_t>(stand_in_base + k * block + (cp - blocks[k]));
    });
}

// What toml++ gave back (a string, a message), with the characters the stand-ins stand for.
inline std::string toml_restored(std::string_view text) {
    using namespace toml_text;
    return map(text, is_stand_in, [](char32_t cp) {
        const std::size_t k = (cp - stand_in_base) / block;
        return static_cast<char32_t>(blocks[k] + (cp - stand_in_base) % block);
    });
}

// Every string of `node` and every key of its tables, at any depth, restored in place
// (positions kept: a node moved keeps its source).
inline void restore_strings(toml::node& node) {
    if (auto* s = node.as_string()) {
        s->get() = toml_restored(s->get());
    } else if (auto* t = node.as_table()) {
        std::vector<toml::key> renamed;
        for (auto&& [key, value] : *t) {
            restore_strings(value);
            if (toml_restored(key.str()) != key.str()) renamed.push_back(key);
        }
        for (const toml::key& old : renamed) {
            const auto it = t->find(old.str());
            toml::key restored(toml_restored(old.str()), toml::source_region(old.source()));
            it->second.visit([&](auto&& value) { t->insert(std::move(restored), std::move(value)); });
            t->erase(old.str());
        }
    } else if (auto* a = node.as_array()) {
        for (auto& value : *a) restore_strings(value);
    }
}

// An error line as printed: a control character in it (from a key, a value or the file's
// name, or the parser's quote of what it saw) written as \xNN, so it stays one line.
inline std::string one_line(std::string_view message) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (const char c : toml_restored(message)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u != 0x7f) out += c;
        else out += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    }
    return out;
}

// `text` parsed as TOML (`source` names it in the error), its strings restored; or the
// syntax error at its position, one line.
inline std::expected<toml::table, Error> parse_toml_text(std::string_view text, const std::string& source) {
    const auto safe = toml_stand_ins(text);
    if (!safe)
        return std::unexpected(Error{ErrorCode::config_syntax, one_line(source + ":" + std::to_string(safe.error().line) + ":" +
                                                                        std::to_string(safe.error().column) +
                                                                        ": a character of the private use area from U+E000 to U+EBED, or its escape")});
    toml::table root;
    try {
        root = toml::parse(*safe, source);
    } catch (const toml::parse_error& e) {
        const auto& b = e.source().begin;
        return std::unexpected(Error{ErrorCode::config_syntax, one_line(source + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) + ": " +
                                                                        std::string(e.description()))});
    }
    restore_strings(root);
    return root;
}

}  // namespace confine::detail
