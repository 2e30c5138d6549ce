// The hosts a run may reach through confine's proxy (--allow-host, [policy] allow_hosts;
// docs/design.md §12, the network dimension "through the proxy"): a pattern per host, and
// the one rule that says whether a request's host and port are among them.
//
//   auto pattern = confine::parse_host_pattern("*.example.org");
//   if (!pattern) { std::fprintf(stderr, "--allow-host: %s\n", pattern.error().c_str()); return 125; }
//   std::vector<confine::HostPattern> allowed{*pattern};
//   confine::host_allowed(allowed, "a.example.org", 443);   // true
//   confine::host_allowed(allowed, "example.org", 443);     // false: subdomains only
//
// A pattern names a host by name, by a name's subdomains, or by an IP address written as
// one; a name that only looks like an address ("1.2.3", "999.1.1.1") is refused, so that a
// pattern never means something else to a resolver than it says.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace confine {

struct HostPattern {
    enum class Kind {
        name,      // "example.org": that name only
        wildcard,  // "*.example.org": every name under the suffix, never the suffix itself
        address,   // "192.0.2.1", "[2001:db8::1]": that address only
    };
    Kind kind = Kind::name;
    // name: lower-case, no trailing dot; wildcard: the suffix ("example.org" for
    // "*.example.org"); address: the address's canonical text, without brackets
    // ("192.0.2.1", "2001:db8::1").
    std::string host;
    // Unset: ports 80 and 443.
    std::optional<std::uint16_t> port;

    // The canonical form, which parse_host_pattern reads back to this pattern:
    // "example.org", "*.example.org:8443", "192.0.2.1", "[2001:db8::1]:8443".
    std::string text() const;
    bool operator==(const HostPattern&) const = default;
};

// Reads one pattern: `example.org`, `*.example.org`, either with `:PORT`, an IPv4 address
// with or without `:PORT`, an IPv6 address in brackets with or without `:PORT`. Upper case
// is lowered and one trailing dot dropped. The error is one line saying what is wrong,
// without a position (the caller says where the pattern came from), e.g.
// "'https://example.org' is not a host pattern: write the host without a scheme ('example.org')".
std::expected<HostPattern, std::string> parse_host_pattern(std::string_view text);

// Whether a request for `host`:`port` is allowed by `patterns`. `host` as the request
// names it: a name, or an IP literal (brackets removed). Names compare case-insensitively
// with a trailing dot ignored; "*.example.org" matches "a.example.org" and
// "a.b.example.org", never "example.org". An IP literal matches only an address pattern of
// the same address (compared as addresses), never a name.
bool host_allowed(std::span<const HostPattern> patterns, std::string_view host, std::uint16_t port);

}  // namespace confine
