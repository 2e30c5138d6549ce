// confine-proxy (proxy/http_proxy.hpp): the request reader and the address rule in
// process, and the built program against a local upstream on 127.0.0.1, run as confinectl
// runs it (descriptors for the listener, the lifetime pipe and the report).
#include "http_proxy.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <mutex>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace ip = boost::asio::ip;
using confine::proxy::RequestVerdict;
using Kind = RequestVerdict::Kind;

std::vector<confine::HostPattern> patterns(std::initializer_list<std::string_view> texts) {
    std::vector<confine::HostPattern> out;
    for (auto t : texts) out.push_back(*confine::parse_host_pattern(t));
    return out;
}

// --- descriptors, sockets and the program ---------------------------------------------

// Closed at exec: a proxy started gets only the descriptors it is given.
int cloexec(int fd) {
    if (fd >= 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

int pipe_cloexec(int fds[2]) {
    int r = ::pipe(fds);
    if (r == 0) {
        cloexec(fds[0]);
        cloexec(fds[1]);
    }
    return r;
}

struct Fd {
    int fd = -1;
    Fd() = default;
    explicit Fd(int f) : fd(f) {}
    Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        reset();
        fd = std::exchange(o.fd, -1);
        return *this;
    }
    ~Fd() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

Fd listening_socket(std::uint16_t& port, int backlog = 64) {
    Fd s(cloexec(::socket(AF_INET, SOCK_STREAM, 0)));
    REQUIRE(s.fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(s.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(s.fd, backlog) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(s.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
    return s;
}

// A socket whose reads give up after a while instead of hanging the test binary.
void bounded(int fd) {
    timeval tv{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

Fd connect_to(std::uint16_t port) {
    Fd s(cloexec(::socket(AF_INET, SOCK_STREAM, 0)));
    REQUIRE(s.fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    REQUIRE(::connect(s.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    bounded(s.fd);
    return s;
}

void send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the proxy may close on what it refuses
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

std::string read_all(int fd) {
    std::string out;
    char buf[8192];
    while (true) {
        auto n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

// Reads up to and including the blank line that ends a header.
std::string read_header(int fd) {
    std::string out;
    char c;
    while (out.find("\r\n\r\n") == std::string::npos && ::read(fd, &c, 1) == 1) out += c;
    return out;
}

// One request through the proxy, answered: everything until the proxy closes.
std::string round_trip(std::uint16_t proxy_port, std::string_view request) {
    auto s = connect_to(proxy_port);
    send_all(s.fd, request);
    return read_all(s.fd);
}

struct Finished {
    int status = -1;
    std::string report, err;
    nlohmann::json json() const { return nlohmann::json::parse(report); }
};

// confine-proxy with `listener` as descriptor 3, the lifetime pipe's read end as 4 and
// the report pipe's write end as 5, as `mode` ("--listen-fd" or "--receive-fd").
class Proxy {
public:
    // `nofile`: the descriptor limits it starts with (else this process's).
    Proxy(int listener, std::vector<std::string> extra, std::string mode = "--listen-fd", const rlimit* nofile = nullptr) {
        int life[2], report[2], err[2];
        REQUIRE(pipe_cloexec(life) == 0);
        REQUIRE(pipe_cloexec(report) == 0);
        REQUIRE(pipe_cloexec(err) == 0);
        std::vector<std::string> args{CONFINE_PROXY, mode, "3", "--lifetime-fd", "4", "--report-fd", "5"};
        args.insert(args.end(), extra.begin(), extra.end());
        pid_ = spawn(args, {listener, life[0], report[1]}, err[1], nofile);
        ::close(life[0]);
        ::close(report[1]);
        ::close(err[1]);
        lifetime_ = Fd(life[1]);
        report_ = Fd(report[0]);
        err_ = Fd(err[0]);
    }
    ~Proxy() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    // The end of the run as confinectl makes it: the lifetime pipe closed.
    Finished end() {
        lifetime_.reset();
        return collect();
    }
    Finished end_by_signal(int sig) {
        ::kill(pid_, sig);
        return collect();
    }
    // Runs `args` with `fds` as descriptors 3, 4, 5... and stderr to `err`.
    static pid_t spawn(const std::vector<std::string>& args, const std::vector<int>& fds, int err, const rlimit* nofile = nullptr) {
        std::vector<char*> argv;
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        REQUIRE(fds.size() <= 8);
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            // Nothing allocated here (the test binary has threads): above every descriptor
            // the child keeps, closed at exec, then down to 3, 4, 5.
            int high[8];
            for (std::size_t i = 0; i < fds.size(); ++i) high[i] = fds[i] >= 0 ? ::fcntl(fds[i], F_DUPFD_CLOEXEC, 100) : -1;
            for (std::size_t i = 0; i < fds.size(); ++i)
                if (high[i] >= 0) ::dup2(high[i], static_cast<int>(3 + i));
            ::dup2(err, 2);
            if (nofile && ::setrlimit(RLIMIT_NOFILE, nofile) != 0) ::_exit(126);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        return pid;
    }

private:
    Finished collect() {
        Finished f;
        f.report = read_all(report_.fd);
        f.err = read_all(err_.fd);
        int status = 0;
        REQUIRE(::waitpid(pid_, &status, 0) == pid_);
        pid_ = -1;
        f.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return f;
    }

    pid_t pid_ = -1;
    Fd lifetime_, report_, err_;
};

// An upstream on 127.0.0.1 that takes one connection and runs `serve` on it.
class Upstream {
public:
    explicit Upstream(std::function<void(int)> serve) {
        listener_ = listening_socket(port_);
        thread_ = std::thread([this, serve = std::move(serve)] {
            Fd c(cloexec(::accept(listener_.fd, nullptr, nullptr)));
            if (c.fd < 0) return;
            bounded(c.fd);
            serve(c.fd);
        });
    }
    ~Upstream() {
        ::shutdown(listener_.fd, SHUT_RDWR);
        thread_.join();
    }
    std::uint16_t port() const { return port_; }

private:
    Fd listener_;
    std::uint16_t port_ = 0;
    std::thread thread_;
};

// An upstream on 127.0.0.1 that takes every connection, each on a thread of its own: reads
// a request header and answers `response`, then closes. Counts what it served.
class ManyUpstream {
public:
    explicit ManyUpstream(std::string response) : response_(std::move(response)) {
        listener_ = listening_socket(port_, 1024);
        accepting_ = std::thread([this] {
            while (true) {
                int c = cloexec(::accept(listener_.fd, nullptr, nullptr));
                if (c < 0) return;
                bounded(c);
                std::lock_guard lock(mutex_);
                workers_.emplace_back([this, c] {
                    Fd conn(c);
                    if (read_header(conn.fd).ends_with("\r\n\r\n")) {
                        send_all(conn.fd, response_);
                        ++served_;
                    }
                });
            }
        });
    }
    ~ManyUpstream() {
        ::shutdown(listener_.fd, SHUT_RDWR);
        accepting_.join();
        std::lock_guard lock(mutex_);
        for (auto& w : workers_) w.join();
    }
    std::uint16_t port() const { return port_; }
    int served() const { return served_; }

private:
    std::string response_;
    Fd listener_;
    std::uint16_t port_ = 0;
    std::mutex mutex_;
    std::vector<std::thread> workers_;
    std::atomic<int> served_{0};
    std::thread accepting_;
};

// A connection to 127.0.0.1:`port`, or -1: for client threads, where Catch's assertions
// may not be used.
int try_connect(std::uint16_t port) {
    int s = cloexec(::socket(AF_INET, SOCK_STREAM, 0));
    if (s < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(s);
        return -1;
    }
    bounded(s);
    return s;
}

const nlohmann::json* entry(const nlohmann::json& report, std::string_view host, int port, bool allowed) {
    for (const auto& e : report.at("requests"))
        if (e.at("host") == host && e.at("port") == port && e.at("allowed") == allowed) return &e;
    return nullptr;
}

}  // namespace

// --- in process ------------------------------------------------------------------------

TEST_CASE("the request reader serves CONNECT and absolute-form http:// requests and nothing else", "[proxy]") {
    auto allow = patterns({"example.org", "*.example.net", "192.0.2.1:8080", "[2001:db8::1]:8443"});
    auto v = confine::proxy::judge_request_bytes("CONNECT Example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n", allow);
    CHECK(v.kind == Kind::serve);
    CHECK(v.form == RequestVerdict::Form::connect);
    CHECK(v.host == "example.org");
    CHECK(v.port == 443);

    v = confine::proxy::judge_request_bytes("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", allow);
    CHECK(v.kind == Kind::serve);
    CHECK(v.host == "2001:db8::1");

    v = confine::proxy::judge_request_bytes(
        "POST http://a.example.net/p/q?x=1#frag HTTP/1.1\r\nHost: elsewhere.org\r\nProxy-Connection: keep-alive\r\n"
        "Proxy-Authorization: Basic eA==\r\nContent-Length: 3\r\n\r\nabc",
        allow);
    REQUIRE(v.kind == Kind::serve);
    CHECK(v.form == RequestVerdict::Form::absolute);
    CHECK(v.port == 80);
    CHECK(v.upstream_header.starts_with("POST /p/q?x=1 HTTP/1.1\r\n"));
    CHECK(v.upstream_header.find("Host: a.example.net\r\n") != std::string::npos);
    CHECK(v.upstream_header.find("elsewhere") == std::string::npos);
    CHECK(v.upstream_header.find("Proxy-") == std::string::npos);
    CHECK(v.upstream_header.find("Connection: close\r\n") != std::string::npos);
    CHECK(v.upstream_header.ends_with("\r\n\r\n"));

    v = confine::proxy::judge_request_bytes("GET http://192.0.2.1:8080?q HTTP/1.0\r\n\r\n", allow);
    REQUIRE(v.kind == Kind::serve);
    CHECK(v.upstream_header.starts_with("GET /?q HTTP/1.0\r\n"));

    v = confine::proxy::judge_request_bytes("CONNECT example.com:443 HTTP/1.1\r\n\r\n", allow);
    CHECK(v.kind == Kind::refuse);
    CHECK(v.status == 403);
    CHECK(v.reason == "not in allow_hosts");
    CHECK(confine::proxy::judge_request_bytes("GET http://example.org:8080/ HTTP/1.1\r\n\r\n", allow).kind == Kind::refuse);

    struct Bad {
        std::string bytes;
        unsigned status;
    };
    const std::vector<Bad> bad{
        {"GET / HTTP/1.1\r\nHost: example.org\r\n\r\n", 400},
        {"GET https://example.org/ HTTP/1.1\r\n\r\n", 400},
        {"GET ftp://example.org/ HTTP/1.1\r\n\r\n", 400},
        {"GET http://user@example.org/ HTTP/1.1\r\n\r\n", 400},
        {"GET http:///x HTTP/1.1\r\n\r\n", 400},
        {"GET http://exa%6dple.org/ HTTP/1.1\r\n\r\n", 400},
        {"CONNECT example.org HTTP/1.1\r\n\r\n", 400},
        {"CONNECT example.org:0 HTTP/1.1\r\n\r\n", 400},
        {"CONNECT example.org:99999 HTTP/1.1\r\n\r\n", 400},
        {"CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n", 400},
        {"CONNECT [2001:db8::1 HTTP/1.1\r\n\r\n", 400},
        {"CONNECT example.org:443 HTTP/2.0\r\n\r\n", 400},
        {"OPTIONS * HTTP/1.1\r\n\r\n", 400},
        {std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), 400},
        {"GET http://example.org/ HTTP/1.1\r\nBad Header\r\n\r\n", 400},
        {"GET http://example.org/ HTTP/1.1\r\n", 400},
        {"", 400},
        {"GET http://example.org/" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n", 431},
        {"GET http://example.org/ HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n", 431},
    };
    for (const auto& b : bad) {
        auto verdict = confine::proxy::judge_request_bytes(b.bytes, allow);
        INFO(b.bytes.substr(0, 60) << " -> " << verdict.reason);
        CHECK(verdict.kind == Kind::malformed);
        CHECK(verdict.status == b.status);
        CHECK_FALSE(verdict.reason.empty());
    }
}

TEST_CASE("the request reader takes a header in pieces and keeps what follows it for upstream", "[proxy]") {
    std::string request = "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\nUser-Agent: t\r\n\r\n";
    std::string after = "\x16\x03\x01 hello";
    auto bytes = request + after;
    confine::proxy::RequestReader reader;
    std::size_t i = 0;
    for (; i < bytes.size(); ++i) {
        if (reader.feed(bytes.substr(i, 1)) != confine::proxy::RequestReader::State::need_more) break;
    }
    REQUIRE(reader.state() == confine::proxy::RequestReader::State::complete);
    CHECK(i == request.size() - 1);
    reader.feed(bytes.substr(i + 1));  // after the header: ignored, the session stops reading
    CHECK(reader.leftover().empty());

    confine::proxy::RequestReader whole;
    REQUIRE(whole.feed(bytes) == confine::proxy::RequestReader::State::complete);
    CHECK(whole.leftover() == after);
    CHECK(whole.judge(patterns({"example.org"})).kind == Kind::serve);
}

TEST_CASE("resolved addresses a name can be made to point at are refused, public ones are not", "[proxy]") {
    std::vector<ip::address> own{ip::make_address("198.51.100.7"), ip::make_address("2001:db8::7")};
    auto why = [&](const char* a) { return confine::proxy::address_refusal(ip::make_address(a), own); };
    CHECK(why("127.0.0.1") == "a loopback address");
    CHECK(why("127.255.0.9") == "a loopback address");
    CHECK(why("::1") == "a loopback address");
    CHECK(why("::ffff:127.0.0.1") == "a loopback address");
    CHECK(why("0.0.0.0") == "an unspecified address");
    CHECK(why("::") == "an unspecified address");
    CHECK(why("169.254.169.254") == "a link-local address");
    CHECK(why("fe80::1") == "a link-local address");
    CHECK(why("::ffff:169.254.169.254") == "a link-local address");
    for (auto a : {"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "100.64.0.1", "100.127.0.1", "fc00::1",
                   "fd12:3456::1", "::ffff:10.1.2.3"})
        CHECK(why(a) == "a private address");
    CHECK(why("224.0.0.1") == "a multicast address");
    CHECK(why("ff02::1") == "a multicast address");
    CHECK(why("255.255.255.255") == "the broadcast address");
    CHECK(why("198.51.100.7") == "one of this host's own addresses");
    CHECK(why("::ffff:198.51.100.7") == "one of this host's own addresses");
    CHECK(why("2001:db8::7") == "one of this host's own addresses");
    // What this machine's package registries resolve to, and other public addresses.
    for (auto a : {"203.0.113.1", "203.0.113.254", "::ffff:203.0.113.9", "172.32.0.1", "100.128.0.1", "8.8.8.8",
                   "2001:db8::1", "2606:4700::1"})
        CHECK(why(a).empty());
}

// --- the program ---------------------------------------------------------------------

TEST_CASE("confine-proxy relays an absolute-form GET to an allowed address with the target rewritten", "[proxy]") {
    std::string seen;
    const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
    Upstream upstream([&](int fd) {
        seen = read_header(fd);
        send_all(fd, response);
    });
    std::uint16_t port = 0;
    auto listener = listening_socket(port);
    auto target = "127.0.0.1:" + std::to_string(upstream.port());
    Proxy proxy(listener.fd, {"--allow", target});
    auto answer = round_trip(port, "GET http://" + target + "/path?q=1 HTTP/1.1\r\nHost: " + target +
                                     "\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n\r\n");
    CHECK(answer == response);
    CHECK(seen.starts_with("GET /path?q=1 HTTP/1.1\r\n"));
    CHECK(seen.find("Host: " + target + "\r\n") != std::string::npos);
    CHECK(seen.find("Connection: close\r\n") != std::string::npos);
    CHECK(seen.find("Proxy-") == std::string::npos);
    auto done = proxy.end();
    CHECK(done.status == 0);
    auto report = done.json();
    CHECK(report.at("listeners") == 1);
    auto* e = entry(report, "127.0.0.1", upstream.port(), true);
    REQUIRE(e);
    CHECK(e->at("connections") == 1);
    CHECK(e->at("bytes_up") == seen.size());
    CHECK(e->at("bytes_down") == response.size());
    CHECK_FALSE(e->contains("reason"));
}

TEST_CASE("confine-proxy sends an absolute-form request's body after its rewritten header, however it arrives", "[proxy]") {
    const std::string body(50000, 'b');
    std::string seen;
    const std::string response = "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n";
    Upstream upstream([&](int fd) {
        seen = read_header(fd);
        std::string got;
        char buf[8192];
        while (got.size() < body.size()) {
            auto n = ::read(fd, buf, sizeof buf);
            if (n <= 0) break;
            got.append(buf, static_cast<std::size_t>(n));
        }
        seen += got;
        send_all(fd, response);
    });
    std::uint16_t port = 0;
    auto listener = listening_socket(port);
    auto target = "127.0.0.1:" + std::to_string(upstream.port());
    Proxy proxy(listener.fd, {"--allow", target});
    auto client = connect_to(port);
    auto header = "POST http://" + target + "/upload HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    send_all(client.fd, header + body.substr(0, 10));  // part of the body with the header
    send_all(client.fd, body.substr(10));
    CHECK(read_all(client.fd) == response);
    CHECK(seen.starts_with("POST /upload HTTP/1.1\r\n"));
    CHECK(seen.ends_with("\r\n\r\n" + body));
    auto done = proxy.end();
    CHECK(done.status == 0);
    auto report = done.json();
    auto* e = entry(report, "127.0.0.1", upstream.port(), true);
    REQUIRE(e);
    CHECK(e->at("bytes_up") == seen.size());
    CHECK(e->at("bytes_down") == response.size());
}

TEST_CASE("confine-proxy relays CONNECT both ways untouched and counts the bytes exactly", "[proxy]") {
    const std::string up(100000, 'u'), down(70001, 'd');
    std::string received;
    Upstream upstream([&](int fd) {
        received = read_all(fd);  // until the client's end, passed on by the proxy
        send_all(fd, down);
    });
    std::uint16_t port = 0;
    auto listener = listening_socket(port);
    auto target = "127.0.0.1:" + std::to_string(upstream.port());
    Proxy proxy(listener.fd, {"--allow", target, "--verbose"});
    {
        auto client = connect_to(port);
        send_all(client.fd, "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
        CHECK(read_header(client.fd) == "HTTP/1.1 200 Connection established\r\n\r\n");
        send_all(client.fd, up);
        ::shutdown(client.fd, SHUT_WR);
        CHECK(read_all(client.fd) == down);
    }
    CHECK(received == up);
    auto done = proxy.end();
    CHECK(done.status == 0);
    CHECK(done.err.empty());
    auto report = done.json();
    auto* e = entry(report, "127.0.0.1", upstream.port(), true);
    REQUIRE(e);
    CHECK(e->at("bytes_up") == up.size());
    CHECK(e->at("bytes_down") == down.size());
    CHECK(e->at("connections") == 1);
}

TEST_CASE("confine-proxy refuses a listed name that resolves to loopback, and an unlisted host, and reports both", "[proxy]") {
    std::uint16_t port = 0, unused = 0;
    auto listener = listening_socket(port);
    auto closed = listening_socket(unused);  // a port nothing is reached on
    auto local = "localhost:" + std::to_string(unused);
    Proxy proxy(listener.fd, {"--verbose", "--allow", local, "--allow", "example.org"});
    auto answer = round_trip(port, "CONNECT " + local + " HTTP/1.1\r\n\r\n");
    CHECK(answer.starts_with("HTTP/1.1 403 "));
    CHECK(answer.find("confine: " + local + " refused: localhost resolves to ") != std::string::npos);
    CHECK(answer.find("a loopback address\n") != std::string::npos);
    answer = round_trip(port, "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n");
    CHECK(answer.starts_with("HTTP/1.1 403 "));
    CHECK(answer.ends_with("\r\n\r\nconfine: example.com:80 is not in this run's allow_hosts\n"));
    answer = round_trip(port, "CONNECT Example.COM:443 HTTP/1.1\r\n\r\n");
    CHECK(answer.starts_with("HTTP/1.1 403 "));
    auto done = proxy.end();
    CHECK(done.status == 0);
    auto report = done.json();
    auto* e = entry(report, "localhost", unused, false);
    REQUIRE(e);
    CHECK(e->at("reason").get<std::string>().find("a loopback address") != std::string::npos);
    CHECK(e->at("bytes_up") == 0);
    e = entry(report, "example.com", 80, false);
    REQUIRE(e);
    CHECK(e->at("reason") == "not in allow_hosts");
    e = entry(report, "example.com", 443, false);
    REQUIRE(e);
    CHECK(e->at("connections") == 1);
    CHECK(report.at("requests").size() == 3);
    CHECK(report.at("requests")[0].at("host") == "localhost");
    CHECK(done.err.find("confinectl: network: refused " + local + ": localhost resolves to ") != std::string::npos);
    CHECK(done.err.find("confinectl: network: refused example.com:80: not in allow_hosts\n") != std::string::npos);
    CHECK(done.err.find("confinectl: network: refused example.com:443: not in allow_hosts\n") != std::string::npos);
}

TEST_CASE("confine-proxy answers malformed and oversized requests with 400 and 431 and goes on serving", "[proxy]") {
    std::uint16_t port = 0;
    auto listener = listening_socket(port);
    Proxy proxy(listener.fd, {"--allow", "example.org"});
    const std::vector<std::pair<std::string, std::string>> cases{
        {"GET / HTTP/1.1\r\nHost: example.org\r\n\r\n", "HTTP/1.1 400 "},
        {"GET https://example.org/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400 "},
        {std::string("\x16\x03\x01\x00\xff\x01\x00\x00\x00\r\n\r\n", 13), "HTTP/1.1 400 "},
        {std::string("\0\0\0\0\r\n\r\n", 8), "HTTP/1.1 400 "},
        {"CONNECT example.org HTTP/1.1\r\n\r\n", "HTTP/1.1 400 "},
        {"GET http://example.org/ HTTP/1.1\r\nX: " + std::string(40000, 'x') + "\r\n\r\n", "HTTP/1.1 431 "},
        {"GET http://example.org/" + std::string(17000, 'p'), "HTTP/1.1 431 "},
    };
    for (const auto& [request, status] : cases) {
        auto answer = round_trip(port, request);
        INFO(request.substr(0, 40));
        CHECK(answer.starts_with(status));
        CHECK(answer.find("Connection: close\r\n") != std::string::npos);
    }
    // A client that sends half a header and goes away.
    {
        auto client = connect_to(port);
        send_all(client.fd, "CONNECT exa");
    }
    CHECK(round_trip(port, "CONNECT example.com:443 HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 403 "));
    auto done = proxy.end();
    CHECK(done.status == 0);
    CHECK(done.json().at("requests").size() == 1);  // only the well-formed request is a request
}

TEST_CASE("confine-proxy accepts on listeners received by SCM_RIGHTS and counts them, and EOF there is not the end", "[proxy]") {
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    cloexec(pair[0]);
    cloexec(pair[1]);
    Fd ours(pair[0]), theirs(pair[1]);
    auto pass = [&](int fd) {
        char byte = 'L';
        iovec iov{&byte, 1};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))]{};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        auto* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
        REQUIRE(::sendmsg(ours.fd, &msg, MSG_NOSIGNAL) == 1);
    };
    Proxy proxy(theirs.fd, {"--allow", "example.org"}, "--receive-fd");
    theirs.reset();
    std::uint16_t first = 0, second = 0;
    auto one = listening_socket(first);
    auto two = listening_socket(second);
    int not_listening[2];
    REQUIRE(pipe_cloexec(not_listening) == 0);
    pass(one.fd);
    pass(not_listening[0]);  // not a listening socket: refused, the proxy goes on
    pass(two.fd);
    ::close(not_listening[0]);
    ::close(not_listening[1]);
    one.reset();
    two.reset();
    CHECK(round_trip(first, "CONNECT example.com:443 HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 403 "));
    ours.reset();  // EOF on the receiving socket
    CHECK(round_trip(second, "CONNECT example.net:443 HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 403 "));
    auto done = proxy.end();
    CHECK(done.status == 0);
    auto report = done.json();
    CHECK(report.at("listeners") == 2);
    CHECK(entry(report, "example.com", 443, false));
    CHECK(entry(report, "example.net", 443, false));
    CHECK(done.err.find("not a socket") != std::string::npos);
}

TEST_CASE("confine-proxy ends with its report on SIGTERM, and on the lifetime's end with a connection open", "[proxy]") {
    std::uint16_t port = 0;
    auto listener = listening_socket(port);
    {
        Proxy proxy(listener.fd, {"--allow", "example.org"});
        CHECK(round_trip(port, "CONNECT example.com:443 HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 403 "));
        auto done = proxy.end_by_signal(SIGTERM);
        CHECK(done.status == 0);
        CHECK(done.json().at("requests").size() == 1);
    }
    std::string upstream_saw;
    Upstream upstream([&](int fd) { upstream_saw = read_all(fd); });
    auto target = "127.0.0.1:" + std::to_string(upstream.port());
    Proxy proxy(listener.fd, {"--allow", target});
    auto idle = connect_to(port);  // half a header, never finished
    send_all(idle.fd, "CONNECT exa");
    auto tunnel = connect_to(port);
    send_all(tunnel.fd, "CONNECT " + target + " HTTP/1.1\r\n\r\n");
    CHECK(read_header(tunnel.fd) == "HTTP/1.1 200 Connection established\r\n\r\n");
    send_all(tunnel.fd, "abc");
    auto done = proxy.end();
    CHECK(done.status == 0);
    CHECK(read_all(idle.fd).empty());    // closed by the proxy
    CHECK(read_all(tunnel.fd).empty());  // closed by the proxy
    auto report = done.json();
    auto* e = entry(report, "127.0.0.1", upstream.port(), true);
    REQUIRE(e);
    CHECK(e->at("connections") == 1);
}

TEST_CASE("confine-proxy refuses a bad command line in one line with exit status 2", "[proxy]") {
    std::uint16_t port = 0;
    auto listener = listening_socket(port);
    int life[2], report[2];
    REQUIRE(pipe_cloexec(life) == 0);
    REQUIRE(pipe_cloexec(report) == 0);
    Fd l0(life[0]), l1(life[1]), r0(report[0]), r1(report[1]);
    auto not_listening = Fd(cloexec(::socket(AF_INET, SOCK_STREAM, 0)));
    std::unique_ptr<FILE, int (*)(FILE*)> file(::tmpfile(), ::fclose);  // a regular file, as descriptor 7
    REQUIRE(file);
    using Args = std::vector<std::string>;
    const std::vector<std::pair<Args, std::string>> cases{
        {{}, "give one of --listen-fd and --receive-fd"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5"}, "at least one --allow"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--allow", "a.org"}, "--report-fd are required"},
        {{"--listen-fd", "3", "--receive-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org"},
         "give one of"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "https://a.org"}, "without a scheme"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow"}, "--allow needs a value"},
        {{"--listen-fd", "x3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org"}, "not a descriptor number"},
        {{"--listen-fd", "40", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org"}, "not open"},
        {{"--listen-fd", "3", "--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org"},
         "given twice"},
        {{"--listen-fd", "3", "--lifetime-fd", "3", "--report-fd", "5", "--allow", "a.org"}, "three different"},
        {{"--listen-fd", "3", "--lifetime-fd", "7", "--report-fd", "5", "--allow", "a.org"}, "not a pipe or a socket"},
        {{"--listen-fd=3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org"}, "unknown argument"},
        {{"--\nx", "--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org"}, "'--\\x0ax'"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a\n.org"}, "'a\\x0a.org'"},
        {{"--listen-fd", "6", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org"}, "not listening"},
        {{"--receive-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org"}, "not a unix socket"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org", "--idle-timeout", "0"},
         "--idle-timeout '0' is not a whole number from 1 to 604800"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org", "--max-connections", "-1"},
         "--max-connections '-1' is not a whole number from 1 to 65536"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org", "--max-connections", "2",
          "--max-connections", "3"},
         "--max-connections is given twice"},
        {{"--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5", "--allow", "a.org", "--idle-timeout"},
         "--idle-timeout needs a value"},
    };
    for (const auto& [args, says] : cases) {
        int err[2];
        REQUIRE(pipe_cloexec(err) == 0);
        Args argv{CONFINE_PROXY};
        argv.insert(argv.end(), args.begin(), args.end());
        auto pid = Proxy::spawn(argv, {listener.fd, l0.fd, r1.fd, not_listening.fd, ::fileno(file.get())}, err[1]);
        ::close(err[1]);
        Fd e(err[0]);
        auto text = read_all(e.fd);
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        INFO(text);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 2);
        CHECK(text.starts_with("confine-proxy: "));
        CHECK(text.find(says) != std::string::npos);
        CHECK(text.find('\n') == text.size() - 1);
    }
}

// Request `i` of many to `target` through the proxy at `proxy_port`, as a client thread
// makes it: an absolute-form GET, or a CONNECT with a GET in the tunnel (sent with the
// CONNECT, or after its 200), the header in one write or in two. What came back: the
// upstream's answer (after the 200 for a CONNECT), or what went wrong.
std::string one_of_many(std::uint16_t proxy_port, const std::string& target, int i) {
    Fd s(try_connect(proxy_port));
    if (s.fd < 0) return std::string("cannot connect to the proxy: ") + std::strerror(errno);
    const std::string get = "GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n";
    std::string request = i % 2 ? "GET http://" + target + "/" + std::to_string(i) + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n"
                                : "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n";
    const bool tunnel = i % 2 == 0, pipelined = i % 4 == 0;
    if (pipelined) request += get;
    if (i % 3 == 0) {
        send_all(s.fd, request.substr(0, 9));
        send_all(s.fd, request.substr(9));
    } else {
        send_all(s.fd, request);
    }
    if (tunnel) {
        auto header = read_header(s.fd);
        if (header != "HTTP/1.1 200 Connection established\r\n\r\n") return header + read_all(s.fd);
        if (!pipelined) send_all(s.fd, get);
    }
    return read_all(s.fd);
}

// The case: requests to an allowed local server through the proxy, one after
// another and many at once, every one of them answered by the server (never a 502 or a
// connection closed unanswered), and every one in the report.
TEST_CASE("confine-proxy serves every one of many sequential and concurrent requests to an allowed local server", "[proxy]") {
    const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
    ManyUpstream upstream(response);
    std::uint16_t port = 0;
    auto listener = listening_socket(port, 1024);
    const auto target = "127.0.0.1:" + std::to_string(upstream.port());
    Proxy proxy(listener.fd, {"--allow", target});
    constexpr int sequential = 400, rounds = 6, at_once = 100;
    std::string failures;
    for (int i = 0; i < sequential; ++i)
        if (auto got = one_of_many(port, target, i); got != response)
            failures += "request " + std::to_string(i) + ": " + got.substr(0, 200) + "\n";
    for (int r = 0; r < rounds; ++r) {
        std::vector<std::string> got(at_once);
        std::vector<std::thread> clients;
        for (int i = 0; i < at_once; ++i) clients.emplace_back([&, i] { got[i] = one_of_many(port, target, i); });
        for (auto& c : clients) c.join();
        for (int i = 0; i < at_once; ++i)
            if (got[i] != response) failures += "round " + std::to_string(r) + ", request " + std::to_string(i) + ": " + got[i].substr(0, 200) + "\n";
    }
    const int total = sequential + rounds * at_once;
    CHECK(failures == "");  // the requests that failed, and how
    auto done = proxy.end();
    CHECK(done.status == 0);
    CHECK(done.err.empty());
    auto report = done.json();
    CHECK(report.at("over_limit") == 0);
    REQUIRE(report.at("requests").size() == 1);
    auto* e = entry(report, "127.0.0.1", upstream.port(), true);
    REQUIRE(e);
    CHECK(e->at("connections") == total);
    CHECK(e->at("bytes_down") == static_cast<std::uint64_t>(total) * response.size());
    CHECK(upstream.served() == total);
}

TEST_CASE("confine-proxy closes a relay through which nothing has passed for its idle timeout, either form", "[proxy]") {
    // It echoes the first bytes it reads, then says nothing until the proxy closes.
    Upstream upstream([](int fd) {
        char buf[64];
        auto n = ::read(fd, buf, sizeof buf);
        if (n > 0) send_all(fd, std::string(buf, static_cast<std::size_t>(n)));
        read_all(fd);
    });
    std::uint16_t port = 0;
    auto listener = listening_socket(port);
    const auto target = "127.0.0.1:" + std::to_string(upstream.port());
    Proxy proxy(listener.fd, {"--allow", target, "--idle-timeout", "1"});
    auto tunnel = connect_to(port);
    send_all(tunnel.fd, "CONNECT " + target + " HTTP/1.1\r\n\r\n");
    REQUIRE(read_header(tunnel.fd) == "HTTP/1.1 200 Connection established\r\n\r\n");
    send_all(tunnel.fd, "ping");
    char buf[16];
    REQUIRE(::read(tunnel.fd, buf, 4) == 4);
    CHECK(std::string(buf, 4) == "ping");
    // Then nothing either way: the proxy closes it (an end, not this test's 30 s bound).
    errno = 0;
    CHECK(::read(tunnel.fd, buf, sizeof buf) == 0);
    CHECK(errno == 0);
    tunnel.reset();
    auto first = proxy.end();
    CHECK(first.status == 0);
    const auto first_report = first.json();
    auto* e = entry(first_report, "127.0.0.1", upstream.port(), true);
    REQUIRE(e);
    CHECK(e->at("bytes_up") == 4);
    CHECK(e->at("bytes_down") == 4);

    // A forwarded http:// request whose server never answers: closed alike.
    Upstream silent([](int fd) { read_all(fd); });
    const auto quiet = "127.0.0.1:" + std::to_string(silent.port());
    Proxy second(listener.fd, {"--allow", quiet, "--idle-timeout", "1"});
    auto client = connect_to(port);
    send_all(client.fd, "GET http://" + quiet + "/ HTTP/1.1\r\nHost: " + quiet + "\r\n\r\n");
    errno = 0;
    CHECK(::read(client.fd, buf, sizeof buf) == 0);
    CHECK(errno == 0);
    auto done = second.end();
    CHECK(done.status == 0);
    const auto report = done.json();
    e = entry(report, "127.0.0.1", silent.port(), true);
    REQUIRE(e);
    CHECK(e->at("bytes_down") == 0);
    CHECK(e->at("bytes_up") > 0);
}

TEST_CASE("confine-proxy answers a connection past its limit 503, naming the limit, and counts it in its report", "[proxy]") {
    Upstream upstream([](int fd) { read_all(fd); });  // the first tunnel's end: holds it open
    std::uint16_t port = 0;
    auto listener = listening_socket(port);
    const auto target = "127.0.0.1:" + std::to_string(upstream.port());
    Proxy proxy(listener.fd, {"--allow", target, "--allow", "example.org", "--max-connections", "2"});
    auto tunnel = connect_to(port);
    send_all(tunnel.fd, "CONNECT " + target + " HTTP/1.1\r\n\r\n");
    REQUIRE(read_header(tunnel.fd) == "HTTP/1.1 200 Connection established\r\n\r\n");
    auto waiting = connect_to(port);  // the second: half a header, being read
    send_all(waiting.fd, "CONNECT exa");
    // Both are being served (the tunnel answered; the header reader is the proxy's from
    // its accept on, in the order accepted): the next ones are past the limit.
    for (int i = 0; i < 3; ++i) {
        auto answer = round_trip(port, "CONNECT example.org:443 HTTP/1.1\r\n\r\n");
        INFO(answer);
        CHECK(answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
        CHECK(answer.find("Connection: close\r\n") != std::string::npos);
        CHECK(answer.ends_with("\r\n\r\nconfine: this run's proxy serves at most 2 connections at once\n"));
    }
    // One of the two ends: a connection is served again.
    waiting.reset();
    std::string answer;
    int turned_away = 3;
    for (int tries = 0; tries < 200; ++tries) {
        answer = round_trip(port, "CONNECT example.com:443 HTTP/1.1\r\n\r\n");
        if (!answer.starts_with("HTTP/1.1 503 ")) break;
        ++turned_away;  // the proxy has not yet seen the end of the second
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(answer.starts_with("HTTP/1.1 403 "));
    auto done = proxy.end();
    CHECK(done.status == 0);
    auto report = done.json();
    CHECK(report.at("over_limit") == turned_away);
    auto* e = entry(report, "127.0.0.1", upstream.port(), true);
    REQUIRE(e);
    CHECK(e->at("connections") == 1);
    CHECK_FALSE(entry(report, "example.org", 443, false));  // a 503 reads no request
    CHECK(entry(report, "example.com", 443, false));
}

// An upstream on 127.0.0.1 that takes every connection and holds it, saying nothing, until
// it goes.
class HoldingUpstream {
public:
    HoldingUpstream() {
        listener_ = listening_socket(port_, 1024);
        thread_ = std::thread([this] {
            while (true) {
                int c = cloexec(::accept(listener_.fd, nullptr, nullptr));
                if (c < 0) return;
                held_.emplace_back(c);
            }
        });
    }
    ~HoldingUpstream() {
        ::shutdown(listener_.fd, SHUT_RDWR);
        thread_.join();
    }
    std::uint16_t port() const { return port_; }

private:
    Fd listener_;
    std::uint16_t port_ = 0;
    std::vector<Fd> held_;
    std::thread thread_;
};

// `count` CONNECT tunnels opened one after another through a proxy that starts with the
// descriptor limits `nofile` and held open together: how many were answered with which
// status line, what the proxy said on stderr, and its report.
struct Held {
    std::map<std::string, int> answers;
    std::string last_body;
    Finished done;
};

Held hold_tunnels(int count, rlimit nofile) {
    HoldingUpstream upstream;
    std::uint16_t port = 0;
    auto listener = listening_socket(port, 1024);
    const auto target = "127.0.0.1:" + std::to_string(upstream.port());
    Proxy proxy(listener.fd, {"--allow", target}, "--listen-fd", &nofile);
    Held held;
    std::vector<Fd> tunnels;
    for (int i = 0; i < count; ++i) {
        tunnels.push_back(connect_to(port));
        send_all(tunnels.back().fd, "CONNECT " + target + " HTTP/1.1\r\n\r\n");
        auto header = read_header(tunnels.back().fd);
        ++held.answers[header.substr(0, header.find("\r\n"))];
        if (!header.starts_with("HTTP/1.1 200 ")) held.last_body = read_all(tunnels.back().fd);
    }
    held.done = proxy.end();
    return held;
}

// The case behind the 502s: each tunnel takes two of the proxy's descriptors, and
// under the usual soft limit of 1024 the 505th upstream could not be connected to ("Too
// many open files": a 502 for an allowed host, 0 bytes) before the limit of 512 was met.
TEST_CASE("confine-proxy serves what its descriptors allow, its soft limit raised: past that 503, never 502", "[proxy]") {
    rlimit own{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &own) == 0);
    const rlim_t needed = 2000;  // this process's end of every tunnel and the upstream's
    if (own.rlim_cur < needed && (own.rlim_max == RLIM_INFINITY || own.rlim_max >= needed)) {
        own.rlim_cur = needed;
        REQUIRE(::setrlimit(RLIMIT_NOFILE, &own) == 0);
    }
    if (own.rlim_cur < needed) test::skip_test("this process may hold fewer than 2000 descriptors");

    // A soft limit of 1024 that may be raised: 512 served, the next ones answered 503.
    // Where its event loop waits with select() (the portable build on Linux), no more than
    // FD_SETSIZE descriptors are of use: (1024 - 64) / 3 = 320 served by default.
    const int served = static_cast<int>(confine::proxy::default_max_connections);
    CHECK(served == (confine::proxy::descriptor_ceiling == FD_SETSIZE ? 320 : 512));
    auto raised = hold_tunnels(520, {1024, 4096});
    CHECK(raised.answers["HTTP/1.1 200 Connection established"] == served);
    CHECK(raised.answers["HTTP/1.1 503 Service Unavailable"] == 520 - served);
    CHECK(raised.answers.size() == 2);  // no 502, no connection closed unanswered
    CHECK(raised.last_body == "confine: this run's proxy serves at most " + std::to_string(served) + " connections at once\n");
    CHECK(raised.done.status == 0);
    CHECK(raised.done.err.empty());
    auto report = raised.done.json();
    CHECK(report.at("over_limit") == 520 - served);
    REQUIRE(report.at("requests").size() == 1);
    CHECK(report.at("requests")[0].at("connections") == served);

    // A hard limit of 700: (700 - 64) / 3 = 212 served, and it says so.
    auto capped = hold_tunnels(222, {700, 700});
    CHECK(capped.answers["HTTP/1.1 200 Connection established"] == 212);
    CHECK(capped.answers["HTTP/1.1 503 Service Unavailable"] == 10);
    CHECK(capped.answers.size() == 2);
    CHECK(capped.last_body == "confine: this run's proxy serves at most 212 connections at once\n");
    CHECK(capped.done.err == "confine-proxy: its limit of 700 descriptors lets it serve 212 connections at once, not " + std::to_string(served) + "\n");
    CHECK(capped.done.json().at("over_limit") == 10);
}

// What the user saw when it was not the descriptors: an allowed address nothing
// listens on. The answer names the error as it was.
TEST_CASE("confine-proxy answers 502 naming the error when an allowed address cannot be connected to", "[proxy]") {
    std::uint16_t port = 0, closed_port = 0;
    auto listener = listening_socket(port);
    { auto gone = listening_socket(closed_port); }  // a port nothing listens on now
    const auto target = "127.0.0.1:" + std::to_string(closed_port);
    Proxy proxy(listener.fd, {"--allow", target});
    auto answer = round_trip(port, "CONNECT " + target + " HTTP/1.1\r\n\r\n");
    CHECK(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"));
    CHECK(answer.ends_with("\r\n\r\nconfine: cannot connect to " + target + ": Connection refused\n"));
    auto done = proxy.end();
    CHECK(done.status == 0);
    const auto report = done.json();
    auto* e = entry(report, "127.0.0.1", closed_port, true);
    REQUIRE(e);
    CHECK(e->at("bytes_up") == 0);
    CHECK(e->at("bytes_down") == 0);
}
