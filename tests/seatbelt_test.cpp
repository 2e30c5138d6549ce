// The Seatbelt runner without a Mac: its profiles (golden files; an independent
// S-expression reader, Guile, checking structure and bytes), string literals that no
// path can break out of, canonical roots from real symlinks, the probe in a longer
// chain through a stand-in sandbox-exec, and `confinectl wrap --runner seatbelt` on any
// OS. The end-to-end tests with the real sandbox-exec run on macOS only.
#include "sbpl.hpp"
#include "scenarios.hpp"
#include "support.hpp"

#include <confine/config.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;
namespace sb = confine::seatbelt;

namespace {

const std::string header = "(version 1)\n(allow default)\n(deny network*)\n(deny file-write*)\n(allow file-write* (literal \"/dev/null\"))\n";

std::string hex(std::string_view s) {
    std::string out;
    char buf[3];
    for (unsigned char c : s) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        out += buf;
    }
    return out;
}

// confinectl with the seatbelt runner's settings, wrapping through --runner.
struct Seatbelt {
    test::Installed confine;
    fs::path config = confine.scratch("seatbelt.toml");
    explicit Seatbelt(const std::string& settings = "") {
        test::write_file(config, "[platform.linux]\nchain = [\"landlock\"]\n[runner.seatbelt]\n" + settings);
    }
    test::Result wrap(const std::vector<std::string>& flags) const {
        std::vector<std::string> args{"wrap", "--json", "--runner", "seatbelt", "--config", config.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "echo", "hi"});
        return confine.run(args);
    }
    std::string profile(const std::vector<std::string>& flags) const {
        auto r = wrap(flags);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        auto j = json::parse(r.out);
        REQUIRE(j["argv"].size() == 6);
        CHECK(j["argv"][0] == "/usr/bin/sandbox-exec");
        CHECK(j["argv"][1] == "-p");
        CHECK(j["argv"][3] == "--");
        CHECK(j["argv"][4] == "echo");
        CHECK(j["runner"] == "seatbelt");
        CHECK(j["denial_signatures"] == json::array({"operation not permitted", "eperm", "eacces"}));
        CHECK(j["failure_rule"]["fatal_signatures"] == json::array({"sandbox-exec: "}));
        // The profile allows signals to the user's other processes: processes is none, so
        // the enforcement is partial, and a run needs [policy.enforcement] processes = "best-effort".
        CHECK(j["enforcement"] == "partial");
        CHECK(j["dimensions"]["write"] == "full");
        CHECK(j["dimensions"]["processes"] == "none");
        return j["argv"][2].get<std::string>();
    }
};

// What Guile reads in `profile`: one line per top-level form, strings as hex.
std::vector<std::string> guile_reading(const std::string& profile) {
    if (!fs::exists("/usr/bin/guile")) test::skip_test("needs guile (Debian package guile-3.0) as the independent profile reader");
    test::TempDir dir;
    const fs::path file = dir / "profile.sb";
    test::write_file(file, profile);
    auto r = test::run({"/usr/bin/guile", "--no-auto-compile", "-s", SBPL_READER, file.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::vector<std::string> expected_reading(const std::vector<std::string>& roots) {
    std::vector<std::string> out{"(version 1)", "(allow default)", "(deny network*)", "(deny file-write*)",
                                 "(allow file-write* (literal \"" + hex("/dev/null") + "\"))"};
    for (const auto& r : roots) out.push_back("(allow file-write* (subpath \"" + hex(r) + "\"))");
    return out;
}

}  // namespace

TEST_CASE("seatbelt string literals: escaped, or refused with the reason", "[seatbelt]") {
    CHECK(sb::string_literal("/plain/path") == "\"/plain/path\"");
    CHECK(sb::string_literal("/a\"b") == "\"/a\\\"b\"");
    CHECK(sb::string_literal("/a\\b") == "\"/a\\\\b\"");
    CHECK(sb::string_literal("/a)b;c(d") == "\"/a)b;c(d\"");
    CHECK(sb::string_literal("/caf\xc3\xa9/\xe4\xb8\xad") == "\"/caf\xc3\xa9/\xe4\xb8\xad\"");
    CHECK(sb::string_literal(std::string("/a\0b", 4)).error() == "contains a NUL byte");
    CHECK(sb::string_literal("/a\nb").error() == "contains a control character (such as a newline or a tab)");
    CHECK(sb::string_literal("/a\tb").error() == "contains a control character (such as a newline or a tab)");
    CHECK(sb::string_literal("/a\x7f").error() == "contains a control character (such as a newline or a tab)");
    CHECK(sb::string_literal("/a\xff").error() == "is not valid UTF-8");
    CHECK(sb::string_literal("/a\xc0\xaf").error() == "is not valid UTF-8");      // overlong '/'
    CHECK(sb::string_literal("/a\xed\xa0\x80").error() == "is not valid UTF-8");  // a surrogate
    CHECK(sb::string_literal("/a\xe4\xb8").error() == "is not valid UTF-8");      // cut short
    // Equal policies give equal profiles: sorted and de-duplicated.
    CHECK(sb::profile({"/b", "/a", "/b"}) == sb::profile({"/a", "/b"}));
    CHECK(sb::profile({"/x\ny"}).error() == "writable root /x\ny contains a control character (such as a newline or a tab)");
}

TEST_CASE("seatbelt profiles per mode and policy match their golden files", "[seatbelt]") {
    // Roots that exist, canonical, on any Debian system, and that a policy may make
    // writable (a system directory such as /usr/share would be refused); none of them
    // may hold the build tree, whose plugins a run refuses to load from its own roots.
    Seatbelt s("user_temp_dir = \"/var/cache\"\n");
    auto golden = [](const std::string& name) { return test::read_file(fs::path(GOLDEN_DIR) / "seatbelt" / name); };
    CHECK(s.profile({"--mode", "read-only"}) == golden("read-only.sb"));
    CHECK(s.profile({"--workspace", "/var/backups"}) == golden("workspace-write.sb"));
    CHECK(s.profile({"--workspace", "/var/backups", "--writable", "/var/opt", "--writable", "/var/local"}) == golden("workspace-write-extra.sb"));
    // The same root twice, or a root given twice, appears once.
    CHECK(s.profile({"--workspace", "/tmp", "--writable", "/tmp/"}) ==
          header + "(allow file-write* (subpath \"/tmp\"))\n(allow file-write* (subpath \"/var/cache\"))\n");
    // Without a per-user temp dir (Linux has none), only the workspace and /tmp.
    Seatbelt plain;
    CHECK(plain.profile({"--workspace", "/var/backups"}) == header + "(allow file-write* (subpath \"/tmp\"))\n(allow file-write* (subpath \"/var/backups\"))\n");
    CHECK(plain.profile({"--mode", "read-only"}) == header);
    // With the network allowed, no network rule at all.
    CHECK(plain.profile({"--mode", "read-only", "--network", "allow"}) ==
          "(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write* (literal \"/dev/null\"))\n");
}

TEST_CASE("hostile paths stay one string each: an independent reader sees exactly the intended rules", "[seatbelt][guile]") {
    test::TempDir base("/var/tmp");
    // Directory names that try to close the string, close the rule, comment out the rest,
    // escape, or add a rule of their own — and plain non-ASCII text.
    const std::vector<std::string> names{"quote\"d",
                                         "back\\slash",
                                         "paren)s(",
                                         "semi;colon",
                                         "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87",
                                         "x\") (allow file-write* (subpath \"",
                                         "y\\\") (allow file-write* (subpath \"\")) (deny \"",
                                         "trailing\\"};
    std::vector<std::string> flags{"--workspace", base.path().string()}, roots{base.path().string(), "/tmp"};
    for (const auto& n : names) {
        const fs::path d = base / n;
        fs::create_directory(d);
        flags.insert(flags.end(), {"--writable", d.string()});
        roots.push_back(d.string());
    }
    std::sort(roots.begin(), roots.end());
    Seatbelt s;
    const std::string profile = s.profile(flags);
    CHECK(guile_reading(profile) == expected_reading(roots));
}

TEST_CASE("seatbelt refuses a root it cannot put in a profile, and names it", "[seatbelt]") {
    test::TempDir base("/var/tmp");
    Seatbelt s;
    const fs::path newline = base / "new\nline", bad_utf8 = base / "bad\xff";
    fs::create_directory(newline);
    fs::create_directory(bad_utf8);
    auto r = s.wrap({"--workspace", base.path().string(), "--writable", newline.string()});
    CHECK(r.exit_code == 125);
    CHECK(test::line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("contains a control character (such as a newline or a tab)"));
    r = s.wrap({"--workspace", base.path().string(), "--writable", bad_utf8.string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("is not valid UTF-8"));
}

TEST_CASE("seatbelt roots are canonical: symlinks resolved, '..' resolved as the file system says", "[seatbelt]") {
    test::TempDir base("/var/tmp");
    fs::create_directories(base / "real" / "ws");
    fs::create_directories(base / "elsewhere" / "deep");
    fs::create_directory_symlink(base / "real" / "ws", base / "ws-link");
    fs::create_directory_symlink(base / "elsewhere" / "deep", base / "real" / "jump");
    Seatbelt s;
    // Reached through a symlink: the resolved path, and only it.
    const std::string p = s.profile({"--workspace", (base / "ws-link").string()});
    CHECK_THAT(p, Catch::Contains("(subpath \"" + (base / "real" / "ws").string() + "\")"));
    CHECK_THAT(p, !Catch::Contains("ws-link"));

    // Through the library, '..' after a symlink is resolved physically (the parent of
    // the link's target), and a relative root is refused before any runner sees it.
    auto config = confine::parse_config("[platform.linux]\nchain = [\"landlock\"]\n", "test.toml");
    REQUIRE(config);
    confine::ProviderOptions options;
    options.builtin_plugin_dirs = {s.confine.plugin_dir()};
    auto provider = confine::Provider::create(std::move(*config), options);
    REQUIRE(provider);
    const std::vector<std::string> argv{"true"};
    auto dotdot = (*provider)->wrap_with("seatbelt", {confine::Mode::workspace_write, base / "real" / "jump" / "..", {}}, argv);
    REQUIRE(dotdot);
    CHECK_THAT(dotdot->argv[2], Catch::Contains("(subpath \"" + (base / "elsewhere").string() + "\")"));
    auto relative = (*provider)->wrap_with("seatbelt", {confine::Mode::workspace_write, "relative/ws", {}}, argv);
    REQUIRE_FALSE(relative);
    CHECK(relative.error().code == confine::ErrorCode::invalid_policy);
}

TEST_CASE("seatbelt's probe confines true with the read-only profile, in a longer chain", "[seatbelt]") {
    test::Installed confine;
    test::TempDir programs("/var/tmp");
    fs::permissions(programs.path(), fs::perms(0755));
    const fs::path log = confine.scratch("sandbox-exec.log");
    // A stand-in for sandbox-exec: records its arguments, then runs what follows "--".
    const fs::path fake = programs / "sandbox-exec";
    test::write_file(fake,
                     "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n---\\n' \"$a\"; done > " + log.string() +
                         "\nwhile [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n",
                     fs::perms(0755));
    const fs::path cfg = confine.scratch("c.toml");
    // Below the default minimum for processes, it is skipped in the chain, with that reason.
    test::write_file(cfg, "[platform.linux]\nchain = [\"seatbelt\", \"landlock\"]\n[runner.seatbelt]\nprogram = \"" + fake.string() + "\"\n");
    auto skipped = json::parse(confine.run({"probe", "--json", "--config", cfg.string()}).out);
    CHECK(skipped["runners"][0]["verdict"] == "unusable");
    CHECK(skipped["runners"][0]["reason"] ==
          "runner 'seatbelt' enforces processes at level none, below the minimum partial ([policy.enforcement] processes)");
    CHECK(skipped["runners"][1]["runner"] == "landlock");
    // Accepted as best-effort, it is probed and selected.
    test::write_file(cfg, "[platform.linux]\nchain = [\"seatbelt\", \"landlock\"]\n[runner.seatbelt]\nprogram = \"" + fake.string() +
                              "\"\n[policy.enforcement]\nprocesses = \"best-effort\"\n");
    auto j = json::parse(confine.run({"probe", "--json", "--config", cfg.string()}).out);
    CHECK(j["runners"][0]["runner"] == "seatbelt");
    CHECK(j["runners"][0]["probed"] == true);
    CHECK(j["runners"][0]["verdict"] == "full");
    CHECK(j["selected"] == "seatbelt");
    CHECK(test::read_file(log) == "-p\n---\n" + header + "\n---\n--\n---\n/usr/bin/true\n---\n");

    // What sandbox-exec says when it cannot apply a profile is the reason.
    test::write_file(fake, "#!/bin/sh\necho 'sandbox-exec: sandbox_apply: Operation not permitted' >&2\nexit 71\n", fs::perms(0755));
    j = json::parse(confine.run({"probe", "--json", "--config", cfg.string()}).out);
    CHECK(j["runners"][0]["verdict"] == "unusable");
    CHECK(j["runners"][0]["reason"] == "sandbox-exec: sandbox_apply: Operation not permitted");

    // Alone in its chain it is selected without a probe (docs/design.md §3), and where
    // sandbox-exec does not exist a run fails closed.
    test::write_file(cfg, "[platform.linux]\nchain = [\"seatbelt\"]\n[runner.seatbelt]\nprogram = \"" + confine.scratch("absent").string() +
                              "\"\n[policy.enforcement]\nprocesses = \"best-effort\"\n");
    test::TempDir ws("/var/tmp");
    auto r = confine.run({"run", "--config", cfg.string(), "--workspace", ws.path().string(), "--", "/usr/bin/touch", (ws / "ran").string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::StartsWith("confinectl: sandbox unavailable: cannot start runner 'seatbelt'"));
    CHECK_FALSE(fs::exists(ws / "ran"));
}

TEST_CASE("confinectl wrap --runner wraps with any runner for review, and names a missing one in one line", "[seatbelt][cli]") {
    Seatbelt s;
    auto r = s.confine.run({"wrap", "--json", "--runner", "nosuch", "--config", s.config.string(), "--", "true"});
    CHECK(r.exit_code == 125);
    CHECK(test::line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("confinectl: sandbox unavailable: runner 'nosuch' cannot be used: no plugin for runner 'nosuch'"));
    r = s.confine.run({"wrap", "--json", "--runner", "seatbelt", "--config", s.config.string(), "--mode", "read-only"});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("no command given"));
}

// --- macOS only: the real sandbox-exec.

namespace {

// What Seatbelt does in the confinement matrix (scenarios.hpp), with confinectl's
// default configuration (seatbelt alone on macOS): the host's /tmp and /dev, denials in
// its own dialect, no attestation yet (the failure rule alone judges, README), and the
// command's signal passed on as confinectl's own (sandbox-exec execs the command).
const test::RunnerExpectations seatbelt{.name = "seatbelt",
                                        .runner = "seatbelt",
                                        .config = "",
                                        .require = nullptr,
                                        .denial = "Operation not permitted",
                                        .fatal_signature = "sandbox-exec: ",
                                        .basis = test::Basis::rule,
                                        .tmp = test::Tmp::the_hosts,
                                        .dev = test::Dev::the_hosts,
                                        .move = test::MoveFromOutside::leaves_nothing,
                                        .killed = test::Killed::by_the_same_signal,
                                        .reports = test::Reports::when_asked};

}  // namespace

TEST_CASE("seatbelt confines writes with the real sandbox-exec", "[seatbelt][e2e][macos]") {
#if !defined(__APPLE__)
    (void)seatbelt;
    test::skip_on_other_platforms("needs macOS and /usr/bin/sandbox-exec");
#else
    test::run_matrix(seatbelt, test::User::caller);
    // Beyond the matrix: the per-user temporary directory ($TMPDIR) is granted too.
    test::Installed confine;
    test::TempDir ws;
    auto r = confine.run({"run", "--workspace", ws.path().string(), "--", "/bin/sh", "-c",
                          "f=$(mktemp \"${TMPDIR:-/tmp}/confine-sb-XXXXXX\") && echo y > \"$f\" && rm \"$f\""});
    CHECK(r.exit_code == 0);
#endif
}
