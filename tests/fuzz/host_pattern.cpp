// Fuzz target: parse_host_pattern and host_allowed (include/confine/allow_hosts.hpp).
// Properties: never a crash; a refusal is one line naming the input; a pattern that
// parses reads back from its text() to the same pattern; a name pattern allows its own
// host, and a wildcard a subdomain of its suffix, never the suffix itself.
#include <confine/allow_hosts.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto pattern = confine::parse_host_pattern(text);
    if (!pattern) {
        if (pattern.error().find('\n') != std::string::npos) std::abort();
        return 0;
    }
    auto again = confine::parse_host_pattern(pattern->text());
    if (!again || !(*again == *pattern)) std::abort();
    std::vector<confine::HostPattern> one{*pattern};
    auto port = pattern->port.value_or(443);
    using Kind = confine::HostPattern::Kind;
    if (pattern->kind != Kind::wildcard && !confine::host_allowed(one, pattern->host, port)) std::abort();
    if (pattern->kind == Kind::wildcard) {
        if (confine::host_allowed(one, pattern->host, port)) std::abort();
        if (!confine::host_allowed(one, "a." + pattern->host, port)) std::abort();
    }
    (void)confine::host_allowed(one, text, port);
    return 0;
}
