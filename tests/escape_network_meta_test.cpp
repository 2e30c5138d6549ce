// The escape suite, for unix sockets that send to an address and for file metadata: on
// every Linux way (test::Way), as root and as an unprivileged user, judged by the world
// afterwards — what reached the host's sockets, what a file outside looks like — and by
// what the run says it enforced, which no attempt here may disprove.
//
// - With the network confined, no datagram reaches a host unix datagram socket, by its
//   abstract name or by its path, whether sent with sendmsg(), sendmmsg() or sendto(),
//   from a socket or a socket pair; no host abstract stream socket is connected to; a
//   stream pair and a sequenced-packet pair keep working inside; and the runner reports
//   the network `full`.
// - A file outside the writable roots that the caller owns keeps its mode, times and
//   extended attributes under bubblewrap, which reports write `full`; under Landlock,
//   which governs no metadata, the run reports write below `full`, naming metadata in
//   what it leaves open.
// - The host's device nodes (/dev/null and the others bubblewrap's --dev binds), which
//   root owns, keep their mode: bubblewrap gives root confine's own nodes instead; a way
//   that lets root change them reports write below `full`.
#include "ruleset.hpp"
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>

namespace fs = std::filesystem;
using nlohmann::json;
using test::as_user;
using test::is_landlock;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

// The host's sockets, outside every sandbox: an abstract and a by-path unix datagram
// socket (the path outside every writable root, writable by anyone), and an abstract
// stream socket that listens. What reached each is read afterwards, without waiting.
struct HostSockets {
    std::string tag = std::to_string(::getpid());
    std::string abstract_dgram = "confine-escape-dgram-" + tag, abstract_stream = "confine-escape-stream-" + tag;
    fs::path path;
    int dgram_abstract = -1, dgram_path = -1, stream = -1;

    explicit HostSockets(fs::path socket_path) : path(std::move(socket_path)) {
        dgram_abstract = test::bound_unix_socket(abstract_dgram, true, SOCK_DGRAM);
        dgram_path = test::bound_unix_socket(path.string(), false, SOCK_DGRAM);
        fs::permissions(path, fs::perms::all);
        stream = test::bound_unix_socket(abstract_stream, true, SOCK_STREAM);
        REQUIRE(::listen(stream, 8) == 0);
    }
    ~HostSockets() {
        for (int fd : {dgram_abstract, dgram_path, stream}) ::close(fd);
        fs::remove(path);
    }
    std::vector<std::string> command() const { return {DGRAM_REACH, abstract_dgram, path.string(), abstract_stream}; }
    // What arrived, each datagram as it was sent ("socket sendmsg to the abstract
    // socket"), and a connection; empty when nothing did.
    std::string arrived() {
        std::string what;
        char buffer[256];
        for (const auto& [fd, where] : {std::pair{dgram_abstract, "the abstract socket"}, std::pair{dgram_path, "the socket by path"}})
            for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT)) > 0;)
                what += "[" + std::string(buffer, static_cast<std::size_t>(n)) + " to " + where + "] ";
        const int c = ::accept4(stream, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
            ::close(c);
            what += "[a connection to the abstract stream socket]";
        }
        return what;
    }
};

// The dimensions the way's runner reports for a workspace-write run with the network
// confined, as wrap --json says them (the same for every path of a runner).
json wrapped_dimensions(const Sandbox& box, const Tree& t, bool unprivileged) {
    auto r = box.confine.run({"wrap", "--json", "--config", box.config.string(), "--workspace", t.ws.string(), "--", "/bin/true"}, {},
                             as_user(unprivileged));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["dimensions"];
}

void attempt_datagrams(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);
    HostSockets host(t.root / "host-dgram.sock");
    for (const bool read_only : {false, true}) {
        auto r = box.confine.run(box.args(t, host.command(), read_only), {}, as_user(unprivileged));
        INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << (read_only ? ", read-only" : "") << "\nstdout: " << r.out
                          << "\nstderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(host.arrived() == "");
        // No datagram socket to send from; what needs no address still works.
        CHECK_THAT(r.out, Catch::StartsWith("socket=EACCES raw=EACCES pair=EACCES abstract=E") && Catch::Contains(" path=E") &&
                              Catch::Contains(" stream=E") && Catch::EndsWith(" pair-stream=ok pair-seqpacket=ok\n"));
    }
    // Nothing got through, and the runner says so.
    const json d = wrapped_dimensions(box, t, unprivileged);
    INFO(d.dump());
    CHECK(d["network"] == "full");
    if (d["open"].is_string()) CHECK_THAT(d["open"].get<std::string>(), !Catch::Contains("network:"));
    // With the network allowed, the same attempts reach the host: the test can see them.
    auto allowed = box.args(t, host.command());
    allowed.insert(allowed.begin() + 1, {"--network", "allow"});
    auto r = box.confine.run(allowed, {}, as_user(unprivileged));
    INFO(name_of(way) << ", --network allow\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("socket=ok raw=ok pair=ok ") && Catch::Contains(" path=ok "));
    CHECK_THAT(host.arrived(), Catch::Contains("[socket sendmsg to the socket by path]"));
}

// What a file looks like, as far as set-metadata could change it.
struct Metadata {
    mode_t mode = 0;
    long mtime = 0;
    bool has_attribute = false;
    int flags = 0;
    bool operator==(const Metadata&) const = default;
};

Metadata metadata_of(const fs::path& file) {
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    char value[8];
    int flags = 0;
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) flags = -1;  // a file system without flags
    ::close(fd);
    return {st.st_mode, st.st_mtim.tv_sec, ::getxattr(file.c_str(), "user.confine-escape", value, sizeof value) >= 0, flags};
}

// What set-metadata said, and what the run reported of writes: the level and the open
// text, from its report where confinectl writes one, from -v in place (confinectl has
// become the command: no report).
struct Reported {
    std::string said, level, open;
};

// Runs `command` confined, and says what it printed and what the run reported of write.
Reported run_reporting_write(const Sandbox& box, const Tree& t, const std::vector<std::string>& command, bool unprivileged) {
    auto a = box.args(t, command);
    const fs::path report = t.root / "report.json";  // where Sandbox::args has the forked way write it
    if (box.way == Way::landlock_in_place) a.insert(a.begin() + 1, "-v");
    else if (box.way != Way::landlock_forked) a.insert(a.begin() + 1, {"--report", report.string()});
    auto r = box.confine.run(a, {}, as_user(unprivileged));
    INFO(name_of(box.way) << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    if (box.way != Way::landlock_in_place) {
        const json d = json::parse(test::read_file(report))["dimensions"];
        return {r.out, d["write"].get<std::string>(), d["open"].is_string() ? d["open"].get<std::string>() : std::string()};
    }
    const std::string said = "wrapped by landlock: write ", left = "left open by landlock: ";
    const auto at = r.err.find(said);
    REQUIRE(at != std::string::npos);
    const auto level_at = at + said.size();
    const auto open_at = r.err.find(left);
    return {r.out, r.err.substr(level_at, r.err.find(',', level_at) - level_at),
            open_at == std::string::npos ? std::string() : r.err.substr(open_at + left.size(), r.err.find('\n', open_at) - open_at - left.size())};
}

void attempt_metadata(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);  // the file outside is the caller's
    const Metadata before = metadata_of(t.outside_file);
    const auto [said, level, open] = run_reporting_write(box, t, {SET_METADATA, t.outside_file.string()}, unprivileged);
    const Metadata after = metadata_of(t.outside_file);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << ": " << said << "write " << level << ", open: " << open << "\nmode " << std::oct
                      << before.mode << " -> " << after.mode << std::dec << ", mtime " << before.mtime << " -> " << after.mtime
                      << ", attribute " << before.has_attribute << " -> " << after.has_attribute << ", flags " << before.flags << " -> "
                      << after.flags);
    CHECK(test::read_file(t.outside_file) == "original");
    if (is_landlock(way)) {
        // Landlock governs no metadata: the change is made (the attempt is real), and the
        // run says write is not full, naming it.
        CHECK(after.mode != before.mode);
        CHECK(level != "full");
        CHECK_THAT(open, Catch::Contains("write: ") && Catch::Contains("metadata"));
    } else {
        // The read-only bind refuses each change.
        CHECK(said == "chmod=EROFS utime=EROFS xattr=EROFS flags=EROFS\n");
        CHECK(level == "full");
    }
    // Whatever a runner is, a `full` write means the file is as it was.
    if (level == "full") CHECK(after == before);
}

// The device nodes bubblewrap's --dev binds from the host, which root owns: each one's
// mode set to what it is (a change that changes nothing, so that a way that allows it
// harms nothing), judged by whether the call was allowed, and the host's node afterwards.
void attempt_device_nodes(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);
    std::string script;
    std::vector<std::pair<fs::path, struct stat>> before;
    for (const char* name : {"null", "zero", "full", "random", "urandom", "tty"}) {
        const fs::path node = fs::path("/dev") / name;
        struct stat st {};
        if (::stat(node.c_str(), &st) != 0) continue;
        before.emplace_back(node, st);
        char mode[8];
        std::snprintf(mode, sizeof mode, "%o", static_cast<unsigned>(st.st_mode & 07777));
        script += std::string("chmod ") + mode + " " + node.string() + " 2>/dev/null && echo 'changed " + node.string() + "' || echo 'refused " +
                  node.string() + "'; ";
    }
    // Still usable inside: written to, read from.
    script += "echo x > /dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c";
    const auto [said, level, open] = run_reporting_write(box, t, {"/bin/sh", "-c", script}, unprivileged);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << ": " << said << "write " << level << ", open: " << open);
    CHECK_THAT(said, Catch::EndsWith("4\n4\n"));
    const bool changed = said.find("changed ") != std::string::npos;
    if (unprivileged) CHECK_FALSE(changed);  // not the owner
    if (!is_landlock(way)) CHECK_FALSE(changed);  // confine's own nodes, which root does not own
    // Whatever a runner is, a `full` write means no node of the host's could be changed.
    if (changed) {
        CHECK(level != "full");
        CHECK_THAT(open, Catch::Contains("write: "));
    }
    for (const auto& [node, st] : before) {
        struct stat now {};
        REQUIRE(::stat(node.c_str(), &now) == 0);
        CHECK(now.st_mode == st.st_mode);
        CHECK(now.st_uid == st.st_uid);
    }
}

// Whether a unix datagram socket made before a Landlock domain scoped as `scoped` says
// (a socket handed in: the network filter refuses making one) reaches the host's
// abstract datagram socket `host` from inside the domain; judged by what arrived.
bool handed_in_socket_reaches(const HostSockets& host, std::uint64_t scoped) {
    namespace ll = confine::landlock;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int handed_in = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        const int ruleset = ll::create_ruleset(ll::handled_access(ll::abi_version()), scoped);
        if (handed_in < 0 || ruleset < 0 || ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            ::syscall(__NR_landlock_restrict_self, ruleset, 0u) != 0)
            ::_exit(2);
        sockaddr_un to{};
        to.sun_family = AF_UNIX;
        std::memcpy(to.sun_path + 1, host.abstract_dgram.data(), host.abstract_dgram.size());
        const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + host.abstract_dgram.size());
        ::sendto(handed_in, "handed in", 9, 0, reinterpret_cast<const sockaddr*>(&to), size);
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    char buffer[16];
    return ::recv(host.dgram_abstract, buffer, sizeof buffer, MSG_DONTWAIT) > 0;
}

}  // namespace

// The Landlock scope alone (ABI 6), under the network filter on every Landlock path: a
// datagram socket the command did not make itself, which the filter cannot stop,
// reaches no abstract socket of the host. Without the scope it does: the test can see.
TEST_CASE("from Landlock ABI 6 the ruleset of a confined network scopes abstract unix sockets: a socket handed in reaches none of the host's",
          "[escape][network][landlock][linux-only]") {
    test::require_landlock();
    if (test::landlock_abi() < 6) test::skip_test("this kernel's Landlock ABI is below 6: abstract unix sockets cannot be scoped");
    namespace ll = confine::landlock;
    test::TempDir dir;
    HostSockets host(dir / "host-dgram.sock");
    CHECK(ll::scopes(ll::abi_version(), true) & ll::scope::abstract_unix_socket);
    CHECK_FALSE(ll::scopes(ll::abi_version(), false) & ll::scope::abstract_unix_socket);
    CHECK_FALSE(handed_in_socket_reaches(host, ll::scopes(ll::abi_version(), true)));
    CHECK(handed_in_socket_reaches(host, ll::scopes(ll::abi_version(), false)));
}

// One test case per way, so that CTest names the way that failed.
#define NETWORK_META_CASES(WAY, TAG)                                                                                                      \
    TEST_CASE("no unix datagram reaches a host socket by abstract name or path, nor a host abstract stream socket, through " TAG         \
              ", as root and as an unprivileged user",                                                                                     \
              "[escape][e2e][network][linux-only]") {                                                                                      \
        attempt_datagrams(WAY, false);                                                                                                      \
        attempt_datagrams(WAY, true);                                                                                                       \
    }                                                                                                                                       \
    TEST_CASE("metadata of a file outside the writable roots stays as it was, or the run says write is not full, through " TAG           \
              ", as root and as an unprivileged user",                                                                                     \
              "[escape][e2e][metadata][linux-only]") {                                                                                     \
        attempt_metadata(WAY, false);                                                                                                       \
        attempt_metadata(WAY, true);                                                                                                        \
    }                                                                                                                                       \
    TEST_CASE("the host's device nodes keep their mode, or the run says write is not full, through " TAG                                 \
              ", as root and as an unprivileged user",                                                                                     \
              "[escape][e2e][metadata][linux-only]") {                                                                                     \
        attempt_device_nodes(WAY, false);                                                                                                   \
        attempt_device_nodes(WAY, true);                                                                                                    \
    }

NETWORK_META_CASES(Way::bwrap, "the bwrap plugin")
NETWORK_META_CASES(Way::runner_command, "an asserted runner_command")
NETWORK_META_CASES(Way::landlock_launcher, "landlock-run")
NETWORK_META_CASES(Way::landlock_forked, "landlock in a forked child")
NETWORK_META_CASES(Way::landlock_in_place, "landlock in place")
