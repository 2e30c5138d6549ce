// A configuration error is never a fallback, and an explicit ask is never ignored
// (docs/design.md §3, §12), end to end on the real kernel:
// - a [runner.bwrap] table that check-config rejects, or a plugin found twice, fails run,
//   wrap and probe closed with the line check-config prints (exit 125), and nothing runs
//   — where the chain would otherwise have fallen back to Landlock;
// - a runner that cannot work here (bubblewrap's program not there) is still skipped,
//   and says so in probe and -v;
// - an explicit --deny-read or --protect that the selected runner cannot enforce fails
//   closed, naming the path and the runner, unless the operator lowered that minimum;
//   a runner that can enforce it does.
// Judged by the world afterwards: the marker the command would have written, the file
// it would have printed or overwritten.
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <random>

namespace fs = std::filesystem;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

// The last line of `text`, without its newline.
std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    const auto at = t.rfind('\n');
    return at == std::string::npos ? t : t.substr(at + 1);
}

// Gives `path` (a tree's file) to nobody, so that only the sandbox can say no to it.
void give_to_nobody(const fs::path& path, bool unprivileged) {
    if (unprivileged) REQUIRE(::lchown(path.c_str(), test::nobody, test::nobody) == 0);
}

// What check-config says of `config`: exit 125 and one line, which every command must
// then print as it is.
std::string rejected_line(const test::Installed& confine, const fs::path& config) {
    auto checked = confine.run({"check-config", config.string()});
    INFO("check-config: " << checked.out << checked.err);
    REQUIRE(checked.exit_code == 125);
    REQUIRE(test::line_count(checked.err) == 1);
    return last_line(checked.err);
}

// run, wrap and probe under `config` each fail closed with `line`, and the command never ran.
void check_every_command_refuses(const test::Installed& confine, const fs::path& config, const std::string& line, bool unprivileged) {
    Tree tree(unprivileged);
    const fs::path marker = tree.ws / "ran";
    auto run = confine.run({"run", "--config", config.string(), "--workspace", tree.ws.string(), "--", "/usr/bin/touch", marker.string()}, {},
                           as_user(unprivileged));
    INFO((unprivileged ? "as nobody" : "as root") << "\nrun: " << run.out << run.err);
    CHECK(run.exit_code == 125);
    CHECK(run.err == line + "\n");
    CHECK_FALSE(fs::exists(marker));
    auto verbose = confine.run({"-v", "run", "--config", config.string(), "--workspace", tree.ws.string(), "--", "/usr/bin/touch", marker.string()},
                               {}, as_user(unprivileged));
    CHECK(verbose.exit_code == 125);
    CHECK(last_line(verbose.err) == line);
    CHECK_FALSE(fs::exists(marker));
    auto wrap = confine.run({"wrap", "--json", "--config", config.string(), "--workspace", tree.ws.string(), "--", "/usr/bin/touch", marker.string()},
                            {}, as_user(unprivileged));
    INFO("wrap: " << wrap.out << wrap.err);
    CHECK(wrap.exit_code == 125);
    CHECK(wrap.err == line + "\n");
    CHECK_THAT(wrap.out, Catch::Contains("\"error\""));
    auto probe = confine.run({"probe", "--config", config.string()}, {}, as_user(unprivileged));
    INFO("probe: " << probe.out << probe.err);
    CHECK(probe.exit_code == 125);
    CHECK(probe.err == line + "\n");
    CHECK_THAT(probe.out, Catch::Contains("selected: none"));
}

}  // namespace

TEST_CASE("a [runner.bwrap] table that check-config rejects fails run, wrap and probe closed with its line, never falling back to Landlock",
          "[escape][e2e][config][linux-only]") {
    test::Installed confine;
    struct Broken {
        std::string what, table, says;
    };
    const std::vector<Broken> cases{
        {"an unknown key", "colour = \"red\"\n", "runner.bwrap: unknown setting 'colour'"},
        {"the removed key new_session", "new_session = false\n", "runner.bwrap: setting 'new_session' was renamed 'share_terminal_session'"},
        {"a program of the wrong type", "program = 5\n", "runner.bwrap: setting 'program' must be a string"},
        {"share_terminal_session = true", "share_terminal_session = true\n", "runner.bwrap: setting 'share_terminal_session' cannot be true"},
    };
    for (const auto& c : cases) {
        // The default chain, which would otherwise go on to Landlock; and a chain of
        // Landlock alone, where the broken table is of a runner that is not even in it.
        for (const std::string chain : {"", "[platform.linux]\nchain = [\"landlock\"]\n"}) {
            INFO(c.what << (chain.empty() ? ", the default chain" : ", a chain of landlock alone"));
            const fs::path config = confine.scratch("broken.toml");
            test::write_file(config, chain + "[runner.bwrap]\n" + c.table);
            const std::string line = rejected_line(confine, config);
            CHECK_THAT(line, Catch::StartsWith("confinectl: " + config.string() + ":") && Catch::Contains(c.says));
            for (const bool unprivileged : {false, true}) {
                if (unprivileged) test::require_user_switch();
                check_every_command_refuses(confine, config, line, unprivileged);
            }
        }
    }
}

TEST_CASE("a plugin found twice fails run, wrap and probe closed with check-config's line, never picking the next runner",
          "[escape][e2e][config][linux-only]") {
    test::Installed confine;
    // A copy of the bwrap plugin in a plugin_dirs directory, trusted in every other way.
    const fs::path extra = confine.scratch("extra-plugins");
    fs::create_directory(extra);
    fs::permissions(extra, fs::perms(0755));
    fs::copy_file(confine.plugin_dir() / "confine-runner-bwrap.so", extra / "confine-runner-bwrap.so");
    const fs::path config = confine.scratch("twice.toml");
    test::write_file(config, "plugin_dirs = [\"" + extra.string() + "\"]\n");
    const std::string line = rejected_line(confine, config);
    CHECK_THAT(line, Catch::StartsWith("confinectl: runner 'bwrap' is provided by more than one file: ") &&
                         Catch::Contains((extra / "confine-runner-bwrap.so").string()) &&
                         Catch::Contains((confine.plugin_dir() / "confine-runner-bwrap.so").string()));
    for (const bool unprivileged : {false, true}) {
        if (unprivileged) test::require_user_switch();
        check_every_command_refuses(confine, config, line, unprivileged);
    }
}

TEST_CASE("a runner that cannot work here is still skipped in the chain, and says so in probe and -v", "[escape][e2e][config][linux-only]") {
    test::require_landlock();
    test::Installed confine;
    // bubblewrap's program names a file that is not there: valid, but not installed here
    // (a configuration shared by machines names /usr/bin/bwrap on each).
    const fs::path config = confine.config_without_bwrap();
    auto checked = confine.run({"check-config", config.string()});
    CHECK(checked.exit_code == 0);
    for (const bool unprivileged : {false, true}) {
        if (unprivileged) test::require_user_switch();
        Tree tree(unprivileged);
        const fs::path marker = tree.ws / "ran";
        auto r = confine.run({"-v", "run", "--config", config.string(), "--workspace", tree.ws.string(), "--", "/usr/bin/touch", marker.string()}, {},
                             as_user(unprivileged));
        INFO((unprivileged ? "as nobody" : "as root") << "\nrun: " << r.out << r.err);
        CHECK(r.exit_code == 0);
        CHECK(fs::exists(marker));
        CHECK_THAT(r.err, Catch::Contains("runner bwrap: unusable (probed): " + confine.absent_bwrap_reason()));
        CHECK_THAT(r.err, Catch::Contains("selected: landlock"));
        // And in the run report.
        const fs::path report = tree.root / "report.json";
        auto reported = confine.run({"run", "--config", config.string(), "--report", report.string(), "--workspace", tree.ws.string(), "--",
                                     "/bin/true"},
                                    {}, as_user(unprivileged));
        CHECK(reported.exit_code == 0);
        const auto j = nlohmann::json::parse(test::read_file(report));
        CHECK(j["runner"] == "landlock");
        REQUIRE(j["skipped"].size() == 1);
        CHECK(j["skipped"][0]["runner"] == "bwrap");
        CHECK(j["skipped"][0]["reason"] == confine.absent_bwrap_reason());
        auto probe = confine.run({"probe", "--config", config.string()}, {}, as_user(unprivileged));
        CHECK(probe.exit_code == 0);
        CHECK_THAT(probe.out, Catch::Contains("  bwrap: unusable: " + confine.absent_bwrap_reason()));
        CHECK_THAT(probe.out, Catch::Contains("selected: landlock"));
    }
}

namespace {

// What an explicit ask is tried with: a secret inside the workspace, and a file there
// to protect.
struct Asked {
    Tree tree;
    std::string canary = test::unique_text("CANARY-");
    fs::path secret = tree.ws / ".env", kept = tree.ws / "ci.yml";
    std::string kept_text = "steps: [build]\n";

    explicit Asked(bool unprivileged) : tree(unprivileged) {
        test::write_file(secret, "TOKEN=" + canary + "\n", fs::perms(0600));
        test::write_file(kept, kept_text);
        give_to_nobody(secret, unprivileged);
        give_to_nobody(kept, unprivileged);
    }
};

// Runs `script` in the tree's workspace under `box` with `flags` before the command.
test::Result run_asking(const Sandbox& box, const Asked& a, const std::vector<std::string>& flags, const std::string& script, bool unprivileged) {
    auto args = box.args(a.tree, {"/bin/sh", "-c", script});
    args.insert(args.begin() + 1, flags.begin(), flags.end());
    args.insert(args.begin(), "-v");
    return box.confine.run(args, {}, as_user(unprivileged));
}

void attempt_explicit_asks(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    // --deny-read: the secret printed, or not; --protect: the file overwritten, or not.
    {
        Asked a(unprivileged);
        auto r = run_asking(box, a, {"--deny-read", a.secret.string()}, "cat " + a.secret.string() + "; echo REACHED", unprivileged);
        INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\n--deny-read: " << r.out << r.err);
        CHECK_THAT(r.out + r.err, !Catch::Contains(a.canary));
        if (test::is_landlock(way)) {
            CHECK(r.exit_code == 125);
            CHECK_THAT(r.out, !Catch::Contains("REACHED"));
            CHECK_THAT(last_line(r.err), Catch::StartsWith("confinectl: sandbox unavailable: runner 'landlock' cannot keep " + a.secret.string() +
                                                           " unreadable") &&
                                             Catch::Contains("[policy.enforcement] read"));
        } else {
            CHECK(r.exit_code == 0);
            CHECK_THAT(r.out, Catch::Contains("REACHED"));
            CHECK_THAT(r.err, Catch::Contains(", read full,"));
        }
    }
    {
        Asked a(unprivileged);
        const fs::path marker = a.tree.ws / "ran";
        auto r = run_asking(box, a, {"--protect", a.kept.string()},
                            "touch " + marker.string() + "; echo evil > " + a.kept.string() + "; rm -f " + a.kept.string() + "; echo REACHED",
                            unprivileged);
        INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\n--protect: " << r.out << r.err);
        CHECK(test::read_file(a.kept) == a.kept_text);
        // Landlock as root holds it in a mount namespace of the run's own; as nobody only
        // putting it back after the run is left, below an explicit ask's minimum (full).
        if (test::is_landlock(way) && unprivileged) {
            CHECK(r.exit_code == 125);
            CHECK_FALSE(fs::exists(marker));
            CHECK_THAT(last_line(r.err), Catch::StartsWith("confinectl: sandbox unavailable: runner 'landlock' cannot keep " + a.kept.string() +
                                                           " read-only") &&
                                             Catch::Contains("[policy.enforcement] protect"));
        } else {
            CHECK(r.exit_code == 0);
            CHECK(fs::exists(marker));
            CHECK_THAT(r.err, Catch::Contains(", protect full,"));
        }
    }
}

// With the minimum lowered by the operator, the ask is accepted and the report says what it got.
void attempt_lowered_minimums(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    test::write_file(box.config, test::way_config(way, "read = \"partial\"\nprotect = \"best-effort\"\n"));
    Asked a(unprivileged);
    auto r = run_asking(box, a, {"--deny-read", a.secret.string(), "--protect", a.kept.string()}, "echo REACHED", unprivileged);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\n" << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("REACHED"));
    if (test::is_landlock(way))
        CHECK_THAT(r.err, Catch::Contains(", read partial,") && Catch::Contains(unprivileged ? ", protect partial," : ", protect full,"));
    else CHECK_THAT(r.err, Catch::Contains(", read full,") && Catch::Contains(", protect full,"));
}

// An entry the operator's configuration file writes is an explicit ask too; the embedded
// default's are not (the default protect list under Landlock runs, with protect none).
void attempt_configured_asks(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Asked a(unprivileged);
    test::write_file(box.config, test::way_config(way) + "[policy]\ndeny_read = [\"" + a.secret.string() + "\"]\n");
    auto r = run_asking(box, a, {}, "cat " + a.secret.string() + "; echo REACHED", unprivileged);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\n" << r.out << r.err);
    CHECK_THAT(r.out + r.err, !Catch::Contains(a.canary));
    if (test::is_landlock(way)) {
        CHECK(r.exit_code == 125);
        CHECK_THAT(last_line(r.err), Catch::Contains("runner 'landlock' cannot keep " + a.secret.string() + " unreadable, which " +
                                                     box.config.string() + ":"));
    } else {
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::Contains("REACHED"));
    }
    // The embedded default's protect list is no explicit ask: a git repository runs.
    test::write_file(box.config, test::way_config(way));
    fs::create_directories(a.tree.ws / ".git" / "hooks");
    auto d = run_asking(box, a, {}, "echo REACHED", unprivileged);
    CHECK(d.exit_code == 0);
    CHECK_THAT(d.out, Catch::Contains("REACHED"));
}

}  // namespace

#define EXPLICIT_CASES(WAY, TAG, TAGS)                                                                                                          \
    TEST_CASE("an explicit --deny-read or --protect is enforced or fails closed naming the path and runner, through " TAG,                   \
              "[escape][e2e][config]" TAGS) {                                                                                              \
        attempt_explicit_asks(WAY, false);                                                                                                  \
        attempt_explicit_asks(WAY, true);                                                                                                   \
    }                                                                                                                                       \
    TEST_CASE("a lowered read or protect minimum accepts an explicit ask the runner cannot enforce, and says so, through " TAG,              \
              "[escape][e2e][config]" TAGS) {                                                                                              \
        attempt_lowered_minimums(WAY, false);                                                                                               \
        attempt_lowered_minimums(WAY, true);                                                                                                \
    }                                                                                                                                       \
    TEST_CASE("a deny_read entry the configuration file writes is an explicit ask, the embedded default's are not, through " TAG,           \
              "[escape][e2e][config]" TAGS) {                                                                                              \
        attempt_configured_asks(WAY, false);                                                                                                \
        attempt_configured_asks(WAY, true);                                                                                                 \
    }

EXPLICIT_CASES(Way::bwrap, "the bwrap plugin", "")
EXPLICIT_CASES(Way::runner_command, "an asserted runner_command", "")
EXPLICIT_CASES(Way::landlock_launcher, "landlock-run", "[linux-only]")
EXPLICIT_CASES(Way::landlock_forked, "landlock in a forked child", "[linux-only]")
EXPLICIT_CASES(Way::landlock_in_place, "landlock in place", "[linux-only]")

// As nobody, Landlock only puts a protected path back after the run: below an explicit
// ask's minimum. As root it keeps it read-only, and is used.
TEST_CASE("a chain skips a runner that cannot honour what the configuration file asks explicitly", "[escape][e2e][config][linux-only]") {
    test::require_landlock();
    test::require_bwrap();
    test::require_user_switch();
    for (const bool unprivileged : {true, false}) {
        test::Installed confine;
        Asked a(unprivileged);
        const fs::path config = confine.scratch("landlock-first.toml");
        test::write_file(config, "[platform.linux]\nchain = [\"landlock\", \"bwrap\"]\n[policy]\nprotect = [\"ci.yml\"]\n");
        auto r = confine.run({"-v", "run", "--config", config.string(), "--workspace", a.tree.ws.string(), "--", "/bin/sh", "-c",
                              "echo evil > " + a.kept.string() + "; echo REACHED"},
                             {}, as_user(unprivileged));
        INFO((unprivileged ? "as nobody\n" : "as root\n") << r.out << r.err);
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::Contains("REACHED"));
        if (unprivileged) {
            CHECK_THAT(r.err, Catch::Contains("runner landlock: unusable (") && Catch::Contains("asks protect explicitly"));
            CHECK_THAT(r.err, Catch::Contains("selected: bwrap"));
        } else {
            CHECK_THAT(r.err, Catch::Contains("wrapped by landlock:") && Catch::Contains(", protect full,"));
        }
        CHECK(test::read_file(a.kept) == a.kept_text);
    }
}
