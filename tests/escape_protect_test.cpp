// What the default protect list names ends every run as it began (docs/design.md §11,
// "think past the run"): shell start-up files, direnv's .envrc, git's and ripgrep's
// settings, package managers' project settings, and the settings of editors, coding
// agents and MCP clients — each read, and many executed, by tools the user runs later,
// unconfined. A confined command tries to overwrite, append to, chmod, rename, remove and
// replace by a link each one that exists, and to create each one that does not (through
// a link to a decoy too); it is judged by the world after the run: each present entry
// has its bytes, type and mode, each absent one is still absent at its path (what was
// made there moved aside), and the command's ordinary work in the workspace is kept.
// Through every Linux way, as root and as an unprivileged user: bubblewrap and Landlock
// as root hold them read-only; Landlock as nobody puts them back after the run.
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

struct Entry {
    const char* path;  // relative to the workspace, as the default list writes it
    bool directory;
};

// The default list's entries beyond git's (escape_git_test.cpp holds those).
const Entry entries[] = {
    {".bashrc", false},   {".bash_profile", false}, {".bash_login", false}, {".profile", false}, {".zshrc", false},    {".zprofile", false},
    {".zshenv", false},   {".envrc", false},        {".gitconfig", false},  {".ripgreprc", false}, {".npmrc", false},  {".yarnrc.yml", false},
    {".aws/config", false}, {".mcp.json", false},   {".vscode", true},      {".idea", true},       {".claude", true},  {".codex", true},
    {".agents", true},    {".cursor", true},        {".continue", true},
};

// What a file holds, what a directory holds in `settings.json`, at the start.
constexpr const char* original = "original\n";

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// Changes each present entry every way a shell can, and ends with ordinary work.
std::string attack_present(const fs::path& ws, const fs::path& decoy) {
    std::string s;
    for (const auto& e : entries) {
        const std::string p = quoted(ws / e.path);
        if (e.directory)
            s += "echo evil > " + p + "/settings.json; echo evil > " + p + "/new.json; chmod 777 " + p + "; mv " + p + " " + p +
                 ".x; mkdir " + p + "; echo evil > " + p + "/settings.json; rm -rf " + p + "; ln -s " + quoted(decoy) + " " + p + ";";
        else
            s += "echo evil > " + p + "; echo evil >> " + p + "; chmod 777 " + p + "; mv " + p + " " + p + ".x; echo evil > " + p + "; rm -f " + p +
                 "; ln -s " + quoted(decoy / "settings.json") + " " + p + ";";
    }
    return s + "echo work > " + quoted(ws / "work.txt") + "; true";
}

// Makes each absent entry: a directory through a link to a decoy (.codex, and .aws above
// .aws/config), the others by hand.
std::string attack_absent(const fs::path& ws, const fs::path& decoy) {
    std::string s;
    for (const auto& e : entries) {
        const fs::path path = ws / e.path;
        if (std::string(e.path) == ".codex" || std::string(e.path) == ".aws/config") {
            s += "ln -s " + quoted(decoy) + " " + quoted(ws / fs::path(e.path).begin()->string()) + ";";
            continue;
        }
        if (e.directory) s += "mkdir -p " + quoted(path) + " && echo evil > " + quoted(path / "settings.json") + ";";
        else s += "mkdir -p " + quoted(path.parent_path()) + " && echo evil > " + quoted(path) + ";";
    }
    return s + "echo work > " + quoted(ws / "work.txt") + "; true";
}


void attempt(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    for (const bool present : {true, false}) {
        Tree t(unprivileged);
        const fs::path decoy = t.root / "decoy";
        fs::create_directories(decoy);
        test::write_file(decoy / "settings.json", "decoy\n");
        test::write_file(decoy / "config", "decoy\n");
        if (present)
            for (const auto& e : entries) {
                const fs::path p = t.ws / e.path;
                fs::create_directories(e.directory ? p : p.parent_path());
                test::write_file(e.directory ? p / "settings.json" : p, original);
                ::chmod(p.c_str(), e.directory ? 0755 : 0644);
            }
        if (unprivileged) test::give_to_nobody(t.root.path());
        const std::string script = present ? attack_present(t.ws, decoy) : attack_absent(t.ws, decoy);
        auto args = box.args(t, {"/bin/sh", "-c", script});
        args.insert(args.begin(), "-v");
        auto r = box.confine.run(args, {"HOME=" + t.home.string()}, as_user(unprivileged));
        INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << (present ? ", present" : ", absent") << "\nstderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(test::read_file(t.ws / "work.txt") == "work\n");  // the ordinary work is kept
        if (present) {
            const bool put_back = test::is_landlock(way) && unprivileged;
            CHECK_THAT(r.err, Catch::Contains(put_back ? ", protect partial," : ", protect full,"));
        }
        for (const auto& e : entries) {
            const fs::path p = t.ws / e.path;
            INFO(p);
            struct stat st {};
            if (!present) {
                CHECK(::lstat(p.c_str(), &st) != 0);  // still absent: what was made there is aside
                continue;
            }
            REQUIRE(::lstat(p.c_str(), &st) == 0);
            CHECK((e.directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)));
            CHECK((st.st_mode & 07777) == (e.directory ? 0755u : 0644u));
            CHECK(test::read_file(e.directory ? p / "settings.json" : p) == original);
            if (e.directory) CHECK_FALSE(fs::exists(p / "new.json"));
        }
    }
}

// --unprotect and [policy] unprotect lift one entry each, as written, and nothing else:
// git config and the editor's settings are written, a shell start-up file still is not.
void attempt_unprotect(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    test::write_file(box.config, test::read_file(box.config) + "[policy]\nunprotect = [\".vscode\"]\n");
    Tree t(unprivileged);
    REQUIRE(test::run({"/usr/bin/git", "init", "-q", t.ws.string()}).exit_code == 0);
    fs::create_directories(t.ws / ".vscode");
    test::write_file(t.ws / ".vscode" / "settings.json", original);
    test::write_file(t.ws / ".bashrc", original);
    if (unprivileged) test::give_to_nobody(t.root.path());
    const std::string script = "cd " + quoted(t.ws) + " && git config user.name lifted && echo mine > .vscode/settings.json; echo evil > .bashrc; true";
    auto args = box.args(t, {"/bin/sh", "-c", script});
    args.insert(args.begin() + 1, {"--unprotect", ".git/config"});
    auto r = box.confine.run(args, {"HOME=" + t.home.string()}, as_user(unprivileged));
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(test::read_file(t.ws / ".git" / "config"), Catch::Contains("name = lifted"));
    CHECK(test::read_file(t.ws / ".vscode" / "settings.json") == "mine\n");
    CHECK(test::read_file(t.ws / ".bashrc") == original);
    // A relative entry that climbs out of the roots is refused, in one line, nothing run.
    auto bad = box.args(t, {"/bin/sh", "-c", "echo ran > " + quoted(t.ws / "ran")});
    bad.insert(bad.begin() + 1, {"--unprotect", "../x"});
    auto refused = box.confine.run(bad, {"HOME=" + t.home.string()}, as_user(unprivileged));
    CHECK(refused.exit_code == 125);
    CHECK(refused.err == "confinectl: --unprotect ../x: a path relative to the writable roots must not climb out of them with '..'\n");
    CHECK_FALSE(fs::exists(t.ws / "ran"));
}

}  // namespace

TEST_CASE("unprotect, as a flag and as a key, lifts one entry each and nothing else, through bubblewrap and Landlock, as root and as nobody",
          "[escape][e2e][secrets][linux-only]") {
    for (const Way way : {Way::bwrap, Way::landlock_forked})
        for (const bool unprivileged : {false, true}) attempt_unprotect(way, unprivileged);
}

#define PROTECT_CASES(WAY, TAG)                                                                                                                \
    TEST_CASE("what the protect list names ends the run as it began through " TAG ", as root", "[escape][e2e][secrets][linux-only]") {       \
        attempt(WAY, false);                                                                                                                 \
    }                                                                                                                                        \
    TEST_CASE("what the protect list names ends the run as it began through " TAG ", as an unprivileged user",                               \
              "[escape][e2e][secrets][linux-only]") {                                                                                        \
        attempt(WAY, true);                                                                                                                  \
    }

PROTECT_CASES(Way::bwrap, "the bwrap plugin")
PROTECT_CASES(Way::runner_command, "an asserted runner_command")
PROTECT_CASES(Way::landlock_launcher, "landlock-run")
PROTECT_CASES(Way::landlock_forked, "landlock in a forked child")
PROTECT_CASES(Way::landlock_in_place, "landlock in place")
