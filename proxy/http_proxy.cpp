// The proxy's connections: one Session per client, on one single-threaded io_context.
// A session reads the request header, judges it (request.cpp), resolves the name on this
// side, refuses the addresses a name can be made to point at, connects, and relays bytes
// both ways untouched.
#include "http_proxy.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <nlohmann/json.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>

namespace confine::proxy {
namespace {

namespace http = boost::beast::http;
namespace ip = asio::ip;
using tcp = ip::tcp;
using boost::system::error_code;

constexpr std::size_t relay_buffer_bytes = 16 * 1024;
// After an answer the proxy gives itself (400, 403, 502...), what the client still sends
// is read and dropped for a while, so that closing does not reset the answer away.
constexpr auto drain_time = std::chrono::seconds(5);
constexpr std::size_t drain_limit_bytes = 1 << 20;
constexpr auto accept_retry_delay = std::chrono::milliseconds(100);

// "host:port", "[2001:db8::1]:443".
std::string display(const std::string& host, std::uint16_t port) {
    auto h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return h + ":" + std::to_string(port);
}

struct Traffic {
    std::string host;
    std::uint16_t port = 0;
    bool allowed = false;
    std::uint64_t bytes_up = 0, bytes_down = 0, connections = 0;
    std::string reason;
};

// The report's entries, one per (host, port, allowed), in the order first seen.
class Ledger {
public:
    std::size_t record(const std::string& host, std::uint16_t port, bool allowed, const std::string& reason) {
        auto [at, added] = index_.try_emplace({host, port, allowed}, entries_.size());
        if (added) entries_.push_back({host, port, allowed, 0, 0, 0, reason});
        ++entries_[at->second].connections;
        return at->second;
    }
    Traffic& operator[](std::size_t i) { return entries_[i]; }
    nlohmann::ordered_json json() const {
        auto out = nlohmann::ordered_json::array();
        for (const auto& t : entries_) {
            nlohmann::ordered_json e{{"host", t.host}, {"port", t.port}, {"allowed", t.allowed}, {"bytes_up", t.bytes_up},
                             {"bytes_down", t.bytes_down}, {"connections", t.connections}};
            if (!t.allowed) e["reason"] = t.reason;
            out.push_back(std::move(e));
        }
        return out;
    }

private:
    std::vector<Traffic> entries_;
    std::map<std::tuple<std::string, std::uint16_t, bool>, std::size_t> index_;
};

class Session;

}  // namespace

struct HttpProxy::State : std::enable_shared_from_this<HttpProxy::State> {
    State(asio::io_context& io, ProxyOptions o) : io(io), options(std::move(o)), own(own_addresses()) {}
    void notice(const std::string& line) const {
        if (options.on_notice) options.on_notice(line);
    }
    void accept(tcp::acceptor& acceptor);
    void serve(tcp::socket client);
    void receive();
    void watch_lifetime();
    void stop();

    asio::io_context& io;
    ProxyOptions options;
    std::vector<ip::address> own;
    Ledger ledger;
    std::size_t listeners = 0;
    std::uint64_t over_limit = 0;  // connections refused for max_connections
    std::size_t turning_away = 0;  // of `sessions`, those answering 503
    bool stopped = false;
    std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
    std::unique_ptr<asio::local::stream_protocol::socket> receiver;
    std::unique_ptr<asio::posix::stream_descriptor> lifetime;
    char lifetime_byte = 0;
    std::unique_ptr<asio::signal_set> signals;
    std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
public:
    Session(std::shared_ptr<HttpProxy::State> proxy, tcp::socket client)
        : proxy_(std::move(proxy)), client_(std::move(client)), upstream_(proxy_->io), resolver_(proxy_->io),
          timer_(proxy_->io) {}
    ~Session() {
        proxy_->sessions.erase(this);
        if (turning_away_) --proxy_->turning_away;
    }

    void start() {
        arm_timer(proxy_->options.header_timeout);
        read_header();
    }

    // A connection past max_connections: answered 503 at once, its request unread, and
    // not one of those served.
    void turn_away() {
        turning_away_ = true;
        ++proxy_->turning_away;
        arm_timer(drain_time);
        respond(503, "confine: this run's proxy serves at most " + std::to_string(proxy_->options.max_connections) +
                         " connections at once");
    }

    void close() {
        if (closed_) return;
        closed_ = true;
        error_code ignored;
        client_.close(ignored);
        upstream_.close(ignored);
        resolver_.cancel();
        timer_.cancel();
    }

private:
    struct Direction {
        tcp::socket* from;
        tcp::socket* to;
        bool up;
        bool done = false;
        std::array<char, relay_buffer_bytes> buffer{};
    };

    // The session's one timer, for what it waits on now (the header, the answer's drain);
    // a wait it replaced, whose handler was already on its way, does nothing.
    void arm_timer(std::chrono::steady_clock::duration d) {
        timer_.expires_after(d);
        timer_.async_wait([this, self = shared_from_this(), armed = ++armed_](error_code ec) {
            if (!ec && armed == armed_) close();
        });
    }

    // A relay through which no byte has passed either way for idle_timeout is closed.
    void watch_idle() {
        timer_.expires_at(last_active_ + proxy_->options.idle_timeout);
        timer_.async_wait([this, self = shared_from_this(), armed = ++armed_](error_code ec) {
            if (ec || closed_ || armed != armed_) return;
            if (std::chrono::steady_clock::now() - last_active_ >= proxy_->options.idle_timeout) return close();
            watch_idle();
        });
    }

    void read_header() {
        client_.async_read_some(asio::buffer(up_.buffer), [this, self = shared_from_this()](error_code ec, std::size_t n) {
            if (ec || closed_) return close();
            if (reader_.feed({up_.buffer.data(), n}) == RequestReader::State::need_more) return read_header();
            judge();
        });
    }

    void judge() {
        verdict_ = reader_.judge(proxy_->options.allow);
        switch (verdict_.kind) {
            case RequestVerdict::Kind::malformed: return respond(verdict_.status, "confine: " + verdict_.reason);
            case RequestVerdict::Kind::refuse:
                return refuse(verdict_.reason, 403,
                              "confine: " + display(verdict_.host, verdict_.port) + " is not in this run's allow_hosts");
            case RequestVerdict::Kind::serve: return resolve();
        }
    }

    // A request not let through: in the report, said as it happens, and answered.
    void refuse(const std::string& reason, unsigned status, const std::string& body) {
        proxy_->ledger.record(verdict_.host, verdict_.port, false, reason);
        if (proxy_->options.on_refusal) proxy_->options.on_refusal(display(verdict_.host, verdict_.port) + ": " + reason);
        respond(status, body);
    }

    void respond(unsigned status, const std::string& body) {
        http::response<http::string_body> res{static_cast<http::status>(status), 11};
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.set(http::field::connection, "close");
        res.body() = body + "\n";
        res.prepare_payload();
        std::ostringstream out;
        out << res;
        answer_ = out.str();
        asio::async_write(client_, asio::buffer(answer_), [this, self = shared_from_this()](error_code ec, std::size_t) {
            if (ec || closed_) return close();
            error_code ignored;
            client_.shutdown(tcp::socket::shutdown_send, ignored);
            arm_timer(drain_time);
            drain();
        });
    }

    void drain() {
        client_.async_read_some(asio::buffer(up_.buffer), [this, self = shared_from_this()](error_code ec, std::size_t n) {
            drained_ += n;
            if (ec || closed_ || drained_ > drain_limit_bytes) return close();
            drain();
        });
    }

    void resolve() {
        resolver_.async_resolve(verdict_.host, std::to_string(verdict_.port), tcp::resolver::numeric_service,
                                [this, self = shared_from_this()](error_code ec, tcp::resolver::results_type results) {
                                    if (closed_) return;
                                    if (ec)
                                        return refuse(verdict_.host + " does not resolve", 502,
                                                      "confine: " + verdict_.host + " does not resolve");
                                    check_addresses(results);
                                });
    }

    // Refuses every address that is loopback, private, this host's own... unless that
    // very address is allowed; connects to what is left. The addresses checked are the
    // addresses connected to: a name cannot point elsewhere in between.
    void check_addresses(const tcp::resolver::results_type& results) {
        const auto& allow = proxy_->options.allow;
        std::vector<tcp::endpoint> usable;
        std::string refused;
        for (const auto& r : results) {
            auto a = r.endpoint().address();
            auto why = address_refusal(a, proxy_->own);
            bool listed = host_allowed(allow, a.to_string(), verdict_.port) ||
                          host_allowed(allow, unmapped(a).to_string(), verdict_.port);
            if (why.empty() || listed) {
                usable.push_back(r.endpoint());
            } else if (refused.empty()) {
                refused = verdict_.host + " resolves to " + unmapped(a).to_string() + ", " + why;
            }
        }
        if (usable.empty())
            return refuse(refused, 403, "confine: " + display(verdict_.host, verdict_.port) + " refused: " + refused);
        connect(std::move(usable));
    }

    void connect(std::vector<tcp::endpoint> usable) {
        entry_ = proxy_->ledger.record(verdict_.host, verdict_.port, true, "");
        usable_ = std::move(usable);
        connect_next(0);
    }

    // Each usable address in turn, until one connects; the answer names the last error as
    // it was (a socket that could not be made among them: asio::async_connect over a range
    // says only "Operation canceled" for that).
    void connect_next(std::size_t i) {
        error_code ec;
        upstream_.close(ec);
        upstream_.open(usable_[i].protocol(), ec);
        if (ec) return cannot_connect(i, ec);
        upstream_.async_connect(usable_[i], [this, self = shared_from_this(), i](error_code ec) {
            if (closed_) return;
            if (ec) return cannot_connect(i, ec);
            relay();
        });
    }

    void cannot_connect(std::size_t i, error_code ec) {
        if (i + 1 < usable_.size()) return connect_next(i + 1);
        respond(502, "confine: cannot connect to " + display(verdict_.host, verdict_.port) + ": " + ec.message());
    }

    void relay() {
        last_active_ = std::chrono::steady_clock::now();
        watch_idle();
        up_ = {&client_, &upstream_, true};
        down_ = {&upstream_, &client_, false};
        first_up_ = verdict_.form == RequestVerdict::Form::absolute ? verdict_.upstream_header : std::string{};
        first_up_.append(reader_.leftover());
        if (verdict_.form == RequestVerdict::Form::absolute) return start_relay();
        answer_ = "HTTP/1.1 200 Connection established\r\n\r\n";
        asio::async_write(client_, asio::buffer(answer_), [this, self = shared_from_this()](error_code ec, std::size_t) {
            if (ec || closed_) return close();
            start_relay();
        });
    }

    void start_relay() {
        pump(down_);
        if (first_up_.empty()) return pump(up_);
        asio::async_write(upstream_, asio::buffer(first_up_), [this, self = shared_from_this()](error_code ec, std::size_t n) {
            if (ec || closed_) return close();
            count(up_, n);
            pump(up_);
        });
    }

    void pump(Direction& d) {
        d.from->async_read_some(asio::buffer(d.buffer), [this, self = shared_from_this(), &d](error_code ec, std::size_t n) {
            if (closed_) return;
            if (n > 0) last_active_ = std::chrono::steady_clock::now();
            if (ec == asio::error::eof) return finish(d);
            if (ec) return close();
            asio::async_write(*d.to, asio::buffer(d.buffer.data(), n), [this, self, &d](error_code ec, std::size_t n) {
                if (ec || closed_) return close();
                count(d, n);
                pump(d);
            });
        });
    }

    // One side said it sends no more: so the other is told, and the session ends when
    // both have.
    void finish(Direction& d) {
        d.done = true;
        error_code ignored;
        d.to->shutdown(tcp::socket::shutdown_send, ignored);
        if (up_.done && down_.done) close();
    }

    void count(const Direction& d, std::size_t n) {
        auto& entry = proxy_->ledger[entry_];
        (d.up ? entry.bytes_up : entry.bytes_down) += n;
    }

    std::shared_ptr<HttpProxy::State> proxy_;
    tcp::socket client_, upstream_;
    tcp::resolver resolver_;
    asio::steady_timer timer_;
    RequestReader reader_;
    RequestVerdict verdict_;
    Direction up_{&client_, &upstream_, true}, down_{&upstream_, &client_, false};
    std::string answer_, first_up_;
    std::vector<tcp::endpoint> usable_;
    std::size_t entry_ = 0, drained_ = 0;
    std::uint64_t armed_ = 0;
    std::chrono::steady_clock::time_point last_active_;
    bool closed_ = false, turning_away_ = false;
};

std::string errno_text() { return std::strerror(errno); }

// The family of `fd` if it is what the proxy takes: a unix stream socket (`unix_socket`),
// or else a listening TCP socket (AF_INET or AF_INET6); otherwise why not, in one line.
std::expected<int, std::string> listening_family(int fd, bool unix_socket) {
    int type = 0, listening = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
        return std::unexpected("descriptor " + std::to_string(fd) + " is not a socket (" + errno_text() + ")");
    sockaddr_storage name{};
    socklen_t name_len = sizeof name;
    if (type != SOCK_STREAM || getsockname(fd, reinterpret_cast<sockaddr*>(&name), &name_len) != 0)
        return std::unexpected("descriptor " + std::to_string(fd) + " is not a stream socket");
    int family = name.ss_family;
    if (unix_socket) {
        if (family != AF_UNIX) return std::unexpected("descriptor " + std::to_string(fd) + " is not a unix socket");
        return family;
    }
    if (family != AF_INET && family != AF_INET6)
        return std::unexpected("descriptor " + std::to_string(fd) + " is not a TCP socket");
    len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
        return std::unexpected("descriptor " + std::to_string(fd) + " is a TCP socket that is not listening");
    return family;
}

// The descriptors one message on a unix socket carries (SCM_RIGHTS), and whether it
// was the end of the stream (or an error) rather than a message.
struct Received {
    std::vector<int> fds;
    bool end = false;
    bool again = false;
};

Received receive_message(int fd) {
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    int flags = MSG_DONTWAIT;
#ifdef MSG_CMSG_CLOEXEC
    flags |= MSG_CMSG_CLOEXEC;
#endif
    Received r;
    auto n = recvmsg(fd, &msg, flags);
    if (n < 0) {
        (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? r.again : r.end) = true;
        return r;
    }
    for (auto* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        auto count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int received = -1;
            std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            r.fds.push_back(received);
        }
    }
    r.end = n == 0 && r.fds.empty();
    return r;
}

}  // namespace

namespace {

std::expected<void, std::string> listen_on(HttpProxy::State& state, int fd) {
    auto family = listening_family(fd, false);
    if (!family) {
        ::close(fd);
        return std::unexpected(family.error());
    }
    auto acceptor = std::make_unique<tcp::acceptor>(state.io);
    error_code ec;
    acceptor->assign(*family == AF_INET ? tcp::v4() : tcp::v6(), fd, ec);
    if (ec) {
        ::close(fd);
        return std::unexpected("descriptor " + std::to_string(fd) + ": " + ec.message());
    }
    state.acceptors.push_back(std::move(acceptor));
    ++state.listeners;
    state.accept(*state.acceptors.back());
    return {};
}

}  // namespace

// A connection accepted: served, or, with max_connections served already, answered 503
// (as many as that at once at most; past them, closed unanswered) and counted.
void HttpProxy::State::serve(tcp::socket client) {
    const bool over = sessions.size() - turning_away >= options.max_connections;
    if (over) ++over_limit;
    if (over && turning_away >= options.max_connections) return;
    auto session = std::make_shared<Session>(shared_from_this(), std::move(client));
    sessions.emplace(session.get(), session);
    if (over) return session->turn_away();
    session->start();
}

void HttpProxy::State::accept(tcp::acceptor& acceptor) {
    acceptor.async_accept([self = shared_from_this(), &acceptor](error_code ec, tcp::socket client) {
        if (self->stopped || ec == asio::error::operation_aborted) return;
        if (ec) {
            self->notice("accepting a connection failed: " + ec.message());
            auto retry = std::make_shared<asio::steady_timer>(self->io, accept_retry_delay);
            retry->async_wait([self, retry, &acceptor](error_code) {
                if (!self->stopped) self->accept(acceptor);
            });
            return;
        }
        self->serve(std::move(client));
        self->accept(acceptor);
    });
}

// Any byte the host writes is read and dropped: only the end of the pipe counts.
void HttpProxy::State::watch_lifetime() {
    lifetime->async_read_some(asio::buffer(&lifetime_byte, 1), [self = shared_from_this()](error_code ec, std::size_t) {
        if (self->stopped) return;
        if (ec) return self->stop();
        self->watch_lifetime();
    });
}

void HttpProxy::State::stop() {
    if (stopped) return;
    stopped = true;
    error_code ignored;
    for (auto& a : acceptors) a->close(ignored);
    // A listener the sandbox handed over just before the run ended still counts: the host
    // judges by the count whether the sandbox reached its command.
    if (receiver && receiver->is_open())
        for (Received r = receive_message(receiver->native_handle()); !r.end && !r.again; r = receive_message(receiver->native_handle())) {
            if (!r.fds.empty() && listening_family(r.fds.front(), false)) ++listeners;
            for (int fd : r.fds) ::close(fd);
        }
    if (receiver) receiver->close(ignored);
    if (lifetime) lifetime->close(ignored);
    if (signals) signals->cancel(ignored);
    std::vector<std::shared_ptr<Session>> live;
    for (auto& [raw, weak] : sessions)
        if (auto session = weak.lock()) live.push_back(std::move(session));
    for (auto& session : live) session->close();
}

void HttpProxy::State::receive() {
    receiver->async_wait(asio::socket_base::wait_read, [self = shared_from_this()](error_code ec) {
        if (ec || self->stopped) return;
        auto r = receive_message(self->receiver->native_handle());
        if (r.end) {
            error_code ignored;
            self->receiver->close(ignored);
            return;
        }
        if (!r.again && r.fds.empty()) self->notice("a message on the listener socket carried no descriptor");
        for (std::size_t i = 0; i < r.fds.size(); ++i) {
            if (i > 0) {
                ::close(r.fds[i]);
                continue;
            }
            auto added = listen_on(*self, r.fds[i]);
            if (!added) self->notice("a descriptor received: " + added.error());
        }
        if (r.fds.size() > 1) self->notice("a message carried more than one descriptor: the others were closed");
        self->receive();
    });
}

HttpProxy::HttpProxy(asio::io_context& io, ProxyOptions options)
    : state_(std::make_shared<State>(io, std::move(options))) {}

HttpProxy::~HttpProxy() { stop(); }

std::expected<void, std::string> HttpProxy::add_listener(int fd) {
    if (state_->stopped) {
        ::close(fd);
        return std::unexpected("the proxy has stopped");
    }
    return listen_on(*state_, fd);
}

std::expected<void, std::string> HttpProxy::receive_listeners(int fd) {
    auto family = listening_family(fd, true);
    if (!family) {
        ::close(fd);
        return std::unexpected(family.error());
    }
    state_->receiver = std::make_unique<asio::local::stream_protocol::socket>(state_->io);
    error_code ec;
    state_->receiver->assign(asio::local::stream_protocol(), fd, ec);
    if (ec) {
        ::close(fd);
        return std::unexpected("descriptor " + std::to_string(fd) + ": " + ec.message());
    }
    state_->receive();
    return {};
}

void HttpProxy::watch_lifetime(int fd) {
    state_->lifetime = std::make_unique<asio::posix::stream_descriptor>(state_->io, fd);
    state_->watch_lifetime();
}

void HttpProxy::watch_signals() {
    state_->signals = std::make_unique<asio::signal_set>(state_->io, SIGTERM, SIGINT);
    state_->signals->async_wait([self = state_](error_code ec, int) {
        if (!ec) self->stop();
    });
}

void HttpProxy::stop() { state_->stop(); }

bool HttpProxy::stopped() const { return state_->stopped; }

std::string HttpProxy::report() const {
    nlohmann::ordered_json doc{
        {"listeners", state_->listeners}, {"over_limit", state_->over_limit}, {"requests", state_->ledger.json()}};
    return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace confine::proxy
