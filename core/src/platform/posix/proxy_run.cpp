// The run's proxy, on POSIX systems: its listener, the program started with posix_spawn
// (no code of ours between a fork and an exec in a process that may have threads), its end
// and its report.
#include "proxy_run.hpp"
#include "fd.hpp"
#include "log.hpp"
#include "plugins/loader.hpp"

#include <confine/allow_hosts.hpp>
#include <confine/sdk/program_trust.hpp>

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace confine::detail {

struct ProxyRun::Impl {
    std::filesystem::path program;
    std::vector<std::string> allow_hosts;
    bool verbose = false;
    Fd listener;
    std::uint16_t port = 0;
    Fd sandbox_end;    // receive: the sandbox's side of the receiving socket
    Fd lifetime;       // the write end of the proxy's lifetime pipe: closed, the run is over
    Fd report;         // the read end of its report pipe
    pid_t pid = -1;
    bool receive = false;
    bool finished = false;
    ProxyReport result;
};

namespace {

Error proxy_error(std::string what) { return Error{ErrorCode::sandbox_unavailable, "the run's proxy: " + std::move(what)}; }

// A TCP socket listening on 127.0.0.1 at a port the system chooses, close-on-exec.
std::expected<std::pair<Fd, std::uint16_t>, Error> loopback_listener() {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) return std::unexpected(proxy_error(std::string("cannot make its listener: ") + std::strerror(errno)));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(fd.get(), 128) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0)
        return std::unexpected(proxy_error(std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno)));
    return std::pair{std::move(fd), ntohs(address.sin_port)};
}

// The program's argv: its descriptors are 3 (listener or receiving socket), 4 (lifetime)
// and 5 (report).
std::vector<std::string> proxy_argv(const ProxyRun::Impl& p) {
    std::vector<std::string> argv{p.program.string(), p.receive ? "--receive-fd" : "--listen-fd", "3", "--lifetime-fd", "4", "--report-fd", "5"};
    if (p.verbose) argv.emplace_back("--verbose");
    for (const auto& host : p.allow_hosts) argv.insert(argv.end(), {"--allow", host});
    return argv;
}

// Reads `fd` to its end, or until `deadline`; false when the deadline came first.
bool read_all(int fd, std::string& out, std::chrono::steady_clock::time_point deadline) {
    char buffer[16384];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return false;
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return true;
        out.append(buffer, static_cast<std::size_t>(n));
        if (out.size() > (64u << 20)) return true;  // more than any run's hosts: cut
    }
}

// The proxy's report, as it writes it: {"listeners": K, "over_limit": N, "requests": [{...}]}.
ProxyReport parse_report(const std::string& text) {
    ProxyReport r;
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_object() || !doc.contains("requests") || !doc["requests"].is_array()) {
        r.problem = "its report is not what it writes";
        return r;
    }
    r.listeners = doc.value("listeners", 0u);
    r.over_limit = doc.value("over_limit", std::uint64_t{0});
    for (const auto& entry : doc["requests"]) {
        if (!entry.is_object()) continue;
        NetworkRequest q;
        q.host = entry.value("host", std::string());
        q.port = entry.value("port", std::uint16_t{0});
        q.allowed = entry.value("allowed", false);
        q.bytes_up = entry.value("bytes_up", std::uint64_t{0});
        q.bytes_down = entry.value("bytes_down", std::uint64_t{0});
        q.connections = entry.value("connections", std::uint64_t{0});
        q.reason = entry.value("reason", std::string());
        r.requests.push_back(std::move(q));
    }
    r.read = true;
    return r;
}

}  // namespace

ProxyRun::ProxyRun(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProxyRun::~ProxyRun() {
    if (impl_ && impl_->pid > 0 && !impl_->finished) finish();
}

std::expected<std::shared_ptr<ProxyRun>, Error> ProxyRun::open(std::vector<std::string> allow_hosts, const std::vector<std::filesystem::path>& dirs,
                                                               bool verbose) {
    auto impl = std::make_unique<Impl>();
    impl->program = confine_program(dirs, "confine-proxy");
    if (impl->program.empty()) return std::unexpected(proxy_error("confine-proxy is in none of the plugin directories"));
    auto listener = loopback_listener();
    if (!listener) return std::unexpected(listener.error());
    impl->listener = std::move(listener->first);
    impl->port = listener->second;
    impl->allow_hosts = std::move(allow_hosts);
    impl->verbose = verbose;
    return std::shared_ptr<ProxyRun>(new ProxyRun(std::move(impl)));
}

std::uint16_t ProxyRun::port() const noexcept { return impl_->port; }
int ProxyRun::sandbox_end() const noexcept { return impl_->sandbox_end.get(); }
bool ProxyRun::receiving() const noexcept { return impl_->receive; }

std::optional<Error> ProxyRun::judge(const std::vector<std::filesystem::path>& writable_roots) const {
    if (auto bad = sdk::untrusted_program(impl_->program, writable_roots)) return proxy_error("refusing " + impl_->program.string() + ": " + *bad);
    return std::nullopt;
}

std::optional<Error> ProxyRun::start(bool receive) {
    Impl& p = *impl_;
    p.receive = receive;
    Fd served;
    if (receive) {
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
            return proxy_error(std::string("cannot make its receiving socket: ") + std::strerror(errno));
        served = Fd(pair[0]);
        p.sandbox_end = Fd(pair[1]);
        p.listener = Fd();  // the sandbox listens on its own loopback instead
    } else {
        served = std::move(p.listener);
    }
    Fd lifetime_read, report_write;
    if (!make_pipe(lifetime_read, p.lifetime) || !make_pipe(p.report, report_write))
        return proxy_error(std::string("cannot make its pipes: ") + std::strerror(errno));
    // Each moved above 5 first: dup2 onto 3, 4 and 5 in turn must not overwrite one of them
    // before it is copied (a pipe made after the listener closed may well be 3).
    for (Fd* fd : {&served, &lifetime_read, &report_write})
        if (fd->get() <= 5 && (*fd = Fd(::fcntl(fd->get(), F_DUPFD_CLOEXEC, 6))).get() < 0)
            return proxy_error(std::string("cannot arrange its descriptors: ") + std::strerror(errno));
    const std::vector<std::string> args = proxy_argv(p);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    // Its descriptors at 3, 4 and 5 (dup2 leaves them open across the exec), in a session
    // of its own: no signal meant for the run's process group reaches it.
    posix_spawn_file_actions_adddup2(&actions, served.get(), 3);
    posix_spawn_file_actions_adddup2(&actions, lifetime_read.get(), 4);
    posix_spawn_file_actions_adddup2(&actions, report_write.get(), 5);
#if defined(POSIX_SPAWN_SETSID)
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
#endif
    pid_t pid = -1;
    int rc = 0;
    {
        auto guard = fork_guard();
        rc = ::posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) return proxy_error("cannot start " + p.program.string() + ": " + std::strerror(rc));
    p.pid = pid;
    log_debug("the run's proxy: {} (pid {}), port {}, {}", p.program.string(), pid, p.port, receive ? "the sandbox hands it its listener" : "on 127.0.0.1");
    return std::nullopt;
}

const ProxyReport& ProxyRun::finish() {
    Impl& p = *impl_;
    if (p.finished) return p.result;
    p.finished = true;
    p.sandbox_end = Fd();
    p.listener = Fd();
    if (p.pid <= 0) {
        p.result.problem = "it was never started";
        return p.result;
    }
    p.lifetime = Fd();  // the run is over
    std::string text;
    const bool whole = read_all(p.report.get(), text, std::chrono::steady_clock::now() + std::chrono::seconds(10));
    if (!whole) ::kill(p.pid, SIGKILL);
    int status = 0;
    while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {}
    p.pid = -1;
    p.report = Fd();
    if (!whole) {
        p.result.problem = "it did not end within 10 s of the run";
        return p.result;
    }
    p.result = parse_report(text);
    if (!p.result.read && WIFSIGNALED(status)) p.result.problem = "it was killed by signal " + std::to_string(WTERMSIG(status));
    return p.result;
}

std::vector<std::string> proxy_environment(std::uint16_t port, const std::vector<std::string>& allow_hosts) {
    const std::string url = "http://127.0.0.1:" + std::to_string(port);
    std::vector<std::string> env;
    for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "npm_config_proxy",
                             "npm_config_https_proxy"})
        env.push_back(std::string(name) + "=" + url);
    std::string direct;
    for (const char* loopback : {"localhost", "127.0.0.1", "::1"}) {
        const bool listed = std::any_of(allow_hosts.begin(), allow_hosts.end(), [&](const std::string& host) {
            auto pattern = parse_host_pattern(host);
            return pattern && pattern->kind != HostPattern::Kind::wildcard && pattern->host == loopback;
        });
        if (!listed) direct += (direct.empty() ? "" : ",") + std::string(loopback);
    }
    for (const char* name : {"NO_PROXY", "no_proxy"}) env.push_back(std::string(name) + "=" + direct);
    return env;
}

}  // namespace confine::detail
