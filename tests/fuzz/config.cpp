// Fuzz target: the configuration loader and validator (parse_config), what an operator's
// confine.toml goes through. Properties: never a crash; a refusal is a syntax or validity
// error, one line with no control character, naming the file and a position in it
// (FILE:LINE:COLUMN:); what is accepted names only valid runners, and parsing is
// deterministic; any text, written as a setting's name or string value, reads back whole.
#include "fuzz.hpp"

#include <confine/config.hpp>

#include <algorithm>
#include <cctype>

using confine::fuzz::require;

namespace {

constexpr std::string_view source = "fuzz.toml";

// "fuzz.toml:LINE:COLUMN: " and something after it.
bool positioned(std::string_view message) {
    if (!message.starts_with(source) || message.size() <= source.size() || message[source.size()] != ':') return false;
    std::string_view rest = message.substr(source.size() + 1);
    for (int number = 0; number < 2; ++number) {
        std::size_t digits = 0;
        while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
        if (digits == 0 || digits == rest.size() || rest[digits] != ':') return false;
        rest.remove_prefix(digits + 1);
    }
    return rest.starts_with(' ') && rest.size() > 1;
}

// Valid UTF-8 with no character of the private use area (what toml++ is given in place
// of the characters it cannot read safely: core/src/policy/toml_text.hpp).
bool plain_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
        for (std::size_t k = 1; k < n; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
            cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) ||
            cp > 0x10FFFF || (cp >= 0xE000 && cp <= 0xF8FF))
            return false;
        i += n;
    }
    return true;
}

// The bytes as a setting's value, written as a TOML basic string, read back whole.
void round_trip(std::string_view value) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string quoted = "\"";
    for (const char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') quoted += std::string("\\") + c;
        else if (u < 0x20 || u == 0x7f) quoted += std::string("\\u00") + hex[u >> 4] + hex[u & 15];
        else quoted += c;
    }
    quoted += '"';
    // As a key first: any text may name a runner's setting.
    const std::string keyed = "[runner.fuzz]\n" + quoted + " = 1 # \u00a1\n";
    const auto as_key = confine::parse_config(keyed, std::string(source));
    require(as_key && as_key->runners.at("fuzz").settings.size() == 1 && as_key->runners.at("fuzz").settings[0].key == value,
            "a key written as TOML reads back whole", keyed);
    const std::string file = "# r\u00e9glages \u3001\n[runner.fuzz]\nvalue = " + quoted + "  # \uFEBF\nlist = [" + quoted + ", 'x']\n";
    const auto parsed = confine::parse_config(file, std::string(source));
    // A runner's setting is one line, not empty, without NUL.
    if (value.empty() || value.find_first_of(std::string_view("\n\r\0", 3)) != std::string_view::npos) {
        require(!parsed && parsed.error().code == confine::ErrorCode::config_invalid, "an empty or multi-line setting is refused", file);
        return;
    }
    require(parsed.has_value(), "a string value written as TOML is accepted", parsed ? file : parsed.error().message);
    const auto& settings = parsed->runners.at("fuzz").settings;
    require(settings.size() == 2 && settings[0].string_value == value, "a string value reads back whole", file);
    require(settings[1].array_value.size() == 2 && settings[1].array_value[0] == value, "a string in an array reads back whole", file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (plain_utf8(text)) round_trip(text);
    const auto parsed = confine::parse_config(text, std::string(source));
    if (!parsed) {
        const auto& e = parsed.error();
        require(e.code == confine::ErrorCode::config_syntax || e.code == confine::ErrorCode::config_invalid,
                "a refusal of the text is a syntax or validity error", e.message);
        require(std::none_of(e.message.begin(), e.message.end(), [](char c) { return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f; }),
                "a refusal is one line with no control character", e.message);
        require(positioned(e.message), "a refusal names the file and the position", e.message);
        return 0;
    }
    for (const auto& [os, platform] : parsed->platforms)
        for (const auto& runner : platform.chain) require(confine::is_valid_runner_name(runner), "a chain names valid runners", runner);
    for (const auto& [name, table] : parsed->runners) require(confine::is_valid_runner_name(name), "a runner table has a valid name", name);
    const auto again = confine::parse_config(text, std::string(source));
    require(again && *again == *parsed, "parsing the same text gives the same configuration");
    return 0;
}
