// The escape suite: every way out of the sandbox that an audit tried, run as an attacker
// would — through every Linux runner and path, as root and as an unprivileged user — and
// judged by the world afterwards (the file outside is untouched, the injected line never
// reached the terminal), never by an exit status alone. A finding fixed at its cause
// stays fixed here; an attempt that always held stays held.
//
// The ways: the bwrap plugin; an operator's asserted runner_command of real bubblewrap;
// Landlock through its launcher, applied in a forked child, and applied by confinectl to
// itself before it execs the command in place.
#include "pty.hpp"
#include "support.hpp"
#include "ways.hpp"

#include <confine/plugins.hpp>
#include "executor.hpp"
#include <confine/internal/network_filter_linux.hpp>
#include <confine/wrap_result.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;
using test::as_user;
using test::nobody;
using test::Tree;
using test::Way;
using test::Sandbox;
using test::name_of;
using test::is_landlock;

namespace {

struct Attempt {
    std::string what;
    std::string script;  // run by /bin/sh -c in the workspace's sandbox; R is the tree's root
};

// Substitutes the tree's paths into an attempt: R (the tree's root, outside every
// writable root), WS, OUT (a file outside), OUTDIR (a directory outside).
std::string spelled(std::string script, const Tree& t) {
    const std::pair<std::string, std::string> names[] = {{"OUTDIR", t.outside_dir.string()}, {"OUT", t.outside_file.string()},
                                                          {"WS", t.ws.string()}, {"R", t.root.path().string()}};
    for (const auto& [name, value] : names)
        for (std::size_t at = 0; (at = script.find("$" + name, at)) != std::string::npos; at += value.size())
            script.replace(at, name.size() + 1, value);
    return script;
}

// Every file attempt leaves the file outside as it was and creates nothing outside.
void check_world(const Tree& t, const std::string& what) {
    INFO("after: " << what);
    CHECK(test::read_file(t.outside_file) == "original");
    for (const char* name : {"escaped", "out", "ppid", "init", "uring", "tiocsti"}) CHECK_FALSE(fs::exists(t.root / name));
    CHECK_FALSE(fs::exists(t.outside_dir / "escaped"));
    CHECK(fs::is_empty(t.outside_dir));
    CHECK(fs::is_empty(t.sibling));
}

const std::vector<Attempt>& file_attempts() {
    static const std::vector<Attempt> attempts{
        {"a new file outside", "echo x > $R/escaped"},
        {"appending to a file outside", "echo x >> $OUT"},
        {"truncating a file outside", ": > $OUT; truncate -s 0 $OUT"},
        {"writing through a symbolic link made in the workspace", "ln -s $OUT $WS/l && echo x > $WS/l; ln -s $R $WS/r && echo x > $WS/r/escaped"},
        {"writing through the workspace's existing link to a directory outside", "echo x > $WS/link/escaped"},
        {"a hard link of a file outside, written in the workspace", "ln $OUT $WS/h; echo x >> $WS/h"},
        {"renaming a file outside into the workspace", "mv $OUT $WS/moved; mv $OUTDIR $WS/moved-dir"},
        {"renaming a file of the workspace out", "echo y > $WS/f && mv $WS/f $R/out"},
        {"writing through /proc/self/fd to a file opened for reading", "exec 3<$OUT; echo x > /proc/self/fd/3; echo x >> /proc/self/fd/3"},
        {"a new mount namespace, remounting / writable", "unshare -rm sh -c 'mount -o remount,rw / ; mount --bind $WS $R ; echo x > $R/escaped'"},
        {"the set-user-ID mount program binding the workspace over a directory outside", "/usr/bin/mount --bind $WS $OUTDIR; echo x > $OUTDIR/escaped"},
        {"/proc/<parent>/root", "echo x > /proc/$PPID/root$R/ppid"},
        {"/proc/1/root", "echo x > /proc/1/root$R/init"},
        {"io_uring", std::string(URING_CREATE) + " $R/uring"},
    };
    return attempts;
}

void attempt_files(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root"));
    for (bool read_only : {false, true}) {
        for (const auto& a : file_attempts()) {
            Tree t(unprivileged);
            auto r = box.sh(t, spelled(a.script, t), unprivileged, read_only);
            INFO((read_only ? "read-only: " : "workspace-write: ") << a.what << "\nstdout: " << r.out << "\nstderr: " << r.err);
            CHECK(r.exit_code != 125);  // the attempt ran, confined: not a sandbox failure
            check_world(t, a.what);
        }
    }
    // What is granted still works: the attempts failed because of the sandbox, not the test.
    Tree t(unprivileged);
    auto ok = box.sh(t, "echo granted > " + t.ws.string() + "/granted", unprivileged);
    CHECK(ok.exit_code == 0);
    CHECK(test::read_file(t.ws / "granted") == "granted\n");
}

// Metadata outside the writable roots: bubblewrap's read-only bind governs it. Landlock
// does not (docs/platforms.md's table says so plainly), so only the bubblewrap ways are held
// to it here.
void attempt_metadata(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);
    struct stat before {};
    REQUIRE(::stat(t.outside_file.c_str(), &before) == 0);
    auto r = box.sh(t, spelled("chmod 0777 $OUT; touch -d 2001-01-01 $OUT; setfattr -n user.x -v 1 $OUT 2>/dev/null; true", t), unprivileged);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstderr: " << r.err);
    struct stat after {};
    REQUIRE(::stat(t.outside_file.c_str(), &after) == 0);
    CHECK(after.st_mode == before.st_mode);
    CHECK(after.st_mtim.tv_sec == before.st_mtim.tv_sec);
    CHECK(after.st_uid == before.st_uid);
}

// Nothing is left in the host's /dev/shm for another process, or the next run, to find:
// in read-only mode on every way, and under bubblewrap in either mode (its /dev/shm is
// its own). Landlock grants the host's in workspace-write mode, as it does /tmp
// (docs/design.md §4): the scenario matrix checks that it is the host's there.
void attempt_dev_shm(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);
    const std::string name = "/dev/shm/confine-escape-" + std::to_string(::getpid());
    for (const bool read_only : {true, false}) {
        if (!read_only && is_landlock(way)) continue;
        auto r = box.sh(t, "echo x > " + name, unprivileged, read_only);
        INFO(name_of(way) << (read_only ? ", read-only: " : ", workspace-write: ") << r.err);
        CHECK_FALSE(fs::exists(name));
        fs::remove(name);
    }
}

// The supervisor (confinectl), and whatever started it, cannot be signalled or traced,
// nor its descriptors taken; under bubblewrap they are not even visible.
void attempt_supervisor(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);
    // The shell's $$ is confinectl's process ID once it execs confinectl.
    std::vector<std::string> argv = as_user(unprivileged);
    argv.insert(argv.end(), {"/bin/sh", "-c", "exec \"$@\" $$", "sh", "/usr/bin/env", "-u", "CONFINE_CONFIG", box.confine.confinectl().string()});
    const auto a = box.args(t, {REACH, std::to_string(::getpid())});
    argv.insert(argv.end(), a.begin(), a.end());
    auto r = test::run(argv);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(test::line_count(r.out) == 2);
    // In place, confinectl has become the command: the second line is the command itself.
    const std::string lines = way == Way::landlock_in_place ? r.out.substr(0, r.out.find('\n')) : r.out;
    // Landlock scopes signals to the domain (ABI 6 and later; this kernel has them): the
    // processes stay visible, but cannot be signalled or traced.
    CHECK_THAT(lines, !Catch::Contains("kill=ok") && !Catch::Contains("seize=ok") && !Catch::Contains("getfd=ok"));
    if (!is_landlock(way)) CHECK_THAT(lines, !Catch::Contains("pidfd=ok"));
}

// No line typed into the caller's terminal: TIOCSTI and TIOCLINUX are refused.
void attempt_terminal(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);
    std::vector<std::string> argv = as_user(unprivileged);
    argv.insert(argv.begin(), WITH_PTY);
    argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", box.confine.confinectl().string()});
    const auto a = box.args(t, {TIOCSTI_HELPER, "touch " + (t.root / "tiocsti").string() + "\n"});
    argv.insert(argv.end(), a.begin(), a.end());
    auto r = test::run(argv);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK_THAT(r.err, Catch::Contains("queued: \n") || Catch::EndsWith("queued: "));
    CHECK_FALSE(fs::exists(t.root / "tiocsti"));
}

// Root keeps no capability: no device node, no owner changed, none left in any set.
void attempt_capabilities(Way way) {
    Sandbox box(way);
    Tree t(false);
    const std::string ws = t.ws.string(), out = t.outside_file.string();
    auto r = box.sh(t, "mknod " + ws + "/blk b 7 0; mknod " + ws + "/kmsg c 1 11; chown 1234 " + out + "; grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs)' /proc/self/status",
                    false);
    INFO(name_of(way) << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK_FALSE(fs::exists(t.ws / "blk"));
    CHECK_FALSE(fs::exists(t.ws / "kmsg"));
    struct stat st {};
    REQUIRE(::stat(out.c_str(), &st) == 0);
    CHECK(st.st_uid == 0);
    CHECK(test::line_count(r.out) == 6);
    for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
        CHECK_THAT(r.out, Catch::Contains(std::string(set) + ":\t0000000000000000"));
    CHECK_THAT(r.out, Catch::Contains("NoNewPrivs:\t1"));
}

// Listeners on the host, outside every sandbox: a TCP one and a UDP one on the loopback,
// an abstract unix socket and a unix socket by path outside every writable root. What
// reached each is read afterwards, without waiting.
struct HostListeners {
    int tcp = -1, udp = -1, abstract_unix = -1, path_unix = -1;
    int tcp_port = 0, udp_port = 0;
    std::string abstract_name = "confine-test-" + std::to_string(::getpid());
    fs::path path;

    explicit HostListeners(const fs::path& socket_path) : path(socket_path) {
        tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        tcp_port = bind_loopback(tcp);
        udp_port = bind_loopback(udp);
        REQUIRE(::listen(tcp, 8) == 0);
        abstract_unix = listen_unix(abstract_name, true);
        path_unix = listen_unix(path.string(), false);
        fs::permissions(path, fs::perms::all);  // connectable by anyone, but for the sandbox
    }
    ~HostListeners() {
        for (int fd : {tcp, udp, abstract_unix, path_unix}) ::close(fd);
        fs::remove(path);
    }
    static int bind_loopback(int fd) {
        REQUIRE(fd >= 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        socklen_t size = sizeof a;
        REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) == 0);
        return ntohs(a.sin_port);
    }
    static int listen_unix(const std::string& name, bool abstract) {
        const int fd = test::bound_unix_socket(name, abstract, SOCK_STREAM);
        REQUIRE(::listen(fd, 8) == 0);
        return fd;
    }
    // Whether anything arrived: a connection waiting, or a datagram.
    static bool connected(int fd) {
        const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) ::close(c);
        return c >= 0;
    }
    std::vector<std::string> command() const {
        return {NET_REACH, std::to_string(tcp_port), std::to_string(udp_port), abstract_name, path.string()};
    }
    std::string arrived() {
        char byte = 0;
        std::string what;
        if (connected(tcp)) what += " tcp";
        if (::recv(udp, &byte, 1, MSG_DONTWAIT) == 1) what += " udp";
        if (connected(abstract_unix)) what += " abstract";
        if (connected(path_unix)) what += " path";
        return what;
    }
};

// With the network confined (the default), no socket reaches the host: the command is
// refused each connection, and on the host's side nothing arrived. A socketpair works.
// Where the command has a loopback of its own (bubblewrap's network namespace, Landlock's
// as root), its own servers on 127.0.0.1 and ::1 are reached and a datagram to the host's
// port lands in that namespace (nothing arrives on the host); elsewhere (Landlock as
// nobody) no TCP or UDP socket is made at all. With --network allow, TCP and UDP reach the
// host's loopback.
void attempt_network(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);
    HostListeners host(t.root / "host.sock");
    for (const bool read_only : {false, true}) {
        auto a = box.args(t, host.command(), read_only);
        auto r = box.confine.run(a, {}, as_user(unprivileged));
        INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << (read_only ? ", read-only" : "") << "\nstdout: " << r.out
                          << "\nstderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::StartsWith("tcp=E") && Catch::Contains(" abstract=E") && Catch::Contains(" path=E") &&
                              Catch::Contains(" socketpair=ok "));
        if (!is_landlock(way) || !unprivileged)
            CHECK_THAT(r.out, Catch::Contains(" udp=ok ") && Catch::EndsWith(" own_tcp4=ok own_tcp6=ok own_udp=ok\n"));
        else
            CHECK_THAT(r.out, Catch::Contains(" udp=EACCES ") && Catch::EndsWith(" own_tcp4=EACCES own_tcp6=EACCES own_udp=EACCES\n"));
        CHECK(host.arrived().empty());
    }
    auto allowed = box.args(t, host.command());
    allowed.insert(allowed.begin() + 1, {"--network", "allow"});
    auto r = box.confine.run(allowed, {}, as_user(unprivileged));
    INFO(name_of(way) << ", --network allow\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("tcp=ok udp=ok "));
    CHECK_THAT(host.arrived(), Catch::StartsWith(" tcp udp"));
}

}  // namespace

// One test case per runner and user, so that CTest names the way that failed.
#define ESCAPE_CASES(WAY, TAG, TAGS)                                                                                                        \
    TEST_CASE("no file escape through " TAG ", as root", "[escape][e2e]" TAGS) { attempt_files(WAY, false); }                             \
    TEST_CASE("no file escape through " TAG ", as an unprivileged user", "[escape][e2e]" TAGS) { attempt_files(WAY, true); }              \
    TEST_CASE("nothing reaches the host's /dev/shm in read-only mode, nor under bubblewrap, through " TAG, "[escape][e2e]" TAGS) {                                                  \
        attempt_dev_shm(WAY, false);                                                                                                        \
        attempt_dev_shm(WAY, true);                                                                                                         \
    }                                                                                                                                       \
    TEST_CASE("the supervisor cannot be signalled, traced or entered through " TAG, "[escape][e2e]" TAGS) {                                           \
        attempt_supervisor(WAY, false);                                                                                                     \
        attempt_supervisor(WAY, true);                                                                                                      \
    }                                                                                                                                       \
    TEST_CASE("no terminal injection through " TAG, "[escape][e2e]" TAGS) {                                                               \
        attempt_terminal(WAY, false);                                                                                                       \
        attempt_terminal(WAY, true);                                                                                                        \
    }                                                                                                                                       \
    TEST_CASE("root keeps no capability through " TAG, "[escape][e2e]" TAGS) { attempt_capabilities(WAY); }                             \
    TEST_CASE("no socket reaches the host through " TAG ", as root and as an unprivileged user", "[escape][e2e][network]" TAGS) {         \
        attempt_network(WAY, false);                                                                                                        \
        attempt_network(WAY, true);                                                                                                         \
    }

TEST_CASE("the network filter refuses each way a socket leaves the sandbox, and keeps socketpair", "[escape][network][linux-only]") {
    // In a child, so that the filter stays there: each check is one bit of its status.
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || confine::network::install_filter() != 0) ::_exit(255);
        int failed = 0;
        auto refused = [](long rc, int error) { return rc < 0 && errno == error; };
        for (int family : {AF_INET, AF_INET6, AF_NETLINK, AF_PACKET})
            if (!refused(::socket(family, SOCK_DGRAM, 0), EACCES)) failed |= 1;
        // No unix datagram socket (SOCK_RAW is one), nor pair, with or without flags.
        int pair[2];
        for (int type : std::initializer_list<int>{SOCK_DGRAM, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, SOCK_RAW})
            if (!refused(::socket(AF_UNIX, type, 0), EACCES) || !refused(::socketpair(AF_UNIX, type, 0, pair), EACCES)) failed |= 2;
        const int unix_stream = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (unix_stream < 0) failed |= 2;
        sockaddr_un to{};
        to.sun_family = AF_UNIX;
        std::strcpy(to.sun_path, "/dev/log");
        if (!refused(::connect(unix_stream, reinterpret_cast<sockaddr*>(&to), sizeof to), EACCES)) failed |= 4;
        if (!refused(::sendto(unix_stream, "x", 1, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), EACCES)) failed |= 8;
        if (!refused(::syscall(SYS_io_uring_setup, 1, nullptr), EPERM)) failed |= 16;
        char c = 0;
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0 || ::send(pair[0], "y", 1, 0) != 1 || ::recv(pair[1], &c, 1, 0) != 1)
            failed |= 32;
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0 || ::send(pair[0], "z", 1, 0) != 1 ||
            ::recv(pair[1], &c, 1, 0) != 1 || c != 'z')
            failed |= 64;
        ::_exit(failed);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

// What the proxy program leaves a command (a child: each check one bit of its status).
static int proxy_program_failures(int listener_port) {
    int failed = 0;
    auto refused = [](long rc, int error) { return rc < 0 && errno == error; };
    // TCP only: no datagram, no SCTP or MPTCP (which Landlock's TCP rules would not see),
    // no unix socket to connect anywhere with, no netlink or packet socket.
    for (int family : {AF_INET, AF_INET6})
        if (!refused(::socket(family, SOCK_DGRAM, 0), EACCES) || !refused(::socket(family, SOCK_STREAM, 132), EACCES) ||
            !refused(::socket(family, SOCK_STREAM, 262), EACCES) || !refused(::socket(family, SOCK_RAW, IPPROTO_TCP), EACCES))
            failed |= 1;
    for (int type : {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM})
        if (!refused(::socket(AF_UNIX, type, 0), EACCES)) failed |= 2;
    if (!refused(::socket(AF_NETLINK, SOCK_RAW, 0), EACCES) || !refused(::socket(AF_PACKET, SOCK_RAW, 0), EACCES)) failed |= 2;
    // A TCP connection is the runner's to hold (here: nothing holds it).
    const int tcp = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP), tcp4 = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(listener_port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (tcp < 0 || tcp4 < 0 || ::connect(tcp4, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) failed |= 4;
    // TCP Fast Open connects inside a send, where no connect hook sees it.
    const int fresh = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!refused(::sendto(fresh, "x", 1, MSG_FASTOPEN, reinterpret_cast<sockaddr*>(&to), sizeof to), EACCES)) failed |= 8;
    iovec iov{const_cast<char*>("x"), 1};
    msghdr msg{};
    msg.msg_name = &to;
    msg.msg_namelen = sizeof to;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (!refused(::sendmsg(fresh, &msg, MSG_FASTOPEN), EACCES)) failed |= 8;
    mmsghdr many{msg, 0};
    if (!refused(::sendmmsg(fresh, &many, 1, MSG_FASTOPEN | MSG_DONTWAIT), EACCES)) failed |= 8;
    if (!refused(::syscall(SYS_io_uring_setup, 1, nullptr), EPERM)) failed |= 16;
    int pair[2];
    char c = 0;
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0 || ::send(pair[0], "y", 1, 0) != 1 || ::recv(pair[1], &c, 1, 0) != 1) failed |= 32;
    if (!refused(::socketpair(AF_UNIX, SOCK_DGRAM, 0, pair), EACCES)) failed |= 64;
    return failed;
}

// What `failures` finds wrong (its bits) in a child under the network filter's `kind`,
// given the port of a TCP listener on the host's loopback; 255: the filter not installed.
static int failures_under(confine::network::Filter kind, int (*failures)(int listener_port)) {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof a;
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener, 4) == 0);
    REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &size) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || confine::network::install_filter(kind) != 0) ::_exit(255);
        ::_exit(failures(ntohs(a.sin_port)));
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    ::close(listener);
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
}

TEST_CASE("the network filter's proxy program leaves TCP alone and refuses every other way out", "[escape][network][linux-only]") {
    CHECK(failures_under(confine::network::Filter::proxy, proxy_program_failures) == 0);
}

// What the loopback program leaves a command (a child: each check one bit of its status).
// Here, in the test's own network namespace, the host's loopback is reached: what keeps a
// command's sockets in the sandbox is the network namespace the program is used with.
static int loopback_program_failures(int listener_port) {
    int failed = 0;
    auto refused = [](long rc, int error) { return rc < 0 && errno == error; };
    // TCP and UDP over IPv4 and IPv6; no raw, SCTP, MPTCP, netlink, packet or unix socket.
    for (int family : {AF_INET, AF_INET6}) {
        for (int type : {SOCK_STREAM, SOCK_DGRAM}) {
            const int fd = ::socket(family, type | SOCK_CLOEXEC, 0);
            if (fd < 0) failed |= 1;
            ::close(fd);
        }
        if (!refused(::socket(family, SOCK_STREAM, 132), EACCES) || !refused(::socket(family, SOCK_STREAM, 262), EACCES) ||
            !refused(::socket(family, SOCK_RAW, IPPROTO_TCP), EACCES) || !refused(::socket(family, SOCK_SEQPACKET, 0), EACCES))
            failed |= 2;
    }
    for (int type : {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM})
        if (!refused(::socket(AF_UNIX, type, 0), EACCES)) failed |= 4;
    if (!refused(::socket(AF_NETLINK, SOCK_RAW, 0), EACCES) || !refused(::socket(AF_PACKET, SOCK_RAW, 0), EACCES)) failed |= 4;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(listener_port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP), udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
    if (tcp < 0 || ::connect(tcp, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) failed |= 8;
    if (udp < 0 || ::sendto(udp, "x", 1, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) != 1) failed |= 8;
    if (!refused(::syscall(SYS_io_uring_setup, 1, nullptr), EPERM)) failed |= 16;
    int pair[2];
    char c = 0;
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0 || ::send(pair[0], "y", 1, 0) != 1 || ::recv(pair[1], &c, 1, 0) != 1) failed |= 32;
    if (!refused(::socketpair(AF_UNIX, SOCK_DGRAM, 0, pair), EACCES)) failed |= 64;
    return failed;
}

TEST_CASE("the network filter's loopback program leaves TCP and UDP alone and refuses every other socket", "[escape][network][linux-only]") {
    CHECK(failures_under(confine::network::Filter::loopback, loopback_program_failures) == 0);
}

TEST_CASE("file metadata outside the writable roots stays as it was under bubblewrap", "[escape][e2e]") {
    for (Way way : {Way::bwrap, Way::runner_command})
        for (bool unprivileged : {false, true}) attempt_metadata(way, unprivileged);
}

ESCAPE_CASES(Way::bwrap, "the bwrap plugin", "")
ESCAPE_CASES(Way::runner_command, "an asserted runner_command", "")
ESCAPE_CASES(Way::landlock_launcher, "landlock-run", "[linux-only]")
ESCAPE_CASES(Way::landlock_forked, "landlock in a forked child", "[linux-only]")
ESCAPE_CASES(Way::landlock_in_place, "landlock in place", "[linux-only]")

// A third-party runner that does nothing about terminals (here one that simply execs
// the command) still gets the host's terminal filter, plainly started or traced.
TEST_CASE("no terminal injection through a runner that does not refuse it itself", "[escape][e2e][linux-only]") {
    for (bool unprivileged : {false, true}) {
        for (const char* attest : {"false", "true"}) {
            if (unprivileged) test::require_user_switch();
            test::Installed confine;
            Tree t(unprivileged);
            test::TempDir fakes;
            test::install_fake(fakes.path(), "usable");
            const fs::path config = confine.scratch("third-party.toml");
            test::write_file(config, "plugin_dirs = [\"" + fakes.path().string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n"
                                     "[runner.usable]\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = " + attest + "\n");
            std::vector<std::string> argv = as_user(unprivileged);
            argv.insert(argv.begin(), WITH_PTY);
            argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", confine.confinectl().string(), "run", "--config", config.string(),
                                     "--workspace", t.ws.string(), "--", TIOCSTI_HELPER, "touch " + (t.root / "tiocsti").string() + "\n"});
            auto r = test::run(argv);
            INFO((unprivileged ? "as nobody" : "as root") << ", traced: " << attest << "\nstdout: " << r.out << "\nstderr: " << r.err);
            CHECK_THAT(r.out, Catch::Contains("Operation not permitted"));
            CHECK_THAT(r.err, Catch::Contains("queued: \n") || Catch::EndsWith("queued: "));
            CHECK_FALSE(fs::exists(t.root / "tiocsti"));
        }
    }
}

// ---------------------------------------------------------------- what the next run trusts

namespace {

// A confined run's own outcome, with what it left: `marker` proves whether the command ran.
struct Planted {
    test::Installed confine;
    Tree tree{false};
    fs::path marker = tree.root / "ran";

    test::Result run_with(const fs::path& config, std::vector<std::string> flags = {}, std::vector<std::string> env = {}) const {
        std::vector<std::string> args{"run", "--config", config.string(), "--workspace", tree.ws.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/usr/bin/touch", marker.string()});
        return confine.run(args, env);
    }
    void check_refused(const test::Result& r, const std::string& says) const {
        INFO("stdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.exit_code == 125);
        CHECK(test::line_count(r.err) == 1);
        CHECK_THAT(r.err, Catch::StartsWith("confinectl: ") && Catch::Contains(says));
        CHECK_FALSE(fs::exists(marker));
    }
};

// A root-owned directory beneath /tmp, as an operator might make one, removed afterwards.
struct TmpDir {
    fs::path path = "/tmp/confine-escape-" + std::to_string(::getpid());
    TmpDir() {
        fs::remove_all(path);
        fs::create_directory(path);
        fs::permissions(path, fs::perms(0755));
    }
    ~TmpDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

TEST_CASE("a plugin under /tmp or inside the workspace is never loaded, whoever owns it", "[escape][e2e]") {
    Planted p;
    // The same plugin from a trusted directory: loaded, and the command runs.
    test::TempDir trusted;
    test::install_fake(trusted.path(), "usable");
    const fs::path config = p.confine.scratch("plugins.toml");
    test::write_file(config, "plugin_dirs = [\"" + trusted.path().string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n");
    auto fine = p.confine.run({"wrap", "--json", "--config", config.string(), "--workspace", p.tree.ws.string(), "--", "true"});
    INFO(fine.err);
    CHECK(fine.exit_code == 0);
    CHECK(json::parse(fine.out)["runner"] == "usable");

    // A confined command may write /tmp: what it leaves there is the next run's plugin.
    TmpDir tmp;
    test::install_fake(tmp.path, "usable");
    test::write_file(config, "plugin_dirs = [\"" + tmp.path.string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n");
    p.check_refused(p.run_with(config), "lies in /tmp, which the confined command may write");

    // Inside the workspace: the run that could write it is refused.
    const fs::path in_ws = p.tree.ws / "plugins";
    fs::create_directory(in_ws);
    fs::permissions(in_ws, fs::perms(0755));
    test::install_fake(in_ws, "usable");
    test::write_file(config, "plugin_dirs = [\"" + in_ws.string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n");
    p.check_refused(p.run_with(config), "the plugin " + (in_ws / "confine-runner-usable.so").string() + " lies in " + p.tree.ws.string());
}

TEST_CASE("a configuration that a confined command or another user could have written is never read", "[escape][e2e]") {
    Planted p;
    const std::string text = "[platform.linux]\nchain = [\"landlock\"]\n";
    TmpDir tmp;
    test::write_file(tmp.path / "confine.toml", text);
    p.check_refused(p.run_with(tmp.path / "confine.toml"), "lies in /tmp, which the confined command may write");
    // Through CONFINE_CONFIG too, and through a link to it from a trusted place.
    const fs::path link = p.confine.scratch("link.toml");
    fs::create_symlink(tmp.path / "confine.toml", link);
    p.check_refused(p.run_with(link), "lies in /tmp");
    {
        auto r = p.confine.run({"run", "--workspace", p.tree.ws.string(), "--", "/usr/bin/touch", p.marker.string()},
                               {"CONFINE_CONFIG=" + (tmp.path / "confine.toml").string()});
        p.check_refused(r, "lies in /tmp");
    }
    // A directory above it that others may write: they could swap the file for theirs.
    const fs::path open_dir = p.confine.scratch("open");
    fs::create_directory(open_dir);
    test::write_file(open_dir / "confine.toml", text);
    fs::permissions(open_dir, fs::perms(0777));
    p.check_refused(p.run_with(open_dir / "confine.toml"), open_dir.string() + " is writable by others (mode 0777)");
    // The file itself, writable by its group.
    test::write_file(p.confine.scratch("group.toml"), text, fs::perms(0664));
    p.check_refused(p.run_with(p.confine.scratch("group.toml")), "is writable by its group (mode 0664)");
    // Inside the workspace: this run could rewrite it for the next.
    test::write_file(p.tree.ws / "confine.toml", text);
    p.check_refused(p.run_with(p.tree.ws / "confine.toml"), "the configuration " + (p.tree.ws / "confine.toml").string() + " lies in " +
                                                                p.tree.ws.string());
    // check-config judges it the same way.
    auto checked = p.confine.run({"check-config", (tmp.path / "confine.toml").string()});
    CHECK(checked.exit_code == 125);
    CHECK_THAT(checked.err, Catch::Contains("refusing configuration"));
}

TEST_CASE("a runner program that could have been replaced confines nothing: the run is refused", "[escape][e2e]") {
    test::require_bwrap();
    Planted p;
    TmpDir tmp;
    const fs::path loose = p.confine.scratch("loose");
    fs::create_directory(loose);
    fs::permissions(loose, fs::perms(0755));
    struct Case {
        std::string what;
        fs::path program;
        std::string says;
    };
    const std::vector<Case> cases{
        {"in the workspace", p.tree.ws / "bwrap", "lies in " + p.tree.ws.string()},
        {"under /tmp", tmp.path / "bwrap", "lies in /tmp"},
        {"writable by others", loose / "bwrap-0777", "is writable by others (mode 0777)"},
        {"owned by another user", loose / "bwrap-nobody", "is owned by uid 65534"},
    };
    for (const auto& c : cases) {
        fs::copy_file("/usr/bin/bwrap", c.program, fs::copy_options::overwrite_existing);
        fs::permissions(c.program, fs::perms(c.what == "writable by others" ? 0777 : 0755));
        if (c.what == "owned by another user") REQUIRE(::chown(c.program.c_str(), nobody, nobody) == 0);
        INFO(c.what);
        const fs::path plugin_config = p.confine.scratch("program.toml");
        test::write_file(plugin_config, "[platform.linux]\nchain = [\"bwrap\"]\n[runner.bwrap]\nprogram = \"" + c.program.string() + "\"\n");
        p.check_refused(p.run_with(plugin_config), c.says);
        if (c.what != "in the workspace") p.check_refused(p.confine.run({"check-config", plugin_config.string()}), c.says);
        const fs::path launcher = c.program.parent_path() / (c.program.filename().string() + "-landlock-run");
        fs::copy_file(p.confine.plugin_dir() / "landlock-run", launcher, fs::copy_options::overwrite_existing);
        fs::permissions(launcher, fs::perms(c.what == "writable by others" ? 0777 : 0755));
        if (c.what == "owned by another user") REQUIRE(::chown(launcher.c_str(), nobody, nobody) == 0);
        for (const char* in_process : {"true", "false"}) {
            INFO("landlock launcher, in_process = " << in_process);
            const fs::path launcher_config = p.confine.scratch("launcher.toml");
            test::write_file(launcher_config, "[platform.linux]\nchain = [\"landlock\"]\n[runner.landlock]\nlauncher = \"" + launcher.string() +
                                                  "\"\nin_process = " + in_process + "\n");
            p.check_refused(p.run_with(launcher_config), c.says);
            if (c.what != "in the workspace") p.check_refused(p.confine.run({"check-config", launcher_config.string()}), c.says);
        }
        const fs::path asserted = p.confine.scratch("asserted.toml");
        test::write_file(asserted, "[platform.linux]\nrunner_command = [\"" + c.program.string() + "\"]\nrunner_failure_signatures = [\"bwrap: \"]\n");
        p.check_refused(p.run_with(asserted), c.says);
        if (c.what != "in the workspace") {
            // Said before any run: by check-config, and by probe, which fails closed.
            p.check_refused(p.confine.run({"check-config", asserted.string()}), c.says);
            auto probed = p.confine.run({"probe", "--config", asserted.string()});
            CHECK(probed.exit_code == 125);
            CHECK_THAT(probed.err, Catch::StartsWith("confinectl: " + asserted.string() + ":") && Catch::Contains(c.says));
        }
    }
}

TEST_CASE("a root swapped for a link after it was checked is not granted: the landlock grant fails instead", "[escape][e2e][linux-only]") {
    test::require_landlock();
    test::Installed confine;
    Tree t(false);
    auto plugin = confine::load_plugin(confine.plugin_dir() / "confine-runner-landlock.so", "landlock");
    REQUIRE(plugin);
    auto runner = (*plugin)->create_runner(nullptr);
    REQUIRE(runner);
    // What a swap leaves: the path the host resolved and checked now passes through a link.
    fs::create_directory_symlink("/etc", t.ws / "build");
    const std::vector<std::string> argv{"true"};
    auto wrapped = (*runner)->wrap({confine::Mode::workspace_write, t.ws, {t.ws / "build"}}, argv);
    REQUIRE_FALSE(wrapped);
    CHECK_THAT(wrapped.error().message, Catch::Contains("cannot open rule path: " + (t.ws / "build").string()));
}

TEST_CASE("a directory handed to a runner as a descriptor is the one checked: a link swapped in since fails the run", "[escape]") {
    Tree t(false);
    fs::create_directory(t.ws / "out");
    // The runner prints where the descriptor it got in place of the placeholder leads:
    // as its number (bubblewrap's --bind-fd) or as /proc/self/fd/N (landlock-run's --rw).
    auto spec_for = [&](const fs::path& root, bool as_path = false) {
        confine::detail::ExecSpec spec;
        spec.argv = {"/bin/sh", "-c", as_path ? "readlink $1" : "readlink /proc/self/fd/$1", "sh",
                     (as_path ? "{dir-path:" : "{dir-fd:") + root.string() + "}", "--", "true"};
        spec.placeholders = {{as_path ? confine::Placeholder::Kind::dir_path : confine::Placeholder::Kind::dir_fd, root.string(), 4}};
        spec.background = true;
        return spec;
    };
    for (bool as_path : {false, true}) {
        confine::detail::RunControl control;
        auto fine = confine::detail::execute(spec_for(t.ws / "out", as_path), control);
        CHECK(fine.observed.spawned);
        CHECK(fine.stdout_text == (t.ws / "out").string() + "\n");
    }

    // What a swap leaves: the root that was checked is now a link (to /etc).
    fs::remove(t.ws / "out");
    fs::create_directory_symlink("/etc", t.ws / "out");
    confine::detail::RunControl control2;
    auto swapped = confine::detail::execute(spec_for(t.ws / "out"), control2);
    CHECK_FALSE(swapped.observed.spawned);
    CHECK(swapped.observed.attestation_detail == "cannot open the writable root " + (t.ws / "out").string());
    CHECK(swapped.stdout_text.empty());
}

TEST_CASE("roots that would make the system or the home directory writable are refused, also through links", "[escape][e2e][linux-only]") {
    Planted p;
    const fs::path config = p.confine.scratch("roots.toml");
    test::write_file(config, "[platform.linux]\nchain = [\"landlock\"]\n");
    auto run = [&](std::vector<std::string> flags, std::vector<std::string> env = {}, const fs::path& cwd = {}) {
        std::vector<std::string> args{"run", "--config", config.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/usr/bin/touch", p.marker.string()});
        if (cwd.empty()) return p.confine.run(args, env);
        std::vector<std::string> prefix{"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", cwd.string()};
        return p.confine.run(args, env, prefix);
    };
    // The default workspace is the current directory: / is refused, not granted.
    p.check_refused(run({}, {}, "/"), "refusing workspace /: it is the root of the file system");
    p.check_refused(run({"--workspace", p.tree.ws.string(), "--writable", "/tmp/.."}), "refusing writable root /: it is the root of the file system");
    p.check_refused(run({"--workspace", "/etc"}), "refusing workspace /etc: it is the system directory /etc");
    p.check_refused(run({"--workspace", p.tree.ws.string(), "--writable", "/usr/local/bin"}), "inside the system directory /usr");
    p.check_refused(run({"--workspace", p.tree.home.string()}, {"HOME=" + p.tree.home.string()}), "it is the home directory itself");
    p.check_refused(run({"--workspace", p.tree.root.path().string()}, {"HOME=" + p.tree.home.string()}), "it holds the home directory");
    // A repository's `build -> /etc`: named relatively it is outside the workspace; named
    // absolutely it is /etc.
    fs::create_directory_symlink("/etc", p.tree.ws / "build");
    p.check_refused(run({"--workspace", p.tree.ws.string(), "--writable", "build"}, {}, p.tree.ws),
                    "refusing --writable build: it resolves to /etc, outside the workspace");
    p.check_refused(run({"--workspace", p.tree.ws.string(), "--writable", (p.tree.ws / "build").string()}), "(which resolves to /etc)");
    // A relative root inside the workspace is what it says.
    fs::create_directory(p.tree.ws / "out");
    std::vector<std::string> in_out{"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", p.tree.ws.string(), p.confine.confinectl().string(), "run",
                                    "--config", config.string(), "--writable", "out", "--", "/usr/bin/touch", "out/made"};
    auto fine = test::run(in_out);
    INFO(fine.err);
    CHECK(fine.exit_code == 0);
    CHECK(fs::exists(p.tree.ws / "out" / "made"));
}

TEST_CASE("the report is written through its directory as it was when the run began, not where a link now leads", "[escape][e2e][linux-only]") {
    test::require_landlock();
    Planted p;
    const fs::path config = p.confine.scratch("report.toml"), target = p.tree.outside_dir;
    test::write_file(config, "[platform.linux]\nchain = [\"landlock\"]\n");
    fs::create_directory(p.tree.ws / "out");
    const std::string ws = p.tree.ws.string();
    auto r = p.confine.run({"run", "--config", config.string(), "--workspace", ws, "--report", ws + "/out/r.json", "--", "/bin/sh", "-c",
                            "mv " + ws + "/out " + ws + "/out.old && ln -s " + target.string() + " " + ws + "/out"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(fs::is_empty(target));
    REQUIRE(fs::exists(p.tree.ws / "out.old" / "r.json"));
    CHECK(json::parse(test::read_file(p.tree.ws / "out.old" / "r.json"))["outcome"] == "completed");

    // A destination that cannot take the report is said before anything runs.
    p.check_refused(p.run_with(config, {"--report", ws}), "--report " + ws + ": is a directory");
    p.check_refused(p.run_with(config, {"--report", (p.tree.root / "absent" / "r.json").string()}), "cannot open its directory");
}

// ---------------------------------------------------------------- the low findings

TEST_CASE("a command that is empty or whose interpreter is missing is 127 with one line, not a sandbox failure", "[escape][e2e]") {
    test::require_landlock();
    Planted p;
    const fs::path config = p.confine.scratch("low.toml");
    test::write_file(config, "[platform.linux]\nchain = [\"landlock\"]\n");
    auto empty = p.confine.run({"run", "--config", config.string(), "--workspace", p.tree.ws.string(), "--", ""});
    CHECK(empty.exit_code == 127);
    CHECK(empty.err == "confinectl: '': No such file or directory\n");
    test::write_file(p.tree.ws / "script", "#!/nonexistent/interpreter\necho hi\n", fs::perms(0755));
    auto script = p.confine.run({"run", "--config", config.string(), "--workspace", p.tree.ws.string(), "--", (p.tree.ws / "script").string()});
    CHECK(script.exit_code == 127);
    CHECK(script.err == "confinectl: " + (p.tree.ws / "script").string() + ": bad interpreter /nonexistent/interpreter: No such file or directory\n");
}

TEST_CASE("a signal while runners are probed ends confinectl, and the command never starts", "[escape][e2e]") {
    Planted p;
    test::TempDir fakes;
    test::install_fake(fakes.path(), "inside-hang");
    test::install_fake(fakes.path(), "usable");
    const fs::path config = p.confine.scratch("hang.toml");
    test::write_file(config, "plugin_dirs = [\"" + fakes.path().string() + "\"]\n[platform.linux]\nchain = [\"inside-hang\", \"usable\"]\n");
    const std::string script = "\"$0\" run --config \"$1\" --workspace \"$2\" -- /usr/bin/touch \"$3\" & pid=$!; sleep 0.5; kill -TERM $pid; wait $pid; echo $?";
    auto r = test::run({"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + p.confine.scratch("cache").string(), "/bin/sh", "-c", script,
                        p.confine.confinectl().string(), config.string(), p.tree.ws.string(), p.marker.string()});
    CHECK(r.out == "143\n");  // the shell's spelling of "ended by SIGTERM"
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK_FALSE(fs::exists(p.marker));
}

TEST_CASE("configuration lists are bounded, and an error is one short line", "[escape]") {
    Planted p;
    std::string dirs = "plugin_dirs = [", chain = "[platform.linux]\nchain = [";
    for (int i = 0; i < 100000; ++i) {
        if (i < 65) dirs += std::string(i ? ", " : "") + "\"/nonexistent/" + std::to_string(i) + "\"";
        chain += std::string(i ? ", " : "") + "\"r" + std::to_string(i) + "\"";
    }
    const fs::path many_dirs = p.confine.scratch("dirs.toml"), long_chain = p.confine.scratch("chain.toml");
    test::write_file(many_dirs, dirs + "]\n[platform.linux]\nchain = [\"landlock\"]\n");
    test::write_file(long_chain, chain + "]\n");
    p.check_refused(p.run_with(many_dirs), "plugin_dirs has 65 entries; at most 64 are accepted");
    auto r = p.run_with(long_chain);
    p.check_refused(r, "platform.linux.chain has 100000 entries; at most 64 are accepted");
    CHECK(r.err.size() < 4200);
}

// At a terminal the command has one of the run's own: the caller's terminal device is
// none of its descriptors, so that neither a chmod through /proc/self/fd/N or /dev/tty
// nor TIOCSTI reaches it (the filter still refuses TIOCSTI on the command's own).
TEST_CASE("the caller's terminal is out of the command's reach at a terminal: no chmod of it, no input pushed into it, on every Linux way",
          "[escape][e2e][linux-only]") {
    for (const Way way : {Way::bwrap, Way::landlock_launcher, Way::landlock_forked, Way::landlock_in_place}) {
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root"));
            Sandbox box(way);
            Tree t(unprivileged);
            std::vector<std::string> argv = as_user(unprivileged);
            argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", box.confine.confinectl().string()});
            const std::string script = "for f in /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 /dev/tty /dev/console; do chmod 0666 $f 2>/dev/null; done; " +
                                       std::string(TIOCSTI_HELPER) + " --tty 'touch " + (t.root / "tiocsti").string() + "\n'; echo done";
            const auto a = box.args(t, {"/bin/sh", "-c", script});
            argv.insert(argv.end(), a.begin(), a.end());
            test::PtyJob job(argv, unprivileged);
            struct stat before {};
            REQUIRE(::stat(job.terminal().c_str(), &before) == 0);
            CHECK(job.expect("done"));
            const auto r = job.wait();
            INFO(job.screen());
            REQUIRE(r);
            CHECK(r->exit_code == 0);
            struct stat after {};
            REQUIRE(::stat(job.terminal().c_str(), &after) == 0);
            CHECK((after.st_mode & 07777) == (before.st_mode & 07777));
            CHECK((after.st_mode & 0066) != 0066);
            CHECK_THAT(job.screen(), Catch::Contains("refused"));
            CHECK_FALSE(fs::exists(t.root / "tiocsti"));
        }
    }
}
