// The escape suite's loader cases (docs/design.md §11: nothing confine starts outside the
// sandbox loads code from a writable root). A library in the workspace named by
// LD_PRELOAD is loaded by whatever starts with that environment — confinectl itself, and
// the runner programs it starts before their sandbox exists (bubblewrap, landlock-run).
// The command rewrites it; had anything loaded the rewritten library unconfined, its
// constructor would have left a marker outside. Judged by the marker, on every Linux way,
// as root and as nobody; and the loader variables' rule itself, entry by entry.
#include "support.hpp"
#include "ways.hpp"

#include <confine/environment.hpp>
#include <confine/loader_environment.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <optional>

namespace fs = std::filesystem;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

// Two runs with LD_PRELOAD naming a quiet library in the workspace: the first replaces it
// with one that marks every process that loads it, the second just runs. `own`: the
// variable is confinectl's own (as a caller's shell would set it); otherwise it is given
// to the run with --env, so that only what confinectl starts sees it.
void attempt_preload(Way way, bool unprivileged, bool own) {
    if (unprivileged) test::require_user_switch();
#if defined(__SANITIZE_ADDRESS__)
    // An AddressSanitizer build of confinectl refuses to start when a library is preloaded
    // ahead of its runtime, before main() could judge anything: the variable can then reach
    // confine only through --env, and only that is tried.
    if (own) return;
#endif
    Sandbox box(way);
    Tree t(unprivileged);
    const fs::path library = t.ws / "libhelper.so", marker = t.root / "preload-ran";
    fs::copy_file(PRELOAD_QUIET, library);
    if (unprivileged) REQUIRE(::chown(library.c_str(), test::nobody, test::nobody) == 0);
    const std::string quiet = test::read_file(library);
    const std::vector<std::string> variables{"LD_PRELOAD=" + library.string(), "CONFINE_TEST_PRELOAD_MARKER=" + marker.string()};
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << (own ? ", confinectl's own LD_PRELOAD" : ", LD_PRELOAD given with --env"));
    // Replaced by a rename, as an attacker would: a library truncated in place would crash
    // whatever has it mapped (the command itself among them) before anything loads it anew.
    const std::string replace = "cp " + std::string(PRELOAD_MARKS) + " " + t.ws.string() + "/new.so && mv " + t.ws.string() + "/new.so " + library.string();
    for (const std::string& script : {replace, std::string("true")}) {
        std::vector<std::string> args = box.args(t, {"/bin/sh", "-c", script});
        if (!own)
            for (const auto& v : variables) args.insert(args.begin() + 1, {"--env", v});
        const auto r = box.confine.run(args, own ? variables : std::vector<std::string>{}, as_user(unprivileged));
        INFO(script << "\nexit " << r.exit_code << "\nstderr: " << r.err);
        // Refused before anything started: one line naming the variable, the entry and the place.
        CHECK(r.exit_code == 125);
        CHECK(test::line_count(r.err) == 1);
        CHECK(r.err.find("LD_PRELOAD entry '" + library.string() + "' lies in the workspace " + t.ws.string()) != std::string::npos);
    }
    CHECK_FALSE(fs::exists(marker));
    CHECK(test::read_file(library) == quiet);
}

}  // namespace

#define LOADER_CASES(WAY, TAG, TAGS)                                                                                                   \
    TEST_CASE("a workspace library named by LD_PRELOAD never runs unconfined through " TAG ", as root", "[escape][e2e]" TAGS) {      \
        attempt_preload(WAY, false, false);                                                                                            \
        attempt_preload(WAY, false, true);                                                                                             \
    }                                                                                                                                  \
    TEST_CASE("a workspace library named by LD_PRELOAD never runs unconfined through " TAG ", as an unprivileged user",               \
              "[escape][e2e]" TAGS) {                                                                                                  \
        attempt_preload(WAY, true, false);                                                                                             \
        attempt_preload(WAY, true, true);                                                                                              \
    }

LOADER_CASES(Way::bwrap, "the bwrap plugin", "[bwrap]")
LOADER_CASES(Way::runner_command, "an asserted runner_command", "[bwrap]")
LOADER_CASES(Way::landlock_launcher, "landlock-run", "[landlock][linux-only]")
LOADER_CASES(Way::landlock_forked, "landlock in a forked child", "[landlock][linux-only]")
LOADER_CASES(Way::landlock_in_place, "landlock in place", "[landlock][linux-only]")

TEST_CASE("the loader's variables may name no place a confined command can write", "[loader-environment]") {
    Tree t(false);
    const confine::Policy policy{confine::Mode::workspace_write, t.ws, {t.sibling}};
    auto problem = [&](const std::string& entry, const fs::path& cwd = {}) {
        const std::vector<std::string> env{"PATH=/usr/bin", entry};
        auto bad = confine::loader_environment_problem(env, policy, cwd);
        return bad ? bad->message : std::string();
    };
    fs::create_directories(t.ws / "lib");
    fs::create_directory_symlink(t.ws / "lib", t.outside_dir / "hop");  // outside, but leads in
    fs::create_directory_symlink("/usr/lib", t.ws / "system");          // inside, but leads out: the command can repoint it

    CHECK(problem("LD_PRELOAD=" + (t.ws / "x.so").string()) ==
          "LD_PRELOAD entry '" + (t.ws / "x.so").string() + "' lies in the workspace " + t.ws.string() +
              ", where a confined command may write: a program started before the sandbox would load it unconfined; refusing to run");
    CHECK(problem("LD_PRELOAD=/usr/lib/libc.so.6 " + (t.sibling / "y.so").string()).find("lies in the writable root " + t.sibling.string()) !=
          std::string::npos);
    CHECK(problem("LD_PRELOAD=/tmp/x.so").find("lies in /tmp,") != std::string::npos);
    CHECK(problem("LD_AUDIT=/dev/shm/a.so").find("LD_AUDIT entry '/dev/shm/a.so' lies in /dev/shm,") != std::string::npos);
    CHECK(problem("LD_LIBRARY_PATH=/usr/lib:" + (t.outside_dir / "hop").string()).find("lies in the workspace") != std::string::npos);
    CHECK(problem("LD_LIBRARY_PATH=" + (t.ws / "system").string()).find("lies in the workspace") != std::string::npos);
    CHECK(problem("LD_PRELOAD=" + (t.outside_dir / "hop" / ".." / "x.so").string()).find("lies in the workspace") != std::string::npos);
    // Empty and relative entries are the working directory's.
    CHECK(problem("LD_LIBRARY_PATH=/usr/lib:", t.ws) ==
          "LD_LIBRARY_PATH entry '' (the working directory " + t.ws.string() + ") lies in the workspace " + t.ws.string() +
              ", where a confined command may write: a program started before the sandbox would load it unconfined; refusing to run");
    CHECK(problem("LD_LIBRARY_PATH=lib", t.ws).find("entry 'lib' (from the working directory " + t.ws.string() + ") lies in the workspace") !=
          std::string::npos);
    CHECK(problem("LD_PRELOAD=./x.so", t.ws).find("lies in the workspace") != std::string::npos);
    CHECK(problem("LD_LIBRARY_PATH=$ORIGIN/../lib").find("names $ORIGIN") != std::string::npos);
    // Elsewhere, and names looked up on the library path, are the caller's business.
    CHECK(problem("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc.so.6 libfoo.so") == "");
    CHECK(problem("LD_LIBRARY_PATH=/usr/lib:" + t.outside_dir.string()) == "");
    CHECK(problem("LD_LIBRARY_PATH=lib", t.outside_dir) == "");
    CHECK(problem("LD_PRELOAD=") == "");
    // Read-only mode has no writable root but /tmp and /dev/shm.
    const confine::Policy read_only{confine::Mode::read_only, {}, {}};
    CHECK_FALSE(confine::loader_environment_problem(std::vector<std::string>{"LD_PRELOAD=" + (t.ws / "x.so").string()}, read_only));
    CHECK(confine::loader_environment_problem(std::vector<std::string>{"LD_PRELOAD=/tmp/x.so"}, read_only));
}

TEST_CASE("an environment without the loader's variables has nothing to judge, and every one that has a problem sets one", "[loader-environment]") {
    Tree t(false);
    const confine::Policy policy{confine::Mode::workspace_write, t.ws, {}};
    const std::string in_ws = (t.ws / "x.so").string();
    // Names that only look like the loader's: no problem, and nothing set.
    for (const std::string& entry : std::vector<std::string>{"LD_PRELOADX=" + in_ws, "XLD_PRELOAD=" + in_ws, "LD_PRELOAD", "LD_AUDIT", "ld_preload=" + in_ws,
                                    "LD_LIBRARY=" + in_ws, "PATH=" + t.ws.string(), "LD_=" + in_ws}) {
        INFO(entry);
        const std::vector<std::string> env{"HOME=/root", entry};
        CHECK_FALSE(confine::sets_loader_variable(env));
        CHECK_FALSE(confine::loader_environment_problem(env, policy, t.ws));
    }
    // Each of the three is set, whether its entries are a problem or not.
    for (const std::string& entry : std::vector<std::string>{"LD_PRELOAD=" + in_ws, "LD_LIBRARY_PATH=" + t.ws.string(), "LD_AUDIT=" + in_ws, "LD_PRELOAD=",
                                    "LD_LIBRARY_PATH=", "LD_AUDIT=/usr/lib/x.so"}) {
        INFO(entry);
        const std::vector<std::string> env{"PATH=/usr/bin", entry};
        CHECK(confine::sets_loader_variable(env));
    }
    CHECK(confine::loader_environment_problem(std::vector<std::string>{"LD_PRELOAD=" + in_ws}, policy));
    CHECK_FALSE(confine::sets_loader_variable(std::vector<std::string>{}));
#if !defined(_WIN32)
    // This process's own environment, looked at without a copy: the same answer (the
    // three put back as they were afterwards).
    std::vector<std::pair<std::string, std::optional<std::string>>> before;
    for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"}) {
        const char* value = std::getenv(name);
        before.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
        ::unsetenv(name);
    }
    CHECK_FALSE(confine::sets_loader_variable());
    CHECK(confine::sets_loader_variable() == confine::sets_loader_variable(confine::current_environment()));
    for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"}) {
        INFO(name);
        ::setenv(name, "", 1);
        CHECK(confine::sets_loader_variable());
        CHECK(confine::sets_loader_variable() == confine::sets_loader_variable(confine::current_environment()));
        ::unsetenv(name);
        CHECK_FALSE(confine::sets_loader_variable());
    }
    ::setenv("LD_PRELOADX", "x", 1);
    CHECK_FALSE(confine::sets_loader_variable());
    ::unsetenv("LD_PRELOADX");
    for (const auto& [name, value] : before)
        if (value) ::setenv(name.c_str(), value->c_str(), 1);
#endif
}

// A host that runs a wrap itself starts the runner with the wrap's environment: wrap
// --json refuses one the runner would load a library from a writable root with.
TEST_CASE("wrap --json refuses an environment whose loader variables name a writable root", "[confinectl][loader-environment]") {
    test::Installed confine;
    Tree t(false);
    const auto r = confine.run({"wrap", "--json", "--workspace", t.ws.string(), "--env", "LD_LIBRARY_PATH=/usr/lib:" + t.ws.string(), "--", "/bin/true"});
    INFO(r.err);
    CHECK(r.exit_code == 125);
    CHECK(r.err == "confinectl: LD_LIBRARY_PATH entry '" + t.ws.string() + "' lies in the workspace " + t.ws.string() +
                       ", where a confined command may write: a program started before the sandbox would load it unconfined; refusing to run\n");
    CHECK(nlohmann::json::parse(r.out)["error"]["code"] == "INVALID_POLICY");
}
