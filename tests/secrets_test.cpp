// Secrets stay secret, end to end on the real kernel, through every Linux way and as root
// and as an unprivileged user: what deny_read names cannot be read or listed (directly,
// through a link the workspace holds, or as an agent's socket), and what protect names
// stays as it was on disk while git keeps working in the workspace — judged by the
// world afterwards and by the bytes that came out, never by an exit status alone. Where
// a runner cannot enforce a dimension (Landlock and protect), the report says so.
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <random>

namespace fs = std::filesystem;
using nlohmann::json;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

// A tree whose home holds credential stores the default deny_read names, and whose
// workspace is a git repository with a hook, a configuration and a .gitmodules.
struct SecretTree {
    Tree tree;
    std::string canary = test::unique_text("CANARY-");
    fs::path home = tree.home, ssh = home / ".ssh", key = home / ".ssh" / "id_canary", netrc = home / ".netrc",
             hook = tree.ws / ".git" / "hooks" / "pre-commit", git_config = tree.ws / ".git" / "config", gitmodules = tree.ws / ".gitmodules";
    std::string hook_text = "#!/bin/sh\nexit 0\n", config_before, gitmodules_text = "[submodule \"x\"]\n\tpath = x\n\turl = ./x\n";

    explicit SecretTree(bool unprivileged) : tree(false) {
        fs::create_directories(ssh);
        test::write_file(key, canary + "\n", fs::perms(0600));
        test::write_file(netrc, "machine example.org password " + canary + "\n", fs::perms(0600));
        fs::create_directory_symlink(ssh, tree.ws / "keys");
        REQUIRE(test::run({"/usr/bin/git", "init", "-q", tree.ws.string()}).exit_code == 0);
        test::write_file(hook, hook_text, fs::perms(0755));
        test::write_file(gitmodules, gitmodules_text);
        test::write_file(tree.ws / "a.txt", "a\n");
        config_before = test::read_file(git_config);
        if (!unprivileged) return;
        for (const auto& entry : fs::recursive_directory_iterator(tree.root.path()))
            REQUIRE(::lchown(entry.path().c_str(), test::nobody, test::nobody) == 0);
        REQUIRE(::chown(tree.root.path().c_str(), test::nobody, test::nobody) == 0);
    }

    std::vector<std::string> env() const { return {"HOME=" + home.string()}; }
};

// Runs `script` by /bin/sh in the tree's workspace (or read-only) with the tree's home.
test::Result run_in(const Sandbox& box, const SecretTree& s, const std::string& script, bool unprivileged, bool read_only = false,
                    const std::vector<std::string>& extra = {}) {
    auto args = box.args(s.tree, {"/bin/sh", "-c", script}, read_only);
    args.insert(args.begin() + 1, extra.begin(), extra.end());
    args.insert(args.begin(), "-v");  // the levels the run got, on stderr
    return box.confine.run(args, s.env(), as_user(unprivileged));
}

void attempt_reads(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    for (const bool read_only : {false, true}) {
        SecretTree s(unprivileged);
        const std::string ws = s.tree.ws.string();
        const std::string script = "cat $HOME/.ssh/id_canary; ls -a $HOME/.ssh; cat $HOME/.netrc; cat " + ws + "/keys/id_canary; ls -a " + ws +
                                   "/keys; cat " + ws + "/keys/../.netrc; od -c $HOME/.ssh/id_canary; echo REACHED";
        auto r = run_in(box, s, script, unprivileged, read_only);
        INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << (read_only ? ", read-only" : ", workspace-write") << "\nstdout: " << r.out
                          << "\nstderr: " << r.err);
        CHECK(r.exit_code == 0);  // the script ran to its end, confined
        CHECK_THAT(r.out, Catch::Contains("REACHED"));
        CHECK_THAT(r.out + r.err, !Catch::Contains("CANARY"));
        CHECK_THAT(r.out + r.err, !Catch::Contains("id_canary\n"));  // the listing showed no name
        // A sibling of a denied path, and the rest of the home, stay readable.
        test::write_file(s.home / "visible.txt", "visible\n");
        if (unprivileged) REQUIRE(::lchown((s.home / "visible.txt").c_str(), test::nobody, test::nobody) == 0);
        auto sibling = run_in(box, s, "cat $HOME/visible.txt", unprivileged, read_only);
        CHECK(sibling.out == "visible\n");
    }
}

// The hook, the repository's configuration and .gitmodules: each way of changing them,
// then the files on disk; and git's own work in the workspace, which must still succeed.
void attempt_protected(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    SecretTree s(unprivileged);
    const std::string ws = s.tree.ws.string();
    const std::string attacks = "echo evil > WS/.git/hooks/pre-commit; echo evil >> WS/.git/hooks/pre-commit; chmod 777 WS/.git/hooks/pre-commit;"
                                "echo evil > WS/.git/hooks/new-hook; mv WS/.git/hooks/pre-commit WS/moved; rm -f WS/.git/hooks/pre-commit;"
                                "ln -sf /bin/true WS/.git/hooks/pre-commit; mv WS/.git/hooks WS/.git/hooks-old; rm -rf WS/.git/hooks;"
                                "echo evil > WS/.git/hooks/post-checkout; echo '[core] hooksPath = /x' >> WS/.git/config;"
                                "echo evil > WS/.git/config.lock && mv WS/.git/config.lock WS/.git/config; echo evil > WS/.gitmodules;"
                                "echo evil > WS/x && mv WS/x WS/.gitmodules; rm -f WS/.gitmodules; true";
    std::string script = attacks;
    for (std::size_t at = 0; (at = script.find("WS", at)) != std::string::npos; at += ws.size()) script.replace(at, 2, ws);
    auto r = run_in(box, s, script, unprivileged);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    // Landlock as nobody cannot keep anything inside a writable root read-only: the host
    // puts the protected paths back after the run, and says so (partial). Every other way
    // holds them read-only. Either way they end the run as they began.
    const bool put_back = test::is_landlock(way) && unprivileged;
    CHECK_THAT(r.err, Catch::Contains(put_back ? ", protect partial," : ", protect full,"));
    if (put_back) CHECK_THAT(r.err, Catch::Contains("confinectl: put back the protected paths the command changed: "));
    CHECK(test::read_file(s.hook) == s.hook_text);
    struct stat st {};
    REQUIRE(::lstat(s.hook.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 07777) == 0755);
    CHECK(test::read_file(s.git_config) == s.config_before);
    CHECK(test::read_file(s.gitmodules) == s.gitmodules_text);
    CHECK_FALSE(fs::exists(s.tree.ws / ".git" / "hooks" / "new-hook"));
    CHECK_FALSE(fs::exists(s.tree.ws / ".git" / "hooks" / "post-checkout"));
    // What the command renamed it to stays where it put it, a name git never reads.
    if (!put_back) CHECK_FALSE(fs::exists(s.tree.ws / ".git" / "hooks-old"));
}

void attempt_git(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    SecretTree s(unprivileged);
    const std::string git = "git -c user.name=confine -c user.email=confine@example.org ";
    auto r = run_in(box, s,
                    "cd " + s.tree.ws.string() + " && " + git + "add a.txt && " + git + "commit -q -m first && " + git + "checkout -q -b topic && echo b > b.txt && " + git + "add b.txt && " +
                        git + "commit -q -m second && " + git + "checkout -q - && echo c > a.txt && " + git + "stash -q && " + git +
                        "stash pop -q && " + git + "fetch -q " + s.tree.ws.string() + " topic && mkdir sub && cd sub && git init -q && echo GIT-OK",
                    unprivileged);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("GIT-OK"));
    auto log = test::run({"/usr/bin/git", "-c", "safe.directory=*", "-C", s.tree.ws.string(), "log", "--format=%s", "topic"});
    CHECK(log.out == "second\nfirst\n");
}

// The caller's ssh agent: its socket is denied with the rest, so a command that finds it
// reaches nothing, even with the network allowed; Landlock cannot stop a connect to it,
// and its report says so.
void attempt_agent(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    SecretTree s(unprivileged);
    const fs::path socket_path = s.tree.root / "agent.sock";
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listener >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener, 4) == 0);
    ::chmod(socket_path.c_str(), 0777);
    const std::string connect = "python3 -c \"import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1]); print('CONNECTED')\n"
                                "except OSError as e: print('refused', e.errno)\" " +
                                socket_path.string();
    auto args = box.args(s.tree, {"/bin/sh", "-c", connect}, false);
    args.insert(args.begin() + 1, {"--network", "allow"});
    args.insert(args.begin(), "-v");
    auto env = s.env();
    env.push_back("SSH_AUTH_SOCK=" + socket_path.string());
    auto r = box.confine.run(args, env, as_user(unprivileged));
    ::close(listener);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("policy: deny_read ") && Catch::Contains(socket_path.string()));
    if (test::is_landlock(way)) {
        CHECK_THAT(r.err, Catch::Contains(", read partial,"));
    } else {
        CHECK_THAT(r.err, Catch::Contains(", read full,"));
        CHECK_THAT(r.out, Catch::StartsWith("refused"));
    }
}

}  // namespace

#define SECRET_CASES(WAY, TAG, TAGS)                                                                                                            \
    TEST_CASE("denied paths cannot be read or listed through " TAG ", as root", "[secrets][e2e]" TAGS) { attempt_reads(WAY, false); }          \
    TEST_CASE("denied paths cannot be read or listed through " TAG ", as an unprivileged user", "[secrets][e2e]" TAGS) {                       \
        attempt_reads(WAY, true);                                                                                                         \
    }                                                                                                                                     \
    TEST_CASE("protected git files stay as they were, or the report says they cannot, through " TAG, "[secrets][e2e]" TAGS) {                  \
        attempt_protected(WAY, false);                                                                                                    \
        attempt_protected(WAY, true);                                                                                                     \
    }                                                                                                                                     \
    TEST_CASE("git init, add, commit, checkout -b, stash and fetch work under the default protection through " TAG, "[secrets][e2e]" TAGS) {                \
        attempt_git(WAY, false);                                                                                                          \
        attempt_git(WAY, true);                                                                                                           \
    }                                                                                                                                     \
    TEST_CASE("the caller's agent socket is out of reach, or the report says it is not, through " TAG, "[secrets][e2e]" TAGS) {               \
        attempt_agent(WAY, false);                                                                                                        \
        attempt_agent(WAY, true);                                                                                                         \
    }

SECRET_CASES(Way::bwrap, "the bwrap plugin", "")
SECRET_CASES(Way::runner_command, "an asserted runner_command", "")
SECRET_CASES(Way::landlock_launcher, "landlock-run", "[linux-only]")
SECRET_CASES(Way::landlock_forked, "landlock in a forked child", "[linux-only]")
SECRET_CASES(Way::landlock_in_place, "landlock in place", "[linux-only]")
