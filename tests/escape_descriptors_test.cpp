// The escape suite's descriptor cases: the command gets descriptors 0, 1 and 2, those
// asked for with --pass-fd, and nothing else its caller leaked (docs/design.md §11). A
// caller that leaks a descriptor — a file outside opened for appending, a directory of
// `/`, a connected socket — leaks it to every process it starts; confinectl must not hand
// it on. Tried through every Linux way, as root and as nobody, and judged by the world
// afterwards: the file outside as it was, nothing created outside, no byte on the socket.
#include "support.hpp"
#include "ways.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace fs = std::filesystem;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

// A unix socket the host listens on, outside every writable root: what a leaked
// connection to it carries arrives here.
struct Listener {
    int fd = -1;
    int peer = -1;
    fs::path path;
    explicit Listener(fs::path where) : path(std::move(where)) {
        fd = nonblocking(::socket(AF_UNIX, SOCK_STREAM, 0));
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        REQUIRE(fd >= 0);
        REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
        REQUIRE(::listen(fd, 4) == 0);
        ::chmod(path.c_str(), 0777);  // the leaking caller may be nobody
    }
    // `d` close-on-exec and non-blocking (portably: no SOCK_NONBLOCK on macOS).
    static int nonblocking(int d) {
        if (d >= 0) {
            ::fcntl(d, F_SETFD, FD_CLOEXEC);
            ::fcntl(d, F_SETFL, ::fcntl(d, F_GETFL) | O_NONBLOCK);
        }
        return d;
    }
    ~Listener() {
        for (int d : {peer, fd})
            if (d >= 0) ::close(d);
    }
    // Everything that arrived on the (one) connection so far; "" when nothing did.
    std::string received() {
        if (peer < 0) peer = nonblocking(::accept(fd, nullptr, nullptr));
        std::string got;
        char buffer[256];
        ssize_t n = 0;
        while (peer >= 0 && (n = ::recv(peer, buffer, sizeof buffer, MSG_DONTWAIT)) > 0) got.append(buffer, static_cast<std::size_t>(n));
        return got;
    }
};

// The caller's leaks: 5 the file outside, opened for appending; 6 a directory of "/";
// 7 a connection to the host's listener (single digits: sh redirects no other).
std::vector<std::string> leaking(const Tree& t, const Listener& host) {
    return {DESCRIPTORS, "leak", "5=append:" + t.outside_file.string(), "6=dir:/", "7=unix:" + host.path.string(), "--"};
}

// confinectl run through `box`, started by a caller that leaks, as root or nobody.
test::Result leaked_run(const Sandbox& box, const Tree& t, const Listener& host, std::vector<std::string> extra, const std::vector<std::string>& command,
                        bool unprivileged, bool read_only = false, bool verbose = false) {
    std::vector<std::string> args = box.args(t, command, read_only);
    args.insert(args.begin() + 1, extra.begin(), extra.end());  // after "run"
    if (verbose) args.insert(args.begin(), "-v");
    std::vector<std::string> argv = as_user(unprivileged);
    for (auto& a : leaking(t, host)) argv.push_back(std::move(a));
    argv.push_back(box.confine.confinectl().string());
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run(argv);
}

// What the command tries with each leaked descriptor (but 5 when it was passed on).
std::string attempts(const Tree& t, bool file_passed = false) {
    const std::string r = t.root.path().string();
    return std::string(file_passed ? "" : "echo LEAK >&5; ") + "echo x > /proc/self/fd/6" + r + "/escaped; " + std::string(DESCRIPTORS) +
           " openat 6 " + r.substr(1) + "/escaped-at; echo LEAK >&7; true";
}

void attempt_leaks(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root"));
    for (bool read_only : {false, true}) {
        Tree t(unprivileged);
        Listener host(t.root / "host.sock");
        const auto r = leaked_run(box, t, host, {}, {"/bin/sh", "-c", attempts(t)}, unprivileged, read_only);
        INFO((read_only ? "read-only" : "workspace-write") << "\nstdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.exit_code == 0);  // the attempts ran, confined
        CHECK(test::read_file(t.outside_file) == "original");
        CHECK_FALSE(fs::exists(t.root / "escaped"));
        CHECK_FALSE(fs::exists(t.root / "escaped-at"));
        CHECK(host.received().empty());
    }
}

// --pass-fd 5 hands on exactly descriptor 5: the command sees 0, 1, 2 and 5 open, its
// write through 5 lands, and the other leaks still reach nothing.
void pass_one(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root"));
    Tree t(unprivileged);
    Listener host(t.root / "host.sock");
    const auto listed = leaked_run(box, t, host, {"--pass-fd", "5"}, {DESCRIPTORS, "list"}, unprivileged);
    INFO("stderr: " << listed.err);
    CHECK(listed.exit_code == 0);
    CHECK(listed.out == "0 1 2 5\n");
    const auto wrote = leaked_run(box, t, host, {"--pass-fd", "5"}, {"/bin/sh", "-c", "echo PASSED >&5; " + attempts(t, true)}, unprivileged, false, true);
    INFO("stderr: " << wrote.err);
    CHECK(wrote.exit_code == 0);
    CHECK(test::read_file(t.outside_file) == "originalPASSED\n");
    CHECK_FALSE(fs::exists(t.root / "escaped"));
    CHECK_FALSE(fs::exists(t.root / "escaped-at"));
    CHECK(host.received().empty());
    // -v says what was handed on; the report (written on the forked way) lists it.
    CHECK(wrote.err.find("the command gets 0, 1, 2 and 5 (passed on)") != std::string::npos);
    if (way == Way::landlock_forked) CHECK(nlohmann::json::parse(test::read_file(t.root / "report.json"))["passed_fds"] == nlohmann::json::array({5}));
}

}  // namespace

#define DESCRIPTOR_CASES(WAY, TAG, TAGS)                                                                                              \
    TEST_CASE("no leaked descriptor reaches the command through " TAG ", as root", "[escape][e2e]" TAGS) { attempt_leaks(WAY, false); } \
    TEST_CASE("no leaked descriptor reaches the command through " TAG ", as an unprivileged user", "[escape][e2e]" TAGS) {           \
        attempt_leaks(WAY, true);                                                                                                     \
    }                                                                                                                                 \
    TEST_CASE("run --pass-fd hands on exactly the descriptor asked through " TAG ", as root", "[escape][e2e]" TAGS) { pass_one(WAY, false); } \
    TEST_CASE("run --pass-fd hands on exactly the descriptor asked through " TAG ", as an unprivileged user", "[escape][e2e]" TAGS) {     \
        pass_one(WAY, true);                                                                                                          \
    }

DESCRIPTOR_CASES(Way::bwrap, "the bwrap plugin", "[bwrap]")
DESCRIPTOR_CASES(Way::runner_command, "an asserted runner_command", "[bwrap]")
DESCRIPTOR_CASES(Way::landlock_launcher, "landlock-run", "[landlock][linux-only]")
DESCRIPTOR_CASES(Way::landlock_forked, "landlock in a forked child", "[landlock][linux-only]")
DESCRIPTOR_CASES(Way::landlock_in_place, "landlock in place", "[landlock][linux-only]")

TEST_CASE("run --pass-fd refuses a bad descriptor in one line, exit 125", "[confinectl][e2e]") {
    test::Installed confine;
    Tree t(false);
    Listener host(t.root / "host.sock");
    const std::vector<std::string> base{DESCRIPTORS, "leak", "5=append:" + t.outside_file.string(), "--", confine.confinectl().string(), "run",
                                        "--workspace", t.ws.string()};
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"--pass-fd", "x"}, "--pass-fd: 'x' is not a descriptor number"},
        {{"--pass-fd", ""}, "run: --pass-fd needs a non-empty value (N)"},
        {{"--pass-fd", "1"}, "--pass-fd 1: descriptors 0, 1 and 2 are the command's anyway"},
        {{"--pass-fd", "77"}, "--pass-fd 77: not an open descriptor"},
        {{"--pass-fd", "5", "--pass-fd", "5"}, "--pass-fd 5: named twice"},
        {{"--report-fd", "5", "--pass-fd", "5"}, "--pass-fd 5: it is --report-fd's, which the command never gets"},
    };
    for (const auto& [flags, line] : cases) {
        std::vector<std::string> argv = base;
        argv.insert(argv.end(), flags.begin(), flags.end());
        argv.insert(argv.end(), {"--", "/bin/sh", "-c", "echo RAN >&5"});
        const auto r = test::run(argv);
        INFO(line << "\nstderr: " << r.err);
        CHECK(r.exit_code == 125);
        CHECK(r.err == "confinectl: " + line + "\n");
        CHECK(test::read_file(t.outside_file) == "original");  // nothing ran
    }
}

TEST_CASE("wrap --json lists the descriptors a host may pass on", "[confinectl][linux-only]") {
    test::Installed confine;
    Tree t(false);
    auto listed = confine.run({"wrap", "--json", "--workspace", t.ws.string(), "--pass-fd", "7", "--pass-fd", "9", "--", "/bin/true"});
    INFO(listed.err);
    REQUIRE(listed.exit_code == 0);
    CHECK(nlohmann::json::parse(listed.out)["pass_fds"] == nlohmann::json::array({7, 9}));
    auto none = confine.run({"wrap", "--json", "--workspace", t.ws.string(), "--", "/bin/true"});
    REQUIRE(none.exit_code == 0);
    CHECK(nlohmann::json::parse(none.out)["pass_fds"] == nlohmann::json::array());
    auto bad = confine.run({"wrap", "--json", "--workspace", t.ws.string(), "--pass-fd", "2", "--", "/bin/true"});
    CHECK(bad.exit_code == 125);
    CHECK(nlohmann::json::parse(bad.out)["error"]["code"] == "USAGE");
}

// On a kernel without close_range (before 5.9; imitated by a seccomp filter), the forked
// child marks each descriptor /proc lists instead: still nothing leaked reaches the command.
TEST_CASE("without close_range no leaked descriptor reaches the command either", "[escape][e2e][linux-only]") {
    for (const Way way : {Way::bwrap, Way::landlock_launcher, Way::landlock_forked, Way::landlock_in_place}) {
        Sandbox box(way);
        Tree t(false);
        Listener host(t.root / "host.sock");
        std::vector<std::string> argv{DESCRIPTORS, "leak", "--no-close-range", "5=append:" + t.outside_file.string(), "6=dir:/",
                                      "7=unix:" + host.path.string(), "--", box.confine.confinectl().string()};
        const auto args = box.args(t, {"/bin/sh", "-c", attempts(t)});
        argv.insert(argv.end(), args.begin(), args.end());
        const auto r = test::run(argv);
        INFO(name_of(way) << "\nstderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(test::read_file(t.outside_file) == "original");
        CHECK_FALSE(fs::exists(t.root / "escaped"));
        CHECK_FALSE(fs::exists(t.root / "escaped-at"));
        CHECK(host.received().empty());
    }
}

// A library host's spawn(): the descriptors this process leaks (not close-on-exec, as a
// careless host leaves them) stay out of the command on every runner; pass_fds hands on
// exactly those named, and the outcome lists them. A bad entry is USAGE, nothing run.
TEST_CASE("spawn() gives the command only descriptors 0 to 2 and pass_fds on bubblewrap and both Landlock ways", "[escape][e2e][linux-only]") {
    test::TempDir plugins;
    test::install_builtin(plugins.path(), "bwrap");
    test::install_builtin(plugins.path(), "landlock");
    Tree t(false);
    const int leaked = ::open(t.outside_file.c_str(), O_WRONLY | O_APPEND);  // inheritable on purpose
    const int passed = ::open("/dev/null", O_WRONLY);
    REQUIRE(leaked > 2);
    REQUIRE(passed > 2);
    for (const std::string config : {"[platform.linux]\nchain = [\"bwrap\"]\n", "[platform.linux]\nchain = [\"landlock\"]\n",
                                     "[platform.linux]\nchain = [\"landlock\"]\n[runner.landlock]\nin_process = false\n"}) {
        INFO(config);
        if (config.find("bwrap") != std::string::npos) test::require_bwrap();
        else test::require_landlock();
        auto provider = confine::Provider::create(test::config_from(config),
                                                  {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{plugins.path()}});
        REQUIRE(provider);
        const confine::Policy policy{confine::Mode::workspace_write, t.ws, {}};
        confine::RunOptions options;
        auto listed = confine::spawn(**provider, confine::PolicyRequest(policy), std::vector<std::string>{DESCRIPTORS, "list"}, options);
        REQUIRE(listed);
        CHECK(listed->wait().stdout_text == "0 1 2\n");
        CHECK(listed->wait().outcome.passed_fds.empty());
        auto wrote = confine::spawn(**provider, confine::PolicyRequest(policy), std::vector<std::string>{"/bin/sh", "-c", "echo LEAK >&" + std::to_string(leaked) + "; true"}, options);
        REQUIRE(wrote);
        CHECK(wrote->wait().outcome.kind == confine::OutcomeKind::completed);
        CHECK(test::read_file(t.outside_file) == "original");
        options.pass_fds = {passed};
        auto handed = confine::spawn(**provider, confine::PolicyRequest(policy), std::vector<std::string>{DESCRIPTORS, "list"}, options);
        REQUIRE(handed);
        CHECK(handed->wait().stdout_text == "0 1 2 " + std::to_string(passed) + "\n");
        CHECK(handed->wait().outcome.passed_fds == std::vector<int>{passed});
        for (const std::vector<int>& bad : {std::vector<int>{1}, std::vector<int>{passed, passed}, std::vector<int>{999}}) {
            options.pass_fds = bad;
            auto refused = confine::spawn(**provider, confine::PolicyRequest(policy), std::vector<std::string>{"/bin/true"}, options);
            REQUIRE_FALSE(refused);
            CHECK(refused.error().code == confine::ErrorCode::usage);
            auto refused_run = confine::run(**provider, confine::PolicyRequest(policy), std::vector<std::string>{"/bin/true"}, options);
            REQUIRE_FALSE(refused_run);
            CHECK(refused_run.error().code == confine::ErrorCode::usage);
        }
    }
    ::close(leaked);
    ::close(passed);
}
