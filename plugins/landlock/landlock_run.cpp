// landlock-run: runs a command confined by Landlock. The command-line contract is
// docs/landlock-run.md (version 1); other programs depend on it exactly.
//
//   landlock-run [--ro <path>]... [--rw <path>]... [--deny-read <path>]...
//                [--protect <path> | --protect-held <path> | --protect-empty <path>]...
//                [--no-network | --loopback | --proxy-port <port>] [--status-fd <n>] -- <argv>...
//   landlock-run --probe
//
// It sits in front of every confined command, so it reads no configuration, uses no
// environment variable, allocates nothing, and goes straight to execvp. What it applies
// is confine_self() (ruleset.hpp), the same as the plugin's in-process paths: every
// capability dropped, the terminal filter, the network filter when asked, then the
// ruleset. Protected paths are mounted first, in a mount namespace of the run's own
// (protect_mounts.hpp); with --loopback, a network namespace of the run's own is made
// next, its loopback brought up.
#include "protect_mounts.hpp"
#include "ruleset.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

namespace ll = confine::landlock;
constexpr int launcher_failure = 125;

// The status descriptor (--status-fd), once checked; -1 without one.
int status_fd = -1;

// A rule path that names a descriptor of this process (/proc/self/fd/N, as a host hands a
// root over): the descriptor is made close-on-exec, so that the command does not inherit it.
void close_handed_descriptor(const char* path) {
    constexpr char prefix[] = "/proc/self/fd/";
    if (std::strncmp(path, prefix, sizeof prefix - 1) != 0) return;
    int fd = 0;
    const char* digit = path + sizeof prefix - 1;
    if (*digit == '\0') return;
    for (; *digit; ++digit) {
        if (*digit < '0' || *digit > '9' || fd > 100000000) return;
        fd = fd * 10 + (*digit - '0');
    }
    if (fd > 2) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

void write_all(int fd, const char* text, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, text, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text += n;
        size -= static_cast<std::size_t>(n);
    }
}

[[noreturn]] void fatal(const char* what, const char* detail = nullptr, const char* detail2 = nullptr) {
    // One line, written at once.
    char line[4096];
    std::snprintf(line, sizeof line, "landlock-run: %s%s%s%s\n", what, detail ? detail : "", detail && detail2 ? ": " : "",
                  detail2 ? detail2 : "");
    ssize_t ignored = ::write(2, line, std::strlen(line));
    (void)ignored;
    // On the status descriptor, where there is one, the same line without its details
    // (a path, an argument): only the launcher's own words, which never hold the
    // attestation's text, however the paths it was given are named.
    if (status_fd >= 0) {
        std::size_t n = std::strlen(what);
        while (n > 0 && (what[n - 1] == ' ' || what[n - 1] == ':')) --n;
        std::snprintf(line, sizeof line, "landlock-run: %.*s\n", static_cast<int>(n), what);
        write_all(status_fd, line, std::strlen(line));
    }
    std::_Exit(launcher_failure);
}

// The number of --status-fd: decimal, 3 or more, an open descriptor; -1 otherwise.
int status_descriptor(const char* text) {
    if (!text || !*text || std::strlen(text) > 9) return -1;
    int n = 0;
    for (const char* p = text; *p; ++p) {
        if (*p < '0' || *p > '9') return -1;
        n = n * 10 + (*p - '0');
    }
    return n >= 3 && ::fcntl(n, F_GETFD) >= 0 ? n : -1;
}

const char not_enforced[] = "landlock is not enforced by this kernel (ABI unsupported or disabled)";

int probe() {
    const int abi = ll::negotiated_abi();
    if (abi < 1) fatal(not_enforced);
    // Functional: build a ruleset and confine this very process with it, through every
    // step a run takes (capabilities, terminal filter), so that a step this host
    // refuses makes the runner unusable instead of failing each run.
    int fd = ll::create_ruleset(ll::handled_access(abi), ll::scopes(abi, true), ll::handled_network(abi, true));
    if (fd < 0) fatal("landlock ruleset error: ", std::strerror(-fd));
    if (auto failed = ll::confine_self(fd, true); failed.what) fatal(failed.what, std::strerror(failed.error));
    std::puts(ll::fully_enforced(abi) ? "landlock: fully enforced" : "landlock: partially enforced (older ABI)");
    return 0;
}

// What the command line asks for, its grammar checked whole before the kernel is touched.
struct Request {
    int command = -1;  // where the command's argv starts
    bool network_none = false;    // the network confined (--no-network, --loopback, or --proxy-port)
    bool loopback = false;         // --loopback: in a network namespace of its own, its loopback usable
    std::uint16_t proxy_port = 0;  // --proxy-port: TCP connects to this port only
    // The denied paths (--deny-read), each absolute: a read-only grant goes around them.
    const char* denied[4096] = {};
    std::size_t denied_count = 0;
    bool protects = false;  // any --protect, --protect-held or --protect-empty
};

// The kind of protect mount `option` asks for (ProtectKind), or 0 when it asks none.
char protect_kind(const char* option) {
    if (std::strcmp(option, "--protect") == 0) return static_cast<char>(ll::ProtectKind::read_only);
    if (std::strcmp(option, "--protect-held") == 0) return static_cast<char>(ll::ProtectKind::held);
    if (std::strcmp(option, "--protect-empty") == 0) return static_cast<char>(ll::ProtectKind::empty);
    return 0;
}

// --status-fd's descriptor, at argv[i + 1], checked and made close-on-exec: the command
// never inherits it, so only this process can write there.
void take_status_fd(int argc, char** argv, int i) {
    if (i + 1 >= argc || std::strcmp(argv[i + 1], "--") == 0) fatal("usage error: --status-fd requires a descriptor number");
    const int fd = status_descriptor(argv[i + 1]);
    if (fd < 0) fatal("usage error: --status-fd: not an open descriptor of 3 or more: ", argv[i + 1]);
    if (status_fd >= 0 && status_fd != fd) fatal("usage error: --status-fd given twice");
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) fatal("usage error: --status-fd: not an open descriptor of 3 or more: ", argv[i + 1]);
    status_fd = fd;
}

// The number of --proxy-port: decimal, 1 to 65535; 0 otherwise.
std::uint16_t port_number(const char* text) {
    if (!text || !*text || std::strlen(text) > 5) return 0;
    unsigned n = 0;
    for (const char* p = text; *p; ++p) {
        if (*p < '0' || *p > '9') return 0;
        n = n * 10 + static_cast<unsigned>(*p - '0');
    }
    return n <= 65535 ? static_cast<std::uint16_t>(n) : 0;
}

// The whole grammar, checked (a usage error is fatal); the status descriptor taken.
Request parse(int argc, char** argv) {
    Request r;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) {
            r.command = i + 1;
            break;
        }
        if (std::strcmp(argv[i], "--probe") == 0) fatal("usage error: --probe takes no other arguments");
        if (std::strcmp(argv[i], "--no-network") == 0) {
            r.network_none = true;
            continue;
        }
        if (std::strcmp(argv[i], "--loopback") == 0) {
            r.loopback = true;
            continue;
        }
        if (std::strcmp(argv[i], "--status-fd") == 0) {
            take_status_fd(argc, argv, i++);
            continue;
        }
        if (std::strcmp(argv[i], "--proxy-port") == 0) {
            const std::uint16_t port = port_number(i + 1 < argc ? argv[i + 1] : nullptr);
            if (port == 0) fatal("usage error: --proxy-port requires a port from 1 to 65535");
            if (r.proxy_port != 0 && r.proxy_port != port) fatal("usage error: --proxy-port given twice");
            r.proxy_port = port;
            ++i;
            continue;
        }
        if (std::strcmp(argv[i], "--ro") == 0 || std::strcmp(argv[i], "--rw") == 0 || std::strcmp(argv[i], "--deny-read") == 0 ||
            protect_kind(argv[i]) != 0) {
            if (i + 1 >= argc || std::strcmp(argv[i + 1], "--") == 0) {
                char what[64];
                std::snprintf(what, sizeof what, "usage error: %s requires a path", argv[i]);
                fatal(what);
            }
            ++i;
            continue;
        }
        fatal("usage error: unknown argument: ", argv[i]);
    }
    if (r.command < 0 || r.command >= argc) fatal("usage error: missing `-- <argv>...` command");
    if (r.proxy_port != 0 && r.network_none) fatal("usage error: --no-network and --proxy-port exclude each other");
    if (r.loopback && (r.network_none || r.proxy_port != 0)) fatal("usage error: --loopback excludes --no-network and --proxy-port");
    if (r.proxy_port != 0 || r.loopback) r.network_none = true;
    for (int i = 1; i + 1 < r.command; ++i)
        if (std::strcmp(argv[i], "--deny-read") == 0) {
            if (r.denied_count == sizeof r.denied / sizeof r.denied[0]) fatal("usage error: too many --deny-read paths");
            if (argv[i + 1][0] != '/') fatal("usage error: --deny-read needs an absolute path: ", argv[i + 1]);
            r.denied[r.denied_count++] = argv[++i];
        } else if (protect_kind(argv[i]) != 0) {
            if (argv[i + 1][0] != '/') fatal("usage error: --protect needs an absolute path: ", argv[i + 1]);
            r.protects = true;
            ++i;
        }
    return r;
}

// Whether the option `arg` takes no argument after it.
bool lone_flag(const char* arg) { return std::strcmp(arg, "--no-network") == 0 || std::strcmp(arg, "--loopback") == 0; }

// Adds the grants (--ro, --rw) to `ruleset`, a read-only one that holds a denied path
// around it.
void add_grants(int ruleset, char** argv, const Request& r, std::uint64_t handled) {
    for (int i = 1; i + 1 < r.command; i += 2) {
        if (lone_flag(argv[i])) {
            --i;  // a flag without a path
            continue;
        }
        if (std::strcmp(argv[i], "--status-fd") == 0 || std::strcmp(argv[i], "--deny-read") == 0 || std::strcmp(argv[i], "--proxy-port") == 0 ||
            protect_kind(argv[i]) != 0)
            continue;  // checked above
        const auto grant = std::strcmp(argv[i], "--rw") == 0 ? ll::Grant::read_write : ll::Grant::read_only;
        if (grant == ll::Grant::read_only && ll::holds_denied(argv[i + 1], r.denied, r.denied_count)) {
            if (int rc = ll::add_rule_around(ruleset, argv[i + 1], grant, handled, r.denied, r.denied_count); rc < 0)
                fatal("cannot grant around the denied paths beneath ", argv[i + 1], std::strerror(-rc));
            continue;
        }
        int path_fd = ::open(argv[i + 1], O_PATH | O_CLOEXEC);
        if (path_fd < 0) fatal("cannot open rule path: ", argv[i + 1], std::strerror(errno));
        if (int rc = ll::add_rule(ruleset, path_fd, grant, handled); rc < 0) fatal("landlock ruleset error: ", std::strerror(-rc));
        ::close(path_fd);
    }
}

// The protected paths' mounts, in the order given, in a mount namespace of the run's own.
void protect_paths(char** argv, const Request& r) {
    if (!r.protects) return;
    if (int rc = ll::own_mount_namespace(); rc < 0) fatal("cannot make the run's mount namespace: ", std::strerror(-rc));
    // Each option but --no-network and --loopback takes the argument after it (checked by parse()).
    for (int i = 1; i + 1 < r.command; i += lone_flag(argv[i]) ? 1 : 2)
        if (const char kind = protect_kind(argv[i]); kind != 0)
            if (int rc = ll::protect_mount(argv[i + 1], static_cast<ll::ProtectKind>(kind)); rc < 0)
                fatal("cannot keep a protected path read-only: ", argv[i + 1], std::strerror(-rc));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--probe") == 0) return probe();
    const Request r = parse(argc, argv);

    const int abi = ll::negotiated_abi();
    if (abi < 1) fatal(not_enforced);
    protect_paths(argv, r);
    if (r.loopback)
        if (int rc = ll::own_loopback(); rc < 0) fatal("cannot make the run's network namespace: ", std::strerror(-rc));
    const std::uint64_t handled = ll::handled_access(abi);
    // With a loopback of its own, TCP is not governed: the namespace holds nothing else.
    const int ruleset = ll::create_ruleset(handled, ll::scopes(abi, r.network_none), ll::handled_network(abi, r.network_none && !r.loopback));
    if (ruleset < 0) fatal("landlock ruleset error: ", std::strerror(-ruleset));
    add_grants(ruleset, argv, r, handled);
    if (r.proxy_port != 0) {
        if (abi < ll::Abi::v4) fatal("this kernel's Landlock has no TCP rules (ABI 4 has): --proxy-port cannot be held");
        if (int rc = ll::add_connect_port_rule(ruleset, r.proxy_port); rc < 0) fatal("landlock ruleset error: ", std::strerror(-rc));
    }
    const auto filter = r.loopback ? confine::network::Filter::loopback : r.proxy_port != 0 ? confine::network::Filter::proxy : confine::network::Filter::closed;
    if (auto failed = ll::confine_self(ruleset, r.network_none, filter); failed.what) fatal(failed.what, std::strerror(failed.error));
    ::close(ruleset);
    // A root handed over as a descriptor (/proc/self/fd/N) is granted now: the command
    // gets no descriptor it was not given (docs/landlock-run.md).
    for (int i = 1; i + 1 < r.command; ++i)
        if (std::strcmp(argv[i], "--rw") == 0 || std::strcmp(argv[i], "--ro") == 0) close_handed_descriptor(argv[++i]);
    if (!ll::fully_enforced(abi)) ll::print_partial_notice();
    // The host's attestation: confined, and about to become the command. The descriptor
    // closes at the exec; should the exec fail, its line follows.
    if (status_fd >= 0) write_all(status_fd, ll::status_confined_line, sizeof ll::status_confined_line - 1);
    ::execvp(argv[r.command], argv + r.command);
    fatal("exec failed: ", std::strerror(errno));
}
