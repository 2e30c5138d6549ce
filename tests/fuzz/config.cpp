// Fuzz target: the configuration loader and validator (parse_config), what an operator's
// confine.toml goes through. Properties: never a crash; a refusal is a syntax or validity
// error, one line with no control character, naming the file and a position in it
// (FILE:LINE:COLUMN:); what is accepted names only valid runners, and parsing is
// deterministic.
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
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
