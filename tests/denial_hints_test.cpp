// A refusal of every dimension comes with a denial hint in the run's report: a denied
// read, a write outside the writable roots, a protected path, a refused connection, a
// refused signal — on every Linux way that writes a report (bubblewrap through the plugin
// and an asserted runner_command, Landlock through landlock-run and in a forked child),
// as root and as an unprivileged user, with real programs (cat, ls, touch, git, curl,
// python3, the shell's kill). And an ordinary failure, a typo included, gets none.
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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

// A tree whose workspace is a git repository, with a directory outside it to deny; every
// file readable by anyone, so that only the sandbox can refuse.
struct HintTree {
    Tree tree;
    fs::path secret = tree.root / "secret";
    explicit HintTree(bool unprivileged) : tree(unprivileged) {
        fs::create_directory(secret);
        test::write_file(secret / "key", "KEY\n", fs::perms(0644));
        auto init = test::run({"/usr/bin/git", "init", "-q", tree.ws.string()});
        REQUIRE(init.exit_code == 0);
        if (!unprivileged) return;
        for (const auto& entry : fs::recursive_directory_iterator(tree.root.path()))
            REQUIRE(::lchown(entry.path().c_str(), test::nobody, test::nobody) == 0);
    }
};

struct Reported {
    int exit_code;
    std::string err;
    json report;
};

// `script` run by /bin/sh confined the way `box` says, from the workspace (where
// confinectl, and so the command, starts), with a report; `flags` go before "--".
Reported run_reported(const Sandbox& box, const HintTree& t, const std::string& script, bool unprivileged,
                      const std::vector<std::string>& flags = {}) {
    const fs::path report = t.tree.root / "report.json";  // where Sandbox::args has the forked way write it
    fs::remove(report);
    auto a = box.args(t.tree, {"/bin/sh", "-c", script});
    if (box.way != Way::landlock_forked) a.insert(a.begin() + 1, {"--report", report.string()});
    a.insert(a.begin() + 1, {"--deny-read", t.secret.string()});
    a.insert(a.begin() + 1, flags.begin(), flags.end());
    std::vector<std::string> prefix = as_user(unprivileged);
    prefix.insert(prefix.end(), {"/usr/bin/env", "-C", t.tree.ws.string()});
    // HOME the tree's own: nobody could not read root's start-up files, and git would say
    // so (a "Permission denied" before the line looked for).
    auto r = box.confine.run(a, {"HOME=" + t.tree.home.string()}, prefix);
    INFO(name_of(box.way) << (unprivileged ? ", as nobody" : ", as root") << ": " << script << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(fs::exists(report));
    return {r.exit_code, r.err, json::parse(test::read_file(report))};
}

// The run failed, and its report's hint is a line of its stderr that holds `wanted` (or
// `or_else`, where the mechanism may answer either way).
void check_hinted(const Reported& r, const std::string& wanted, const std::string& or_else = {}) {
    INFO("stderr: " << r.err << "\nreport: " << r.report.dump());
    CHECK(r.exit_code != 0);
    CHECK(r.report["outcome"] == "task_failed");
    REQUIRE(r.report["denial_hint"].is_string());
    const std::string hint = r.report["denial_hint"].get<std::string>();
    CHECK_THAT(r.err, Catch::Contains(hint));
    CHECK_THAT(hint, Catch::Contains(wanted) || Catch::Contains(or_else.empty() ? wanted : or_else));
}

// A process outside the sandbox, of the user the run is (what the command may signal
// if anything may); ended when this goes.
struct Outsider {
    pid_t pid = -1;
    explicit Outsider(bool unprivileged) {
        std::vector<std::string> argv = as_user(unprivileged);
        argv.insert(argv.end(), {"/bin/sleep", "300"});
        std::vector<char*> raw;
        for (auto& s : argv) raw.push_back(s.data());
        raw.push_back(nullptr);
        REQUIRE(::posix_spawn(&pid, raw.front(), nullptr, nullptr, raw.data(), environ) == 0);
    }
    // Whether it still runs (not ended, not a zombie).
    bool running() const {
        int status = 0;
        return ::waitpid(pid, &status, WNOHANG) == 0;
    }
    ~Outsider() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    Outsider(const Outsider&) = delete;
    Outsider& operator=(const Outsider&) = delete;
};

void attempt_read(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    const std::string key = (t.secret / "key").string();
    check_hinted(run_reported(box, t, "cat " + key, unprivileged), key);
    check_hinted(run_reported(box, t, "ls " + t.secret.string(), unprivileged), t.secret.string());
}

void attempt_write(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    const std::string file = (t.tree.outside_dir / "new").string();
    check_hinted(run_reported(box, t, "touch " + file, unprivileged), file);
    CHECK_FALSE(fs::exists(file));
}

// git's own files (the default protect list) inside the workspace: bubblewrap, and
// Landlock as root (a mount namespace of the run's own), hold them read-only, and a rename
// of .git or of a protected file is EBUSY, which the host reads as a hint because the line
// names the path. Landlock as nobody puts them back after the run (protect partial, said
// in the report): nothing is refused, so there is nothing to hint, and the file ends the
// run as it began.
void attempt_protect(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    const auto config = run_reported(box, t, "git config --local user.name confined", unprivileged);
    if (is_landlock(box.way) && unprivileged) {
        CHECK(config.exit_code == 0);
        CHECK(config.report["dimensions"]["protect"] == "partial");
        CHECK(config.report["set_aside"].size() == 1);
        CHECK(config.report["set_aside"][0]["restored"] == true);
        CHECK(test::read_file(t.tree.ws / ".git" / "config").find("confined") == std::string::npos);
        return;
    }
    check_hinted(config, ".git/config");
    check_hinted(run_reported(box, t, "mv .git moved", unprivileged), ".git");
    CHECK(fs::is_directory(t.tree.ws / ".git"));
    check_hinted(run_reported(box, t, "echo x > .git/hooks/pre-commit", unprivileged), ".git/hooks/pre-commit");
}

// With the network confined (the default): a name that cannot be resolved, and a
// socket the network filter refuses.
void attempt_network(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    if (!fs::exists("/usr/bin/curl") || !fs::exists("/usr/bin/python3")) test::skip_test("needs curl and python3 in /usr/bin");
    check_hinted(run_reported(box, t, "/usr/bin/curl -sS --max-time 20 http://example.com/", unprivileged), "example.com");
    check_hinted(run_reported(box, t, "/usr/bin/python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=20)\"", unprivileged),
                 "Errno");
}

// The run's report advises what to do about its hint: `wanted` in denial_advice.
void check_advised(const Reported& r, const std::string& hinted, const std::string& wanted) {
    check_hinted(r, hinted);
    INFO("stderr: " << r.err << "\nreport: " << r.report.dump());
    REQUIRE(r.report["denial_advice"].is_string());
    CHECK_THAT(r.report["denial_advice"].get<std::string>(), Catch::Contains(wanted));
    CHECK_THAT(r.err, Catch::Contains("confinectl: " + r.report["denial_advice"].get<std::string>()));
}

// A server the command starts on 127.0.0.1 and connects to: where the run has a loopback
// of its own (bubblewrap; Landlock as root) it works; where it has none (Landlock as
// another user) the socket is refused, and the advice says why, in one line.
void attempt_loopback(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    if (!fs::exists("/usr/bin/python3")) test::skip_test("needs python3 in /usr/bin");
    const auto r = run_reported(box, t,
                                "/usr/bin/python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
                                "socket.create_connection(s.getsockname(), timeout=20)\"",
                                unprivileged);
    INFO("stderr: " << r.err << "\nreport: " << r.report.dump());
    const bool own = !(is_landlock(box.way) && unprivileged);
    CHECK(r.report["loopback"] == (own ? "own" : "none"));
    if (own) {
        CHECK(r.exit_code == 0);
        return;
    }
    check_advised(r, "Permission denied", "the run has no loopback under landlock here");
}

// The package tools and downloaders this machine has, as their real words say a name did
// not resolve (network none) or the proxy refused a host (--allow-host): npm, pip, apt
// where installed, and apt's drop to its _apt user, which no confined root may make.
// npm without its retries (a minute of them), pip with one (it says why only as it retries).
struct Tools {
    bool npm = fs::exists("/usr/bin/npm");
    bool pip = test::run({"/usr/bin/python3", "-m", "pip", "--version"}).exit_code == 0;
    bool apt = fs::exists("/usr/bin/apt-get");
};
const std::string apt_as_root = "/usr/bin/apt-get -q -o APT::Sandbox::User=root ";

void attempt_resolve(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    const Tools tools;
    const std::string none = "the run's network is none";
    check_advised(run_reported(box, t, "/usr/bin/curl -sS --max-time 20 https://deb.debian.org/", unprivileged), "Could not resolve host: deb.debian.org",
                  "--allow-host deb.debian.org");
    check_advised(run_reported(box, t, "/usr/bin/git ls-remote https://github.com/x/y", unprivileged), "Could not resolve host: github.com",
                  "--allow-host github.com");
    if (tools.npm)
        check_advised(run_reported(box, t, "/usr/bin/npm view --fetch-retries=0 left-pad", unprivileged), "EAI_AGAIN registry.npmjs.org",
                      "--allow-host registry.npmjs.org");
    if (tools.pip) {
        const auto pip = run_reported(box, t, "/usr/bin/python3 -m pip download --no-deps --retries 1 -d dl six", unprivileged);
        check_advised(pip, "Failed to establish a new connection", none);
        CHECK_THAT(pip.report["denial_advice"].get<std::string>(), Catch::Contains("--allow-host HOST"));
    }
    if (tools.apt && !unprivileged)
        check_advised(run_reported(box, t, apt_as_root + "download hello", unprivileged), "Temporary failure resolving 'deb.debian.org'",
                      "--allow-host deb.debian.org");
    if (!tools.npm || !tools.pip || !tools.apt) WARN("not all tried: npm " << tools.npm << ", pip " << tools.pip << ", apt-get " << tools.apt);
}

// With --allow-host deb.debian.org: the hosts the run's proxy refused are named, with the
// --allow-host for each; and apt as root needs its option (then the download works).
void attempt_proxied(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    const Tools tools;
    const std::vector<std::string> flags{"--allow-host", "deb.debian.org"};
    const std::string refused = "the run's proxy refused ";
    check_advised(run_reported(box, t, "/usr/bin/curl -sS --max-time 20 https://example.com/", unprivileged, flags), "response 403",
                  refused + "example.com:443 (not in allow_hosts); the run's allow_hosts are deb.debian.org: add --allow-host example.com");
    if (box.way != Way::landlock_forked) {  // that way writes a report whatever (Sandbox::args)
        // Without a report no stderr is read, but what the proxy refused is known all the same.
        auto a = box.args(t.tree, {"/usr/bin/curl", "-sS", "--max-time", "20", "https://example.com/"});
        a.insert(a.begin() + 1, flags.begin(), flags.end());
        std::vector<std::string> prefix = as_user(unprivileged);
        prefix.insert(prefix.end(), {"/usr/bin/env", "-C", t.tree.ws.string()});
        const auto r = box.confine.run(a, {"HOME=" + t.tree.home.string()}, prefix);
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 56);
        CHECK_THAT(r.err, Catch::Contains("\nconfinectl: " + refused + "example.com:443 (not in allow_hosts)"));
    }
    if (tools.npm)
        check_advised(run_reported(box, t, "/usr/bin/npm view --fetch-retries=0 left-pad", unprivileged, flags), "403 Forbidden",
                      refused + "registry.npmjs.org:443");
    if (tools.pip)
        check_advised(run_reported(box, t, "/usr/bin/python3 -m pip download --no-deps --retries 1 -d dl six", unprivileged, flags),
                      "Tunnel connection failed: 403", refused + "pypi.org:443");
    if (!tools.apt || unprivileged) return;
    check_advised(run_reported(box, t, "/usr/bin/apt-get -q download hello", unprivileged, flags), "setgroups", "-o APT::Sandbox::User=root");
    const auto fetched = run_reported(box, t, apt_as_root + "download hello", unprivileged, flags);
    INFO("stderr: " << fetched.err << "\nreport: " << fetched.report.dump());
    if (fetched.exit_code != 0 && fetched.report["network_requests"].dump().find("does not resolve") != std::string::npos)
        test::skip_test("deb.debian.org is not reachable from here");
    CHECK(fetched.exit_code == 0);
    bool deb = false;
    for (const auto& entry : fs::directory_iterator(t.tree.ws)) deb = deb || entry.path().extension() == ".deb";
    CHECK(deb);
}

// A process of the same user outside the sandbox: bubblewrap's PID namespace does not
// have it (ESRCH); under Landlock the host's supervisor, where it may make a PID
// namespace (as root), does not either, and elsewhere Landlock's signal scope refuses it
// (EPERM, from ABI 6; below, the signal goes through, and the report says so).
void attempt_signal(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    Outsider outsider(unprivileged);
    const auto r = run_reported(box, t, "kill -TERM " + std::to_string(outsider.pid), unprivileged);
    if (is_landlock(box.way) && test::landlock_abi() < 6 && unprivileged) {
        CHECK_THAT(r.report["dimensions"]["open"].get<std::string>(), Catch::Contains("can be signalled"));
        return;
    }
    if (is_landlock(box.way)) check_hinted(r, "Operation not permitted", "No such process");
    else check_hinted(r, "No such process");
    CHECK(outsider.running());
}

// Ordinary failures, with denied and protected paths in the policy: none is a hint.
void attempt_ordinary(const Sandbox& box, bool unprivileged) {
    HintTree t(unprivileged);
    for (const std::string& script : std::vector<std::string>{"cat typo.txt", "cat " + t.secret.string() + "2/key",
                                                              "ls " + (t.tree.ws / ".gitignore").string(), "git log", "exit 3"}) {
        const auto r = run_reported(box, t, script, unprivileged);
        INFO(script << "\nstderr: " << r.err);
        CHECK(r.exit_code != 0);
        CHECK(r.report["outcome"] == "task_failed");
        CHECK(r.report["denial_hint"].is_null());
    }
}

void attempt_all(Way way, void (*attempt)(const Sandbox&, bool)) {
    Sandbox box(way);
    attempt(box, false);
    test::require_user_switch();
    attempt(box, true);
}

}  // namespace

// One test case per way and dimension, so that CTest names what failed.
#define HINT_CASES(WAY, TAG)                                                                                                                   \
    TEST_CASE("a denied read has a denial hint through " TAG ", as root and as an unprivileged user", "[hints][e2e][linux-only]") {           \
        attempt_all(WAY, attempt_read);                                                                                                        \
    }                                                                                                                                          \
    TEST_CASE("a write outside the writable roots has a denial hint through " TAG ", as root and as an unprivileged user",                    \
              "[hints][e2e][linux-only]") {                                                                                                    \
        attempt_all(WAY, attempt_write);                                                                                                       \
    }                                                                                                                                          \
    TEST_CASE("a change to a protected path has a denial hint through " TAG " where it is refused, as root and as an unprivileged user",      \
              "[hints][e2e][linux-only]") {                                                                                                    \
        attempt_all(WAY, attempt_protect);                                                                                                     \
    }                                                                                                                                          \
    TEST_CASE("a refused connection has a denial hint through " TAG ", as root and as an unprivileged user", "[hints][e2e][linux-only]") {    \
        attempt_all(WAY, attempt_network);                                                                                                     \
    }                                                                                                                                          \
    TEST_CASE("a server on the loopback works through " TAG " where the run has one, and its refusal is advised where not, as root and as "  \
              "an unprivileged user",                                                                                                          \
              "[hints][e2e][linux-only]") {                                                                                                    \
        attempt_all(WAY, attempt_loopback);                                                                                                    \
    }                                                                                                                                          \
    TEST_CASE("a name that does not resolve has a denial hint and advice through " TAG ", as root and as an unprivileged user",               \
              "[hints][e2e][linux-only]") {                                                                                                    \
        attempt_all(WAY, attempt_resolve);                                                                                                     \
    }                                                                                                                                          \
    TEST_CASE("a host the run's proxy refused, and apt as root, have advice through " TAG ", as root and as an unprivileged user",            \
              "[hints][e2e][linux-only]") {                                                                                                    \
        attempt_all(WAY, attempt_proxied);                                                                                                     \
    }                                                                                                                                          \
    TEST_CASE("a refused signal has a denial hint through " TAG ", as root and as an unprivileged user", "[hints][e2e][linux-only]") {        \
        attempt_all(WAY, attempt_signal);                                                                                                      \
    }                                                                                                                                          \
    TEST_CASE("an ordinary failure has no denial hint through " TAG ", as root and as an unprivileged user", "[hints][e2e][linux-only]") {    \
        attempt_all(WAY, attempt_ordinary);                                                                                                    \
    }

HINT_CASES(Way::bwrap, "the bwrap plugin")
HINT_CASES(Way::runner_command, "an asserted runner_command")
HINT_CASES(Way::landlock_launcher, "landlock-run")
HINT_CASES(Way::landlock_forked, "landlock in a forked child")
