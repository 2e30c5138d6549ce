#include "scenarios.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace test {

namespace {

using nlohmann::json;

// A tree to confine in, with an extra directory that a scenario may grant (--writable)
// and the names outside the tree a scenario touches: a /tmp file and a /dev/shm file of
// this test process's own.
struct Ground {
    Tree tree;
    fs::path extra = tree.root / "extra";
    std::string tmp_file, shm_file;

    Ground(User user, const std::string& tag)
        : tree(user == User::nobody),
          tmp_file("/tmp/confine-scenario-" + tag + "-" + std::to_string(::getpid())),
          shm_file("/dev/shm/confine-scenario-" + tag + "-" + std::to_string(::getpid())) {
        fs::create_directory(extra);
        if (user == User::nobody && ::chown(extra.c_str(), nobody, nobody) != 0) throw std::runtime_error("chown " + extra.string());
        // Whatever an earlier run left under these names would decide the scenario for it.
        for (const auto& f : {tmp_file, shm_file}) fs::remove(f);
    }
    ~Ground() {
        std::error_code ec;
        for (const auto& f : {tmp_file, shm_file}) fs::remove(f, ec);
    }

    // `text` with {ws}, {root}, {outside} (the file outside), {home}, {sibling}, {extra},
    // {tmp-file} and {shm-file} spelled out.
    std::string spelled(std::string text) const {
        const std::pair<std::string, std::string> names[] = {{"{ws}", tree.ws.string()},
                                                             {"{root}", tree.root.path().string()},
                                                             {"{outside}", tree.outside_file.string()},
                                                             {"{home}", tree.home.string()},
                                                             {"{sibling}", tree.sibling.string()},
                                                             {"{extra}", extra.string()},
                                                             {"{tmp-file}", tmp_file},
                                                             {"{shm-file}", shm_file}};
        for (const auto& [name, value] : names)
            for (std::size_t at = 0; (at = text.find(name, at)) != std::string::npos; at += value.size()) text.replace(at, name.size(), value);
        return text;
    }
};

enum class Mode { workspace_write, read_only };

// What a scenario's check is handed: the first run's result and report, and the means
// to run again in the same set-up.
class Run {
public:
    Run(const test::Installed& confine, const fs::path& config, const RunnerExpectations& runner, User user, const Ground& ground)
        : runner(runner), user(user), ground(ground), confine_(confine), config_(config) {}

    // Runs `command` (placeholders spelled out) as the scenario's user; with a report
    // when `want_report` and the runner's path allows one, which is then read.
    void first(Mode mode, const std::vector<std::string>& command, const std::vector<std::string>& flags, const std::vector<std::string>& env,
               bool want_report) {
        const fs::path file = ground.tree.root / "report.json";
        const bool reported = want_report && runner.reports != Reports::never;
        std::vector<std::string> all_flags;
        for (const auto& f : flags) all_flags.push_back(spelled(f));
        if (reported) all_flags.insert(all_flags.end(), {"--report", file.string()});
        result = invoke(mode, command, all_flags, env);
        if (!reported) return;
        INFO("stderr: " << result.err);
        REQUIRE(fs::exists(file));
        report = json::parse(read_file(file));
    }

    // Another run of a shell script in workspace-write mode, as the same user.
    Result again(const std::string& script) const { return invoke(Mode::workspace_write, {"/bin/sh", "-c", script}, {}, {}); }

    const RunnerExpectations& runner;
    const User user;
    const Ground& ground;
    Result result;
    std::optional<json> report;  // when the run wrote one

    // A line in the runner's own failure dialect, as a command would forge it.
    std::string forged_line() const { return runner.fatal_signature + "forged failure"; }

private:
    // The ground's placeholders, and {forged} for forged_line().
    std::string spelled(const std::string& text) const {
        std::string out = ground.spelled(text);
        const std::string tag = "{forged}";
        if (auto at = out.find(tag); at != std::string::npos) out.replace(at, tag.size(), forged_line());
        return out;
    }

    Result invoke(Mode mode, const std::vector<std::string>& command, std::vector<std::string> flags, const std::vector<std::string>& env) const {
        std::vector<std::string> args{"run"};
        if (!runner.config.empty()) args.insert(args.end(), {"--config", config_.string()});
        if (mode == Mode::read_only) args.insert(args.end(), {"--mode", "read-only"});
        else args.insert(args.end(), {"--workspace", ground.tree.ws.string()});
        const bool has_report = std::find(flags.begin(), flags.end(), "--report") != flags.end();
        if (runner.reports == Reports::always && !has_report) flags.insert(flags.end(), {"--report", (ground.tree.root / "forced.json").string()});
        args.insert(args.end(), flags.begin(), flags.end());
        args.push_back("--");
        for (const auto& word : command) args.push_back(spelled(word));
        std::vector<std::string> spelled_env;
        for (const auto& e : env) spelled_env.push_back(spelled(e));
        return confine_.run(args, spelled_env, as_user(user == User::nobody));
    }

    const test::Installed& confine_;
    const fs::path& config_;
};

std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

// One behaviour every runner must show, or show as its expectations say.
struct Scenario {
    std::string name;
    Mode mode;
    std::vector<std::string> command;  // placeholders as Ground::spelled reads them
    void (*check)(const Run&);
    bool report = false;                // the run asks for a report (see Reports)
    std::vector<std::string> flags{};   // confinectl's, before "--"
    std::vector<std::string> env{};     // added to confinectl's environment ("K=V")
};

// What the file outside holds now ("original" unless something reached it).
std::string outside_text(const Run& r) { return read_file(r.ground.tree.outside_file); }

const std::vector<Scenario>& scenarios() {
    static const std::vector<Scenario> table{
        {"a granted write holds its bytes, written by the user who ran it", Mode::workspace_write, sh("printf 'granted bytes' > {ws}/granted"),
         [](const Run& r) {
             CHECK(r.result.exit_code == 0);
             CHECK(read_file(r.ground.tree.ws / "granted") == "granted bytes");
             struct stat st {};
             REQUIRE(::stat((r.ground.tree.ws / "granted").c_str(), &st) == 0);
             CHECK(st.st_uid == (r.user == User::nobody ? static_cast<uid_t>(nobody) : ::geteuid()));
         }},
        {"a write outside fails in the runner's dialect, leaves no file, and is the task's failure with a denial hint",
         Mode::workspace_write, sh("echo x > {root}/denied"),
         [](const Run& r) {
             CHECK(r.result.exit_code != 0);
             CHECK_THAT(r.result.err, Catch::Contains(r.runner.denial));
             CHECK_FALSE(fs::exists(r.ground.tree.root / "denied"));
             if (!r.report) return;
             const json& j = *r.report;
             CHECK(j["outcome"] == "task_failed");
             CHECK(j["runner"] == r.runner.runner);
             CHECK(j["basis"] == (r.runner.basis == Basis::attestation ? "attestation" : "rule"));
             CHECK_THAT(j["denial_hint"].get<std::string>(), Catch::Contains(r.runner.denial));
         },
         true},
        {"a tool that names a denied write by its errno alone (npm's code EACCES) gets a denial hint", Mode::workspace_write,
         sh("if ! (echo x > {root}/denied) 2>/dev/null; then echo 'npm ERR! code EACCES' >&2; fi; exit 1"),
         [](const Run& r) {
             CHECK(r.result.exit_code == 1);
             CHECK_FALSE(fs::exists(r.ground.tree.root / "denied"));
             if (!r.report) return;
             CHECK((*r.report)["outcome"] == "task_failed");
             CHECK((*r.report)["denial_hint"] == "npm ERR! code EACCES");
         },
         true},
        {"a nested child is confined too", Mode::workspace_write, sh("sh -c 'echo x > {root}/nested'"),
         [](const Run& r) { CHECK_FALSE(fs::exists(r.ground.tree.root / "nested")); }},
        {"/dev/null is writable", Mode::workspace_write, sh("echo x > /dev/null"), [](const Run& r) { CHECK(r.result.exit_code == 0); }},
        {"/dev/shm is writable in workspace-write mode: the command's own, or the host's, as the runner says", Mode::workspace_write,
         sh("echo y > {shm-file} && cat {shm-file}"),
         [](const Run& r) {
             if (!fs::is_directory("/dev/shm")) return;
             CHECK(r.result.out == "y\n");
             if (r.runner.dev == Dev::the_runners_own) {
                 CHECK_FALSE(fs::exists(r.ground.shm_file));
             } else {
                 CHECK(read_file(r.ground.shm_file) == "y\n");
                 fs::remove(r.ground.shm_file);
             }
         }},
        {"the host's /dev/shm is not writable in read-only mode", Mode::read_only, sh("echo x > {shm-file}"),
         [](const Run& r) {
             if (r.runner.dev == Dev::the_hosts && fs::is_directory("/dev/shm")) CHECK(r.result.exit_code != 0);
             CHECK_FALSE(fs::exists(r.ground.shm_file));
         }},
        {"read-only mode reads anything but cannot write the workspace", Mode::read_only, sh("cat {outside}; echo x > {ws}/ro"),
         [](const Run& r) {
             CHECK(r.result.out == "original");
             CHECK_FALSE(fs::exists(r.ground.tree.ws / "ro"));
         }},
        {"/tmp is writable: the command's own, or the host's, as the runner says", Mode::workspace_write,
         sh("echo y > {tmp-file} && cat {tmp-file}"),
         [](const Run& r) {
             CHECK(r.result.out == "y\n");
             const std::string& file = r.ground.tmp_file;
             if (r.runner.tmp == Tmp::the_commands_own) {
                 // Gone afterwards, and not there for the next run either.
                 CHECK_FALSE(fs::exists(file));
                 CHECK(r.again("test -e " + file).exit_code == 1);
             } else {
                 CHECK(read_file(file) == "y\n");
                 CHECK(r.again("rm " + file).exit_code == 0);
                 CHECK_FALSE(fs::exists(file));
             }
         }},
        {"the report says which /tmp the command got", Mode::workspace_write, sh("true"),
         [](const Run& r) {
             if (!r.report) return;
             CHECK((*r.report)["tmp"] == (r.runner.tmp == Tmp::the_commands_own ? "private" : "host"));
         },
         true},
        {"$HOME is not writable", Mode::workspace_write, sh("echo x > {home}/x"),
         [](const Run& r) { CHECK_FALSE(fs::exists(r.ground.tree.home / "x")); }, false, {}, {"HOME={home}"}},
        {"a sibling of the workspace is not writable", Mode::workspace_write, sh("echo x > {sibling}/x"),
         [](const Run& r) { CHECK_FALSE(fs::exists(r.ground.tree.sibling / "x")); }},
        {"an extra writable root is writable", Mode::workspace_write, sh("printf 'extra bytes' > {extra}/granted"),
         [](const Run& r) {
             CHECK(r.result.exit_code == 0);
             CHECK(read_file(r.ground.extra / "granted") == "extra bytes");
         },
         false, {"--writable", "{extra}"}},
        {"a symlink in the workspace that points outside gives no write outside", Mode::workspace_write, sh("echo x > {ws}/link/escaped"),
         [](const Run& r) { CHECK_FALSE(fs::exists(r.ground.tree.outside_dir / "escaped")); }},
        {"a file from outside cannot be moved into the workspace", Mode::workspace_write, sh("mv {outside} {ws}/moved"),
         [](const Run& r) {
             CHECK(r.result.exit_code != 0);
             if (r.runner.move == MoveFromOutside::leaves_nothing) CHECK_FALSE(fs::exists(r.ground.tree.ws / "moved"));
             CHECK(outside_text(r) == "original");
         }},
        {"a file from outside cannot be hard-linked into the workspace", Mode::workspace_write, sh("ln {outside} {ws}/linked"),
         [](const Run& r) {
             CHECK(r.result.exit_code != 0);
             CHECK_FALSE(fs::exists(r.ground.tree.ws / "linked"));
             CHECK(outside_text(r) == "original");
         }},
        {"a file outside cannot be truncated", Mode::workspace_write, sh("truncate -s 0 {outside}"),
         [](const Run& r) {
             CHECK(r.result.exit_code != 0);
             CHECK(outside_text(r) == "original");
         }},
        {"a file outside cannot be emptied by a redirection", Mode::workspace_write, sh(": > {outside}"),
         [](const Run& r) { CHECK(outside_text(r) == "original"); }},
        // As root, with a capability left, the command could remount the read-only root.
        {"no capability is left to make the root writable again", Mode::workspace_write,
         sh("mount -o remount,bind,rw / 2>/dev/null; mount -o remount,bind,rw {root} 2>/dev/null; echo x > {root}/remounted"),
         [](const Run& r) { CHECK_FALSE(fs::exists(r.ground.tree.root / "remounted")); }},
        {"an exit status passes through", Mode::workspace_write, sh("exit 7"), [](const Run& r) { CHECK(r.result.exit_code == 7); }},
        {"exit 125 with a forged line of the runner's is the command's own where the runner attests its start", Mode::workspace_write,
         sh("echo '{forged}' >&2; exit 125"),
         [](const Run& r) {
             const std::string forged = r.forged_line();
             const auto& statuses = r.runner.fatal_statuses;
             // The rule alone takes the line for the runner's only at a status it allows.
             const bool taken = r.runner.basis == Basis::rule && (statuses.empty() || std::find(statuses.begin(), statuses.end(), 125) != statuses.end());
             CHECK(r.result.exit_code == 125);
             if (!taken) {
                 CHECK(r.result.err == forged + "\n");  // nothing of confinectl's
             } else {
                 // The rule alone cannot tell the command's line from the runner's.
                 CHECK(r.result.err == forged + "\nconfinectl: sandbox unavailable: " + forged + "\n");
             }
             if (!r.report) return;
             const json& j = *r.report;
             CHECK(j["runner"] == r.runner.runner);
             CHECK(j["enforcement"] == r.runner.enforcement);
             CHECK(j["dimensions"]["write"] == r.runner.levels[0]);
             CHECK(j["dimensions"]["network"] == r.runner.levels[1]);
             CHECK(j["dimensions"]["processes"] == r.runner.levels[2]);
             if (!taken) {
                 CHECK(j["outcome"] == "task_failed");
                 CHECK(j["basis"] == (r.runner.basis == Basis::attestation ? "attestation" : "rule"));
                 CHECK(j["evidence"].is_null());
             } else {
                 CHECK(j["outcome"] == "sandbox_unavailable");
                 CHECK(j["basis"] == "rule");
                 CHECK(j["evidence"] == json{{"line", forged}, {"rule", r.runner.fatal_signature}});
             }
         },
         true},
        {"a command killed by a signal says so", Mode::workspace_write, sh("kill -TERM $$"),
         [](const Run& r) {
             if (r.runner.killed == Killed::exit_128_plus_signal) {
                 CHECK(r.result.exit_code == 128 + SIGTERM);
             } else {
                 CHECK(r.result.exit_code == -1);
                 CHECK(r.result.signal == SIGTERM);
             }
         }},
        {"a command that is not found gives 127 and one line", Mode::workspace_write, {"confine-scenario-no-such-command"},
         [](const Run& r) {
             CHECK(r.result.exit_code == 127);
             CHECK(r.result.err == "confinectl: confine-scenario-no-such-command: command not found\n");
         }},
    };
    return table;
}

}  // namespace

void run_matrix(const RunnerExpectations& runner, User user) {
    if (runner.require) runner.require();
    if (user == User::nobody) require_user_switch();
    INFO("runner: " << runner.name << ", " << (user == User::nobody ? "as nobody" : "as the caller"));
    test::Installed confine;
    const fs::path config = confine.scratch("matrix.toml");
    if (!runner.config.empty()) write_file(config, runner.config);
    for (const Scenario& s : scenarios()) {
        INFO("scenario: " << s.name);
        Ground ground(user, std::to_string(&s - scenarios().data()));
        Run run(confine, config, runner, user, ground);
        run.first(s.mode, s.command, s.flags, s.env, s.report);
        s.check(run);
    }
}

}  // namespace test
