// Host patterns (--allow-host, [policy] allow_hosts; include/confine/allow_hosts.hpp):
// every form accepted and refused, the canonical text read back, and the matching rules.
#include <confine/allow_hosts.hpp>

#include <catch2/catch.hpp>

#include <vector>

namespace {

using confine::HostPattern;
using Kind = confine::HostPattern::Kind;

HostPattern parsed(std::string_view text) {
    auto p = confine::parse_host_pattern(text);
    INFO(text << ": " << (p ? std::string() : p.error()));
    REQUIRE(p);
    return *p;
}

std::string refusal(std::string_view text) {
    auto p = confine::parse_host_pattern(text);
    INFO(text << " parsed as " << (p ? p->text() : std::string()));
    REQUIRE_FALSE(p);
    return p.error();
}

std::vector<HostPattern> patterns(std::initializer_list<std::string_view> texts) {
    std::vector<HostPattern> out;
    for (auto t : texts) out.push_back(parsed(t));
    return out;
}

}  // namespace

TEST_CASE("every accepted host pattern form parses to its kind, host and port, and reads back from its text", "[proxy]") {
    struct Case {
        std::string_view text;
        Kind kind;
        std::string host;
        std::optional<std::uint16_t> port;
        std::string canonical;
    };
    const std::vector<Case> cases{
        {"example.org", Kind::name, "example.org", std::nullopt, "example.org"},
        {"*.example.org", Kind::wildcard, "example.org", std::nullopt, "*.example.org"},
        {"example.org:8443", Kind::name, "example.org", 8443, "example.org:8443"},
        {"*.example.org:8443", Kind::wildcard, "example.org", 8443, "*.example.org:8443"},
        {"192.0.2.1", Kind::address, "192.0.2.1", std::nullopt, "192.0.2.1"},
        {"192.0.2.1:8080", Kind::address, "192.0.2.1", 8080, "192.0.2.1:8080"},
        {"[2001:db8::1]", Kind::address, "2001:db8::1", std::nullopt, "[2001:db8::1]"},
        {"[2001:db8::1]:8443", Kind::address, "2001:db8::1", 8443, "[2001:db8::1]:8443"},
        {"[2001:DB8:0::1]", Kind::address, "2001:db8::1", std::nullopt, "[2001:db8::1]"},
        {"Registry.NPMJS.org", Kind::name, "registry.npmjs.org", std::nullopt, "registry.npmjs.org"},
        {"example.org.", Kind::name, "example.org", std::nullopt, "example.org"},
        {"*.Example.ORG.:443", Kind::wildcard, "example.org", 443, "*.example.org:443"},
        {"localhost", Kind::name, "localhost", std::nullopt, "localhost"},
        {"xn--bcher-kva.example", Kind::name, "xn--bcher-kva.example", std::nullopt, "xn--bcher-kva.example"},
        {"a:65535", Kind::name, "a", 65535, "a:65535"},
    };
    for (const auto& c : cases) {
        auto p = parsed(c.text);
        INFO(c.text);
        CHECK(p.kind == c.kind);
        CHECK(p.host == c.host);
        CHECK(p.port == c.port);
        CHECK(p.text() == c.canonical);
        CHECK(parsed(p.text()) == p);
    }
}

TEST_CASE("a malformed host pattern is refused with its own reason in one line", "[proxy]") {
    struct Case {
        std::string_view text;
        std::string_view reason;
    };
    const std::string long_label = std::string(64, 'a') + ".org";
    const std::vector<Case> cases{
        {"", "it is empty"},
        {"exa mple.org", "whitespace or a control character"},
        {"example.org\t", "whitespace or a control character"},
        {"https://example.org", "write the host without a scheme ('example.org')"},
        {"example.org/path", "a path, query or fragment"},
        {"example.org?q", "a path, query or fragment"},
        {"example.org#f", "a path, query or fragment"},
        {"user@example.org", "user information"},
        {"*", "'*' alone would allow every host"},
        {"*.", "'*.' needs a domain"},
        {"*.com", "a wildcard over a single label"},
        {"a.*.b", "'*' may only be the whole first label"},
        {"*example.org", "'*' may only be the whole first label"},
        {"**.x", "'*' may only be the whole first label"},
        {"*.*.example.org", "'*' may only be the whole first label"},
        {"example.org:0", "not a number from 1 to 65535"},
        {"example.org:65536", "not a number from 1 to 65535"},
        {"example.org:99999999999", "not a number from 1 to 65535"},
        {"example.org:http", "not a number from 1 to 65535"},
        {"example.org:+80", "not a number from 1 to 65535"},
        {"example.org:", "the port after ':' is empty"},
        {"exa_mple.org", "a character other than letters, digits and '-'"},
        {"-example.org", "starts or ends with '-'"},
        {"example-.org", "starts or ends with '-'"},
        {"example..org", "an empty label"},
        {".example.org", "an empty label"},
        {"example.org..", "an empty label"},
        {":80", "the host is empty"},
        {long_label, "longer than 63 characters"},
        {"::1", "write an IPv6 address in brackets"},
        {"2001:db8::1:80", "write an IPv6 address in brackets"},
        {"[2001:db8::1", "'[' without its ']'"},
        {"[192.0.2.1]", "is not an IPv6 address"},
        {"[2001:db8::1]80", "only ':PORT' may follow"},
        {"[fe80::1%eth0]", "with a zone"},
        {"1.2.3", "an IP address not written as one"},
        {"999.1.1.1", "an IP address not written as one"},
        {"1.2.3.4.5", "an IP address not written as one"},
        {"2130706433", "an IP address not written as one"},
        {"01.2.3.4", "an IP address not written as one"},
        {"example.123", "an IP address not written as one"},
        {"*.1.2.3", "a wildcard over an IP address"},
    };
    for (const auto& c : cases) {
        auto why = refusal(c.text);
        INFO(c.text << " -> " << why);
        if (c.text.find_first_of("\t\n") == std::string_view::npos)
            CHECK(why.starts_with("'" + std::string(c.text) + "' is not a host pattern: "));
        CHECK(why.find(c.reason) != std::string::npos);
        CHECK(why.find('\n') == std::string::npos);
    }
    // The pattern is quoted on the same line whatever it holds.
    auto why = refusal("a.org\nb\xff");
    CHECK(why.starts_with("'a.org\\x0ab\\xff' is not a host pattern: "));
    CHECK(why.find('\n') == std::string::npos);
    std::string labels;
    for (int i = 0; i < 64; ++i) labels += "abc.";
    CHECK(refusal(labels + "org").find("longer than 253 characters") != std::string::npos);
}

TEST_CASE("a name pattern matches its name in any case with a trailing dot, on ports 80 and 443 unless it names one", "[proxy]") {
    auto allow = patterns({"example.org", "other.org:8443"});
    CHECK(confine::host_allowed(allow, "example.org", 443));
    CHECK(confine::host_allowed(allow, "EXAMPLE.Org", 80));
    CHECK(confine::host_allowed(allow, "example.org.", 443));
    CHECK_FALSE(confine::host_allowed(allow, "example.org", 8443));
    CHECK_FALSE(confine::host_allowed(allow, "a.example.org", 443));
    CHECK_FALSE(confine::host_allowed(allow, "example.org.evil", 443));
    CHECK_FALSE(confine::host_allowed(allow, "xexample.org", 443));
    CHECK(confine::host_allowed(allow, "other.org", 8443));
    CHECK_FALSE(confine::host_allowed(allow, "other.org", 443));
    CHECK_FALSE(confine::host_allowed(allow, "", 443));
}

TEST_CASE("a wildcard matches every subdomain of its suffix, never the suffix itself", "[proxy]") {
    auto allow = patterns({"*.example.org"});
    CHECK(confine::host_allowed(allow, "a.example.org", 443));
    CHECK(confine::host_allowed(allow, "a.b.example.org", 80));
    CHECK(confine::host_allowed(allow, "A.Example.org.", 443));
    CHECK_FALSE(confine::host_allowed(allow, "example.org", 443));
    CHECK_FALSE(confine::host_allowed(allow, ".example.org", 443));
    CHECK_FALSE(confine::host_allowed(allow, "aexample.org", 443));
    CHECK_FALSE(confine::host_allowed(allow, "a.example.org", 8080));
    CHECK_FALSE(confine::host_allowed(allow, "a.example.org.other", 443));
}

TEST_CASE("an IP literal in a request matches only an address pattern of the same address", "[proxy]") {
    auto allow = patterns({"192.0.2.1", "[2001:db8::1]:8443", "example.org"});
    CHECK(confine::host_allowed(allow, "192.0.2.1", 443));
    CHECK_FALSE(confine::host_allowed(allow, "192.0.2.1", 8443));
    CHECK_FALSE(confine::host_allowed(allow, "192.0.2.2", 443));
    CHECK(confine::host_allowed(allow, "2001:db8::1", 8443));
    CHECK(confine::host_allowed(allow, "2001:DB8:0:0::1", 8443));
    CHECK(confine::host_allowed(allow, "[2001:db8::1]", 8443));
    CHECK_FALSE(confine::host_allowed(allow, "2001:db8::1", 443));
    // An address never matches a name, nor a name that looks like one an address.
    auto names = patterns({"example.org", "*.example.org"});
    CHECK_FALSE(confine::host_allowed(names, "192.0.2.1", 443));
    CHECK_FALSE(confine::host_allowed(allow, "0300.0.2.1", 443));
    CHECK_FALSE(confine::host_allowed(allow, "3221225985", 443));
}
