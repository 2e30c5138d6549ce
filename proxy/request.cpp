// The request header a client sends, read by Beast's parser and judged; and the addresses
// a name may not be made to point at.
#include "http_proxy.hpp"

#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/ip/address_v6.hpp>
#include <boost/beast/http/write.hpp>

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>

namespace confine::proxy {
namespace {

namespace http = boost::beast::http;
namespace ip = asio::ip;
using Header = http::request<http::empty_body>;

RequestVerdict malformed(unsigned status, std::string reason) {
    RequestVerdict v;
    v.kind = RequestVerdict::Kind::malformed;
    v.status = status;
    v.reason = std::move(reason);
    return v;
}

std::string_view view(boost::beast::string_view s) { return {s.data(), s.size()}; }

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

struct Authority {
    std::string host;  // lower-cased, without brackets
    std::uint16_t port = 0;
};

std::optional<std::uint16_t> port_number(std::string_view s) {
    unsigned value = 0;
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size() || value == 0 || value > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(value);
}

// `host[:port]` or `[v6][:port]` as a request writes it; `default_port` unset: the port
// is required (CONNECT).
std::optional<Authority> split_authority(std::string_view text, std::optional<std::uint16_t> default_port) {
    std::string_view host = text, port_text;
    bool has_port = false;
    if (text.starts_with('[')) {
        auto close = text.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        host = text.substr(1, close - 1);
        auto rest = text.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') return std::nullopt;
        has_port = !rest.empty();
        port_text = has_port ? rest.substr(1) : rest;
        boost::system::error_code ec;
        ip::make_address_v6(std::string(host), ec);
        if (ec || host.find('%') != std::string_view::npos) return std::nullopt;
    } else {
        auto colon = text.find(':');
        if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) return std::nullopt;
        has_port = colon != std::string_view::npos;
        host = text.substr(0, colon);
        if (has_port) port_text = text.substr(colon + 1);
    }
    Authority a{lowered(host), default_port.value_or(0)};
    if (a.host.empty() || a.host.size() > 253) return std::nullopt;
    if (!text.starts_with('[') && !std::all_of(a.host.begin(), a.host.end(), name_char)) return std::nullopt;
    if (has_port) {
        auto port = port_number(port_text);
        if (!port) return std::nullopt;
        a.port = *port;
    } else if (!default_port) {
        return std::nullopt;
    }
    return a;
}

RequestVerdict verdict_for(RequestVerdict::Form form, Authority a, std::span<const HostPattern> allow) {
    RequestVerdict v;
    v.form = form;
    v.host = std::move(a.host);
    v.port = a.port;
    if (host_allowed(allow, v.host, v.port)) {
        v.kind = RequestVerdict::Kind::serve;
        v.status = 0;
    } else {
        v.kind = RequestVerdict::Kind::refuse;
        v.status = 403;
        v.reason = "not in allow_hosts";
    }
    return v;
}

RequestVerdict judge_connect(const Header& req, std::span<const HostPattern> allow) {
    auto a = split_authority(view(req.target()), std::nullopt);
    if (!a) return malformed(400, "a CONNECT target is host:port");
    return verdict_for(RequestVerdict::Form::connect, std::move(*a), allow);
}

// The header sent upstream for an absolute-form request: the target in origin form, Host
// the URL's authority (what the patterns judged, whatever Host the client wrote), the
// proxy's own fields dropped, and one request per connection.
std::string upstream_header(Header req, std::string_view path, std::string_view authority) {
    req.target(path.empty() ? std::string("/") : path.front() == '?' ? "/" + std::string(path) : std::string(path));
    for (auto name : {"Proxy-Connection", "Proxy-Authorization", "Keep-Alive", "Connection"}) req.erase(name);
    req.set(http::field::host, std::string(authority));
    req.set(http::field::connection, "close");
    std::ostringstream out;
    out << req.base();
    return out.str();
}

RequestVerdict judge_absolute(const Header& req, std::span<const HostPattern> allow) {
    auto target = view(req.target());
    auto scheme = lowered(target.substr(0, std::min<std::size_t>(target.size(), 8)));
    if (scheme.starts_with("https://"))
        return malformed(400, "an https:// URL is requested through a proxy with CONNECT");
    if (!scheme.starts_with("http://"))
        return malformed(400, "only CONNECT and absolute-form http:// requests are served by this proxy");
    auto rest = target.substr(7);
    auto end = rest.find_first_of("/?#");
    auto authority = rest.substr(0, end);
    if (authority.find('@') != std::string_view::npos) return malformed(400, "a URL with user information is not served");
    auto a = split_authority(authority, 80);
    if (!a) return malformed(400, "the URL's host is not a host name or an IP address");
    auto v = verdict_for(RequestVerdict::Form::absolute, std::move(*a), allow);
    if (v.kind == RequestVerdict::Kind::serve) {
        auto path = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
        v.upstream_header = upstream_header(req, path.substr(0, path.find('#')), authority);
    }
    return v;
}

std::string v4_refusal(const ip::address_v4& a) {
    auto bits = a.to_uint();
    auto in = [bits](std::uint32_t net, int prefix) { return (bits >> (32 - prefix)) == (net >> (32 - prefix)); };
    if (in(0x7f000000, 8)) return "a loopback address";
    if (in(0x00000000, 8)) return "an unspecified address";
    if (in(0xa9fe0000, 16)) return "a link-local address";
    if (in(0x0a000000, 8) || in(0xac100000, 12) || in(0xc0a80000, 16) || in(0x64400000, 10)) return "a private address";
    if (in(0xe0000000, 4)) return "a multicast address";
    if (bits == 0xffffffff) return "the broadcast address";
    return {};
}

std::string v6_refusal(const ip::address_v6& a) {
    auto b = a.to_bytes();
    if (a.is_loopback()) return "a loopback address";
    if (a.is_unspecified()) return "an unspecified address";
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "a link-local address";
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "a site-local address";
    if ((b[0] & 0xfe) == 0xfc) return "a private address";
    if (b[0] == 0xff) return "a multicast address";
    return {};
}

}  // namespace

ip::address unmapped(const ip::address& a) {
    if (a.is_v6() && a.to_v6().is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, a.to_v6());
    return a;
}

RequestReader::RequestReader() {
    parser_.header_limit(header_limit_bytes);
    parser_.eager(false);
}

RequestReader::State RequestReader::feed(std::string_view bytes) {
    if (state_ != State::need_more) return state_;
    buffer_.append(bytes);
    while (!parser_.is_header_done()) {
        boost::system::error_code ec;
        auto used = parser_.put(asio::buffer(buffer_.data() + consumed_, buffer_.size() - consumed_), ec);
        consumed_ += used;
        if (ec == http::error::need_more) {
            // Beast keeps no bytes of its own: what it has not consumed is offered again.
            if (buffer_.size() - consumed_ > header_limit_bytes) return state_ = State::too_large;
            return state_;
        }
        if (ec == http::error::header_limit) return state_ = State::too_large;
        if (ec) return state_ = State::malformed;
        if (used == 0) return state_;
    }
    return state_ = State::complete;
}

std::string_view RequestReader::leftover() const {
    if (state_ != State::complete) return {};
    return std::string_view(buffer_).substr(consumed_);
}

RequestVerdict RequestReader::judge(std::span<const HostPattern> allow) const {
    if (state_ == State::too_large) return malformed(431, "the request header is larger than 16 KiB");
    if (state_ != State::complete) return malformed(400, "not an HTTP request header");
    const auto& req = parser_.get();
    if (req.version() != 10 && req.version() != 11) return malformed(400, "only HTTP/1.0 and HTTP/1.1 are served");
    if (req.method() == http::verb::connect) return judge_connect(req, allow);
    return judge_absolute(req, allow);
}

RequestVerdict judge_request_bytes(std::string_view bytes, std::span<const HostPattern> allow) {
    RequestReader reader;
    reader.feed(bytes);
    return reader.judge(allow);
}

std::string address_refusal(const ip::address& address, std::span<const ip::address> own) {
    auto a = unmapped(address);
    auto why = a.is_v4() ? v4_refusal(a.to_v4()) : v6_refusal(a.to_v6());
    if (!why.empty()) return why;
    for (const auto& mine : own)
        if (unmapped(mine) == a) return "one of this host's own addresses";
    return {};
}

std::vector<ip::address> own_addresses() {
    std::vector<ip::address> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (auto* i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr) continue;
        if (i->ifa_addr->sa_family == AF_INET) {
            const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
            out.push_back(ip::address_v4(ntohl(in->sin_addr.s_addr)));
        } else if (i->ifa_addr->sa_family == AF_INET6) {
            const auto* in6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
            ip::address_v6::bytes_type bytes;
            std::copy(std::begin(in6->sin6_addr.s6_addr), std::end(in6->sin6_addr.s6_addr), bytes.begin());
            out.push_back(ip::address_v6(bytes));
        }
    }
    freeifaddrs(list);
    return out;
}

}  // namespace confine::proxy
