#include <confine/allow_hosts.hpp>

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <charconv>

namespace confine {
namespace {

namespace ip = boost::asio::ip;
using Parsed = std::expected<HostPattern, std::string>;

constexpr std::size_t max_label = 63;
constexpr std::size_t max_name = 253;

// `text` in quotes, on one line whatever it holds: a control character or a byte outside
// ASCII as \xNN.
std::string quoted(std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out = "'";
    for (unsigned char c : text) {
        if (c < 0x20 || c >= 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "'";
}

std::unexpected<std::string> refuse(std::string_view text, std::string_view why) {
    return std::unexpected(quoted(text) + " is not a host pattern: " + std::string(why));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// The first thing in `text` that makes it a URL or something else than a host, or empty.
std::string not_a_host(std::string_view text) {
    if (text.empty()) return "it is empty";
    for (unsigned char c : text)
        if (c <= ' ' || c == 0x7f) return "it contains whitespace or a control character";
    if (text.find("://") != std::string_view::npos) {
        auto rest = text.substr(text.find("://") + 3);
        return "write the host without a scheme (" + quoted(rest.substr(0, rest.find_first_of("/?#"))) + ")";
    }
    if (text.find('@') != std::string_view::npos) return "it contains user information ('@'): write the host alone";
    if (text.find_first_of("/?#") != std::string_view::npos)
        return "it contains a path, query or fragment ('/', '?', '#'): a pattern names a host, not a URL";
    return {};
}

std::expected<std::uint16_t, std::string> parse_port(std::string_view text, std::string_view port) {
    if (port.empty()) return refuse(text, "the port after ':' is empty");
    if (!all_digits(port)) return refuse(text, "the port " + quoted(port) + " is not a number from 1 to 65535");
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535)
        return refuse(text, "the port " + quoted(port) + " is not a number from 1 to 65535");
    return static_cast<std::uint16_t>(value);
}

// Why `name` (lower-cased, no trailing dot) is not a host name, or empty.
std::string bad_name(std::string_view name) {
    if (name.empty()) return "the host is empty";
    if (name.size() > max_name) return "the name is longer than 253 characters";
    std::size_t start = 0;
    while (true) {
        auto dot = name.find('.', start);
        auto label = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (label.empty()) return "it has an empty label ('..', or a dot at the start)";
        if (label.size() > max_label) return "the label " + quoted(label) + " is longer than 63 characters";
        for (char c : label)
            if (!(is_digit(c) || (c >= 'a' && c <= 'z') || c == '-'))
                return "the label " + quoted(label) + " has a character other than letters, digits and '-'";
        if (label.front() == '-' || label.back() == '-')
            return "the label " + quoted(label) + " starts or ends with '-'";
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    return {};
}

// A name whose last label is a number is what resolvers read as an IPv4 address in one of
// its older forms ("1.2.3", "0x7f.1", "2130706433"): refused unless it is a real one.
bool looks_numeric(std::string_view name) {
    auto last = name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
    return all_digits(last);
}

Parsed bracketed(std::string_view text, std::string_view rest) {
    auto close = rest.find(']');
    if (close == std::string_view::npos) return refuse(text, "'[' without its ']'");
    if (rest.substr(0, close).find('%') != std::string_view::npos)
        return refuse(text, "an IPv6 address with a zone ('%') cannot be allowed: write the address alone");
    boost::system::error_code ec;
    auto address = ip::make_address_v6(std::string(rest.substr(1, close - 1)), ec);
    if (ec) return refuse(text, quoted(rest.substr(1, close - 1)) + " in brackets is not an IPv6 address");
    HostPattern p{HostPattern::Kind::address, address.to_string(), std::nullopt};
    auto after = rest.substr(close + 1);
    if (after.empty()) return p;
    if (after.front() != ':') return refuse(text, "only ':PORT' may follow the ']' of an IPv6 address");
    auto port = parse_port(text, after.substr(1));
    if (!port) return std::unexpected(port.error());
    p.port = *port;
    return p;
}

Parsed host_part(std::string_view text, std::string host) {
    if (host == "*.") return refuse(text, "'*.' needs a domain after it ('*.example.org')");
    if (!host.empty() && host.back() == '.') host.pop_back();
    if (host.find('*') == std::string::npos) {
        if (looks_numeric(host)) {
            boost::system::error_code ec;
            auto address = ip::make_address_v4(host, ec);
            if (ec) return refuse(text, "it is an IP address not written as one (write IPv4 as 192.0.2.1)");
            return HostPattern{HostPattern::Kind::address, address.to_string(), std::nullopt};
        }
        if (auto why = bad_name(host); !why.empty()) return refuse(text, why);
        return HostPattern{HostPattern::Kind::name, host, std::nullopt};
    }
    if (host == "*") return refuse(text, "'*' alone would allow every host: name the hosts, or a domain as '*.example.org'");
    if (!host.starts_with("*.") || host.find('*', 1) != std::string::npos)
        return refuse(text, "'*' may only be the whole first label, followed by a domain ('*.example.org')");
    auto suffix = host.substr(2);
    if (auto why = bad_name(suffix); !why.empty()) return refuse(text, why);
    if (looks_numeric(suffix)) return refuse(text, "a wildcard over an IP address allows nothing: name the address");
    if (suffix.find('.') == std::string::npos)
        return refuse(text, "a wildcard over a single label (" + quoted(host) +
                                ") would allow a whole top-level domain: name a domain under it");
    return HostPattern{HostPattern::Kind::wildcard, suffix, std::nullopt};
}

// `host` lower-cased, one trailing dot dropped: the form patterns are kept in.
std::string normal_request_host(std::string_view host) {
    auto out = lowered(host);
    if (!out.empty() && out.back() == '.') out.pop_back();
    return out;
}

bool port_matches(const HostPattern& p, std::uint16_t port) {
    return p.port ? *p.port == port : (port == 80 || port == 443);
}

}  // namespace

std::string HostPattern::text() const {
    std::string out;
    switch (kind) {
        case Kind::name: out = host; break;
        case Kind::wildcard: out = "*." + host; break;
        case Kind::address: out = host.find(':') != std::string::npos ? std::string("[").append(host).append("]") : host; break;
    }
    if (port) out.append(":").append(std::to_string(*port));
    return out;
}

Parsed parse_host_pattern(std::string_view text) {
    if (auto why = not_a_host(text); !why.empty()) return refuse(text, why);
    if (text.front() == '[') return bracketed(text, text);
    auto colon = text.find(':');
    if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos)
        return refuse(text, "write an IPv6 address in brackets ('[2001:db8::1]', '[2001:db8::1]:8443')");
    auto parsed = host_part(text, lowered(text.substr(0, colon)));
    if (!parsed || colon == std::string_view::npos) return parsed;
    auto port = parse_port(text, text.substr(colon + 1));
    if (!port) return std::unexpected(port.error());
    parsed->port = *port;
    return parsed;
}

bool host_allowed(std::span<const HostPattern> patterns, std::string_view host, std::uint16_t port) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    boost::system::error_code ec;
    auto address = ip::make_address(std::string(host), ec);
    if (!ec) {
        return std::any_of(patterns.begin(), patterns.end(), [&](const HostPattern& p) {
            boost::system::error_code pec;
            return p.kind == HostPattern::Kind::address && port_matches(p, port) &&
                   ip::make_address(p.host, pec) == address && !pec;
        });
    }
    auto name = normal_request_host(host);
    return std::any_of(patterns.begin(), patterns.end(), [&](const HostPattern& p) {
        if (!port_matches(p, port)) return false;
        if (p.kind == HostPattern::Kind::name) return name == p.host;
        if (p.kind == HostPattern::Kind::wildcard)
            return name.size() > p.host.size() + 1 && name.ends_with(p.host) &&
                   name[name.size() - p.host.size() - 1] == '.';
        return false;
    });
}

}  // namespace confine
