#include <confine/execute.hpp>
#include <confine/sdk/vocabulary.hpp>

#include "observed.hpp"

#include <catch2/catch.hpp>

using confine::Observation;
using confine::OutcomeKind;

namespace {

const std::string notice = "landlock-run: partial enforcement (older Landlock ABI)";
const std::string fatal = "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)";

confine::WrapResult landlock_shaped() {
    confine::WrapResult w;
    w.runner = "landlock";
    w.argv = {"/usr/lib/confine/landlock-run", "--ro", "/", "--", "cmd"};
    w.enforcement = confine::Enforcement::partial;
    w.denial_signatures = {"permission denied"};
    w.failure_rule = {{125}, {"landlock-run: "}, {notice}};
    return w;
}

using test::exited;
using test::Seen;

confine::Outcome classify(const confine::WrapResult& w, Seen seen) { return test::classified(w, std::move(seen)); }

}  // namespace

TEST_CASE("ordinary non-zero exits stay task failures under the Landlock rule", "[classify]") {
    for (int code : {1, 2, 125, 126, 127}) {
        INFO(code);
        auto out = classify(landlock_shaped(), exited(code, notice + "\n"));
        CHECK(out.kind == OutcomeKind::task_failed);
        CHECK(out.exit_code == code);
        CHECK(out.basis == confine::Basis::rule);
        CHECK(out.evidence.empty());
        CHECK(out.runner == "landlock");
        CHECK(out.enforcement == confine::Enforcement::partial);
    }
    CHECK(classify(landlock_shaped(), exited(0, notice + "\n")).kind == OutcomeKind::completed);
}

TEST_CASE("a fatal line without exit status 125 is not evidence under the Landlock rule", "[classify]") {
    for (int code : {1, 2}) {
        auto out = classify(landlock_shaped(), exited(code, notice + "\n" + fatal + "\n"));
        CHECK(out.kind == OutcomeKind::task_failed);
        CHECK(out.evidence.empty());
    }
}

TEST_CASE("a fatal line with 125 is a runner failure whose evidence is that line, not the notice", "[classify]") {
    auto out = classify(landlock_shaped(), exited(125, notice + "\n" + fatal + "\n"));
    CHECK(out.kind == OutcomeKind::sandbox_unavailable);
    CHECK(out.basis == confine::Basis::rule);
    CHECK(out.evidence == fatal);
    CHECK(out.matched_rule == "landlock-run: ");
    CHECK_FALSE(out.denial_hint);
}

TEST_CASE("signatures match case-insensitively, informational lines only as exact whole lines", "[classify]") {
    CHECK(classify(landlock_shaped(), exited(125, "LANDLOCK-RUN: exec failed: x\n")).kind == OutcomeKind::sandbox_unavailable);
    auto almost = classify(landlock_shaped(), exited(125, notice + " (not quite)\n"));
    CHECK(almost.kind == OutcomeKind::sandbox_unavailable);
    CHECK(almost.evidence == notice + " (not quite)");
    CHECK(classify(landlock_shaped(), exited(125, notice)).kind == OutcomeKind::task_failed);  // no trailing newline
}

TEST_CASE("a denial in the runner's dialect is a hint on a task failure", "[classify]") {
    auto out = classify(landlock_shaped(), exited(2, notice + "\nsh: 1: cannot create /etc/x: Permission denied\n"));
    CHECK(out.kind == OutcomeKind::task_failed);
    REQUIRE(out.denial_hint);
    CHECK(*out.denial_hint == "sh: 1: cannot create /etc/x: Permission denied");
}

TEST_CASE("fatal evidence outranks a denial hint", "[classify]") {
    auto out = classify(landlock_shaped(), exited(125, "open: Permission denied\n" + fatal + "\n"));
    CHECK(out.kind == OutcomeKind::sandbox_unavailable);
    CHECK(out.evidence == fatal);
    CHECK_FALSE(out.denial_hint);
}

TEST_CASE("exit 0 and death by a signal are never runner failures by rule", "[classify]") {
    CHECK(classify(landlock_shaped(), exited(0, fatal + "\n")).kind == OutcomeKind::completed);
    Seen killed;
    killed.signal = 9;
    killed.stderr_seen = true;
    killed.stderr_text = fatal + "\n";
    auto out = classify(landlock_shaped(), killed);
    CHECK(out.kind == OutcomeKind::task_failed);
    CHECK(out.signal == 9);
    CHECK_FALSE(out.exit_code);
}

TEST_CASE("a pure signature rule needs no particular exit status", "[classify]") {
    auto w = landlock_shaped();
    w.failure_rule = {{}, {"bwrap: "}, {}};
    auto out = classify(w, exited(1, "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n"));
    CHECK(out.kind == OutcomeKind::sandbox_unavailable);
    CHECK(out.evidence == "bwrap: Can't mount proc on /newroot/proc: Operation not permitted");
}

TEST_CASE("attestation decides over the rule", "[classify][attestation]") {
    // The command itself printed a fatal line and exited 125: attested, it is the task's.
    auto reached = exited(125, notice + "\n" + fatal + "\n");
    reached.attested = Observation::Attested::reached_command;
    auto task = classify(landlock_shaped(), reached);
    CHECK(task.kind == OutcomeKind::task_failed);
    CHECK(task.basis == confine::Basis::attestation);
    CHECK(task.evidence.empty());

    // The runner stopped before the command, whatever its status and output.
    auto stopped = exited(1, "something odd\n");
    stopped.attested = Observation::Attested::runner_stopped;
    stopped.attestation_detail = "1 of 2 execs seen";
    auto unavailable = classify(landlock_shaped(), stopped);
    CHECK(unavailable.kind == OutcomeKind::sandbox_unavailable);
    CHECK(unavailable.basis == confine::Basis::attestation);
    CHECK(unavailable.evidence == "runner 'landlock' ended with exit status 1 before starting the command (1 of 2 execs seen)");

    // With a fatal line on stderr, that line is the evidence.
    auto with_line = exited(125, notice + "\n" + fatal + "\n");
    with_line.attested = Observation::Attested::runner_stopped;
    CHECK(classify(landlock_shaped(), with_line).evidence == fatal);
}

TEST_CASE("an attested exec that was not the command's is a runner failure, its detail the evidence", "[classify][attestation][exec-check]") {
    const std::string detail = "runner declared the command at exec 1 but exec 1 ran /usr/bin/bwrap; the command's file /usr/bin/true was exec 2";
    // Whatever stderr holds and even at a time limit: the runner was ended before the command.
    for (bool timed_out : {false, true}) {
        auto o = exited(125, notice + "\n" + fatal + "\n");
        o.exit_code.reset();
        o.attested = Observation::Attested::wrong_exec;
        o.attestation_detail = detail;
        o.timed_out = timed_out;
        auto out = classify(landlock_shaped(), o);
        CHECK(out.kind == OutcomeKind::sandbox_unavailable);
        CHECK(out.basis == confine::Basis::attestation);
        CHECK(out.evidence == detail);
        CHECK(out.matched_rule.empty());
    }
}

TEST_CASE("a runner that cannot be started is a spawn-error runner failure naming it", "[classify]") {
    Observation o;
    o.spawned = false;
    o.spawn_errno = ENOENT;
    auto out = classify(landlock_shaped(), o);
    CHECK(out.kind == OutcomeKind::sandbox_unavailable);
    CHECK(out.basis == confine::Basis::spawn_error);
    CHECK(out.evidence == "cannot start runner 'landlock' (/usr/lib/confine/landlock-run): No such file or directory");
    o.spawn_errno = EPERM;
    o.attestation_detail = "cannot trace the runner to attest it";
    CHECK(classify(landlock_shaped(), o).evidence ==
          "cannot start runner 'landlock' (/usr/lib/confine/landlock-run): Operation not permitted (cannot trace the runner to attest it)");
}

TEST_CASE("a run killed at its time limit is a task failure", "[classify]") {
    Observation o;
    o.signal = 9;
    o.timed_out = true;
    auto out = classify(landlock_shaped(), o);
    CHECK(out.kind == OutcomeKind::task_failed);
    CHECK(out.timed_out);
}

TEST_CASE("a status descriptor's text decides: the marker on a line, or a runner that stopped before it", "[classify][attestation]") {
    auto w = landlock_shaped();
    w.runner = "bwrap";
    w.failure_rule = {{}, {"bwrap: "}, {}};
    w.attestation = confine::Attestation::status_fd(1, "\"child-pid\"", "\"child-pid\"");

    // The runner said it started the command: whatever the command printed is its own.
    auto reached = exited(1, "bwrap: forged by the command\n");
    reached.status_text = "{ \"child-pid\": 42 }\n";
    auto task = classify(w, reached);
    CHECK(task.kind == OutcomeKind::task_failed);
    CHECK(task.basis == confine::Basis::attestation);
    CHECK(task.evidence.empty());

    // It exited without saying so: it stopped before the command.
    auto silent = exited(1, "");
    silent.status_text = "";
    auto stopped = classify(w, silent);
    CHECK(stopped.kind == OutcomeKind::sandbox_unavailable);
    CHECK(stopped.basis == confine::Basis::attestation);
    CHECK(stopped.evidence == "runner 'bwrap' ended with exit status 1 before starting the command (its status descriptor never reported the command)");
    silent.stderr_text = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n";
    CHECK(classify(w, silent).evidence == "bwrap: Can't mount proc on /newroot/proc: Operation not permitted");

    // The marker must be on a line of its own channel; a near miss is not it.
    auto near = exited(0, "");
    near.status_text = "{ \"child-pi\nd\": 42 }\n";
    CHECK(classify(w, near).kind == OutcomeKind::sandbox_unavailable);

    // Ended by a signal before it said anything: that proves nothing, and the rule decides.
    confine::Observation killed;
    killed.signal = 15;
    killed.stderr_seen = true;
    killed.status_text = "";
    auto by_rule = classify(w, killed);
    CHECK(by_rule.kind == OutcomeKind::task_failed);
    CHECK(by_rule.basis == confine::Basis::rule);
}

namespace {

// A bwrap-shaped wrap whose policy denies ~/.ssh and protects a workspace's git files,
// the command running in the workspace: the paths the host gives its scanner.
confine::WrapResult with_denial_paths() {
    confine::WrapResult w = landlock_shaped();
    w.runner = "bwrap";
    w.denial_signatures = {"read-only file system"};
    w.failure_rule = {{}, {"bwrap: "}, {}};
    w.denial_paths = {"/home/u/.ssh", "/ws/.git/config", "/ws/.git", ".git/config", ".git"};
    return w;
}

std::optional<std::string> hint_of(const std::string& line) {
    return classify(with_denial_paths(), exited(1, "first\n" + line + "\nlast\n")).denial_hint;
}

}  // namespace

TEST_CASE("an error a refusal gives is a hint where its line names a denied or protected path whole", "[classify]") {
    for (const std::string line : {"cat: /home/u/.ssh/id_ed25519: No such file or directory",
                                   "ls: cannot open directory '/home/u/.ssh': Permission denied",
                                   "error: could not write config file .git/config: Device or resource busy",
                                   "mv: cannot move '.git' to 'g2': Device or resource busy",
                                   "mv: cannot move './.git' to 'g2': Device or resource busy",
                                   "rm: cannot remove '/ws/.git/config': Device or resource busy",
                                   "mv: rename .git to g2: Resource busy",
                                   "OSError: [Errno 16] EBUSY: '/ws/.git'",
                                   "PermissionError: [Errno 1] Operation not permitted: '/home/u/.ssh/config'"}) {
        INFO(line);
        CHECK(hint_of(line) == line);
    }
}

TEST_CASE("an error that names no denied or protected path, or a longer name, is no hint", "[classify]") {
    for (const std::string line : {"cat: /ws/typo.txt: No such file or directory",       // an ordinary typo
                                   "cat: /home/u/.ssh2/key: No such file or directory",  // a longer name
                                   "cat: .gitignore: No such file or directory",         // ".git" is part of it
                                   "cat: sub/.git/config: No such file or directory",    // another repository's
                                   "cat: /x/home/u/.ssh/key: No such file or directory",
                                   "umount: /mnt: target is busy",
                                   "fatal: not a git repository: .git",  // the path, without an error a refusal gives
                                   "kill: (123) - No such process"}) {
        INFO(line);
        CHECK_FALSE(hint_of(line));
    }
    // Without denied or protected paths, ENOENT is nobody's refusal.
    confine::WrapResult none = with_denial_paths();
    none.denial_paths.clear();
    CHECK_FALSE(classify(none, exited(1, "cat: /home/u/.ssh/id: No such file or directory\n")).denial_hint);
}

TEST_CASE("the runner's dialect and the named paths both make hints, and the first such line is the hint", "[classify]") {
    auto out = classify(with_denial_paths(), exited(1, "cat: x: No such file or directory\ntouch: /etc/x: Read-only file system\n"
                                                       "mv: cannot move '.git' to 'g': Device or resource busy\n"));
    CHECK(out.denial_hint == "touch: /etc/x: Read-only file system");
    out = classify(with_denial_paths(), exited(1, "mv: cannot move '.git' to 'g': Device or resource busy\ntouch: /etc/x: Read-only file system\n"));
    CHECK(out.denial_hint == "mv: cannot move '.git' to 'g': Device or resource busy");
}

// The lines npm, pip, cargo, git, curl and apt print when a name does not resolve (the
// network none) or the run's proxy refuses a host (outside allow_hosts), as they printed
// them confined here: each is the run's denial hint under a runner that confines the
// network; under one that leaves it open, none is.
TEST_CASE("a name that does not resolve, or a host the run's proxy refuses, is a denial hint in each tool's own words", "[classify][network]") {
    const std::vector<std::string> lines{
        "npm error request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
        "npm error request to https://registry.example/x failed, reason: getaddrinfo ENOTFOUND registry.example",
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
        "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: "
        "[Errno -3] Temporary failure in name resolution')': /simple/left-pad/",
        "ERROR: Could not find a version that satisfies the requirement left-pad (from versions: none)",
        "warning: spurious network error (3 tries remaining): [6] Could not resolve hostname (Could not resolve host: index.crates.io)",
        "fatal: unable to access 'https://github.com/git/git/': Could not resolve host: github.com",
        "curl: (6) Could not resolve host: deb.debian.org",
        "  Temporary failure resolving 'deb.debian.org'",
        "requests.exceptions.ConnectionError: [Errno -2] Name or service not known",
        "npm error 403 403 Forbidden - GET https://registry.npmjs.org/left-pad",
        "E: Failed to fetch http://deb.debian.org/debian/pool/main/h/hello/hello_2.10-3_amd64.deb  403  Forbidden [IP: 127.0.0.1 57753]",
        "curl: (56) CONNECT tunnel failed, response 403",
        "warning: spurious network error (3 tries remaining): [56] Failure when receiving data from the peer (CONNECT tunnel failed, response 403)",
    };
    confine::WrapResult confined;
    confined.denial_signatures = confine::sdk::network_denial_signatures();
    const confine::WrapResult open;
    for (const std::string& line : lines) {
        INFO(line);
        const auto out = test::classified(confined, test::exited(1, "first\n" + line + "\nlast\n"));
        REQUIRE(out.denial_hint);
        CHECK(*out.denial_hint == line);
        CHECK_FALSE(test::classified(open, test::exited(1, line + "\n")).denial_hint);
    }
    // A package that is not there when the network is, or a 403 of a real server reached
    // directly, is no sandbox's doing: nothing in the lines but those words.
    CHECK_FALSE(test::classified(confined, test::exited(1, "ERROR: No matching distribution found for left-pad\n")).denial_hint);
}

namespace {

// The dialect the Linux runners give with the network confined, and a policy of `network`
// (through the proxy: registry.npmjs.org alone).
confine::WrapResult network_confined(confine::Network network) {
    confine::WrapResult w = landlock_shaped();
    for (auto& s : confine::sdk::network_denial_signatures()) w.denial_signatures.push_back(s);
    w.policy.network = network;
    if (network == confine::Network::proxy) w.policy.allow_hosts = {"registry.npmjs.org"};
    return w;
}

confine::Outcome advised(const confine::WrapResult& w, const std::string& text) {
    confine::Outcome out = classify(w, exited(1, text));
    out.denial_advice = confine::denial_advice(w, out);
    return out;
}

// What the tools print when the name they look up does not resolve in a confined run
// (each line as it came from a run under bubblewrap and Landlock, network none, or
// outside the sandbox with no network: npm 10, pip 23, git, curl, cargo 1.8x, apt 2.6),
// and the host the line names (empty: none).
const std::pair<std::string, std::string> resolver_failures[] = {
    {"npm error request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org", "registry.npmjs.org"},
    {"npm ERR! request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org", "registry.npmjs.org"},
    {"WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
     "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f21ceeda590>: Failed to establish a new "
     "connection: [Errno -3] Temporary failure in name resolution')': /simple/six/",
     ""},
    {"fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com", "github.com"},
    {"curl: (6) Could not resolve host: deb.debian.org", "deb.debian.org"},
    {"warning: spurious network error (3 tries remaining): [6] Could not resolve hostname (Could not resolve host: index.crates.io)",
     "index.crates.io"},
    {"WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
     "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f6ebe3cd8d0>: Failed to establish a new "
     "connection: [Errno -2] Name or service not known')': /simple/six/",
     ""},
    {"  Temporary failure resolving 'deb.debian.org'", "deb.debian.org"},
    {"E: Failed to fetch http://deb.debian.org/debian/pool/main/h/hello/hello_2.10-3_amd64.deb  Temporary failure resolving 'deb.debian.org'",
     "deb.debian.org"},
};

}  // namespace

TEST_CASE("a name that does not resolve with the network none is a hint, with what to do", "[classify]") {
    const auto w = network_confined(confine::Network::none);
    for (const auto& [line, host] : resolver_failures) {
        INFO(line);
        const auto out = advised(w, "first\n" + line + "\nlast\n");
        CHECK(out.kind == OutcomeKind::task_failed);
        CHECK(out.denial_hint == line);
        REQUIRE(out.denial_advice);
        CHECK_THAT(*out.denial_advice, Catch::StartsWith("the run's network is none"));
        CHECK_THAT(*out.denial_advice, Catch::Contains("--allow-host " + (host.empty() ? std::string("HOST") : host)));
        CHECK_THAT(*out.denial_advice, Catch::Contains("--network allow"));
        CHECK(out.denial_advice->find('\n') == std::string::npos);
    }
}

TEST_CASE("a socket refused where the run has no loopback is advised so, and a refused file never is", "[classify]") {
    auto w = network_confined(confine::Network::none);
    w.denial_signatures.push_back("eacces");
    w.loopback = confine::Loopback::none;
    // As they came from runs under Landlock as nobody, network none: python's socket(),
    // node's listen and connect, curl and git to a server on 127.0.0.1.
    const std::string refused[] = {
        "PermissionError: [Errno 13] Permission denied",
        "Error: listen EACCES: permission denied 127.0.0.1:8125",
        "Error: connect EACCES 127.0.0.1:8125 - Local (undefined:undefined)",
        "curl: (7) Failed to connect to 127.0.0.1 port 8123 after 0 ms: Couldn't connect to server",
        "fatal: unable to access 'http://127.0.0.1:8123/x/': Failed to connect to 127.0.0.1 port 8123 after 0 ms: Couldn't connect to server",
        "curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to server",
    };
    for (const std::string& line : refused) {
        INFO(line);
        const auto out = advised(w, "first\n" + line + "\n");
        CHECK(out.denial_hint == line);
        REQUIRE(out.denial_advice);
        CHECK_THAT(*out.denial_advice, Catch::StartsWith("the run has no loopback under landlock here") && Catch::Contains("127.0.0.1's and ::1's too"));
        CHECK(out.denial_advice->find('\n') == std::string::npos);
        // Where the run has a loopback of its own, or the network goes through the proxy
        // (whose port on the loopback the command reaches), that is not what happened.
        for (const auto loopback : {confine::Loopback::own, confine::Loopback::unsaid}) {
            auto with = w;
            with.loopback = loopback;
            const auto other = advised(with, line + "\n");
            CHECK((!other.denial_advice || other.denial_advice->find("no loopback") == std::string::npos));
        }
        auto proxied = network_confined(confine::Network::proxy);
        proxied.loopback = confine::Loopback::none;
        const auto through_proxy = advised(proxied, line + "\n");
        CHECK((!through_proxy.denial_advice || through_proxy.denial_advice->find("no loopback") == std::string::npos));
    }
    // A refused file, named or not by its path, is no socket.
    for (const std::string line : {"touch: cannot touch '/etc/x': Permission denied", "PermissionError: [Errno 13] Permission denied: 'x.txt'",
                                   "bash: x.txt: Permission denied", "cp: cannot open 'secret' for reading: Permission denied",
                                   "cat: /etc/localhost.conf: Permission denied", "cat: localhost-notes: Permission denied"}) {
        INFO(line);
        const auto out = advised(w, line + "\n");
        CHECK(out.denial_hint == line);
        CHECK_FALSE(out.denial_advice);
    }
}

TEST_CASE("a name outside the run's allow_hosts is named in the advice, and an allowed one looked up directly too", "[classify]") {
    const auto w = network_confined(confine::Network::proxy);
    for (const auto& [line, host] : resolver_failures) {
        INFO(line);
        const auto out = advised(w, line + "\n");
        REQUIRE(out.denial_advice);
        if (host.empty()) CHECK_THAT(*out.denial_advice, Catch::Contains("--allow-host HOST"));
        else if (host == "registry.npmjs.org") CHECK_THAT(*out.denial_advice, Catch::StartsWith("registry.npmjs.org is among the run's allow_hosts"));
        else CHECK_THAT(*out.denial_advice, Catch::StartsWith(host + " is not among the run's allow_hosts (registry.npmjs.org)") &&
                                                Catch::Contains("add --allow-host " + host));
    }
    // The tools' words for the run's proxy's 403, as they came from runs under bubblewrap
    // and Landlock with --allow-host deb.debian.org: hints, and the advice names the host
    // the proxy refused.
    for (const std::string line : {"curl: (56) CONNECT tunnel failed, response 403",
                                   "npm error 403 403 Forbidden - GET https://registry.npmjs.org/left-pad",
                                   "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection "
                                   "broken by 'ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))': /simple/six/",
                                   "warning: spurious network error (3 tries remaining): [56] Failure when receiving data from the peer "
                                   "(CONNECT tunnel failed, response 403)"}) {
        INFO(line);
        confine::Outcome refused = classify(w, exited(1, "first\n" + line + "\n"));
        CHECK(refused.denial_hint == line);
        CHECK_FALSE(confine::denial_advice(w, refused));  // the proxy refused nothing (in this outcome): no host to name
        refused.network_requests.push_back({"pypi.org", 443, false, 0, 0, 6, "not in allow_hosts"});
        CHECK(confine::denial_advice(w, refused) ==
              "the run's proxy refused pypi.org:443 (not in allow_hosts); the run's allow_hosts are registry.npmjs.org: add --allow-host pypi.org "
              "if the command may reach it");
    }
    // What the proxy refused names the host, whatever the line says.
    confine::Outcome out = classify(w, exited(1, "curl: (56) CONNECT tunnel failed, response 403\n"));
    out.network_requests.push_back({"example.com", 443, false, 0, 0, 1, "not in allow_hosts"});
    out.denial_advice = confine::denial_advice(w, out);
    CHECK(out.denial_hint == "curl: (56) CONNECT tunnel failed, response 403");
    REQUIRE(out.denial_advice);
    CHECK_THAT(*out.denial_advice, Catch::StartsWith("the run's proxy refused example.com:443 (not in allow_hosts)") &&
                                       Catch::EndsWith("add --allow-host example.com if the command may reach it"));
    // Beyond ports 80 and 443 the pattern names the port; a refusal for where the name
    // leads is said, without an --allow-host that would not change it.
    out.network_requests = {{"a.example", 443, false, 0, 0, 1, "a.example resolves to 10.0.0.1, a private address"},
                            {"example.com", 8443, false, 0, 0, 1, "not in allow_hosts"}};
    CHECK_THAT(*confine::denial_advice(w, out), Catch::EndsWith("add --allow-host example.com:8443 if the command may reach it"));
    out.network_requests.pop_back();
    CHECK(confine::denial_advice(w, out) == "the run's proxy refused a.example:443 (a.example resolves to 10.0.0.1, a private address)");
}

TEST_CASE("no advice without a hint, with the network allowed, or for a hint of another kind", "[classify]") {
    auto allowed = network_confined(confine::Network::allow);
    allowed.denial_signatures = landlock_shaped().denial_signatures;  // a runner that leaves the network open adds no words of it
    CHECK_FALSE(advised(allowed, "curl: (6) Could not resolve host: example.com\n").denial_hint);
    CHECK_FALSE(advised(allowed, "curl: (6) Could not resolve host: example.com\n").denial_advice);
    const auto none = network_confined(confine::Network::none);
    CHECK_FALSE(advised(none, "npm error code ERESOLVE\nnpm error Could not resolve dependency:\n").denial_advice);
    const auto denied = advised(none, "sh: 1: cannot create /etc/x: Permission denied\n");
    CHECK(denied.denial_hint);
    CHECK_FALSE(denied.denial_advice);
}

TEST_CASE("apt's drop to its _apt user, refused, is advised the option that keeps it root", "[classify]") {
    auto w = network_confined(confine::Network::proxy);
    w.denial_signatures.push_back("setgroups (1: operation not permitted)");  // what the executor adds on Linux
    // As bubblewrap and Landlock runs of `apt-get download hello` as root said it.
    for (const std::string line : {"E: setgroups 65534 failed - setgroups (1: Operation not permitted)",
                                   "E: setgroups 0 failed - setgroups (1: Operation not permitted)",
                                   "E: Method gave invalid 400 URI Failure message: Failed to setgroups - setgroups (1: Operation not permitted)"}) {
        INFO(line);
        const auto out = advised(w, line + "\nE: Method http has died unexpectedly!\n");
        CHECK(out.denial_hint == line);
        REQUIRE(out.denial_advice);
        CHECK_THAT(*out.denial_advice, Catch::Contains("-o APT::Sandbox::User=root"));
    }
}

TEST_CASE("apt's state and cache, refused, are advised a download into the workspace", "[classify]") {
    const auto w = network_confined(confine::Network::proxy);
    for (const std::string line : {"E: Could not open lock file /var/lib/apt/lists/lock - open (13: Permission denied)",
                                   "E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)",
                                   "W: Problem unlinking the file /var/lib/apt/lists/partial/deb.debian.org_debian_dists_bookworm_InRelease - "
                                   "PrepareFiles (13: Permission denied)"}) {
        INFO(line);
        const auto out = advised(w, line + "\n");
        CHECK(out.denial_hint == line);
        REQUIRE(out.denial_advice);
        CHECK_THAT(*out.denial_advice, Catch::Contains("-o Dir::Cache=DIR") && Catch::Contains("apt-get download"));
    }
}
