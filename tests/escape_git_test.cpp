// git cannot be turned against its owner (docs/design.md §11, "think past the run"): a
// confined command tries each way of planting a program that git runs, or of sending git
// to a repository of its own — through config, config.worktree, hooks (there or not at the
// start), commondir, a renamed, rebuilt or replaced .git, an existing worktree's or
// submodule's git directory, an included configuration file, a new .git in a root that
// sits inside a parent repository, a repository added to the index as a submodule — and
// is judged by the world afterwards: real git, run on the host by the repository's owner
// with a fresh environment and home (`git status`, `git commit --allow-empty`), must not
// run the planted program (its marker file, outside every writable root, stays absent).
// Under bubblewrap (the plugin and an asserted runner_command) and Landlock as root (a
// mount namespace of the run's own), as root and as an unprivileged user, the report says
// `protect full` and it holds; under Landlock as an unprivileged user, which cannot keep
// anything in a writable root read-only, the host puts the protected paths back after the
// run (and a renamed .git back in its place): the report says `protect partial`, names
// the hole, and the planted program never runs all the same.
#include "support.hpp"
#include "ways.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using nlohmann::json;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

// A workspace that is a git repository with one commit, owned by whoever runs the test.
struct GitTree {
    Tree tree;
    bool unprivileged;
    fs::path ws = tree.ws, marker = tree.root / "PWNED", repo = tree.ws;  // where the owner runs git afterwards

    explicit GitTree(bool nobody) : tree(false), unprivileged(nobody) {}

    // git as the owner, on the host, with nothing of this machine's configuration.
    test::Result git(const fs::path& in, const std::vector<std::string>& args) const {
        std::vector<std::string> argv = as_user(unprivileged);
        argv.insert(argv.end(), {"/usr/bin/env", "-i", "HOME=" + tree.home.string(), "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1",
                                 "GIT_AUTHOR_NAME=owner", "GIT_AUTHOR_EMAIL=owner@example.org", "GIT_COMMITTER_NAME=owner",
                                 "GIT_COMMITTER_EMAIL=owner@example.org", "/usr/bin/git", "-c", "protocol.file.allow=always", "-C", in.string()});
        argv.insert(argv.end(), args.begin(), args.end());
        return test::run(argv);
    }

    // Everything under the tree handed to its owner, before a run.
    void own() const {
        if (!unprivileged) return;
        for (const auto& entry : fs::recursive_directory_iterator(tree.root.path()))
            REQUIRE(::lchown(entry.path().c_str(), test::nobody, test::nobody) == 0);
        REQUIRE(::chown(tree.root.path().c_str(), test::nobody, test::nobody) == 0);
    }

    void init(const fs::path& dir) const {
        own();
        REQUIRE(git(tree.root.path(), {"init", "-q", dir.string()}).exit_code == 0);
        REQUIRE(git(dir, {"commit", "-q", "--allow-empty", "-m", "first"}).exit_code == 0);
    }
};

struct GitAttack {
    std::string what;
    std::function<void(GitTree&)> setup;
    // Run by /bin/sh in the sandbox; $WS the workspace, $M the marker file, $EVIL a
    // configuration that runs the planted program, $HOOK a hook that does.
    std::string script;
};

std::string spelled(std::string s, const GitTree& g) {
    const std::string evil_config = "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch " + g.marker.string() + "\\n";
    const std::string hook = "#!/bin/sh\\ntouch " + g.marker.string() + "\\n";
    const std::pair<std::string, std::string> names[] = {
        {"$EVIL", evil_config}, {"$HOOK", hook}, {"$WS", g.ws.string()}, {"$M", g.marker.string()}, {"$R", g.tree.root.path().string()}};
    for (const auto& [name, value] : names)
        for (std::size_t at = 0; (at = s.find(name, at)) != std::string::npos; at += value.size()) s.replace(at, name.size(), value);
    return s;
}

// A git directory of the command's own in $WS/evil: objects, refs, a hook and a
// configuration that run the planted program.
const std::string evil_git_dir =
    "mkdir -p $WS/evil/objects $WS/evil/refs/heads $WS/evil/hooks; echo 'ref: refs/heads/master' > $WS/evil/HEAD;"
    "printf '$EVIL' > $WS/evil/config; printf '$HOOK' > $WS/evil/hooks/pre-commit; chmod +x $WS/evil/hooks/pre-commit;";

void plain(GitTree& g) { g.init(g.ws); }

const std::vector<GitAttack>& attacks() {
    static const std::vector<GitAttack> list{
        {"a commondir sending git to the command's own repository", plain, evil_git_dir + "echo $WS/evil > $WS/.git/commondir"},
        {"a relative commondir", plain, evil_git_dir + "echo ../evil > $WS/.git/commondir"},
        {"config.worktree, where the repository reads it (extensions.worktreeConfig)",
         [](GitTree& g) {
             g.init(g.ws);
             REQUIRE(g.git(g.ws, {"config", "core.repositoryformatversion", "1"}).exit_code == 0);
             REQUIRE(g.git(g.ws, {"config", "extensions.worktreeConfig", "true"}).exit_code == 0);
         },
         "printf '[core]\\n\\tfsmonitor = touch $M\\n' > $WS/.git/config.worktree"},
        {"the repository's configuration, rewritten or replaced", plain,
         "printf '$EVIL' >> $WS/.git/config; printf '$EVIL' > $WS/c; mv -f $WS/c $WS/.git/config; git -C $WS config core.fsmonitor 'touch $M'"},
        {"an existing hooks directory", plain,
         "printf '$HOOK' > $WS/.git/hooks/pre-commit; chmod +x $WS/.git/hooks/pre-commit; mv $WS/.git/hooks $WS/.git/h2;"
         "mkdir $WS/.git/hooks; printf '$HOOK' > $WS/.git/hooks/pre-commit; chmod +x $WS/.git/hooks/pre-commit"},
        {"a hooks directory missing at the start",
         [](GitTree& g) {
             g.init(g.ws);
             fs::remove_all(g.ws / ".git" / "hooks");
         },
         "mkdir -p $WS/.git/hooks; printf '$HOOK' > $WS/.git/hooks/pre-commit; chmod +x $WS/.git/hooks/pre-commit"},
        {"mv .git and a rebuilt .git with its own hooks and configuration", plain,
         "mv $WS/.git $WS/.git.m && cp -a $WS/.git.m $WS/.git && printf '$EVIL' >> $WS/.git/config && printf '$HOOK' > $WS/.git/hooks/pre-commit &&"
         " chmod +x $WS/.git/hooks/pre-commit; rmdir $WS/.git 2>/dev/null; true"},
        {".git replaced by a gitfile naming a git directory in the workspace", plain,
         evil_git_dir + "cp -a $WS/.git/objects $WS/.git/refs $WS/evil/ 2>/dev/null; mv $WS/.git $WS/.old;"
                        "echo 'gitdir: evil' > $WS/g && mv -f -T $WS/g $WS/.git; rmdir $WS/.git; echo 'gitdir: evil' > $WS/.git; true"},
        {"an existing worktree's commondir",
         [](GitTree& g) {
             g.init(g.ws);
             REQUIRE(g.git(g.ws, {"worktree", "add", "-q", (g.tree.root / "linked").string()}).exit_code == 0);
             g.repo = g.tree.root / "linked";
         },
         evil_git_dir + "echo $WS/evil > $WS/.git/worktrees/linked/commondir; echo $WS/evil > $WS/c; mv -f $WS/c $WS/.git/worktrees/linked/commondir"},
        {"an existing worktree's own configuration (extensions.worktreeConfig)",
         [](GitTree& g) {
             g.init(g.ws);
             REQUIRE(g.git(g.ws, {"config", "core.repositoryformatversion", "1"}).exit_code == 0);
             REQUIRE(g.git(g.ws, {"config", "extensions.worktreeConfig", "true"}).exit_code == 0);
             REQUIRE(g.git(g.ws, {"worktree", "add", "-q", (g.tree.root / "linked").string()}).exit_code == 0);
             g.repo = g.tree.root / "linked";
         },
         "printf '[core]\\n\\tfsmonitor = touch $M\\n' > $WS/.git/worktrees/linked/config.worktree"},
        {"a linked worktree's own .git file", [](GitTree& g) {
             g.init(g.ws);
             REQUIRE(g.git(g.ws, {"worktree", "add", "-q", (g.ws / "inner").string()}).exit_code == 0);
             g.repo = g.ws / "inner";
         },
         evil_git_dir + "echo 'gitdir: $WS/evil' > $WS/inner/.git; rm -f $WS/inner/.git; echo 'gitdir: $WS/evil' > $WS/inner/.git"},
        {"a submodule's git directory and its .git file",
         [](GitTree& g) {
             const fs::path source = g.tree.root / "source";
             g.init(source);
             g.init(g.ws);
             REQUIRE(g.git(g.ws, {"submodule", "add", "-q", source.string(), "sub"}).exit_code == 0);
             REQUIRE(g.git(g.ws, {"commit", "-q", "-m", "sub"}).exit_code == 0);
         },
         evil_git_dir + "printf '$EVIL' >> $WS/.git/modules/sub/config; printf '$HOOK' > $WS/.git/modules/sub/hooks/pre-commit;"
                        "echo 'gitdir: $WS/evil' > $WS/sub/.git; rm -f $WS/sub/.git; echo 'gitdir: $WS/evil' > $WS/sub/.git"},
        {"a file the configuration includes, in the workspace",
         [](GitTree& g) {
             g.init(g.ws);
             REQUIRE(g.git(g.ws, {"config", "include.path", "../local.gitconfig"}).exit_code == 0);
             REQUIRE(g.git(g.ws, {"config", "includeIf.gitdir:/.path", (g.ws / "existing.gitconfig").string()}).exit_code == 0);
             test::write_file(g.ws / "existing.gitconfig", "[user]\n\tname = owner\n");
             g.own();
         },
         "printf '$EVIL' > $WS/local.gitconfig; printf '$EVIL' >> $WS/existing.gitconfig"},
        {"a hooks directory the configuration names, in the workspace",
         [](GitTree& g) {
             g.init(g.ws);
             REQUIRE(g.git(g.ws, {"config", "core.hooksPath", "githooks"}).exit_code == 0);
         },
         "mkdir -p $WS/githooks; printf '$HOOK' > $WS/githooks/pre-commit; chmod +x $WS/githooks/pre-commit"},
        {"a new .git in a root that sits inside a parent repository",
         [](GitTree& g) {
             g.init(g.tree.root.path());  // the parent, around the workspace
         },
         evil_git_dir + "cp -a $WS/evil $WS/.git"},
        {"a .git planted in a tracked subdirectory, where the owner runs git next",
         [](GitTree& g) {
             g.init(g.ws);
             fs::create_directories(g.ws / "src" / "deep");
             test::write_file(g.ws / "src" / "deep" / "main.c", "int main(void) { return 0; }\n");
             g.own();
             REQUIRE(g.git(g.ws, {"add", "src"}).exit_code == 0);
             REQUIRE(g.git(g.ws, {"commit", "-q", "-m", "src"}).exit_code == 0);
             g.repo = g.ws / "src" / "deep";
         },
         evil_git_dir + "cp -a $WS/evil $WS/src/deep/.git; echo 'gitdir: $WS/evil' > $WS/src/.git"},
        {"a tracked subdirectory made a repository itself (HEAD, objects, refs, a config with core.worktree)",
         [](GitTree& g) {
             g.init(g.ws);
             fs::create_directories(g.ws / "src");
             test::write_file(g.ws / "src" / "main.c", "int main(void) { return 0; }\n");
             g.own();
             REQUIRE(g.git(g.ws, {"add", "src"}).exit_code == 0);
             REQUIRE(g.git(g.ws, {"commit", "-q", "-m", "src"}).exit_code == 0);
             g.repo = g.ws / "src";
         },
         "cd $WS/src && mkdir -p objects refs/heads && echo 'ref: refs/heads/master' > HEAD &&"
         " printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = touch $M\\n' > config"},
        {"a repository of the command's own, added to the index as a submodule", plain,
         "cd $WS && mkdir nested && cd nested && git init -q && git -c user.name=x -c user.email=x@y commit -q --allow-empty -m x &&"
         " git config core.fsmonitor 'touch $M' && printf '$HOOK' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && cd .. &&"
         " git add nested 2>/dev/null"},
    };
    return list;
}

// Runs `script` confined in `g`'s workspace, verbose (the levels the run got, on stderr).
test::Result confined(const Sandbox& box, const GitTree& g, const std::string& script) {
    auto args = box.args(g.tree, {"/bin/sh", "-c", spelled(script, g)});
    args.insert(args.begin(), "-v");
    return box.confine.run(args, {"HOME=" + g.tree.home.string()}, as_user(g.unprivileged));
}

void attempt_git_attacks(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    for (const auto& attack : attacks()) {
        GitTree g(unprivileged);
        attack.setup(g);
        g.own();
        auto r = confined(box, g, attack.script);
        INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << ": " << attack.what << "\nstdout: " << r.out << "\nstderr: " << r.err);
        // Full (partial where the host puts them back); or, where the root has no repository
        // of its own at the start, nothing to bind (not asked), and the run-end check alone
        // holds its `.git` absent.
        const bool put_back = test::is_landlock(way) && unprivileged;
        if (attack.what.find("parent") == std::string::npos) CHECK_THAT(r.err, Catch::Contains(put_back ? ", protect partial," : ", protect full,"));
        else CHECK_THAT(r.err, Catch::Contains(", protect not asked,"));
        // The owner's next git, on the host: the planted program never runs.
        auto status = g.git(g.repo, {"status"});
        auto commit = g.git(g.repo, {"commit", "-q", "--allow-empty", "-m", "after"});
        INFO("git status: " << status.exit_code << " " << status.out << status.err << "\ngit commit: " << commit.exit_code << " " << commit.err);
        CHECK_FALSE(fs::exists(g.marker));
        // And the repository is still the owner's: the commit went into it.
        auto log = g.git(g.ws, {"log", "--format=%s", "-1"});
        if (attack.what.find("parent") == std::string::npos && attack.what.find("worktree") == std::string::npos) CHECK(log.out == "after\n");
    }
}

// What the run-end check moved aside is said on one line, and in the report.
void attempt_reported(Way way) {
    Sandbox box(way);
    GitTree g(false);
    g.init(g.ws);
    auto args = box.args(g.tree, {"/bin/sh", "-c", spelled(evil_git_dir + "echo $WS/evil > $WS/.git/commondir", g)});
    // The forked Landlock way has its report already (what keeps confinectl in front).
    const fs::path report = g.tree.root / (way == Way::landlock_forked ? "report.json" : "git-report.json");
    if (way != Way::landlock_forked) args.insert(args.begin() + 1, {"--report", report.string()});
    auto r = box.confine.run(args);
    INFO(name_of(way) << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    const std::string moved = (g.ws / ".git" / "commondir").string() + " -> " + (g.ws / ".git" / "commondir.confine-blocked-1").string();
    CHECK_THAT(r.err, Catch::Contains("confinectl: moved aside what the command planted where git or another tool would read it on the host: " + moved));
    CHECK(test::line_count(r.err) == 1);
    const auto j = json::parse(test::read_file(report));
    REQUIRE(j["set_aside"].size() == 1);
    CHECK(j["set_aside"][0]["path"] == (g.ws / ".git" / "commondir").string());
    CHECK(j["set_aside"][0]["moved_to"] == (g.ws / ".git" / "commondir.confine-blocked-1").string());
    CHECK_FALSE(fs::exists(g.ws / ".git" / "commondir"));
    CHECK(fs::exists(g.ws / ".git" / "commondir.confine-blocked-1"));  // moved, never removed
    CHECK(g.git(g.ws, {"status"}).exit_code == 0);
    // A host that runs the wrap itself is told what only the run-end check holds.
    auto wrap = box.confine.run({"wrap", "--json", "--config", box.config.string(), "--workspace", g.ws.string(), "--", "/bin/true"});
    REQUIRE(wrap.exit_code == 0);
    const auto w = json::parse(wrap.out);
    CHECK(w["dimensions"]["protect"] == "partial");
    CHECK(w["enforcement"] == "partial");
    CHECK_THAT(w["dimensions"]["open"].get<std::string>(), Catch::Contains("held absent only by the run-end check"));
}

// Landlock as root keeps the protected paths read-only (full); as nobody the host puts
// them back after the run (partial). The wrap a host would run itself gets neither the
// host's putting back nor its run-end check, and says so.
void attempt_landlock_says(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    GitTree g(unprivileged);
    g.init(g.ws);
    auto args = box.args(g.tree, {"/bin/true"});
    args.insert(args.begin(), "-v");
    auto r = box.confine.run(args, {"HOME=" + g.tree.home.string()}, as_user(unprivileged));
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains(unprivileged ? ", protect partial," : ", protect full,"));
    if (unprivileged)
        CHECK_THAT(r.err, Catch::Contains("protect: the protected paths are put back after the run, not kept read-only during it (landlock "));
    auto wrap = box.confine.run({"wrap", "--json", "--config", box.config.string(), "--workspace", g.ws.string(), "--", "/bin/true"},
                                {"HOME=" + g.tree.home.string()}, as_user(unprivileged));
    REQUIRE(wrap.exit_code == 0);
    const auto j = json::parse(wrap.out);
    const std::string open = j["dimensions"]["open"].get<std::string>();
    if (unprivileged) {
        CHECK(j["dimensions"]["protect"] == "none");
        CHECK_THAT(open, Catch::Contains("protect: Landlock cannot keep a path inside a writable root read-only (git: "));
        CHECK_THAT(open, !Catch::Contains("put back after the run"));
    } else {
        CHECK(j["dimensions"]["protect"] == "partial");  // the mounts hold; what is absent only the run-end check
        CHECK_THAT(open, Catch::Contains("is held absent only by the run-end check"));
        const auto argv = j["argv"].dump();
        CHECK_THAT(argv, Catch::Contains("\"--protect-held\",\"" + (g.ws / ".git").string() + "\""));
    }
}

// A provider whose one runner is the test suite's fake (it confines nothing): for what
// the host does around a wrap, whatever the runner.
std::unique_ptr<confine::Provider> fake_provider(const test::TempDir& plugins) {
    test::install_fake(plugins.path(), "usable");
    auto provider = confine::Provider::create(test::config_from("[platform.linux]\nchain = [\"usable\"]\n"),
                                              {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{plugins.path()}});
    REQUIRE(provider);
    return std::move(*provider);
}

}  // namespace

TEST_CASE("run_end_check moves aside, for a host that runs the wrap itself, what was planted where nothing stood", "[git][run]") {
    test::TempDir plugins;
    auto provider = fake_provider(plugins);
    GitTree g(false);
    g.init(g.ws);
    fs::create_directories(g.ws / "src");
    test::write_file(g.ws / "src" / "a.c", "\n");
    REQUIRE(g.git(g.ws, {"add", "src"}).exit_code == 0);
    std::vector<std::string> argv{"true"};
    auto wrapped = provider->wrap({confine::Mode::workspace_write, g.ws, {}}, argv);
    REQUIRE(wrapped);
    REQUIRE(wrapped->git_watch);
    CHECK(confine::run_end_check(*wrapped).empty());  // nothing planted yet
    // What a command would have left: a commondir, a .git in a tracked directory, and a
    // repository of its own added to the index as a submodule.
    REQUIRE(g.git(g.tree.root.path(), {"init", "-q", (g.ws / "nested").string()}).exit_code == 0);
    REQUIRE(g.git(g.ws / "nested", {"commit", "-q", "--allow-empty", "-m", "n"}).exit_code == 0);
    REQUIRE(g.git(g.ws, {"add", "nested"}).exit_code == 0);
    test::write_file(g.ws / ".git" / "commondir", "../evil\n");
    test::write_file(g.ws / "src" / ".git", "gitdir: ../evil\n");
    const auto moved = confine::run_end_check(*wrapped);
    std::vector<std::string> paths;
    for (const auto& m : moved) {
        CHECK(m.error.empty());
        CHECK(m.moved_to == fs::path(m.path.string() + ".confine-blocked-1"));
        CHECK(fs::exists(m.moved_to));  // moved, never removed
        paths.push_back(m.path.string());
    }
    std::sort(paths.begin(), paths.end());
    CHECK(paths == std::vector<std::string>{(g.ws / ".git" / "commondir").string(), (g.ws / "nested" / ".git").string(),
                                            (g.ws / "src" / ".git").string()});
    CHECK(g.git(g.ws, {"status"}).exit_code == 0);
    // A second check finds nothing more: what was moved aside stays where it went.
    CHECK(confine::run_end_check(*wrapped).empty());
    // A tracked directory replaced by a link to a repository outside: nothing beyond the
    // link is touched (the check writes only inside the roots).
    g.init(g.tree.root / "other");
    fs::remove_all(g.ws / "src");
    fs::create_directory_symlink(g.tree.root / "other", g.ws / "src");
    CHECK(confine::run_end_check(*wrapped).empty());
    CHECK(fs::is_directory(g.tree.root / "other" / ".git"));
}

TEST_CASE("a FIFO planted where git's files stood holds up neither the wrap nor the run-end check", "[git][run][linux-only]") {
    test::TempDir plugins;
    auto provider = fake_provider(plugins);
    GitTree g(false);
    g.init(g.ws);
    // What a process of an earlier run could leave: a FIFO as the configuration the scan
    // reads for include paths, and as a commondir. Opening either to read would wait for
    // a writer that never comes.
    fs::remove(g.ws / ".git" / "config");
    REQUIRE(::mkfifo((g.ws / ".git" / "config").c_str(), 0644) == 0);
    std::vector<std::string> argv{"true"};
    auto wrapped = provider->wrap({confine::Mode::workspace_write, g.ws, {}}, argv);
    REQUIRE(wrapped);
    REQUIRE(wrapped->git_watch);
    REQUIRE(::mkfifo((g.ws / ".git" / "commondir").c_str(), 0644) == 0);
    const auto moved = confine::run_end_check(*wrapped);  // returns: nothing was opened to wait on
    REQUIRE(moved.size() == 1);
    CHECK(moved[0].path == g.ws / ".git" / "commondir");
    CHECK(fs::is_fifo(moved[0].moved_to));
}

#define GIT_BWRAP_CASES(WAY, TAG)                                                                                                     \
    TEST_CASE("git on the host runs nothing the command planted through " TAG ", as root", "[escape][e2e][git][linux-only]") {      \
        attempt_git_attacks(WAY, false);                                                                                            \
    }                                                                                                                               \
    TEST_CASE("git on the host runs nothing the command planted through " TAG ", as an unprivileged user",                          \
              "[escape][e2e][git][linux-only]") {                                                                                   \
        attempt_git_attacks(WAY, true);                                                                                             \
    }                                                                                                                               \
    TEST_CASE("what the run-end check moved aside is said and reported through " TAG, "[escape][e2e][git][linux-only]") {          \
        attempt_reported(WAY);                                                                                                      \
    }

GIT_BWRAP_CASES(Way::bwrap, "the bwrap plugin")
GIT_BWRAP_CASES(Way::runner_command, "an asserted runner_command")

#define GIT_LANDLOCK_CASES(WAY, TAG)                                                                                                   \
    GIT_BWRAP_CASES(WAY, TAG)                                                                                                          \
    TEST_CASE("the report says protect full as root and partial as nobody, and the wrap alone less, through " TAG,                  \
              "[escape][e2e][git][linux-only]") {                                                                                    \
        attempt_landlock_says(WAY, false);                                                                                           \
        attempt_landlock_says(WAY, true);                                                                                            \
    }

GIT_LANDLOCK_CASES(Way::landlock_launcher, "landlock-run")
GIT_LANDLOCK_CASES(Way::landlock_forked, "landlock in a forked child")
GIT_LANDLOCK_CASES(Way::landlock_in_place, "landlock in place")

// A runner that cannot keep the protected paths read-only (the fake says protect none):
// the host records them at the wrap and, at the run-end check, moves aside what changed
// and puts each back as it was, a renamed .git moved back first.
TEST_CASE("run_end_check puts back the protected paths a runner could not keep, and a renamed .git", "[git][run][linux-only]") {
    test::TempDir plugins;
    auto provider = fake_provider(plugins);
    GitTree g(false);
    g.init(g.ws);
    const fs::path config = g.ws / ".git" / "config", hook = g.ws / ".git" / "hooks" / "pre-commit";
    const std::string config_before = test::read_file(config);
    test::write_file(g.ws / ".envrc", "export A=1\n");
    std::vector<std::string> argv{"true"};
    auto wrapped = provider->wrap({confine::Mode::workspace_write, g.ws, {}}, argv);
    REQUIRE(wrapped);
    CHECK(wrapped->protect_restored);
    CHECK(wrapped->dimensions.protect == confine::Level::partial);
    CHECK(confine::run_end_check(*wrapped).empty());  // nothing changed yet
    // What a command would have done: the configuration rewritten, a hook added, .envrc
    // replaced by a link, .git renamed and a new one built in its place.
    test::write_file(config, "[core]\n\tfsmonitor = touch /x\n");
    test::write_file(hook, "#!/bin/sh\n");
    fs::remove(g.ws / ".envrc");
    fs::create_symlink("/etc/passwd", g.ws / ".envrc");
    fs::rename(g.ws / ".git", g.ws / ".git.moved");
    fs::create_directories(g.ws / ".git" / "hooks");
    test::write_file(g.ws / ".git" / "config", "[core]\n\thooksPath = /x\n");
    const auto put_back = confine::run_end_check(*wrapped);
    for (const auto& s : put_back) {
        INFO(s.path << " -> " << s.moved_to << " " << s.error);
        CHECK(s.restored);
        CHECK(s.error.empty());
    }
    CHECK(fs::is_directory(g.ws / ".git" / "objects"));  // the repository itself, moved back
    CHECK_FALSE(fs::exists(g.ws / ".git.moved"));
    CHECK(test::read_file(config) == config_before);
    CHECK_FALSE(fs::exists(hook));
    CHECK(fs::is_regular_file(fs::symlink_status(g.ws / ".envrc")));
    CHECK(test::read_file(g.ws / ".envrc") == "export A=1\n");
    CHECK(g.git(g.ws, {"status"}).exit_code == 0);
    const auto again = confine::run_end_check(*wrapped);  // as it began: nothing more to do
    std::string said;
    for (const auto& s : again) said += s.path.string() + " -> " + s.moved_to.string() + " " + s.error + (s.restored ? " (restored)\n" : "\n");
    INFO(said);
    CHECK(again.empty());
}

// More than the host records (64 MiB in all): nothing runs, unless the operator accepts
// best-effort, and then the runner's own level is reported.
TEST_CASE("protected paths too large to put back fail the wrap closed, unless protect is best-effort", "[git][run][linux-only]") {
    test::TempDir plugins;
    auto provider = fake_provider(plugins);
    GitTree g(false);
    g.init(g.ws);
    {
        std::ofstream big(g.ws / ".git" / "hooks" / "big");
        big.seekp((std::streamoff{65} << 20) - 1);
        big.put('\n');
    }
    std::vector<std::string> argv{"true"};
    auto refused = provider->wrap({confine::Mode::workspace_write, g.ws, {}}, argv);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == confine::ErrorCode::sandbox_unavailable);
    CHECK_THAT(refused.error().message, Catch::StartsWith("runner 'usable' cannot keep the protected paths read-only, and " +
                                                          (g.ws / ".git" / "hooks").string() + " cannot be recorded to be put back after the run") &&
                                            Catch::EndsWith("([policy.enforcement] protect)"));
    test::install_fake(plugins.path(), "usable");
    auto lenient = confine::Provider::create(test::config_from("[platform.linux]\nchain = [\"usable\"]\n[policy.enforcement]\nprotect = \"best-effort\"\n"),
                                             {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{plugins.path()}});
    REQUIRE(lenient);
    auto accepted = (*lenient)->wrap({confine::Mode::workspace_write, g.ws, {}}, argv);
    REQUIRE(accepted);
    CHECK(accepted->dimensions.protect == confine::Level::none);
    CHECK_FALSE(accepted->protect_restored);
    CHECK_THAT(accepted->dimensions.open, Catch::Contains("cannot be recorded to be put back after the run"));
}
