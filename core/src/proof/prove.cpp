// The host's side of a proof (confine/prove.hpp): a throwaway workspace, listeners and
// processes of its own, and for each check a canary run confined through the provider,
// then judged by what the world shows. POSIX only (core/src/proof/unavailable.cpp is
// Windows').
#include <confine/prove.hpp>

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include "canary.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#define CONFINE_PROVE_PTRACE 1
#endif

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace confine {
namespace {

namespace fs = std::filesystem;
using proving::loopback;
using proving::stat_state_and_start;
using proving::unix_address;

// What the host listens with, outside every sandbox, and how it learns what arrived.
struct Listeners {
    int tcp = -1, udp = -1, abstract_unix = -1, path_unix = -1, abstract_dgram = -1, path_dgram = -1;
    int tcp_port = 0, udp_port = 0;
    std::string abstract_name = "confine-prove-" + std::to_string(::getpid());
    std::string abstract_dgram_name = "confine-prove-dgram-" + std::to_string(::getpid());
    fs::path path, dgram_path;

    explicit Listeners(fs::path socket_path, fs::path dgram_socket_path) : path(std::move(socket_path)), dgram_path(std::move(dgram_socket_path)) {
        tcp = nonblocking(::socket(AF_INET, SOCK_STREAM, 0));
        udp = nonblocking(::socket(AF_INET, SOCK_DGRAM, 0));
        tcp_port = bound(tcp);
        udp_port = bound(udp);
        if (tcp >= 0) ::listen(tcp, 4);
        abstract_unix = listening(abstract_name, true);
        path_unix = listening(path.string(), false);
        ::chmod(path.c_str(), 0777);  // anyone's to connect to, but for the sandbox
        abstract_dgram = datagram(abstract_dgram_name, true);
        path_dgram = datagram(dgram_path.string(), false);
        ::chmod(dgram_path.c_str(), 0777);
    }
    ~Listeners() {
        for (int fd : {tcp, udp, abstract_unix, path_unix, abstract_dgram, path_dgram})
            if (fd >= 0) ::close(fd);
    }
    // A unix datagram socket bound to `name`, or -1 (an abstract name where there are none).
    static int datagram(const std::string& name, bool abstract) {
        const int fd = nonblocking(::socket(AF_UNIX, SOCK_DGRAM, 0));
        sockaddr_un a;
        const socklen_t size = unix_address(name, abstract, a);
        if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), size) == 0) return fd;
        if (fd >= 0) ::close(fd);
        return -1;
    }
    // Whether a datagram waits on `fd`.
    static bool got_datagram(int fd) {
        char byte = 0;
        return fd >= 0 && ::recv(fd, &byte, 1, MSG_DONTWAIT) >= 0;
    }
    bool ready() const { return tcp_port && udp_port && abstract_unix >= 0 && path_unix >= 0; }
    static int bound(int fd) {
        if (fd < 0) return 0;
        sockaddr_in a = loopback(0);
        socklen_t size = sizeof a;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) != 0) return 0;
        return ntohs(a.sin_port);
    }
    // `fd` made non-blocking and close-on-exec (portably: no SOCK_NONBLOCK there).
    static int nonblocking(int fd) {
        if (fd >= 0) {
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
            ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        }
        return fd;
    }
    static int listening(const std::string& name, bool abstract) {
        const int fd = nonblocking(::socket(AF_UNIX, SOCK_STREAM, 0));
        sockaddr_un a;
        const socklen_t size = unix_address(name, abstract, a);
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), size) != 0 || ::listen(fd, 4) != 0) return -1;
        return fd;
    }
    static bool accepted(int fd) {
        const int c = ::accept(fd, nullptr, nullptr);
        if (c >= 0) ::close(c);
        return c >= 0;
    }
    bool received() const {
        char byte = 0;
        return ::recv(udp, &byte, 1, MSG_DONTWAIT) == 1;
    }
};

// Set, in a host process, only by a tracer that wrote its memory (the trace check).
volatile long traced_marker = 0;

// A process of the host's, for a canary to try to signal or trace: alive until told
// otherwise, and ended with status 42 the moment its memory says it was written.
struct HostProcess {
    pid_t pid = ::fork();
    HostProcess() {
        if (pid == 0) {
            for (;;) {
                if (traced_marker != 0) ::_exit(42);
                ::usleep(5000);
            }
        }
    }
    ~HostProcess() {
        if (pid <= 0) return;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    // Its wait status if it ended within `patience` (a signal's delivery, or a write to
    // its memory, and the exit that follows take a moment after the canary is done).
    std::optional<int> end_status(std::chrono::milliseconds patience) {
        const auto until = std::chrono::steady_clock::now() + patience;
        for (;;) {
            int status = 0;
            const pid_t done = ::waitpid(pid, &status, WNOHANG);
            if (done == pid) {
                pid = -1;
                return status;
            }
            if (done < 0 || std::chrono::steady_clock::now() >= until) return std::nullopt;
            ::usleep(5000);
        }
    }
    bool ended(std::chrono::milliseconds patience) { return end_status(patience).has_value(); }
    // Whether a tracer wrote its memory: it ends with status 42 within `patience`.
    bool written(std::chrono::milliseconds patience) {
        const auto status = end_status(patience);
        return status && WIFEXITED(*status) && WEXITSTATUS(*status) == 42;
    }
};

class Prover {
public:
    Prover(const confine::Provider& provider, std::vector<std::string> command, fs::path dir)
        : provider_(provider), command_(std::move(command)), dir_(std::move(dir)) {}

    // Runs one canary confined, from `environment` (nullopt: this process's); what it
    // printed (its own view), or why it could not run.
    std::string canary(const confine::PolicyRequest& policy, const std::string& what, const std::string& arg, const std::string& arg2 = "",
                       std::optional<std::vector<std::string>> environment = std::nullopt, const confine::Limits& limits = {}) const {
        std::vector<std::string> argv = command_;
        argv.insert(argv.end(), {what, arg});
        if (!arg2.empty()) argv.push_back(arg2);
        confine::RunOptions options;
        options.limits = limits;
        options.environment = std::move(environment);
        options.timeout = std::chrono::seconds(30);
        auto process = confine::spawn(provider_, policy, argv, options);
        if (!process) return process.error().message;
        const auto& done = process->wait();
        last_ = done.outcome;
        if (done.outcome.kind == confine::OutcomeKind::sandbox_unavailable) return "sandbox unavailable: " + done.outcome.evidence;
        return done.stdout_text;
    }

    // The same, confined by `policy` as it is (its network too, not the configuration's).
    std::string canary(const confine::Policy& policy, const std::string& what, const std::string& arg, const std::string& arg2 = "",
                       std::optional<std::vector<std::string>> environment = std::nullopt, const confine::Limits& limits = {}) const {
        return canary(confine::PolicyRequest(policy), what, arg, arg2, std::move(environment), limits);
    }

    confine::Policy workspace_policy(confine::Network network) const {
        confine::Policy p{confine::Mode::workspace_write, dir_ / "ws", {}};
        p.network = network;
        return p;
    }

    // The level the last canary's runner reported for `dimension` ("not asked" where the
    // policy did not ask it), or "" where it reported nothing or the dimension is no runner's.
    std::string reported(const std::string& dimension) const {
        if (!last_.dimensions) return {};
        const auto& d = *last_.dimensions;
        auto asked = [](bool is, confine::Level level) { return is ? std::string(confine::to_string(level)) : std::string("not asked"); };
        if (dimension == "write") return std::string(confine::to_string(d.write));
        if (dimension == "network") return asked(last_.network_asked, d.network);
        if (dimension == "processes") return std::string(confine::to_string(d.processes));
        // A scoped run's reads: the scope's level, and the deny list's where it asked one.
        if (dimension == "read" && last_.read_scoped)
            return std::string(confine::to_string(last_.read_asked ? std::min(d.read, d.read_scope) : d.read_scope));
        if (dimension == "read") return asked(last_.read_asked, d.read);
        if (dimension == "protect") return asked(last_.protect_asked, d.protect);
        if (dimension == "lifetime") return std::string(confine::to_string(d.lifetime));
        if (dimension == "limits") return asked(last_.limits_asked, d.limits);
        return {};
    }

    // The paths the last canary's runner listed as what it costs ("cost: ...: A, B").
    std::vector<std::string> costs() const {
        std::vector<std::string> out;
        if (!last_.dimensions) return out;
        const std::string part = confine::open_about(last_.dimensions->open, "cost");
        const std::size_t list = part.rfind(": ");
        if (list == std::string::npos || list < 4) return out;
        for (std::size_t from = list + 2; from <= part.size();) {
            const std::size_t comma = part.find(", ", from);
            out.push_back(part.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
            if (comma == std::string::npos) break;
            from = comma + 2;
        }
        return out;
    }

    // What the last canary's runner said it leaves open of `dimension`, without the
    // dimension's name, or "".
    std::string explained(const std::string& dimension) const {
        if (!last_.dimensions) return {};
        const std::string part = confine::open_about(last_.dimensions->open, dimension);
        return part.substr(std::min(part.size(), dimension.size() + 2));
    }

private:
    const confine::Provider& provider_;
    std::vector<std::string> command_;  // the canary's argv prefix
    fs::path dir_;
    mutable confine::Outcome last_;
};

// One check's result, judged against what the runner reported of `dimension` for the
// canary just run through `p`; `hole`: the words that name, in a runner's explanation of a
// partial level, what the check tries (ProofCheck::outcome).
void add(Proof& proof, const Prover& p, std::string check, const std::string& dimension, bool expect_allowed, bool observed_allowed,
         std::vector<std::string> hole = {}) {
    proof.checks.push_back({std::move(check), dimension, expect_allowed ? "allowed" : "refused", observed_allowed ? "allowed" : "refused",
                            p.reported(dimension), p.explained(dimension), std::move(hole)});
}

// Whether process `pid` is still the one that started at `start` (clock ticks since boot,
// /proc/PID/stat's 22nd field), and not a zombie.
bool still_there(long pid, unsigned long long start) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    char state = 0;
    unsigned long long started = 0;
    return stat_state_and_start(text.c_str(), state, started) && state != 'Z' && started == start;
}

// A daemon the canary starts (a session of its own, a double fork, SIGTERM ignored) is
// gone once the run has ended: a run owns its processes.
void prove_lifetime(const Prover& p, const confine::Policy& policy, Proof& proof) {
    const std::string said = p.canary(policy, "daemon", "-");
    long pid = 0;
    unsigned long long start = 0;
    const bool started = said.starts_with("ok ") && std::sscanf(said.c_str() + 3, "%ld %llu", &pid, &start) == 2 && pid > 0;
    bool outlived = false;
    if (started) {
        // Ended by the run's end, or a moment after (a subreaper's kill and reap).
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while ((outlived = still_there(pid, start)) && std::chrono::steady_clock::now() < until) ::usleep(10000);
        if (outlived) ::kill(static_cast<pid_t>(pid), SIGKILL);  // the proof's own leftover, not the user's
    }
    add(proof, p, "a daemon started by the command (setsid, double fork, SIGTERM ignored) after the run", "lifetime", false, outlived,
        {"daemon", "leaves running"});
}

// A variable with a secret-looking name, set by the host for the canary's run only, with a
// value of its own: held when the value never reaches the canary's output, where the
// configuration's [policy.env] removes such a name (else the canary is expected to see it).
void prove_environment(const confine::Provider& provider, const Prover& p, const confine::Policy& policy, Proof& proof) {
    const std::string name = "CONFINE_PROVE_TOKEN";
    std::random_device random;
    char value[40];
    std::snprintf(value, sizeof value, "canary-%08x%08x", random(), random());
    std::vector<std::string> environment = confine::current_environment();
    environment.push_back(name + "=" + value);
    const std::string entry[] = {name + "=" + value};
    const auto filtered = confine::filter_environment(provider.config().environment, entry);
    const bool expect_seen = filtered && filtered->removed.empty();
    const std::string said = p.canary(policy, "env", name, "", std::move(environment));
    // Seen if its value is anywhere in what the canary printed, or the canary did not say.
    const bool seen = said.find(value) != std::string::npos || !said.starts_with("refused");
    add(proof, p, "a variable with a secret-looking name (" + name + ")", "env", expect_seen, seen);
}

// A descriptor its caller leaked to confinectl, as build tools and shells do: a canary file
// outside, open for appending and inheritable on purpose. Held when the canary's write
// through it never reached the file (docs/design.md §11: the command gets descriptors 0,
// 1 and 2, and those passed on by name, nothing else).
void prove_descriptor(const Prover& p, const confine::Policy& policy, const fs::path& outside, Proof& proof) {
    const fs::path file = outside / "leaked";
    { std::ofstream(file) << "the host's"; }
    const int leaked = ::open(file.c_str(), O_WRONLY | O_APPEND);  // not close-on-exec: the leak
    if (leaked < 0) {
        proof.error = "cannot open the canary file for the descriptor check: " + std::string(std::strerror(errno));
        return;
    }
    p.canary(policy, "descriptor", std::to_string(leaked));
    ::close(leaked);
    std::string now;
    { std::ifstream in(file); std::getline(in, now, '\0'); }
    add(proof, p, "a descriptor of a file outside, leaked by confinectl's caller", "write", false, now != "the host's", {"descriptor"});
}

// A small limit: a canary that writes 1 MiB to a file in the workspace under a file-size
// limit of 64 KiB. Held when the file stayed within the limit (the canary was stopped);
// open where the host reports it holds no limit.
void prove_limits(const Prover& p, const confine::Policy& policy, const fs::path& ws, Proof& proof) {
    confine::Limits limits;
    limits.file_size = 64 << 10;
    const fs::path file = ws / "filled";
    p.canary(policy, "fill", file.string(), std::to_string(1 << 20), std::nullopt, limits);
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    add(proof, p, "a file written past a file-size limit of 64 KiB", "limits", false, !ec && size > (64u << 10), {"file size", "file-size"});
}

// A provider like `provider`, selecting the same runner, for the canaries that deny and
// protect: their paths are the proof's own, not a user's explicit ask (docs/design.md
// §12), so they are held to the ordinary minimums — a runner that cannot enforce them
// then runs the canary, and the check shows open as the runner reports, instead of
// nothing running. Null when it cannot be had.
std::unique_ptr<confine::Provider> canaries_provider(const confine::Provider& provider) {
    confine::Config config = provider.config();
    config.minimums.explicit_read = config.minimums.read;
    config.minimums.explicit_protect = config.minimums.protect;
    const confine::Selection& s = provider.selection();
    if (s.runner && !s.asserted) config.platforms[s.platform].chain = {*s.runner};
    config.plugin_dirs.clear();
    confine::ProviderOptions options;
    options.platform = s.platform;
    options.builtin_plugin_dirs = provider.plugin_dirs();
    auto made = confine::Provider::create(std::move(config), std::move(options));
    return made ? std::move(*made) : nullptr;
}

// Writes inside the workspace and out of it (plainly, through a link, in read-only mode,
// by a rename from outside, and to a file's mode): judged by what is on disk.
void prove_writes(const Prover& p, const confine::Policy& policy, const fs::path& ws, const fs::path& outside, Proof& proof) {
    auto read_only = policy;
    read_only.mode = confine::Mode::read_only;
    read_only.workspace.clear();
    p.canary(policy, "write", (ws / "inside").string());
    add(proof, p, "a write inside the workspace", "write", true, fs::exists(ws / "inside"));
    p.canary(policy, "write", (outside / "escaped").string());
    add(proof, p, "a write outside the writable roots", "write", false, fs::exists(outside / "escaped"));
    p.canary(policy, "write", (ws / "out" / "through-link").string());
    add(proof, p, "a write through a link out of the workspace", "write", false, fs::exists(outside / "through-link"), {"link"});
    p.canary(read_only, "write", (ws / "read-only").string());
    add(proof, p, "a write in read-only mode", "write", false, fs::exists(ws / "read-only"));
    const fs::path victim = outside / "victim";
    { std::ofstream(victim) << "the host's"; }
    p.canary(policy, "rename", victim.string(), (ws / "taken").string());
    add(proof, p, "a rename of a file from outside into the workspace", "write", false, !fs::exists(victim) || fs::exists(ws / "taken"),
        {"rename"});
    // Metadata: the mode of a file outside, the caller's own, judged on disk. Open where the
    // runner reports write partial (Landlock does not govern metadata, and says so).
    const fs::path mode_canary = outside / "mode";
    { std::ofstream(mode_canary) << "the host's"; }
    ::chmod(mode_canary.c_str(), 0644);
    p.canary(policy, "chmod", mode_canary.string());
    struct stat mode_after {};
    add(proof, p, "a change of mode of a file outside the writable roots (metadata)", "write", false,
        ::stat(mode_canary.c_str(), &mode_after) != 0 || (mode_after.st_mode & 07777) != 0644, {"metadata"});
}

// A secret under a denied directory: judged by the bytes (and the name) that came out.
void prove_denied_read(const Prover& q, const confine::Policy& policy, const fs::path& dir, Proof& proof) {
    const fs::path secrets = dir / "secrets";
    fs::create_directories(secrets);
    const std::string secret = "confine-prove-secret-" + std::to_string(::getpid());
    { std::ofstream(secrets / "canary-key") << secret; }
    auto denying = policy;
    denying.deny_read.push_back(secrets);
    const std::string read = q.canary(denying, "read", (secrets / "canary-key").string());
    add(proof, q, "a read of a secret under a denied directory", "read", false, read.find(secret) != std::string::npos, {secrets.string()});
    const std::string listed = q.canary(denying, "list", secrets.string());
    add(proof, q, "a listing of a denied directory", "read", false, listed.find("canary-key") != std::string::npos, {secrets.string()});
    // What the deny list costs: the directory that holds a denied one may be listed (the
    // policy denies only what is in the list); a runner that cannot allow it says so.
    const std::string around = q.canary(denying, "list", dir.string());
    add(proof, q, "a listing of the directory a denied one lies in (what the deny list costs)", "read", true,
        around.find("secrets") != std::string::npos);
    proof.checks.back().costly = dir.string();
    proof.checks.back().costs = q.costs();
}

// Reads scoped ([policy] read = "scoped"): a secret beside the workspace, in no read
// root, judged by the bytes that came out. The canary's program's installed tree (two
// levels above it) is a read root of the canary's, which must run.
void prove_read_scope(const Prover& q, const confine::Policy& policy, const fs::path& dir, const fs::path& program, Proof& proof) {
    const fs::path beside = dir / "beside";
    fs::create_directories(beside);
    const std::string secret = "confine-prove-scope-" + std::to_string(::getpid());
    { std::ofstream(beside / "canary") << secret; }
    confine::PolicyRequest scoped(policy);
    scoped.read_scoped = true;
    scoped.read_roots = {program.parent_path().parent_path()};
    const std::string read = q.canary(scoped, "read", (beside / "canary").string());
    // A canary that did not run proves nothing: said, never counted as held.
    if (!read.starts_with("ok") && !read.starts_with("refused")) {
        proof.error = "the read scope's canary did not run: " + read.substr(0, read.find('\n'));
        return;
    }
    add(proof, q, "a read outside the read scope (beside the workspace, in no read root)", "read", false, read.find(secret) != std::string::npos,
        {"scope", beside.string()});
}

// git redirected: the workspace's repository made whole (HEAD, objects, refs, config) and
// protected as a repository (an entry under .git), then a commondir planted where none
// was, which would send the user's next git to a repository of the command's own, and
// .git renamed away, which would let it build another; judged by what is on disk once
// the run (and its run-end check) is over.
void prove_git_redirect(const Prover& q, const confine::Policy& protecting, const fs::path& ws, Proof& proof) {
    const fs::path git_dir = ws / ".git";
    fs::create_directories(git_dir / "objects");
    fs::create_directories(git_dir / "refs" / "heads");
    { std::ofstream(git_dir / "HEAD") << "ref: refs/heads/main\n"; }
    { std::ofstream(git_dir / "config") << "[core]\n\trepositoryformatversion = 0\n"; }
    auto repository = protecting;
    repository.protect.emplace_back(".git/config");
    q.canary(repository, "write", (git_dir / "commondir").string());
    add(proof, q, "a commondir planted in a protected repository (git redirect)", "protect", false, fs::exists(git_dir / "commondir"), {"commondir"});
    q.canary(repository, "rename", git_dir.string(), (ws / "git-moved").string());
    const bool moved = fs::exists(ws / "git-moved");
    add(proof, q, "a rename of a protected repository's .git (git redirect)", "protect", false, moved || !fs::exists(git_dir), {"rename", "new .git"});
    if (moved) {
        std::error_code ec;
        fs::rename(ws / "git-moved", git_dir, ec);
    }
}

// A hook of the workspace's repository, overwritten and added: judged by the file on
// disk; then the repository redirected.
void prove_protect(const Prover& q, const confine::Policy& policy, const fs::path& ws, Proof& proof) {
    const fs::path hooks = ws / ".git" / "hooks";
    fs::create_directories(hooks);
    { std::ofstream(hooks / "pre-commit") << "original"; }
    auto protecting = policy;
    protecting.protect.push_back(hooks);
    q.canary(protecting, "overwrite", (hooks / "pre-commit").string());
    std::string hook;
    { std::ifstream in(hooks / "pre-commit"); std::getline(in, hook); }
    add(proof, q, "a write to a protected hook", "protect", false, hook != "original", {hooks.string()});
    q.canary(protecting, "write", (hooks / "post-checkout").string());
    add(proof, q, "a new hook in a protected directory", "protect", false, fs::exists(hooks / "post-checkout"), {hooks.string()});
    prove_git_redirect(q, protecting, ws, proof);
}

// Connections and datagrams to the host's listeners (TCP, UDP, unix sockets abstract and
// by path), judged by what arrived. False, with the proof's error set, when the host
// cannot listen.
bool prove_network(const Prover& p, const confine::Policy& policy, bool net_allowed, const fs::path& dir, Proof& proof) {
    Listeners host(dir / "host.sock", dir / "host-dgram.sock");
    if (!host.ready()) {
        proof.error = "cannot open the host's listeners for the network checks";
        return false;
    }
    p.canary(policy, "tcp", std::to_string(host.tcp_port));
    add(proof, p, "a TCP connection to the host's loopback", "network", net_allowed, Listeners::accepted(host.tcp), {"tcp"});
    p.canary(policy, "udp", std::to_string(host.udp_port));
    add(proof, p, "a UDP datagram to the host's loopback", "network", net_allowed, host.received(), {"udp"});
    p.canary(policy, "abstract", host.abstract_name);
    add(proof, p, "an abstract unix socket of the host", "network", net_allowed, Listeners::accepted(host.abstract_unix), {"abstract"});
    p.canary(policy, "unix", host.path.string());
    add(proof, p, "a unix socket of the host outside the writable roots", "network", net_allowed, Listeners::accepted(host.path_unix),
        {"by path", "by their path", "pathname"});
    // Datagrams sent with sendmsg() to a destination, judged by whether anything arrived.
    if (host.abstract_dgram >= 0) {
        p.canary(policy, "dgram-abstract", host.abstract_dgram_name);
        add(proof, p, "a datagram to an abstract unix socket of the host (abstract datagram)", "network", net_allowed,
            Listeners::got_datagram(host.abstract_dgram), {"abstract"});
    }
    if (host.path_dgram >= 0) {
        p.canary(policy, "dgram-path", host.dgram_path.string());
        add(proof, p, "a datagram to a unix socket of the host by its path", "network", net_allowed, Listeners::got_datagram(host.path_dgram),
            {"by path", "by their path", "pathname"});
    }
    return true;
}

// The network through the run's proxy, where the runner takes it: a host it lists
// reached through the proxy, one it does not list refused there, and the listed one
// refused around it (a direct connection). The host is a service of this machine's
// loopback, listed by its address, as the proxy lets through only a listed address of
// that kind; each check judged by whether the service saw a connection.
void prove_proxy(const Prover& p, confine::Policy policy, Proof& proof) {
    const int service = Listeners::nonblocking(::socket(AF_INET, SOCK_STREAM, 0));
    const int port = Listeners::bound(service);
    if (port == 0 || ::listen(service, 4) != 0) {
        if (service >= 0) ::close(service);
        proof.error = "cannot open the host's service for the proxy checks";
        return;
    }
    const std::string listed = "127.0.0.1:" + std::to_string(port);
    policy.network = confine::Network::proxy;
    policy.allow_hosts = {listed};
    const std::string said = p.canary(policy, "proxied", listed);
    // A runner that cannot take the network through a proxy runs nothing: no check to make.
    if (said.starts_with("sandbox unavailable")) {
        ::close(service);
        return;
    }
    add(proof, p, "a listed host through the run's proxy", "network", true, Listeners::accepted(service));
    p.canary(policy, "proxied", "localhost:" + std::to_string(port));
    add(proof, p, "a host the run does not list, through the run's proxy (a name of the host's loopback)", "network", false,
        Listeners::accepted(service));
    p.canary(policy, "tcp", std::to_string(port));
    add(proof, p, "a listed host around the run's proxy (a direct connection)", "network", false, Listeners::accepted(service),
        {"every address", "other host"});
    ::close(service);
}

// A process of the host's signalled, and (where there is ptrace) traced: judged by the
// host process's end.
void prove_processes(const Prover& p, const confine::Policy& policy, Proof& proof) {
    HostProcess target;
    if (target.pid < 0) {
        proof.error = "cannot start a host process for the processes check";
        return;
    }
    const std::string signalled = p.canary(policy, "signal", std::to_string(target.pid));
    // The canary's word decides only how long to wait: the proof is the host process's end.
    add(proof, p, "a signal to a process of the host", "processes", false,
        target.ended(std::chrono::milliseconds(signalled.starts_with("ok") ? 2000 : 50)), {"signal"});
#ifdef CONFINE_PROVE_PTRACE
    HostProcess traced;
    if (traced.pid < 0) {
        proof.error = "cannot start a host process for the processes check";
        return;
    }
    char address[32];
    std::snprintf(address, sizeof address, "%lx", static_cast<unsigned long>(reinterpret_cast<std::uintptr_t>(&traced_marker)));
    const std::string said = p.canary(policy, "trace", std::to_string(traced.pid) + ":" + address);
    // The canary's word decides only how long to wait: the proof is the host process's end.
    add(proof, p, "a trace of a process of the host", "processes", false,
        traced.written(std::chrono::milliseconds(said.starts_with("ok") ? 2000 : 50)), {"trace"});
#endif
}

void prove_in(const confine::Provider& provider, const std::vector<std::string>& command, const fs::path& dir, Proof& proof) {
    const fs::path ws = dir / "ws", outside = dir / "outside";
    fs::create_directories(ws);
    fs::create_directories(outside);
    fs::create_directory_symlink(outside, ws / "out");
    const confine::Network network = provider.config().network;
    proof.network = std::string(confine::to_string(network));
    const Prover p(provider, command, dir);
    auto policy = p.workspace_policy(network);
    if (network == confine::Network::proxy) policy.allow_hosts = provider.config().allow_hosts;

    prove_writes(p, policy, ws, outside, proof);
    prove_environment(provider, p, policy, proof);
    prove_descriptor(p, policy, outside, proof);
    prove_limits(p, policy, ws, proof);

    const auto lenient = canaries_provider(provider);
    const Prover q(lenient ? *lenient : provider, command, dir);
    prove_denied_read(q, policy, dir, proof);
    prove_read_scope(q, policy, dir, command.front(), proof);
    prove_protect(q, policy, ws, proof);

    if (!prove_network(p, policy, network == confine::Network::allow, dir, proof)) return;
    prove_proxy(p, policy, proof);
    prove_lifetime(p, policy, proof);
    prove_processes(p, policy, proof);
}

}  // namespace

Proof prove(const Provider& provider, std::vector<std::string> canary_command) {
    Proof proof;
    proof.runner = provider.selection().runner.value_or("");
    if (canary_command.empty() || canary_command.front().empty()) {
        proof.error = "no canary command to run";
        return proof;
    }
    char pattern[] = "/var/tmp/confine-prove.XXXXXX";
    const char* made = ::mkdtemp(pattern);
    if (!made) {
        proof.error = std::string("cannot make a throwaway workspace under /var/tmp: ") + std::strerror(errno);
        return proof;
    }
    const fs::path dir = made;
    ::chmod(made, 0755);
    try {
        prove_in(provider, canary_command, dir, proof);
    } catch (const std::exception& e) {
        proof.error = e.what();
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return proof;
}

}  // namespace confine
