// One behaviour at a terminal whichever runner the chain picks (docs/design.md §7): the
// terminal's signals reach the command, which may handle them, and the run ends with the
// command's own status, attested; pagers and full-screen programs work; and terminal
// input injection is refused. Each on a real pseudo-terminal (tests/fakes/pty_session.cpp)
// that is confinectl's controlling terminal, typed into as a user would.
#include "support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::Tree;

namespace {

struct Way {
    std::string name;
    std::string config;  // after [platform.linux]
    bool bwrap;
    bool report;  // with a report: Landlock's in-process path then forks
};

const std::vector<Way> ways{
    {"bwrap", "chain = [\"bwrap\"]\n", true, true},
    {"landlock through its launcher", "chain = [\"landlock\"]\n[runner.landlock]\nin_process = false\n", false, true},
    {"landlock in a forked child", "chain = [\"landlock\"]\n", false, true},
    {"landlock in place", "chain = [\"landlock\"]\n", false, false},
};

void require(const Way& way) {
    if (way.bwrap) test::require_bwrap();
    else test::require_landlock();
}

struct AtTerminal {
    test::Installed confine;
    fs::path config = confine.scratch("terminal.toml");
    const Way& way;
    explicit AtTerminal(const Way& w) : way(w) { test::write_file(config, "[platform.linux]\n" + w.config); }

    // pty-session with `steps`, running confinectl (as `unprivileged` says) on `command`.
    test::Result run(const Tree& tree, const std::vector<std::string>& steps, const std::vector<std::string>& command,
                     bool unprivileged = false) const {
        std::vector<std::string> argv{PTY_SESSION};
        argv.insert(argv.end(), steps.begin(), steps.end());
        argv.push_back("--");
        for (const auto& a : test::as_user(unprivileged)) argv.push_back(a);
        argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", "TERM=xterm", "LESS=", "LESSHISTFILE=-",
                                 "XDG_CACHE_HOME=" + confine.scratch("cache").string(), confine.confinectl().string(), "run", "--config",
                                 config.string(), "--workspace", tree.ws.string()});
        if (way.report) argv.insert(argv.end(), {"--report", (tree.root / "report.json").string()});
        argv.push_back("--");
        argv.insert(argv.end(), command.begin(), command.end());
        return test::run(argv);
    }
    static json report_of(const Tree& tree) { return json::parse(test::read_file(tree.root / "report.json")); }
};

}  // namespace

TEST_CASE("a REPL survives Ctrl-C at the terminal on every runner and path, as root and as nobody", "[terminal][e2e][linux-only]") {
    for (const Way& way : ways) {
        require(way);
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            INFO(way.name << (unprivileged ? ", as nobody" : ", as root"));
            AtTerminal at(way);
            Tree t(unprivileged);
            // A pause after the prompt, as a person's: Python checks for a signal before it
            // waits for input, not while it starts to, and one just between would wait for a key.
            auto r = at.run(t, {"expect=>>> ", "sleep=300", "send=\\x03", "expect=KeyboardInterrupt", "expect=>>> ", "send=print(6*7)\\n", "expect=42",
                                "send=raise SystemExit(3)\\n"},
                            {"/usr/bin/python3", "-q"}, unprivileged);
            INFO(r.out << r.err);
            CHECK(r.exit_code == 0);
            CHECK(r.err == "exit: 3\n");
            if (way.report) {
                const auto j = at.report_of(t);
                CHECK(j["exit_code"] == 3);
                CHECK(j["basis"] == "attestation");
            }
        }
    }
}

TEST_CASE("Ctrl-C at the terminal lets the command handle it, and the run ends with its own status, attested", "[terminal][e2e][linux-only]") {
    for (const Way& way : ways) {
        require(way);
        INFO(way.name);
        AtTerminal at(way);
        Tree t(false);
        const std::string script = "trap 'echo handled; exit 7' INT; echo ready; while :; do sleep 0.05; done";
        auto r = at.run(t, {"expect=ready", "sleep=200", "send=\\x03", "expect=handled"}, {"/bin/sh", "-c", script});
        INFO(r.out << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.err == "exit: 7\n");
        if (way.report) {
            const auto j = at.report_of(t);
            CHECK(j["outcome"] == "task_failed");
            CHECK(j["exit_code"] == 7);
            CHECK(j["signal"].is_null());
            CHECK(j["basis"] == "attestation");
        }
        // A command that does not handle it ends by it, and confinectl with it: the shell
        // sees 130 either way (bubblewrap reports the signal as 128 + 2).
        auto plain = at.run(t, {"expect=ready", "sleep=200", "send=\\x03"}, {"/bin/sh", "-c", "echo ready; exec sleep 30"});
        INFO(plain.out << plain.err);
        CHECK(plain.exit_code == 0);
        CHECK((plain.err == "signal: 2\n" || plain.err == "exit: 130\n"));
    }
}

TEST_CASE("a pager works at the terminal on every runner and path, and quits on q", "[terminal][e2e][linux-only]") {
    for (const Way& way : ways) {
        require(way);
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            INFO(way.name << (unprivileged ? ", as nobody" : ", as root"));
            AtTerminal at(way);
            Tree t(unprivileged);
            std::string text;
            for (int i = 1; i <= 200; ++i) text += "line " + std::to_string(i) + "\n";
            test::write_file(t.ws / "long.txt", text, fs::perms(0644));
            auto r = at.run(t, {"expect=line 20", "send=q"}, {"/usr/bin/less", (t.ws / "long.txt").string()}, unprivileged);
            INFO(r.out << r.err);
            CHECK(r.exit_code == 0);
            CHECK(r.err == "exit: 0\n");
            CHECK_THAT(r.out, !Catch::Contains("line 200"));
        }
    }
}

TEST_CASE("an editor works at the terminal on every runner and path, and writes its file", "[terminal][e2e][linux-only]") {
    if (!fs::exists("/usr/bin/vi")) test::skip_test("no vi here");
    for (const Way& way : ways) {
        require(way);
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            INFO(way.name << (unprivileged ? ", as nobody" : ", as root"));
            AtTerminal at(way);
            Tree t(unprivileged);
            const fs::path file = t.ws / "note.txt";
            test::write_file(file, "first\n", fs::perms(0666));
            auto r = at.run(t, {"expect=first", "sleep=300", "send=Osecond\\x1b", "sleep=200", "send=:wq\\r"},
                            {"/usr/bin/vi", "-u", "NONE", "-i", "NONE", "-n", file.string()}, unprivileged);
            INFO(r.out << r.err);
            CHECK(r.exit_code == 0);
            CHECK(r.err == "exit: 0\n");
            CHECK(test::read_file(file) == "second\nfirst\n");
        }
    }
}
