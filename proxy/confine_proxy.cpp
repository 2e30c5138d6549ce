// confine-proxy: the per-run HTTP/HTTPS allowlist proxy confinectl starts outside the
// sandbox (http_proxy.hpp). Everything it needs comes as descriptors; it ends with the run.
//
//   confine-proxy (--listen-fd N | --receive-fd N) --lifetime-fd N --report-fd N [--verbose]
//                 [--idle-timeout SECONDS] [--max-connections N] --allow PATTERN [--allow PATTERN]...
//
// A bad command line: one line on stderr, exit 2. The end of the run (EOF on the lifetime
// pipe, SIGTERM, SIGINT): every connection closed, the report written, exit 0.
#include "http_proxy.hpp"
#include "self_confinement.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

namespace {

using confine::proxy::HttpProxy;

constexpr int usage_error = 2;
constexpr const char* usage =
    "usage: confine-proxy (--listen-fd N | --receive-fd N) --lifetime-fd N --report-fd N [--verbose] "
    "[--idle-timeout SECONDS] [--max-connections N] --allow PATTERN [--allow PATTERN]...";
// The bounds of --idle-timeout (a week) and --max-connections.
constexpr unsigned max_idle_seconds = 7 * 24 * 3600;
constexpr unsigned max_connections_bound = 65536;

struct Arguments {
    std::optional<int> listen_fd, receive_fd, lifetime_fd, report_fd;
    bool verbose = false;
    std::optional<unsigned> idle_seconds, max_connections;
    std::vector<confine::HostPattern> allow;
};

// An argument as said back in a one-line error: a control character or a byte outside
// ASCII as \xNN.
std::string printable(std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : text) {
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
            continue;
        }
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 0xf];
    }
    return out;
}

std::expected<int, std::string> descriptor(std::string_view option, std::string_view text) {
    int fd = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), fd);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || fd < 0)
        return std::unexpected(std::string(option) + " '" + printable(text) + "' is not a descriptor number");
    if (fcntl(fd, F_GETFD) == -1)
        return std::unexpected(std::string(option) + " " + std::to_string(fd) + ": the descriptor is not open");
    return fd;
}

// A whole number from 1 to `most`.
std::expected<unsigned, std::string> count(std::string_view option, std::string_view text, unsigned most) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value == 0 || value > most)
        return std::unexpected(std::string(option) + " '" + printable(text) + "' is not a whole number from 1 to " +
                               std::to_string(most));
    return value;
}

std::expected<void, std::string> take_count(Arguments& a, std::string_view option, std::string_view value) {
    const bool idle = option == "--idle-timeout";
    auto& slot = idle ? a.idle_seconds : a.max_connections;
    if (slot) return std::unexpected(std::string(option) + " is given twice");
    auto n = count(option, value, idle ? max_idle_seconds : max_connections_bound);
    if (!n) return std::unexpected(n.error());
    slot = *n;
    return {};
}

std::expected<void, std::string> take(Arguments& a, std::string_view option, std::string_view value) {
    if (option == "--idle-timeout" || option == "--max-connections") return take_count(a, option, value);
    if (option == "--allow") {
        auto pattern = confine::parse_host_pattern(value);
        if (!pattern) return std::unexpected("--allow: " + pattern.error());
        a.allow.push_back(*pattern);
        return {};
    }
    auto* slot = option == "--listen-fd"     ? &a.listen_fd
                 : option == "--receive-fd"  ? &a.receive_fd
                 : option == "--lifetime-fd" ? &a.lifetime_fd
                                             : &a.report_fd;
    if (*slot) return std::unexpected(std::string(option) + " is given twice");
    auto fd = descriptor(option, value);
    if (!fd) return std::unexpected(fd.error());
    *slot = *fd;
    return {};
}

std::expected<void, std::string> complete(const Arguments& a) {
    if (a.listen_fd.has_value() == a.receive_fd.has_value())
        return std::unexpected(std::string("give one of --listen-fd and --receive-fd; ") + usage);
    if (!a.lifetime_fd || !a.report_fd) return std::unexpected(std::string("--lifetime-fd and --report-fd are required; ") + usage);
    if (a.allow.empty()) return std::unexpected(std::string("at least one --allow PATTERN is required; ") + usage);
    struct stat st {};
    if (::fstat(*a.lifetime_fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        return std::unexpected("--lifetime-fd " + std::to_string(*a.lifetime_fd) + " is not a pipe or a socket");
    int listener = a.listen_fd ? *a.listen_fd : *a.receive_fd;
    if (listener == *a.lifetime_fd || listener == *a.report_fd || *a.lifetime_fd == *a.report_fd)
        return std::unexpected("the listener, lifetime and report descriptors must be three different descriptors");
    return {};
}

std::expected<Arguments, std::string> parse(int argc, char** argv) {
    Arguments a;
    for (int i = 1; i < argc; ++i) {
        std::string_view option = argv[i];
        if (option == "--verbose") {
            a.verbose = true;
            continue;
        }
        if (option != "--allow" && option != "--listen-fd" && option != "--receive-fd" && option != "--lifetime-fd" &&
            option != "--report-fd" && option != "--idle-timeout" && option != "--max-connections")
            return std::unexpected("unknown argument '" + printable(option) + "'; " + usage);
        if (i + 1 >= argc) return std::unexpected(std::string(option) + " needs a value");
        if (auto taken = take(a, option, argv[++i]); !taken) return std::unexpected(taken.error());
    }
    if (auto done = complete(a); !done) return std::unexpected(done.error());
    return a;
}

bool write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        auto n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// Runs the proxy until it has stopped and every connection's handlers have run, or, once
// stopped, for at most `stop_grace`: a name being resolved (getaddrinfo, on Asio's own
// thread) does not keep the run's end waiting. Whether it gave up waiting.
bool run_until_stopped(boost::asio::io_context& io, const HttpProxy& proxy) {
    constexpr auto tick = std::chrono::milliseconds(100);
    constexpr auto stop_grace = std::chrono::seconds(2);
    std::optional<std::chrono::steady_clock::time_point> stopped_at;
    while (true) {
        io.run_for(tick);
        if (io.stopped()) return false;
        if (proxy.stopped() && !stopped_at) stopped_at = std::chrono::steady_clock::now();
        if (stopped_at && std::chrono::steady_clock::now() - *stopped_at > stop_grace) return true;
    }
}

void say(const char* prefix, const std::string& line) { std::fprintf(stderr, "%s%s\n", prefix, line.c_str()); }

constexpr auto own_descriptors = static_cast<rlim_t>(confine::proxy::own_descriptors);

// The connections it can serve at once, `wanted` at most: the soft limit on descriptors
// raised toward the hard one as far as they need, and fewer connections when the hard one
// is lower, or when its event loop cannot wait on that many (said on stderr), so that past
// them a connection is answered 503, never refused for want of a descriptor (an upstream
// that cannot be connected to: 502).
std::size_t serveable(std::size_t wanted) {
    rlimit r{};
    if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return wanted;
    const rlim_t need = 3 * static_cast<rlim_t>(wanted) + own_descriptors;
    if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < need) {
        rlimit raised = r;
        raised.rlim_cur = r.rlim_max == RLIM_INFINITY ? need : std::min(need, r.rlim_max);
        if (raised.rlim_cur > r.rlim_cur && ::setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
    }
    const auto ceiling = static_cast<rlim_t>(confine::proxy::descriptor_ceiling);
    const bool by_loop = ceiling < need && (r.rlim_cur == RLIM_INFINITY || r.rlim_cur > ceiling);
    const rlim_t usable = by_loop ? ceiling : r.rlim_cur;
    if (usable == RLIM_INFINITY || usable >= need) return wanted;
    const std::size_t fits = usable > own_descriptors + 3 ? static_cast<std::size_t>((usable - own_descriptors) / 3) : 1;
    const std::string count = std::to_string(usable);
    say("confine-proxy: ", (by_loop ? "waiting with select(), its " + count + " descriptors let" : "its limit of " + count + " descriptors lets") +
                               " it serve " + std::to_string(fits) + " connections at once, not " + std::to_string(wanted));
    return fits;
}

int run(const Arguments& a) {
    boost::asio::io_context io;
    confine::proxy::ProxyOptions options{.allow = a.allow};
    if (a.idle_seconds) options.idle_timeout = std::chrono::seconds(*a.idle_seconds);
    options.max_connections = serveable(a.max_connections.value_or(confine::proxy::default_max_connections));
    if (a.verbose) options.on_refusal = [](const std::string& line) { say("confinectl: network: refused ", line); };
    options.on_notice = [](const std::string& line) { say("confine-proxy: ", line); };
    HttpProxy proxy(io, std::move(options));
    auto listening = a.listen_fd ? proxy.add_listener(*a.listen_fd) : proxy.receive_listeners(*a.receive_fd);
    if (!listening) {
        say("confine-proxy: ", (a.listen_fd ? "--listen-fd: " : "--receive-fd: ") + listening.error());
        return usage_error;
    }
    proxy.watch_lifetime(*a.lifetime_fd);
    proxy.watch_signals();
    if (const char* failed = confine::proxy::confine_itself()) {
        say("confine-proxy: cannot confine itself: ", std::string(failed) + ": " + std::strerror(errno));
        return 1;
    }
    bool abandoned = run_until_stopped(io, proxy);
    bool written = write_all(*a.report_fd, proxy.report());
    int written_errno = errno;
    ::close(*a.report_fd);
    // A host that is gone (killed) reads no report: nothing to say to anyone.
    if (!written && written_errno != EPIPE) say("confine-proxy: cannot write the report: ", std::strerror(written_errno));
    int status = written ? 0 : 1;
    // A name still being resolved holds Asio's resolver thread, which the io_context's
    // destructor would wait for: every connection is closed, the report is written.
    if (abandoned) std::_Exit(status);
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    // A reader of the report that went away is an error to say, not a signal to die of.
    std::signal(SIGPIPE, SIG_IGN);
    auto arguments = parse(argc, argv);
    if (!arguments) {
        say("confine-proxy: ", arguments.error());
        return usage_error;
    }
    try {
        return run(*arguments);
    } catch (const std::exception& e) {
        say("confine-proxy: ", e.what());
        return 1;
    }
}
