// confine's per-run HTTP and HTTPS proxy (issue 33; docs/design.md §12, the network
// dimension "through the proxy"): a confined command reaches exactly the hosts its policy
// allows, by CONNECT (HTTPS, relayed untouched: the proxy sees only the name and port) or
// by an absolute-form request (plain HTTP, one request per connection). The proxy runs
// outside the sandbox for the run's lifetime, resolves names itself, and refuses what a
// name can be made to point at (loopback, link-local, private, multicast, broadcast and
// this host's own addresses) unless that very address is allowed.
//
//   boost::asio::io_context io;
//   confine::proxy::HttpProxy proxy(io, {.allow = patterns});
//   if (auto added = proxy.add_listener(fd); !added) die(added.error());
//   proxy.watch_lifetime(lifetime_fd);   // EOF on it: stop()
//   proxy.watch_signals();               // SIGTERM, SIGINT: stop()
//   io.run();                            // returns after stop(), every connection closed
//   write(report_fd, proxy.report());
//
// The request header is read by Boost.Beast's parser; nothing here parses HTTP by hand
// beyond taking a CONNECT target or an absolute URL's authority apart.
#pragma once

#include <confine/allow_hosts.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <sys/select.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine::proxy {

namespace asio = boost::asio;

// The largest request header read (Beast's header limit): a larger one is answered 431.
inline constexpr std::uint32_t header_limit_bytes = 16 * 1024;
// A relay (a CONNECT tunnel, a forwarded http:// request) through which no byte has passed
// either way for this long is closed (--idle-timeout).
inline constexpr std::chrono::seconds default_idle_timeout{300};
// The descriptors its event loop can wait on: those below FD_SETSIZE where Asio waits with
// select() (the portable build on Linux, which leaves epoll out), every one otherwise.
#if defined(BOOST_ASIO_HAS_EPOLL) || defined(BOOST_ASIO_HAS_KQUEUE) || defined(BOOST_ASIO_HAS_DEV_POLL) || defined(BOOST_ASIO_HAS_IOCP)
inline constexpr std::size_t descriptor_ceiling = SIZE_MAX;
#else
inline constexpr std::size_t descriptor_ceiling = FD_SETSIZE;
#endif
// The descriptors the proxy holds: two for a connection served (the client's and the
// upstream's), one for a connection answered 503 (as many as are served, at most), and
// these of its own besides (listeners, pipes, Asio's, the resolver's files and sockets).
inline constexpr std::size_t own_descriptors = 64;
// The connections served at once (--max-connections): one more is answered 503. 512, or
// as many as its event loop can wait on ((FD_SETSIZE - 64) / 3 = 320 with select()).
inline constexpr std::size_t default_max_connections = std::min<std::size_t>(512, (descriptor_ceiling - own_descriptors) / 3);

// What a client's request header asks for, judged on its own (nothing resolved yet).
struct RequestVerdict {
    enum class Kind {
        serve,      // allowed by the patterns: resolve `host`, check, connect
        refuse,     // well formed, but `host`:`port` is not allowed (403)
        malformed,  // not a request this proxy serves (`status`: 400 or 431)
    };
    enum class Form { connect, absolute };
    Kind kind = Kind::malformed;
    unsigned status = 400;  // the answer to give when not served
    Form form = Form::connect;
    std::string host;       // lower-cased, brackets removed from an IPv6 literal
    std::uint16_t port = 0;
    // For an absolute-form request: the header to send upstream (origin-form target,
    // Host set to the target's authority, Proxy-Connection and Proxy-Authorization
    // dropped, Connection: close).
    std::string upstream_header;
    std::string reason;     // why refused or malformed, one line
};

// Reads one request header from the bytes a client sends, as they come.
class RequestReader {
public:
    enum class State { need_more, complete, malformed, too_large };

    RequestReader();
    // Adds `bytes`; says whether the header is complete. Once it is not `need_more`, the
    // state stays as it is and further bytes are ignored.
    State feed(std::string_view bytes);
    State state() const { return state_; }
    // The bytes after the header (a request body, or what a client sends right after its
    // CONNECT): sent upstream once connected.
    std::string_view leftover() const;
    // The verdict on a complete header; `malformed` (400 or 431) in any other state.
    RequestVerdict judge(std::span<const HostPattern> allow) const;

private:
    boost::beast::http::request_parser<boost::beast::http::empty_body> parser_;
    std::string buffer_;
    std::size_t consumed_ = 0;
    State state_ = State::need_more;
};

// The verdict on `bytes` read as one client's whole input (the fuzzer's entry).
RequestVerdict judge_request_bytes(std::string_view bytes, std::span<const HostPattern> allow);

// Why a resolved address may not be reached unless it is itself allowed, or empty:
// "a loopback address", "a private address", "one of this host's own addresses"...
// An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
std::string address_refusal(const asio::ip::address& address, std::span<const asio::ip::address> own);

// `address` as the proxy judges it: an IPv4-mapped IPv6 address as the IPv4 address it
// carries, any other as it is.
asio::ip::address unmapped(const asio::ip::address& address);

// This host's own interface addresses (getifaddrs), as the proxy judges them.
std::vector<asio::ip::address> own_addresses();

struct ProxyOptions {
    std::vector<HostPattern> allow;
    // Each refusal as it happens, as "HOST:PORT: REASON" (--verbose prints it).
    std::function<void(const std::string&)> on_refusal;
    // Something that is not a client's doing (a descriptor received that is not a
    // listening socket, an accept failing): one line.
    std::function<void(const std::string&)> on_notice;
    std::chrono::milliseconds header_timeout{std::chrono::seconds(30)};
    // No byte relayed either way for this long: the relay is closed.
    std::chrono::milliseconds idle_timeout{default_idle_timeout};
    // The connections served at once. A connection past them is answered 503 (as many
    // again at most at once; past those, closed unanswered) and counted (`over_limit`).
    std::size_t max_connections = default_max_connections;
};

class HttpProxy {
public:
    HttpProxy(asio::io_context& io, ProxyOptions options);
    ~HttpProxy();
    HttpProxy(const HttpProxy&) = delete;
    HttpProxy& operator=(const HttpProxy&) = delete;

    // Takes `fd`, a listening TCP socket, and accepts on it until stop(). An error (one
    // line) if it is not one; `fd` is closed either way.
    std::expected<void, std::string> add_listener(int fd);
    // Takes `fd`, a unix stream socket: each message on it carries one listening TCP
    // socket (SCM_RIGHTS, one byte of payload), accepted on as add_listener's. EOF on it
    // ends the receiving, not the proxy.
    std::expected<void, std::string> receive_listeners(int fd);
    // Takes `fd`, the read end of a pipe the host holds: EOF or an error on it is stop().
    void watch_lifetime(int fd);
    // SIGTERM and SIGINT are stop().
    void watch_signals();
    // Stops accepting and receiving, closes every connection: the io_context's run()
    // returns once their handlers have run.
    void stop();
    // Whether stop() has been called (or SIGTERM, SIGINT, the lifetime's end).
    bool stopped() const;

    // The run's report, one JSON document: {"listeners": K, "over_limit": N, "requests":
    // [{"host", "port", "allowed", "bytes_up", "bytes_down", "connections", "reason" if
    // refused}]}, one entry per (host, port, allowed) in the order first seen; `over_limit`
    // the connections refused because max_connections were being served.
    std::string report() const;

    struct State;

private:
    std::shared_ptr<State> state_;
};

}  // namespace confine::proxy
