// Fuzz target: the copies of the user's package manager settings that a run's sandbox
// gets, only the settings of an allow-list (core/src/run/packages.hpp): an npmrc, and
// cargo's config.toml. The first byte picks which. Properties: read back as the tool
// itself reads it (npm's ini reader ends a line at a carriage return too, and reads
// quoted keys and values as JSON strings), the copy sets no setting outside the
// allow-list, none whose name says it is a secret, and no URL with a password or a user;
// it has no section; a cargo copy is TOML again, each of its values a string, an
// integer, a boolean or an array of strings.
#include "fuzz.hpp"

#include "packages.hpp"
#include "toml_text.hpp"

#include <confine/environment.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using confine::fuzz::require;

namespace {

// The settings' names that say they hold a secret (scoped keys judged by what follows
// the last ':').
bool secret(std::string_view key) {
    std::string name(key.substr(key.rfind(':') == std::string_view::npos ? 0 : key.rfind(':') + 1));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* word : {"_auth", "token", "password", "passwd", "secret"})
        if (name.find(word) != std::string::npos) return true;
    return false;
}

void append_utf8(std::uint32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// JavaScript's String.prototype.trim: ASCII blanks, and the Unicode spaces and BOM.
std::string_view js_trimmed(std::string_view s) {
    auto space_at = [&](std::size_t i) -> std::size_t {  // its length in bytes, or 0
        const auto c = static_cast<unsigned char>(s[i]);
        if (c != 0 && std::strchr(" \t\n\v\f\r", c)) return 1;
        for (std::string_view u : {"\u00a0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006", "\u2007",
                                   "\u2008", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"})
            if (s.substr(i, u.size()) == u) return u.size();
        return 0;
    };
    for (std::size_t n; !s.empty() && (n = space_at(0)) != 0;) s.remove_prefix(n);
    for (bool cut = true; cut && !s.empty();) {
        cut = false;
        for (std::size_t n = 1; n <= 3 && n <= s.size(); ++n)
            if (space_at(s.size() - n) == n) {
                s.remove_suffix(n);
                cut = true;
                break;
            }
    }
    return s;
}

// JSON.parse of a string literal: its value, or nothing when it is not one.
std::optional<std::string> json_string(std::string_view q) {
    if (q.size() < 2 || q.front() != '"' || q.back() != '"') return std::nullopt;
    std::string out;
    for (std::size_t i = 1; i + 1 < q.size(); ++i) {
        if (q[i] != '\\') {
            if (q[i] == '"' || static_cast<unsigned char>(q[i]) < 0x20) return std::nullopt;
            out += q[i];
            continue;
        }
        if (i + 2 >= q.size()) return std::nullopt;  // the escaped character comes before the closing quote
        const char e = q[++i];
        if (e == 'u') {
            if (i + 5 >= q.size()) return std::nullopt;
            std::uint32_t cp = 0;
            for (int k = 1; k <= 4; ++k) {
                const char h = q[i + k];
                const int v = std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10 : -1;
                if (v < 0) return std::nullopt;
                cp = cp * 16 + static_cast<std::uint32_t>(v);
            }
            append_utf8(cp, out);
            i += 4;
        } else {
            const char* from = "\"\\/bfnrt";
            const char* to = "\"\\/\b\f\n\r\t";
            const char* at = std::strchr(from, e);
            if (!at || !e) return std::nullopt;
            out += to[at - from];
        }
    }
    return out;
}

// The ini package's reading of a key or a value (npm's reader).
std::string ini_unsafe(std::string_view raw) {
    const std::string_view v = js_trimmed(raw);
    const bool quoted = v.size() >= 2 && ((v.front() == '"' && v.back() == '"') || (v.front() == '\'' && v.back() == '\''));
    if (quoted) {
        const std::string_view inner = v.front() == '\'' ? v.substr(1, v.size() - 2) : v;
        return json_string(inner).value_or(std::string(inner));
    }
    std::string out;
    bool escaping = false;
    for (const char c : v) {
        if (escaping) {
            if (c == '\\' || c == ';' || c == '#') out += c;
            else out += std::string("\\") + c;
            escaping = false;
        } else if (c == ';' || c == '#') {
            break;
        } else if (c == '\\') {
            escaping = true;
        } else {
            out += c;
        }
    }
    if (escaping) out += '\\';
    return std::string(js_trimmed(out));
}

// Whether npm's reading of a key is on the allow-list: one of its names, or a scope's
// registry (`@name:registry`, the name in npm's characters).
bool npm_allowed(const std::string& key) {
    const auto names = confine::detail::npm_settings_copied();
    if (std::find(names.begin(), names.end(), key) != names.end()) return true;
    const std::string_view suffix = ":registry";
    if (key.size() <= 1 + suffix.size() || key.front() != '@' || !key.ends_with(suffix)) return false;
    return std::all_of(key.begin() + 1, key.end() - static_cast<std::ptrdiff_t>(suffix.size()),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-._~", c); });
}

void npmrc(std::string_view text) {
    const std::string copy = confine::detail::npmrc_copy(text);
    for (std::size_t at = 0; at < copy.size();) {
        const std::size_t end = std::min(copy.find_first_of("\r\n", at), copy.size());
        const std::string_view raw = std::string_view(copy).substr(at, end - at);
        const std::string_view line = js_trimmed(raw);
        at = end + 1;
        if (line.empty() || line.front() == ';' || line.front() == '#') continue;
        require(raw.front() != '[', "an npmrc copy has no section", raw);
        const std::size_t eq = line.find('=');
        if (eq == 0) continue;
        const std::string key = ini_unsafe(line.substr(0, eq)), value = eq == std::string_view::npos ? "" : ini_unsafe(line.substr(eq + 1));
        require(npm_allowed(key), "an npmrc copy sets only settings of the allow-list, as npm reads it", line);
        require(!secret(key), "an npmrc copy holds no secret setting, as npm reads it", line);
        require(!confine::detail::carries_credentials(key) && !confine::detail::carries_credentials(value),
                "an npmrc copy holds no URL's password or user, as npm reads it", line);
    }
}

// Whether `key` in the table at `path` ("source.x") is on the allow-list.
bool cargo_allowed(const std::string& path, std::string_view key) {
    const std::string table = path.substr(0, path.find('.'));
    const bool named = path.find('.') != std::string::npos;
    for (const auto& s : confine::detail::cargo_settings_copied())
        if (s.key == key && (named ? s.table == table + ".*" : s.table == table)) return true;
    return false;
}

void copied_value(const toml::node& node, const std::string& where) {
    if (const auto* s = node.as_string()) {
        require(!confine::url_carries_password(s->get()) && !confine::detail::carries_credentials(s->get()), "a cargo copy holds no URL's password or user", s->get());
        return;
    }
    if (const auto* a = node.as_array()) {
        for (const auto& v : *a) {
            require(v.is_string(), "a cargo copy's array holds only strings", where);
            copied_value(v, where);
        }
        return;
    }
    require(node.is_integer() || node.is_boolean(), "a cargo copy's value is a string, an integer, a boolean or an array", where);
}

void cargo(std::string_view text) {
    const auto copy = confine::detail::cargo_config_copy(text);
    if (!copy) return;
    auto table = confine::detail::parse_toml_text(*copy, "copy");
    if (!table) confine::fuzz::fail("a cargo copy is TOML", *copy + "\n" + table.error().message);
    for (auto&& [name, node] : *table) {
        const auto* t = node.as_table();
        require(t != nullptr, "a cargo copy holds only tables at its top", name.str());
        std::vector<std::pair<std::string, const toml::table*>> sections;
        if (name.str() == "registries" || name.str() == "source") {
            for (auto&& [inner, value] : *t) {
                require(value.is_table(), "a cargo copy's [registries] and [source] hold only tables", inner.str());
                sections.emplace_back(std::string(name.str()) + "." + std::string(inner.str()), value.as_table());
            }
        } else {
            sections.emplace_back(std::string(name.str()), t);
        }
        for (const auto& [path, section] : sections)
            for (auto&& [key, value] : *section) {
                require(cargo_allowed(path, key.str()), "a cargo copy sets only settings of the allow-list", path + "." + std::string(key.str()));
                require(!secret(key.str()), "a cargo copy holds no secret setting", key.str());
                copied_value(value, path + "." + std::string(key.str()));
            }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    confine::fuzz::Input in(data, size);
    if (in.byte() & 1) cargo(in.rest());
    else npmrc(in.rest());
    return 0;
}
