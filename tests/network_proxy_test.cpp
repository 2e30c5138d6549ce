// The network through the run's proxy, end to end (--allow-host, [policy] allow_hosts):
// on every Linux way (bubblewrap through the plugin and an asserted runner_command,
// Landlock through landlock-run, in a forked child, and the way that would run in place),
// as root and as an unprivileged user, against the hosts this machine reaches — named at
// test time from its own npm and apt configuration, never written here: a listed host is
// reached by curl and npm, over HTTPS (CONNECT) and HTTP (absolute form); an unlisted one
// is refused and reported as refused; a wildcard; a connection around the proxy, and a
// datagram, refused; a listed name that resolves to loopback refused, with the service
// there left unreached; the proxy gone after the run, also after confinectl is killed;
// bad patterns refused before anything runs.
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <regex>
#include <thread>

extern char** environ;

namespace fs = std::filesystem;
using nlohmann::json;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

// The host of a URL ("https://registry.npmjs.org/" -> "registry.npmjs.org"), or "".
std::string host_of(const std::string& url) {
    static const std::regex shape(R"(^[a-zA-Z][a-zA-Z0-9+.-]*://([^/:@\s]+)(:[0-9]+)?(/.*)?\s*$)");
    std::smatch m;
    return std::regex_match(url, m, shape) ? m[1].str() : std::string();
}

// The npm registry this machine is configured for.
std::string registry_host() {
    auto r = test::run({"/bin/sh", "-c", "npm config get registry"});
    const std::string host = r.exit_code == 0 ? host_of(r.out) : std::string();
    if (host.empty()) test::skip_test("no npm registry is configured here (npm config get registry: " + r.out + r.err + ")");
    return host;
}

// The first http(s) archive of this machine's apt sources (deb822 "URIs:" or a "deb" line).
std::string apt_host() {
    std::vector<fs::path> files{"/etc/apt/sources.list"};
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/etc/apt/sources.list.d", ec))
        if (e.path().extension() == ".sources" || e.path().extension() == ".list") files.push_back(e.path());
    static const std::regex uri(R"((?:^URIs:|^deb)\s+(?:\[[^\]]*\]\s+)?(https?://\S+))");
    for (const auto& f : files) {
        std::ifstream in(f);
        for (std::string line; std::getline(in, line);) {
            std::smatch m;
            if (std::regex_search(line, m, uri)) return host_of(m[1].str());
        }
    }
    test::skip_test("no http archive in this machine's apt sources");
}

// An IPv4 address `host` resolves to here (outside any sandbox).
std::string address_of(const std::string& host) {
    auto r = test::run({"/usr/bin/getent", "ahostsv4", host});
    REQUIRE(r.exit_code == 0);
    return r.out.substr(0, r.out.find(' '));
}

// The processes running the proxy program of `plugin_dir`.
std::vector<pid_t> proxies_of(const fs::path& plugin_dir) {
    std::vector<pid_t> found;
    const fs::path program = plugin_dir / "confine-proxy";
    for (const auto& p : test::processes_with("")) {
        std::error_code link_ec;
        const fs::path exe = fs::read_symlink("/proc/" + std::to_string(p.pid) + "/exe", link_ec);
        if (!link_ec && exe == program) found.push_back(p.pid);
    }
    return found;
}

struct Reported {
    int exit_code;
    std::string out, err;
    json report;
};

// `script` run by /bin/sh, confined the way `box` says, with `flags` before "--" and a
// report; the tree's home as HOME. The proxy must be gone once confinectl is.
Reported run_proxied(const Sandbox& box, const Tree& tree, const std::string& script, bool unprivileged, const std::vector<std::string>& flags) {
    const fs::path report = tree.root / "report.json";
    fs::remove(report);
    auto a = box.args(tree, {"/bin/sh", "-c", script});
    if (box.way != Way::landlock_forked) a.insert(a.begin() + 1, {"--report", report.string()});
    a.insert(a.begin() + 1, flags.begin(), flags.end());
    auto r = box.confine.run(a, {"HOME=" + tree.home.string(), "PATH=/usr/bin:/bin"}, as_user(unprivileged));
    INFO(name_of(box.way) << (unprivileged ? ", as nobody" : ", as root") << ": " << script << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(proxies_of(box.confine.plugin_dir()).empty());
    REQUIRE(fs::exists(report));
    return {r.exit_code, r.out, r.err, json::parse(test::read_file(report))};
}

// The report's entry for host:port, or null.
json entry_for(const json& report, const std::string& host, int port) {
    if (!report["network_requests"].is_array()) return nullptr;
    for (const auto& e : report["network_requests"])
        if (e["host"] == host && e["port"] == port) return e;
    return nullptr;
}

// A unix stream socket of the host's, by path (anyone's to connect to) and by abstract
// name, that counts who reaches it.
struct HostUnixService {
    int path_fd = -1, abstract_fd = -1;
    std::string abstract_name = "confine-proxy-test-" + std::to_string(::getpid());
    explicit HostUnixService(const fs::path& path) {
        path_fd = listening(path.string(), false);
        ::chmod(path.c_str(), 0777);
        abstract_fd = listening(abstract_name, true);
    }
    static int listening(const std::string& name, bool abstract) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path + (abstract ? 1 : 0), name.data(), name.size());
        const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (abstract ? 1 : 0));
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), size) == 0);
        REQUIRE(::listen(fd, 4) == 0);
        return fd;
    }
    bool reached() const {
        for (int fd : {path_fd, abstract_fd})
            if (const int c = ::accept(fd, nullptr, nullptr); c >= 0) {
                ::close(c);
                return true;
            }
        return false;
    }
    ~HostUnixService() {
        ::close(path_fd);
        ::close(abstract_fd);
    }
};

// A listed registry over HTTPS and an archive over HTTP reached; an unlisted host refused;
// a connection around the proxy (plain, and by TCP Fast Open), a datagram socket, and a
// unix socket of the host (by path and abstract name) refused.
void attempt_hosts(const Sandbox& box, bool unprivileged) {
    const std::string registry = registry_host(), archive = apt_host(), ip = address_of(registry);
    Tree tree(unprivileged);
    HostUnixService host_service(tree.root / "host.sock");
    const std::string py = "/usr/bin/python3 -c 'import socket,sys; ";
    const std::string escapes =
        py + "s=socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.sendto(b\"x\", socket.MSG_FASTOPEN, (sys.argv[1], 443))' " + ip +
        " 2>/dev/null; echo fastopen=$?; " + py + "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' " + (tree.root / "host.sock").string() +
        " 2>/dev/null; echo unix=$?; " + py + "s=socket.socket(socket.AF_UNIX); s.connect(\"\\0\" + sys.argv[1])' " + host_service.abstract_name +
        " 2>/dev/null; echo abstract=$?; ";
    const std::string script = escapes +
        "curl -sS -o /dev/null -w '%{http_code}\\n' https://" + registry + "/is-number; echo listed=$?; "
        "curl -sS -o /dev/null -w '%{http_code}\\n' http://" + archive + "/debian/dists/bookworm/Release; echo http=$?; "
        "curl -sS -o /dev/null https://example.com/; echo unlisted=$?; "
        "curl -sS -o /dev/null --noproxy '*' --connect-timeout 5 --resolve " + registry + ":443:" + ip + " https://" + registry + "/; echo direct=$?; "
        "/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' 2>/dev/null; echo datagram=$?";
    auto r = run_proxied(box, tree, script, unprivileged, {"-v", "--allow-host", registry, "--allow-host", archive});
    INFO(name_of(box.way) << (unprivileged ? ", as nobody" : ", as root") << "\nstdout: " << r.out << "\nstderr: " << r.err << "\nreport: " << r.report.dump());
    CHECK(r.exit_code == 0);
    CHECK(r.report["outcome"] == "completed");
    CHECK_THAT(r.out, Catch::Contains("200\nlisted=0"));
    CHECK_THAT(r.out, Catch::Contains("200\nhttp=0"));
    CHECK_THAT(r.out, !Catch::Contains("unlisted=0"));
    CHECK_THAT(r.out, !Catch::Contains("direct=0"));
    CHECK_THAT(r.out, !Catch::Contains("datagram=0"));
    CHECK_THAT(r.out, Catch::Contains("fastopen=1"));
    CHECK_THAT(r.out, Catch::Contains("unix=1"));
    CHECK_THAT(r.out, Catch::Contains("abstract=1"));
    CHECK_FALSE(host_service.reached());
    // -v: each refusal said as it happens.
    CHECK_THAT(r.err, Catch::Contains("confinectl: network: refused example.com:443"));
    const json listed = entry_for(r.report, registry, 443), plain = entry_for(r.report, archive, 80), refused = entry_for(r.report, "example.com", 443);
    REQUIRE(listed.is_object());
    CHECK(listed["allowed"] == true);
    CHECK(listed["bytes_down"].get<std::uint64_t>() > 0);
    CHECK(listed["bytes_up"].get<std::uint64_t>() > 0);
    REQUIRE(plain.is_object());
    CHECK(plain["allowed"] == true);
    REQUIRE(refused.is_object());
    CHECK(refused["allowed"] == false);
    CHECK(refused["bytes_down"] == 0);
    // Around the proxy, nothing reached the registry: the proxy saw only its own.
    CHECK(listed["connections"] == 1);
}

// A wildcard reaches a name beneath it, and npm reaches the registry with no flag of its own.
void attempt_wildcard_and_npm(const Sandbox& box, bool unprivileged) {
    const std::string registry = registry_host();
    const auto dot = registry.find('.');
    if (dot == std::string::npos || registry.find('.', dot + 1) == std::string::npos) test::skip_test("the registry's name has no parent domain");
    Tree tree(unprivileged);
    const std::string script = "curl -sS -o /dev/null -w '%{http_code}\\n' https://" + registry + "/is-number; echo wildcard=$?; "
                               "cd " + tree.ws.string() + " && npm install -s --no-audit --no-fund is-number && cat node_modules/is-number/package.json | grep -c '\"name\": \"is-number\"'; echo npm=$?";
    auto r = run_proxied(box, tree, script, unprivileged, {"--allow-host", "*" + registry.substr(dot)});
    INFO("stdout: " << r.out << "\nstderr: " << r.err << "\nreport: " << r.report.dump());
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("200\nwildcard=0"));
    CHECK_THAT(r.out, Catch::Contains("1\nnpm=0"));
    const json listed = entry_for(r.report, registry, 443);
    REQUIRE(listed.is_object());
    CHECK(listed["allowed"] == true);
    CHECK(listed["connections"].get<int>() >= 2);
}

// A TCP service on the host's loopback that counts who reaches it.
struct LoopbackService {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int port = 0;
    LoopbackService() {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof a;
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        REQUIRE(::listen(fd, 16) == 0);
        REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) == 0);
        port = ntohs(a.sin_port);
    }
    bool reached() const {
        const int c = ::accept(fd, nullptr, nullptr);
        if (c >= 0) ::close(c);
        return c >= 0;
    }
    ~LoopbackService() { ::close(fd); }
};

// A listed name that resolves to the host's loopback is refused: the service there is not
// reached, and the report says why.
void attempt_loopback(const Sandbox& box, bool unprivileged) {
    LoopbackService service;
    Tree tree(unprivileged);
    const std::string target = "localhost:" + std::to_string(service.port);
    // Through the proxy whatever NO_PROXY says of localhost (curl would go direct, and be refused).
    // With -v, and the command's own stderr sent elsewhere: what is left is confinectl's, the proxy's refusal among it.
    auto r = run_proxied(box, tree, "curl -sS --noproxy '' -o /dev/null -w '%{http_code}\\n' http://" + target + "/ 2>/dev/null; echo proxied=$?",
                         unprivileged, {"-v", "--allow-host", target});
    INFO("stdout: " << r.out << "\nstderr: " << r.err << "\nreport: " << r.report.dump());
    CHECK_THAT(r.out, Catch::Contains("403"));
    CHECK_THAT(r.err, Catch::Contains("confinectl: network: refused " + target));
    std::string unprefixed;  // -v: every line starts with "confinectl: ", the proxy's too (confinectl(1))
    for (std::size_t at = 0; at < r.err.size();) {
        const std::size_t end = std::min(r.err.find('\n', at), r.err.size());
        if (r.err.compare(at, 12, "confinectl: ") != 0) unprefixed += r.err.substr(at, end - at) + "\n";
        at = end + 1;
    }
    CHECK(unprefixed.empty());
    CHECK_FALSE(service.reached());
    const json refused = entry_for(r.report, "localhost", service.port);
    REQUIRE(refused.is_object());
    CHECK(refused["allowed"] == false);
    CHECK_THAT(refused["reason"].get<std::string>(), Catch::Contains("loopback"));
}

// confinectl killed with SIGKILL in the middle of a run: its proxy ends all the same.
void attempt_killed(const Sandbox& box, bool unprivileged) {
    Tree tree(unprivileged);
    auto a = box.args(tree, {"/bin/sleep", "60"});
    a.insert(a.begin() + 1, {"--allow-host", "example.com"});
    std::vector<std::string> argv = as_user(unprivileged);
    argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + box.confine.scratch("cache").string(),
                             box.confine.confinectl().string()});
    argv.insert(argv.end(), a.begin(), a.end());
    std::vector<char*> raw;
    for (auto& s : argv) raw.push_back(s.data());
    raw.push_back(nullptr);
    pid_t pid = -1;
    REQUIRE(::posix_spawn(&pid, raw.front(), nullptr, nullptr, raw.data(), environ) == 0);
    auto wait_for = [&](auto done) {
        for (int i = 0; i < 200 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return done();
    };
    const bool started = wait_for([&] { return !proxies_of(box.confine.plugin_dir()).empty(); });
    // The proxy confined itself once started: no privilege to gain (and Landlock's read-only
    // domain, which /proc does not show).
    for (const pid_t proxy : proxies_of(box.confine.plugin_dir())) {
        const fs::path status = "/proc/" + std::to_string(proxy) + "/status";
        CHECK(wait_for([&] { return test::read_file(status).find("NoNewPrivs:\t1") != std::string::npos; }));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    INFO(name_of(box.way) << (unprivileged ? ", as nobody" : ", as root"));
    CHECK(started);
    CHECK(wait_for([&] { return proxies_of(box.confine.plugin_dir()).empty(); }));
}

// Makes a wheel of a package with nothing in it at argv[1] (pip reads its METADATA).
constexpr const char* wheel_maker = R"(import os, sys, zipfile
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("confineprobe/__init__.py", "")
    z.writestr("confineprobe-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: confineprobe\nVersion: 1.0\n")
    z.writestr("confineprobe-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("confineprobe-1.0.dist-info/RECORD", "")
)";

// A git repository ("dumb" HTTP: files) and a directory of wheels, served over HTTP on
// the host's loopback by python's http.server; ended when this goes.
struct GitServer {
    test::TempDir dir{"/var/tmp"};
    pid_t pid = -1;
    int port = 0;
    GitServer() {
        const fs::path src = dir / "src", bare = dir / "served" / "repo.git";
        fs::create_directories(src);
        test::write_file(src / "file.txt", "served through the proxy\n", fs::perms(0644));
        const std::string git = "/usr/bin/git";
        for (const auto& argv : std::vector<std::vector<std::string>>{
                 {git, "init", "-q", src.string()},
                 {git, "-C", src.string(), "add", "file.txt"},
                 {git, "-C", src.string(), "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "one"},
                 {git, "clone", "-q", "--bare", src.string(), bare.string()},
                 {git, "-C", bare.string(), "update-server-info"},
                 {"/usr/bin/python3", "-c", wheel_maker, (dir / "served" / "wheels" / "confineprobe-1.0-py3-none-any.whl").string()},
                 {"/bin/chmod", "-R", "a+rX", dir.path().string()}})
            REQUIRE(test::run(argv).exit_code == 0);
        port = LoopbackService().port;  // a free port, given back at once
        std::vector<std::string> argv{"/usr/bin/python3", "-m", "http.server", std::to_string(port), "--bind", "127.0.0.1", "--directory",
                                      (dir / "served").string()};
        std::vector<char*> raw;
        for (auto& a : argv) raw.push_back(a.data());
        raw.push_back(nullptr);
        posix_spawn_file_actions_t quiet;
        posix_spawn_file_actions_init(&quiet);
        posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
        REQUIRE(::posix_spawn(&pid, raw.front(), &quiet, nullptr, raw.data(), environ) == 0);
        posix_spawn_file_actions_destroy(&quiet);
        for (int i = 0; i < 100; ++i) {
            if (test::run({"/usr/bin/curl", "-s", "-o", "/dev/null", "--noproxy", "*", "http://127.0.0.1:" + std::to_string(port) + "/"}).exit_code == 0) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        FAIL("the test's git server did not start");
    }
    ~GitServer() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

// git clones and pip downloads over HTTP from a host listed by its address (a loopback
// address, which the proxy lets through only because it is listed), with no flag of their own.
void attempt_git(const Sandbox& box, bool unprivileged) {
    GitServer server;
    Tree tree(unprivileged);
    const std::string listed = "127.0.0.1:" + std::to_string(server.port);
    const std::string script = "cd " + tree.ws.string() + " && git clone -q http://" + listed + "/repo.git clone && cat clone/file.txt && " +
                               "/usr/bin/python3 -m pip download -q --no-index --find-links http://" + listed + "/wheels/ -d dl confineprobe && ls dl";
    auto r = run_proxied(box, tree, script, unprivileged, {"--allow-host", listed});
    INFO("stdout: " << r.out << "\nstderr: " << r.err << "\nreport: " << r.report.dump());
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("served through the proxy"));
    CHECK_THAT(r.out, Catch::Contains("confineprobe-1.0-py3-none-any.whl"));
    const json entry = entry_for(r.report, "127.0.0.1", server.port);
    REQUIRE(entry.is_object());
    CHECK(entry["allowed"] == true);
    CHECK(entry["bytes_down"].get<std::uint64_t>() > 0);
    CHECK(r.report["network_over_limit"] == 0);  // the proxy's count, in the run's report
}

void attempt_all(Way way, void (*attempt)(const Sandbox&, bool)) {
    Sandbox box(way);
    attempt(box, false);
    test::require_user_switch();
    attempt(box, true);
}

}  // namespace

#define PROXY_CASES(WAY, TAG)                                                                                                                  \
    TEST_CASE("through " TAG " the command reaches the listed hosts through the proxy and nothing else, as root and as nobody",               \
              "[proxy][e2e][network-reach][linux-only]") {                                                                                                    \
        attempt_all(WAY, attempt_hosts);                                                                                                       \
    }                                                                                                                                          \
    TEST_CASE("through " TAG " a wildcard reaches a name beneath it, and npm reaches the registry, as root and as nobody",                     \
              "[proxy][e2e][network-reach][linux-only]") {                                                                                                    \
        attempt_all(WAY, attempt_wildcard_and_npm);                                                                                            \
    }                                                                                                                                          \
    TEST_CASE("through " TAG " a listed name that resolves to loopback is refused, as root and as nobody", "[proxy][e2e][linux-only]") {      \
        attempt_all(WAY, attempt_loopback);                                                                                                    \
    }                                                                                                                                          \
    TEST_CASE("through " TAG " git clones and pip downloads over HTTP from a host listed by address, as root and as nobody", "[proxy][e2e][linux-only]") {     \
        attempt_all(WAY, attempt_git);                                                                                                         \
    }                                                                                                                                          \
    TEST_CASE("through " TAG " the proxy ends when confinectl is killed, as root and as nobody", "[proxy][e2e][linux-only]") {                \
        attempt_all(WAY, attempt_killed);                                                                                                      \
    }

PROXY_CASES(Way::bwrap, "the bwrap plugin")
PROXY_CASES(Way::runner_command, "an asserted runner_command")
PROXY_CASES(Way::landlock_launcher, "landlock-run")
PROXY_CASES(Way::landlock_forked, "landlock in a forked child")
PROXY_CASES(Way::landlock_in_place, "the landlock way that runs in place otherwise")

TEST_CASE("bad host patterns and a network that contradicts them are refused before anything runs", "[proxy][linux-only]") {
    test::Installed confine;
    for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
             {"--allow-host", ""},
             {"--allow-host", "https://example.org"},
             {"--allow-host", "example.org/path"},
             {"--allow-host", "::1"},
             {"--allow-host", "1.2.3"},
             {"--allow-host", "example.org:0"},
             {"--allow-host", "*"},
             {"--allow-host", "user@example.org"},
             {"--network", "allow", "--allow-host", "example.org"},
             {"--network", "none", "--allow-host", "example.org"}}) {
        std::vector<std::string> args{"run"};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/bin/true"});
        auto r = confine.run(args);
        INFO(flags.back() << ": " << r.err);
        CHECK(r.exit_code == 125);
        CHECK(test::line_count(r.err) == 1);
        CHECK(proxies_of(confine.plugin_dir()).empty());
    }
    // A wrap alone has no run to hold the proxy: it takes no --allow-host, and refuses the configuration's.
    auto wrapped = confine.run({"wrap", "--json", "--allow-host", "example.org", "--", "/bin/true"});
    CHECK(wrapped.exit_code == 125);
    CHECK_THAT(wrapped.err, Catch::Contains("unknown option '--allow-host'"));
    const fs::path config = confine.scratch("allow-hosts.toml");
    test::write_file(config, "[policy]\nallow_hosts = [\"example.org\"]\n");
    auto configured = confine.run({"wrap", "--json", "--config", config.string(), "--", "/bin/true"});
    CHECK(configured.exit_code == 125);
    CHECK_THAT(configured.err, Catch::Contains("needs a run"));
}

TEST_CASE("[policy] allow_hosts is read with a position for each bad entry, and contradicts network = \"allow\"", "[proxy][config]") {
    auto bad = [](const std::string& text) {
        auto cfg = confine::parse_config(text, "test.toml");
        REQUIRE_FALSE(cfg);
        return cfg.error().message;
    };
    CHECK_THAT(bad("[policy]\nallow_hosts = [\"example.org\", \"http://x\"]\n"), Catch::StartsWith("test.toml:2:"));
    CHECK_THAT(bad("[policy]\nnetwork = \"allow\"\nallow_hosts = [\"example.org\"]\n"), Catch::Contains("one or the other"));
    CHECK_THAT(bad("[policy]\nallow_hosts = \"example.org\"\n"), Catch::Contains("array of strings"));
    auto good = confine::parse_config("[policy]\nallow_hosts = [\"Example.ORG\", \"example.org\", \"*.npmjs.org\"]\n", "test.toml");
    REQUIRE(good);
    CHECK(good->network == confine::Network::proxy);
    CHECK(good->allow_hosts == std::vector<std::string>{"example.org", "*.npmjs.org"});
}

TEST_CASE("a run through the proxy that writes no report starts its command under bubblewrap, the proxy's descriptors in order",
          "[proxy][e2e][linux-only]") {
    // Without --report the descriptors confinectl holds are fewer: the proxy's pipes then
    // take the numbers the proxy is given them at, which must not mix them up.
    Sandbox box(Way::bwrap);
    Tree tree(false);
    auto a = box.args(tree, {"/bin/sh", "-c", "echo ran"});
    a.insert(a.begin() + 1, {"--allow-host", "example.org"});
    auto proxied = box.confine.run(a);
    INFO(proxied.err);
    CHECK(proxied.exit_code == 0);
    CHECK(proxied.out == "ran\n");
    CHECK(proxies_of(box.confine.plugin_dir()).empty());
}

TEST_CASE("a proxy program the command could replace is refused: nothing runs", "[proxy][e2e][linux-only]") {
    Sandbox box(Way::bwrap);
    Tree tree(false);
    // A plugin directory in the workspace holding a proxy program: the first one found.
    const fs::path tools = tree.ws / "tools";
    fs::create_directories(tools);
    fs::copy_file(box.confine.plugin_dir() / "confine-proxy", tools / "confine-proxy");
    fs::permissions(tools / "confine-proxy", fs::perms(0755));
    test::write_file(box.config, "plugin_dirs = [\"" + tools.string() + "\"]\n" + test::way_config(Way::bwrap));
    const fs::path marker = tree.ws / "ran";
    auto a = box.args(tree, {"/bin/sh", "-c", "touch " + marker.string()});
    a.insert(a.begin() + 1, {"--allow-host", "example.org"});
    auto r = box.confine.run(a);
    INFO(r.err);
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("refusing " + (tools / "confine-proxy").string()));
    CHECK_FALSE(fs::exists(marker));
}
