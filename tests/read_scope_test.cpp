// Scoped reads ([policy] read = "scoped", --read scoped): the command reads the system's
// directories, the writable roots, where it runs and the read roots, and nothing else of
// the home or of other users' data — judged by the bytes that come out, through
// bubblewrap and Landlock, as root and as an unprivileged user; and real builds keep
// working under it (git, cmake + ninja + ctest, a venv with pip, npm, cargo).
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <pwd.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;
using test::as_user;
using test::name_of;
using test::Sandbox;
using test::Tree;
using test::Way;

namespace {

// `text` into `file`, its directories made.
void put(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    test::write_file(file, text);
}


void attempt_scope(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    Sandbox box(way);
    Tree t(unprivileged);
    const std::string canary = test::unique_text("SCOPE-");
    put(t.home / "notes.txt", canary + "-home\n");                      // the home, outside the read roots
    put(t.sibling / "data.txt", canary + "-sibling\n");                 // beside the workspace
    put(t.home / ".cargo" / "env", "toolchain\n");                      // a default read root
    put(t.outside_dir / "named.txt", "named\n");                        // --read-root
    put(t.ws / "src.txt", "workspace\n");
    if (unprivileged) test::give_to_nobody(t.root.path());
    const std::string script = "cat " + (t.home / "notes.txt").string() + "; cat " + (t.sibling / "data.txt").string() + "; ls " + t.home.string() +
                               "; cat " + (t.home / ".cargo" / "env").string() + " " + (t.outside_dir / "named.txt").string() + " " +
                               (t.ws / "src.txt").string() + " /etc/hostname >/dev/null && echo READ-OK";
    auto args = box.args(t, {"/bin/sh", "-c", script});
    const fs::path report = t.root / "scope.json";
    const bool has_report = way == Way::landlock_forked;
    args.insert(args.begin() + 1, {"--read", "scoped", "--read-root", t.outside_dir.string()});
    if (!has_report) args.insert(args.begin() + 1, {"--report", report.string()});
    auto r = box.confine.run(args, {"HOME=" + t.home.string()}, as_user(unprivileged));
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out + r.err, !Catch::Contains(canary));
    CHECK_THAT(r.out, Catch::Contains("READ-OK"));
    const auto j = json::parse(test::read_file(has_report ? t.root / "report.json" : report));
    CHECK(j["dimensions"]["read_scope"] == "full");
    // Unscoped, the same command reads them: the scope is what hid them.
    auto open_args = box.args(t, {"/bin/sh", "-c", "cat " + (t.home / "notes.txt").string()});
    auto open = box.confine.run(open_args, {"HOME=" + t.home.string()}, as_user(unprivileged));
    CHECK_THAT(open.out, Catch::Contains(canary + "-home"));
}

}  // namespace

#define SCOPE_CASES(WAY, TAG)                                                                                                                     \
    TEST_CASE("a scoped run reads the system, its roots and the read roots, nothing else of the home, through " TAG ", as root",              \
              "[escape][e2e][secrets][linux-only]") {                                                                                           \
        attempt_scope(WAY, false);                                                                                                              \
    }                                                                                                                                           \
    TEST_CASE("a scoped run reads the system, its roots and the read roots, nothing else of the home, through " TAG ", as an unprivileged user", \
              "[escape][e2e][secrets][linux-only]") {                                                                                           \
        attempt_scope(WAY, true);                                                                                                               \
    }

SCOPE_CASES(Way::bwrap, "the bwrap plugin")
SCOPE_CASES(Way::landlock_launcher, "landlock-run")
SCOPE_CASES(Way::landlock_forked, "landlock in a forked child")

// Builds as they run every day, under scoped reads: git, cmake + ninja + ctest, a venv
// that pip installs a wheel into, npm installing a local package, cargo building a crate
// with a path dependency, offline. The account's own HOME, as a user has it (rustup's
// toolchains are found there).
TEST_CASE("git, cmake with ninja and ctest, a venv with pip, npm and cargo work under scoped reads, through bubblewrap and Landlock",
          "[e2e][secrets][slow][linux-only]") {
    test::require_bwrap();
    test::require_landlock();
    for (const Way way : {Way::bwrap, Way::landlock_forked}) {
        Sandbox box(way);
        Tree t(false);
        const fs::path& ws = t.ws;
        put(ws / "CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(t C)\nenable_testing()\nadd_executable(t main.c)\n"
                                                "add_test(NAME t COMMAND t)\n");
        put(ws / "main.c", "int main(void) { return 0; }\n");
        put(ws / "wheel.py",
                         "import base64, hashlib, zipfile\n"
                         "files = {'mypkg/__init__.py': b'VALUE = 1\\n', 'mypkg-0.1.dist-info/METADATA': b'Metadata-Version: 2.1\\nName: mypkg\\nVersion: 0.1\\n',\n"
                         "         'mypkg-0.1.dist-info/WHEEL': b'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}\n"
                         "record = ''\n"
                         "with zipfile.ZipFile('mypkg-0.1-py3-none-any.whl', 'w') as z:\n"
                         "    for name, data in files.items():\n"
                         "        z.writestr(name, data)\n"
                         "        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
                         "        record += f'{name},sha256={digest},{len(data)}\\n'\n"
                         "    z.writestr('mypkg-0.1.dist-info/RECORD', record + 'mypkg-0.1.dist-info/RECORD,,\\n')\n");
        put(ws / "npkg" / "package.json", "{\"name\": \"npkg\", \"version\": \"1.0.0\"}\n");
        put(ws / "npkg" / "index.js", "module.exports = 1;\n");
        put(ws / "napp" / "package.json", "{}\n");
        put(ws / "crate" / "Cargo.toml", "[package]\nname = \"crate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\n"
                                                       "dep = { path = \"../dep\" }\n");
        put(ws / "crate" / "src" / "main.rs", "fn main() { println!(\"{}\", dep::f()); }\n");
        put(ws / "dep" / "Cargo.toml", "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
        put(ws / "dep" / "src" / "lib.rs", "pub fn f() -> i32 { 42 }\n");
        const std::string script =
            "cd " + ws.string() +
            " && git init -q repo && git -C repo -c user.name=a -c user.email=a@example.org commit -q --allow-empty -m first && echo GIT-OK;"
            " cmake -S . -B build -G Ninja >/dev/null && cmake --build build >/dev/null && (cd build && ctest >/dev/null) && echo CMAKE-OK;"
            " python3 wheel.py && python3 -m venv .venv && .venv/bin/pip install -q --no-index ./mypkg-0.1-py3-none-any.whl &&"
            " .venv/bin/python -c 'import mypkg' && echo PIP-OK;"
            " if command -v npm >/dev/null; then (cd napp && npm install --offline --no-audit --no-fund ../npkg >/dev/null 2>&1 &&"
            " node -e 'require(\"npkg\")' && echo NPM-OK); else echo NPM-ABSENT; fi;"
            " if command -v cargo >/dev/null; then (cd crate && cargo build --offline -q && ./target/debug/crate) && echo CARGO-OK; else echo CARGO-ABSENT; fi";
        auto args = box.args(t, {"/bin/sh", "-c", script});
        args.insert(args.begin() + 1, {"--read", "scoped"});
        const passwd* account = ::getpwuid(::geteuid());
        REQUIRE(account);
        auto r = box.confine.run(args, {"HOME=" + std::string(account->pw_dir)});
        INFO(name_of(way) << "\nstdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.exit_code == 0);
        for (const char* ok : {"GIT-OK", "CMAKE-OK", "PIP-OK"}) CHECK_THAT(r.out, Catch::Contains(ok));
        // npm and cargo where this machine has them (Debian's npm; rustup's cargo).
        CHECK_THAT(r.out, Catch::Contains("NPM-OK") || Catch::Contains("NPM-ABSENT"));
        CHECK_THAT(r.out, Catch::Contains("CARGO-OK") || Catch::Contains("CARGO-ABSENT"));
    }
}

TEST_CASE("run's read scope takes scoped or all, and a read root a path, or the run fails in one line with nothing run", "[cli][e2e][linux-only]") {
    test::Installed confine;
    Tree t(false);
    const fs::path ran = t.ws / "ran";
    auto bad = confine.run({"run", "--read", "some", "--workspace", t.ws.string(), "--", "/bin/sh", "-c", "echo > " + ran.string()});
    CHECK(bad.exit_code == 125);
    CHECK(bad.err == "confinectl: --read must be scoped or all, not 'some'\n");
    auto empty = confine.run({"run", "--read-root", "", "--workspace", t.ws.string(), "--", "/bin/sh", "-c", "echo > " + ran.string()});
    CHECK(empty.exit_code == 125);
    CHECK(empty.err == "confinectl: run: --read-root needs a non-empty value (PATH)\n");
    CHECK_FALSE(fs::exists(ran));
}
