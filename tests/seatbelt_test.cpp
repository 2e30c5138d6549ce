// The Seatbelt runner without a Mac: its profiles (golden files; an independent
// S-expression reader, Guile, checking structure and bytes), string literals that no
// path can break out of, canonical roots from real symlinks, the probe in a longer
// chain through a stand-in sandbox-exec, and `confinectl wrap --runner seatbelt` on any
// OS. The end-to-end tests with the real sandbox-exec run on macOS only.
#include "sbpl.hpp"
#include "scenarios.hpp"
#include "observed.hpp"
#include "support.hpp"

#include <confine/config.hpp>
#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <tuple>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;
namespace sb = confine::seatbelt;

namespace {

// What every profile carries, written out here rather than taken from sbpl.hpp: the
// operations through which a host service would write for the command, and the devices
// whose data may be written.
const std::string services = "(deny file-mount file-unmount)\n(deny user-preference-write)\n(deny job-creation lsopen appleevent-send)\n";
const std::string devices =
    "(allow file-write-data (literal \"/dev/null\") (literal \"/dev/ptmx\") (literal \"/dev/stderr\") (literal \"/dev/stdout\") (literal \"/dev/tty\"))\n"
    "(allow file-write-data (regex #\"^/dev/fd/[0-9]+$\") (regex #\"^/dev/ttys[0-9]+$\"))\n";
const std::string header = "(version 1)\n(allow default)\n(deny network*)\n" + services + "(deny file-write*)\n" + devices;

// The write and hard-link grants for `roots`, in the order given.
std::string grants(const std::vector<std::string>& roots) {
    std::string out;
    for (const auto& r : roots) out += "(allow file-write* (subpath \"" + r + "\"))\n";
    out += "(deny file-link)\n";
    for (const auto& r : roots) out += "(allow file-link (subpath \"" + r + "\"))\n";
    return out;
}

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
    // Without the default deny_read and protect lists (the caller's ~/.ssh may exist or
    // not): a test that wants some names them.
    explicit Seatbelt(const std::string& settings = "", const std::string& policy = "deny_read = []\nprotect = []\n") {
        test::write_file(config, "[platform.linux]\nchain = [\"landlock\"]\n[policy]\n" + policy + "[runner.seatbelt]\n" + settings);
    }
    test::Result wrap(const std::vector<std::string>& flags) const {
        std::vector<std::string> args{"wrap", "--json", "--runner", "seatbelt", "--config", config.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "echo", "hi"});
        return confine.run(args);
    }
    // The seatbelt runner's wrap of `argv` through the library, as the plugin makes it.
    std::expected<confine::WrapResult, confine::Error> library_wrap(const confine::Policy& policy, const std::vector<std::string>& argv) const {
        auto parsed = confine::parse_config("[platform.linux]\nchain = [\"landlock\"]\n", "test.toml");
        REQUIRE(parsed);
        confine::ProviderOptions options;
        options.builtin_plugin_dirs = {confine.plugin_dir()};
        auto provider = confine::Provider::create(std::move(*parsed), options);
        REQUIRE(provider);
        return (*provider)->wrap_with("seatbelt", confine::PolicyRequest(policy), argv);
    }
    std::string profile(const std::vector<std::string>& flags) const {
        auto r = wrap(flags);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        auto j = json::parse(r.out);
        REQUIRE(j["argv"].size() == 11);
        CHECK(j["argv"][0] == "/usr/bin/sandbox-exec");
        CHECK(j["argv"][1] == "-p");
        CHECK(j["argv"][3] == "--");
        // The attesting shell (sbpl.hpp), its status descriptor, then the command verbatim.
        CHECK(j["argv"][4] == "/bin/sh");
        CHECK(j["argv"][5] == "-c");
        CHECK(j["argv"][6] == std::string(confine::seatbelt::attestation_script));
        CHECK(j["argv"][7] == "{status-fd}");
        CHECK(j["argv"][8] == "--");
        CHECK(j["argv"][9] == "echo");
        CHECK(j["attestation"] == json({{"kind", "status_fd"}, {"status_argument", 7}, {"status_marker", std::string(confine::seatbelt::status_marker)},
                                         {"status_pid_key", nullptr}}));
        CHECK(j["runner"] == "seatbelt");
        json dialect = json::array({"operation not permitted", "eperm", "eacces"});
        if (j["dimensions"]["network"] == "full")  // the network confined: the tools' words for its absence too
            for (const auto& s : confine::sdk::network_denial_signatures()) dialect.push_back(s);
        CHECK(j["denial_signatures"] == dialect);
        CHECK(j["failure_rule"]["fatal_signatures"] == json::array({"sandbox-exec: "}));
        CHECK(j["failure_rule"]["evidence_exit_codes"] == json::array({65, 71}));
        // The profile allows signals to the user's other processes: processes is none, so
        // the enforcement is partial, and a run needs [policy.enforcement] processes = "best-effort".
        CHECK(j["enforcement"] == "partial");
        CHECK(j["dimensions"]["write"] == "full");
        CHECK(j["dimensions"]["processes"] == "none");
        // Every deny_read and protect path has its rules, or the wrap fails.
        CHECK((j["dimensions"]["read"] == "full" || j["dimensions"]["read"] == "not asked"));
        CHECK((j["dimensions"]["protect"] == "full" || j["dimensions"]["protect"] == "not asked"));
        // No supervisor of confine's for a host that runs the argv itself: lifetime none.
        CHECK(j["dimensions"]["lifetime"] == "none");
        CHECK_THAT(j["dimensions"]["open"].get<std::string>(),
                   Catch::StartsWith("processes: the profile allows signals to the user's other processes and mach-lookup of host services; lifetime: "));
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

// What Guile's reading of `profile` decides for each (operation, path), by the rules
// of tests/tools/sbpl-read.scm: "allow" or "deny".
std::vector<std::string> guile_decisions(const std::string& profile, const std::vector<std::pair<std::string, std::string>>& queries) {
    if (!fs::exists("/usr/bin/guile")) test::skip_test("needs guile (Debian package guile-3.0) as the independent profile reader");
    test::TempDir dir;
    const fs::path file = dir / "profile.sb";
    test::write_file(file, profile);
    std::vector<std::string> argv{"/usr/bin/guile", "--no-auto-compile", "-s", SBPL_READER, file.string(), "--decide"};
    for (const auto& [op, path] : queries) argv.insert(argv.end(), {op, path});
    auto r = test::run(argv);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    REQUIRE(lines.size() == queries.size());
    return lines;
}

// Each (operation, path) must be decided as `expected` says.
void check_decisions(const std::string& profile, const std::vector<std::tuple<std::string, std::string, std::string>>& expected) {
    std::vector<std::pair<std::string, std::string>> queries;
    for (const auto& [op, path, want] : expected) queries.emplace_back(op, path);
    const auto got = guile_decisions(profile, queries);
    INFO(profile);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto& [op, path, want] = expected[i];
        INFO(op << " " << path);
        CHECK(got[i] == want);
    }
}

std::vector<std::string> expected_reading(const std::vector<std::string>& roots) {
    auto literal = [](const char* path) { return "(literal \"" + hex(path) + "\")"; };
    std::vector<std::string> out{"(version 1)",
                                 "(allow default)",
                                 "(deny network*)",
                                 "(deny file-mount file-unmount)",
                                 "(deny user-preference-write)",
                                 "(deny job-creation lsopen appleevent-send)",
                                 "(deny file-write*)",
                                 "(allow file-write-data " + literal("/dev/null") + " " + literal("/dev/ptmx") + " " + literal("/dev/stderr") + " " +
                                     literal("/dev/stdout") + " " + literal("/dev/tty") + ")",
                                 "(allow file-write-data (regex #\"" + hex("^/dev/fd/[0-9]+$") + "\") (regex #\"" + hex("^/dev/ttys[0-9]+$") + "\"))"};
    for (const auto& r : roots) out.push_back("(allow file-write* (subpath \"" + hex(r) + "\"))");
    out.push_back("(deny file-link)");
    for (const auto& r : roots) out.push_back("(allow file-link (subpath \"" + hex(r) + "\"))");
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
    CHECK(s.profile({"--workspace", "/tmp", "--writable", "/tmp/"}) == header + grants({"/tmp", "/var/cache"}));
    // Without a per-user temp dir (Linux has none), only the workspace and /tmp.
    Seatbelt plain;
    CHECK(plain.profile({"--workspace", "/var/backups"}) == header + grants({"/tmp", "/var/backups"}));
    CHECK(plain.profile({"--mode", "read-only"}) == header + "(deny file-link)\n");
    // With the network allowed, no network rule at all.
    CHECK(plain.profile({"--mode", "read-only", "--network", "allow"}) ==
          "(version 1)\n(allow default)\n" + services + "(deny file-write*)\n" + devices + "(deny file-link)\n");
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

TEST_CASE("seatbelt deny_read and protect rules come after the allows, each list sorted", "[seatbelt]") {
    sb::Request r{{"/w", "/tmp", "/tmp/ws"}, false, {"/home/u/.ssh", "/w/.env", "/home/u/.aws", "/w/.env"}, {"/tmp/ws/.git/hooks", "/w/.git/config"}};
    CHECK(sb::profile(r) == "(version 1)\n(allow default)\n" + services + "(deny file-write*)\n" + devices + grants({"/tmp", "/tmp/ws", "/w"}) +
                            "(deny file-read* file-link file-clone network-outbound (subpath \"/home/u/.aws\"))\n"
                            "(deny file-read* file-link file-clone network-outbound (subpath \"/home/u/.ssh\"))\n"
                            "(deny file-read* file-link file-clone network-outbound (subpath \"/w/.env\"))\n"
                            "(deny file-write* file-link (subpath \"/tmp/ws/.git/hooks\"))\n"
                            "(deny file-write* file-link (subpath \"/w/.git/config\"))\n"
                            "(deny file-write-unlink (subpath \"/w/.env\"))\n"
                            // The workspace lies inside /tmp: it, too, could be renamed away.
                            "(deny file-write-unlink (literal \"/tmp/ws\"))\n"
                            "(deny file-write-unlink (literal \"/tmp/ws/.git\"))\n"
                            "(deny file-write-unlink (literal \"/w/.git\"))\n");
    // Ancestors: strictly inside a root, never the root itself, never a sibling that shares a prefix.
    CHECK(sb::movable_ancestors("/w/a/b/c", {"/w"}) == std::vector<std::string>{"/w/a/b", "/w/a"});
    CHECK(sb::movable_ancestors("/w/a", {"/w"}).empty());
    CHECK(sb::movable_ancestors("/wx/a/b", {"/w"}).empty());
    CHECK(sb::movable_ancestors("/home/u/.ssh", {"/w", "/tmp"}).empty());
    CHECK(sb::within("/w/a", "/w"));
    CHECK(sb::within("/w", "/w"));
    CHECK_FALSE(sb::within("/wx", "/w"));
    // Nothing that cannot be one string, nothing relative.
    CHECK(sb::profile(sb::Request{{}, true, {"/a\nb"}, {}}).error() == "deny_read path /a\nb contains a control character (such as a newline or a tab)");
    CHECK(sb::profile(sb::Request{{"/w"}, true, {}, {"/w/\xff"}}).error() == "protect path /w/\xff is not valid UTF-8");
    CHECK(sb::profile(sb::Request{{}, true, {"relative"}, {}}).error() == "deny_read path relative is not an absolute path");
    CHECK(sb::profile(sb::Request{{}, true, {""}, {}}).error() == "deny_read path  is not an absolute path");
}

TEST_CASE("a seatbelt profile with deny_read and protect matches its golden file", "[seatbelt]") {
    // What a Mac's policy gives under the defaults: a workspace with git's files
    // protected and a secret of its own, the credential stores denied.
    const std::string ws = "/Users/me/src/project";
    sb::Request r{{ws, "/private/tmp", "/private/var/folders/xy/abc123/T"},
                  true,
                  {"/Users/me/.ssh", "/Users/me/.aws", "/Users/me/.netrc", ws + "/.env"},
                  {ws + "/.git/hooks", ws + "/.git/config", ws + "/.gitmodules"}};
    CHECK(sb::profile(r) == test::read_file(fs::path(GOLDEN_DIR) / "seatbelt" / "deny-read-protect.sb"));
    // And through confinectl: both dimensions full when asked, "not asked" otherwise.
    const test::Tree tree{false};
    const test::TempDir& base = tree.root;
    fs::create_directories(tree.ws / ".git" / "hooks");
    fs::create_directories(tree.home / ".ssh");
    Seatbelt s;
    auto j = json::parse(s.wrap({"--workspace", (base / "ws").string(), "--deny-read", (base / "home" / ".ssh").string(), "--protect",
                                 (base / "ws" / ".git" / "hooks").string()})
                             .out);
    CHECK(j["dimensions"]["read"] == "full");
    CHECK(j["dimensions"]["protect"] == "full");
    CHECK(j["enforcement"] == "partial");  // processes, as always
    j = json::parse(s.wrap({"--workspace", (base / "ws").string()}).out);
    CHECK(j["dimensions"]["read"] == "not asked");
    CHECK(j["dimensions"]["protect"] == "not asked");
}

TEST_CASE("the independent reader proves what deny_read and protect deny, and what they leave alone", "[seatbelt][guile]") {
    const test::Tree tree{false};
    const fs::path home = tree.home, ws = tree.ws;
    for (const auto& d : {home / ".ssh", home / ".sshx", ws / ".git" / "hooks", ws / ".git" / "objects", ws / ".git" / "refs" / "heads", ws / "src"})
        fs::create_directories(d);
    for (const auto& f : {home / ".ssh" / "id_ed25519", home / ".ssh" / "agent.sock", home / ".sshx" / "key", home / ".bashrc", ws / ".env",
                          ws / ".env.example", ws / ".git" / "config", ws / ".git" / "index", ws / ".git" / "hooks" / "pre-commit.sample",
                          ws / "src" / "main.c"})
        test::write_file(f, "x\n");
    // The default protect list (git's hooks and configuration, resolved in the
    // workspace), and the secrets named on the command line.
    Seatbelt s("", "deny_read = []\nprotect = [\".git/hooks\", \".git/config\", \".gitmodules\"]\n");
    const std::vector<std::string> flags{"--workspace", ws.string(), "--deny-read", (home / ".ssh").string(), "--deny-read", (ws / ".env").string()};
    const std::string p = s.profile(flags);
    auto with_network = flags;
    with_network.insert(with_network.end(), {"--network", "allow"});
    const std::string open_network = s.profile(with_network);
    const std::string h = home.string(), w = ws.string();
    const std::vector<std::tuple<std::string, std::string, std::string>> expected{
        // A denied file cannot be read, nor its metadata; a denied directory cannot be listed.
        {"file-read-data", h + "/.ssh/id_ed25519", "deny"},
        {"file-read-metadata", h + "/.ssh/id_ed25519", "deny"},
        {"file-read-xattr", h + "/.ssh/id_ed25519", "deny"},
        {"file-read-data", h + "/.ssh", "deny"},
        {"file-read-data", w + "/.env", "deny"},
        // ... nor given a second name to be read by.
        {"file-link", h + "/.ssh/id_ed25519", "deny"},
        {"file-clone", h + "/.ssh/id_ed25519", "deny"},
        {"file-link", w + "/.env", "deny"},
        // A secret in the workspace cannot be moved away to be read elsewhere.
        {"file-write-unlink", w + "/.env", "deny"},
        // Siblings stay readable, a name that merely begins the same way included.
        {"file-read-data", h + "/.sshx/key", "allow"},
        {"file-read-data", h + "/.bashrc", "allow"},
        {"file-read-data", h, "allow"},
        {"file-read-data", w + "/.env.example", "allow"},
        {"file-read-data", w + "/src/main.c", "allow"},
        // A protected hook cannot be written, created, removed, renamed, linked, chmod-ed.
        {"file-write-data", w + "/.git/hooks/pre-commit.sample", "deny"},
        {"file-write-create", w + "/.git/hooks/pre-commit", "deny"},
        {"file-write-unlink", w + "/.git/hooks/pre-commit.sample", "deny"},
        {"file-write-unlink", w + "/.git/hooks", "deny"},
        {"file-write-mode", w + "/.git/hooks/pre-commit.sample", "deny"},
        {"file-write-xattr", w + "/.git/hooks/pre-commit.sample", "deny"},
        {"file-write-flags", w + "/.git/hooks/pre-commit.sample", "deny"},
        {"file-link", w + "/.git/hooks/pre-commit.sample", "deny"},
        {"file-write-data", w + "/.git/config", "deny"},
        {"file-write-unlink", w + "/.git/config", "deny"},
        {"file-write-mode", w + "/.git/config", "deny"},
        {"file-link", w + "/.git/config", "deny"},
        // mv ws/.git ws/.git2 && mkdir -p ws/.git/hooks: the rename is denied.
        {"file-write-unlink", w + "/.git", "deny"},
        // Protected means read-only, not hidden.
        {"file-read-data", w + "/.git/config", "allow"},
        {"file-read-data", w + "/.git/hooks/pre-commit.sample", "allow"},
        // The rest of the workspace stays writable.
        {"file-write-data", w + "/src/main.c", "allow"},
        {"file-write-create", w + "/src/new.c", "allow"},
        {"file-write-unlink", w + "/src/main.c", "allow"},
        {"file-write-unlink", w + "/src", "allow"},
        {"file-write-mode", w + "/src/main.c", "allow"},
        // ... and git keeps working: objects, refs, the index through its lock.
        {"file-write-create", w + "/.git/objects/ab", "allow"},
        {"file-write-create", w + "/.git/objects/ab/cdef0123", "allow"},
        {"file-write-create", w + "/.git/refs/heads/new", "allow"},
        {"file-write-data", w + "/.git/refs/heads/new", "allow"},
        {"file-write-create", w + "/.git/index.lock", "allow"},
        {"file-write-unlink", w + "/.git/index.lock", "allow"},
        {"file-write-unlink", w + "/.git/index", "allow"},
        {"file-write-create", w + "/.git/index", "allow"},
        {"file-write-create", w + "/.git/hooksx", "allow"},
        // Outside the writable roots, nothing changed.
        {"file-write-data", h + "/.bashrc", "deny"},
        {"file-write-data", "/dev/null", "allow"},
    };
    check_decisions(p, expected);
    check_decisions(open_network, expected);
    // A socket under a denied path cannot be reached, even with the network allowed;
    // other sockets can.
    check_decisions(open_network, {{"network-outbound", h + "/.ssh/agent.sock", "deny"},
                                   {"network-outbound", h + "/.sshx/agent.sock", "allow"},
                                   {"file-read-data", h + "/.ssh/agent.sock", "deny"}});
    check_decisions(p, {{"network-outbound", h + "/.sshx/agent.sock", "deny"}});
}

TEST_CASE("hard links are made only between writable roots, so nothing outside is written through one", "[seatbelt][guile]") {
    // The Mac-shaped golden profile: workspace, /private/tmp and the per-user temp dir
    // writable, the default secrets denied and git's files protected. Seatbelt checks
    // link(2) as file-link against the existing name and against the new one: a link is
    // made only if both are allowed.
    const std::string p = test::read_file(fs::path(GOLDEN_DIR) / "seatbelt" / "deny-read-protect.sb");
    const std::string w = "/Users/me/src/project", t = "/private/var/folders/xy/abc123/T";
    check_decisions(p, {// ln ~/.zshrc ws/x: the new name is in the workspace, the file is not.
                        {"file-link", "/Users/me/.zshrc", "deny"},
                        {"file-link", w + "/x", "allow"},
                        {"file-link", "/private/etc/hosts", "deny"},
                        // Within the workspace, and between writable roots (a package
                        // manager's store in the temp dir linked into the workspace).
                        {"file-link", w + "/node_modules/.store/a", "allow"},
                        {"file-link", "/private/tmp/build/a.o", "allow"},
                        {"file-link", t + "/cache/wheel", "allow"},
                        // Out of the workspace: the new name is outside, and so is its creation.
                        {"file-link", "/Users/me/Desktop/x", "deny"},
                        {"file-write-create", "/Users/me/Desktop/x", "deny"},
                        // Neither a secret nor a protected file gets a second name, even
                        // within the workspace.
                        {"file-link", "/Users/me/.ssh/id_ed25519", "deny"},
                        {"file-link", w + "/.env", "deny"},
                        {"file-link", w + "/.git/hooks/pre-commit", "deny"},
                        {"file-link", w + "/.git/config", "deny"},
                        // A name that merely begins like a root is outside it.
                        {"file-link", w + "-old/x", "deny"}});
    // Read-only: no hard link anywhere.
    Seatbelt s;
    check_decisions(s.profile({"--mode", "read-only"}), {{"file-link", "/tmp/a", "deny"}, {"file-link", "/var/tmp/b", "deny"}});
}

TEST_CASE("mounts, preference writes, launchd jobs, LaunchServices and Apple Events are denied in every profile", "[seatbelt][guile]") {
    Seatbelt s;
    test::TempDir ws("/var/tmp");
    const std::string w = fs::canonical(ws.path()).string();
    for (const auto& flags : std::vector<std::vector<std::string>>{{"--mode", "read-only"},
                                                                   {"--workspace", w},
                                                                   {"--workspace", w, "--network", "allow"}}) {
        const std::string p = s.profile(flags);
        check_decisions(p, {// mount(2) over the workspace or anywhere else, and unmount.
                            {"file-mount", w, "deny"},
                            {"file-mount", "/Volumes/stick", "deny"},
                            {"file-unmount", "/Volumes/stick", "deny"},
                            // cfprefsd writes no domain for the command (`defaults write`);
                            // reading preferences stays allowed.
                            {"user-preference-write", "com.apple.dock", "deny"},
                            {"user-preference-write", "org.example.app", "deny"},
                            {"user-preference-read", "com.apple.dock", "allow"},
                            // Nothing outside the sandbox starts or acts for it.
                            {"job-creation", "org.example.job", "deny"},
                            {"lsopen", "/Users/me/x.command", "deny"},
                            {"appleevent-send", "com.apple.Terminal", "deny"},
                            // What stays allowed is not touched by these rules.
                            {"process-exec", "/bin/sh", "allow"},
                            {"file-read-data", "/etc/hosts", "allow"}});
    }
}

TEST_CASE("the terminal, standard output and error and pseudo-terminals are writable, the rest of /dev is not", "[seatbelt][guile]") {
    Seatbelt s;
    test::TempDir ws("/var/tmp");
    for (const auto& flags : std::vector<std::vector<std::string>>{{"--mode", "read-only"}, {"--workspace", ws.path().string()}}) {
        const std::string p = s.profile(flags);
        check_decisions(p, {{"file-write-data", "/dev/null", "allow"},
                            {"file-write-data", "/dev/stdout", "allow"},
                            {"file-write-data", "/dev/stderr", "allow"},
                            {"file-write-data", "/dev/fd/1", "allow"},
                            {"file-write-data", "/dev/fd/2", "allow"},
                            {"file-write-data", "/dev/fd/17", "allow"},
                            {"file-write-data", "/dev/tty", "allow"},
                            {"file-write-data", "/dev/ptmx", "allow"},
                            {"file-write-data", "/dev/ttys000", "allow"},
                            {"file-write-data", "/dev/ttys003", "allow"},
                            // Disks, memory, other devices, BSD-style ptys: not writable.
                            {"file-write-data", "/dev/disk0", "deny"},
                            {"file-write-data", "/dev/rdisk0s1", "deny"},
                            {"file-write-data", "/dev/mem", "deny"},
                            {"file-write-data", "/dev/ttyp0", "deny"},
                            {"file-write-data", "/dev/ptyp0", "deny"},
                            {"file-write-data", "/dev/tty.Bluetooth-Incoming-Port", "deny"},
                            {"file-write-data", "/dev/cu.usbserial", "deny"},
                            // Only the exact names the patterns mean.
                            {"file-write-data", "/dev/ttys", "deny"},
                            {"file-write-data", "/dev/ttys003x", "deny"},
                            {"file-write-data", "/dev/ttys003/x", "deny"},
                            {"file-write-data", "/dev/fd", "deny"},
                            {"file-write-data", "/dev/fd/1/x", "deny"},
                            {"file-write-data", "/dev/fd/x", "deny"},
                            {"file-write-data", "/dev/nullx", "deny"},
                            {"file-write-data", "/dev/tty/x", "deny"},
                            // Data only: no device node is created, removed, renamed or changed.
                            {"file-write-create", "/dev/null", "deny"},
                            {"file-write-unlink", "/dev/null", "deny"},
                            {"file-write-create", "/dev/evil", "deny"},
                            {"file-write-mode", "/dev/tty", "deny"},
                            {"file-write-owner", "/dev/ttys003", "deny"},
                            {"file-write-unlink", "/dev/stdout", "deny"},
                            {"file-write-times", "/dev/fd/1", "deny"},
                            {"file-link", "/dev/null", "deny"}});
    }
}

TEST_CASE("the profile reader refuses what it cannot judge", "[seatbelt][guile]") {
    if (!fs::exists("/usr/bin/guile")) test::skip_test("needs guile (Debian package guile-3.0) as the independent profile reader");
    test::TempDir dir;
    auto judged = [&](const std::string& profile) {
        const fs::path file = dir / "profile.sb";
        test::write_file(file, profile);
        return test::run({"/usr/bin/guile", "--no-auto-compile", "-s", SBPL_READER, file.string(), "--decide", "file-write-data", "/w/x"});
    };
    const std::string base = "(version 1)\n(allow default)\n";
    CHECK(judged(base + "(deny file-write*)\n(allow file-write* (subpath \"/w\"))\n").out == "allow\n");
    // An allow with a filter, then a deny without one: Homebrew's order. Whether the
    // later deny or the narrower allow wins is what Seatbelt's ranking decides, so the
    // reader gives no answer.
    auto ranked = judged(base + "(allow file-write* (subpath \"/w\"))\n(deny file-write*)\n");
    CHECK(ranked.exit_code != 0);
    CHECK_THAT(ranked.err, Catch::Contains("depends on how Seatbelt ranks rules"));
    // A filter it does not know, a regex spelt as a plain string, a form it does not know.
    CHECK(judged(base + "(deny file-write* (vnode-type REGULAR-FILE))\n").exit_code != 0);
    CHECK(judged(base + "(deny file-write* (regex \"^/w\"))\n").exit_code != 0);
    CHECK(judged(base + "(import \"system.sb\")\n").exit_code != 0);
    // A regex is a whole-path POSIX extended expression.
    CHECK(judged(base + "(deny file-write* (regex #\"^/w/[a-z]$\"))\n").out == "deny\n");
    CHECK(judged(base + "(deny file-write* (regex #\"^/w/[0-9]$\"))\n").out == "allow\n");
}

TEST_CASE("a workspace inside /tmp cannot be renamed away from its protected paths", "[seatbelt][guile]") {
    test::TempDir base("/tmp");
    const fs::path ws = base / "ws";
    fs::create_directories(ws / ".git" / "hooks");
    Seatbelt s("", "deny_read = []\nprotect = [\".git/hooks\"]\n");
    const std::string p = s.profile({"--workspace", ws.string()});
    const std::string b = fs::canonical(base.path()).string(), w = fs::canonical(ws).string();
    check_decisions(p, {{"file-write-unlink", w + "/.git/hooks", "deny"},
                        {"file-write-unlink", w + "/.git", "deny"},
                        {"file-write-unlink", w, "deny"},
                        {"file-write-unlink", b, "deny"},
                        {"file-write-create", w + "/.git/hooks/post-checkout", "deny"},
                        {"file-write-create", b + "/other", "allow"},
                        {"file-write-unlink", b + "/other", "allow"},
                        {"file-write-create", w + "/.git/HEAD.lock", "allow"}});
}

TEST_CASE("hostile deny_read and protect paths stay one string each", "[seatbelt][guile]") {
    test::TempDir base("/var/tmp");
    const fs::path ws = base / "ws";
    const std::string trap = "x\") (allow file-read* (subpath \"/\")) (allow file-write* (subpath \"/x";
    const fs::path secret = base / trap, hooks = ws / ("h\\\" ;(" + std::string(")"));
    fs::create_directories(secret);
    fs::create_directories(hooks);
    Seatbelt s;
    const std::string p = s.profile({"--workspace", ws.string(), "--deny-read", secret.string(), "--protect", hooks.string()});
    std::vector<std::string> expected = expected_reading({"/tmp", ws.string()});
    expected.push_back("(deny file-read* file-link file-clone network-outbound (subpath \"" + hex(secret.string()) + "\"))");
    expected.push_back("(deny file-write* file-link (subpath \"" + hex(hooks.string()) + "\"))");
    CHECK(guile_reading(p) == expected);
    check_decisions(p, {{"file-read-data", secret.string() + "/key", "deny"},
                        {"file-read-data", "/etc/hostname", "allow"},
                        {"file-write-data", hooks.string() + "/pre-commit", "deny"},
                        {"file-write-data", "/etc/hostname", "deny"},
                        {"file-write-data", ws.string() + "/x", "allow"}});
}

TEST_CASE("seatbelt refuses a deny_read or protect path it cannot put in a profile, and names it", "[seatbelt]") {
    test::TempDir base("/var/tmp");
    const fs::path ws = base / "ws", newline = base / "new\nline", bad_utf8 = ws / "bad\xff";
    fs::create_directories(ws);
    fs::create_directory(newline);
    fs::create_directory(bad_utf8);
    Seatbelt s;
    auto r = s.wrap({"--workspace", ws.string(), "--deny-read", newline.string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("deny_read path") && Catch::Contains("contains a control character (such as a newline or a tab)"));
    r = s.wrap({"--workspace", ws.string(), "--protect", bad_utf8.string()});
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.err, Catch::Contains("protect path") && Catch::Contains("is not valid UTF-8"));
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
    auto dotdot = s.library_wrap({confine::Mode::workspace_write, base / "real" / "jump" / "..", {}}, {"true"});
    REQUIRE(dotdot);
    CHECK_THAT(dotdot->argv[2], Catch::Contains("(subpath \"" + (base / "elsewhere").string() + "\")"));
    auto relative = s.library_wrap({confine::Mode::workspace_write, "relative/ws", {}}, {"true"});
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
    CHECK(test::read_file(log) == "-p\n---\n" + header + "(deny file-link)\n\n---\n--\n---\n/usr/bin/true\n---\n");

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

namespace {

using test::exited;
using test::Seen;

confine::Outcome judged(const confine::WrapResult& w, Seen seen) { return test::classified(w, std::move(seen)); }

// The seatbelt runner's wrap result, as the plugin makes it.
confine::WrapResult seatbelt_wrap(const Seatbelt& s, const fs::path& ws) {
    auto w = s.library_wrap({confine::Mode::workspace_write, ws, {}}, {"true"});
    REQUIRE(w);
    return *w;
}

}  // namespace

TEST_CASE("sandbox-exec's own failures at 65 and 71 are the runner's, as its line says", "[seatbelt][classify]") {
    Seatbelt s;
    test::TempDir ws("/var/tmp");
    const auto w = seatbelt_wrap(s, ws.path());
    CHECK(w.failure_rule.evidence_exit_codes == std::vector<std::int32_t>{65, 71});
    CHECK(w.failure_rule.fatal_signatures == std::vector<std::string>{"sandbox-exec: "});
    CHECK(w.failure_rule.informational_lines.empty());
    for (const auto& [code, line] : std::vector<std::pair<int, std::string>>{
             {65, "sandbox-exec: unbound variable: file-unmount at <input string>, line 4"},
             {65, "sandbox-exec: no version specified"},
             {71, "sandbox-exec: sandbox_apply: Operation not permitted"},
             {71, "sandbox-exec: execvp() of 'npm' failed: No such file or directory"}}) {
        INFO(code << " " << line);
        auto out = judged(w, exited(code, "noise before\n" + line + "\n"));
        CHECK(out.kind == confine::OutcomeKind::sandbox_unavailable);
        CHECK(out.basis == confine::Basis::rule);
        CHECK(out.evidence == line);
        CHECK(out.matched_rule == "sandbox-exec: ");
        CHECK(out.runner == "seatbelt");
    }
}

TEST_CASE("a sandbox-exec line the command prints is its own at any status sandbox-exec does not fail with", "[seatbelt][classify]") {
    Seatbelt s;
    test::TempDir ws("/var/tmp");
    const auto w = seatbelt_wrap(s, ws.path());
    // A nested sandbox-exec inside the command failed, and the command went on to fail
    // in its own way (or to succeed).
    const std::string nested = "sandbox-exec: sandbox_apply: Operation not permitted\n";
    for (int code : {1, 2, 64, 66, 70, 72, 125, 126, 127, 128 + 9}) {
        INFO(code);
        auto out = judged(w, exited(code, nested));
        CHECK(out.kind == confine::OutcomeKind::task_failed);
        CHECK(out.basis == confine::Basis::rule);
        CHECK(out.evidence.empty());
        CHECK(out.exit_code == code);
    }
    CHECK(judged(w, exited(0, nested)).kind == confine::OutcomeKind::completed);
    // At 65 or 71 without sandbox-exec's line, the status is the command's own (EX_DATAERR
    // and EX_OSERR are common exit statuses).
    for (int code : {65, 71}) {
        auto out = judged(w, exited(code, "mytool: bad input on line 3\nsandbox-exec is not here\n"));
        CHECK(out.kind == confine::OutcomeKind::task_failed);
        CHECK(out.evidence.empty());
    }
    // Killed by a signal: never the runner's failure by rule.
    Seen killed;
    killed.signal = 9;
    killed.stderr_seen = true;
    killed.stderr_text = nested;
    CHECK(judged(w, killed).kind == confine::OutcomeKind::task_failed);
    // A denial in Seatbelt's dialect is a hint on the command's failure.
    auto denied = judged(w, exited(1, "touch: /Users/me/x: Operation not permitted\n"));
    CHECK(denied.kind == confine::OutcomeKind::task_failed);
    CHECK(denied.denial_hint == "touch: /Users/me/x: Operation not permitted");
    // Where the status descriptor could not say (the runner killed by a signal, above),
    // the rule alone judges, and a command that prints such a line and itself exits 65
    // or 71 would be taken for sandbox-exec.
    CHECK(judged(w, exited(71, nested)).kind == confine::OutcomeKind::sandbox_unavailable);
}

TEST_CASE("each dimension Seatbelt refuses has a denial hint in its dialect, and a typo none", "[seatbelt][classify][hints]") {
    Seatbelt s;
    test::TempDir ws("/var/tmp");
    confine::Policy policy{confine::Mode::workspace_write, ws.path(), {}};
    policy.network = confine::Network::none;
    auto w = s.library_wrap(policy, {"true"});
    REQUIRE(w);
    // What macOS's tools print where the profile refuses: a read of a denied path, a write
    // outside the roots or to a protected path (EPERM), a connection (EPERM, and the name
    // that cannot be resolved).
    for (const std::string line : {"cat: /Users/me/.ssh/id_ed25519: Operation not permitted",
                                   "touch: /Users/me/x: Operation not permitted",
                                   "error: could not lock config file .git/config: Operation not permitted",
                                   "curl: (6) Could not resolve host: example.com",
                                   "PermissionError: [Errno 1] Operation not permitted"}) {
        INFO(line);
        CHECK(judged(*w, exited(1, line + "\n")).denial_hint == line);
    }
    CHECK_FALSE(judged(*w, exited(1, "cat: typo.txt: No such file or directory\n")).denial_hint);
    // With the network allowed, a name that does not resolve is the command's own.
    policy.network = confine::Network::allow;
    auto open = s.library_wrap(policy, {"true"});
    REQUIRE(open);
    CHECK_FALSE(judged(*open, exited(6, "curl: (6) Could not resolve host: example.invalid\n")).denial_hint);
}

TEST_CASE("the status descriptor decides whether sandbox-exec reached the command, whatever its status and lines", "[seatbelt][classify]") {
    Seatbelt s;
    test::TempDir ws("/var/tmp");
    const auto w = seatbelt_wrap(s, ws.path());
    REQUIRE(w.attestation.kind == confine::Attestation::Kind::status_fd);
    CHECK(w.attestation.status_marker == confine::seatbelt::status_marker);
    const std::string nested = "sandbox-exec: sandbox_apply: Operation not permitted\n";
    auto with_status = [](Seen seen, std::string status) {
        seen.status_text = std::move(status);
        return seen;
    };
    const std::string reached = std::string(confine::seatbelt::status_marker) + "\n";
    // The command ran: a nested sandbox-exec's line at 71 (or 65) is its own.
    for (int code : {65, 71}) {
        auto out = judged(w, with_status(exited(code, nested), reached));
        CHECK(out.kind == confine::OutcomeKind::task_failed);
        CHECK(out.basis == confine::Basis::attestation);
        CHECK(out.exit_code == code);
    }
    // It did not: sandbox-exec's failure, with its line as the evidence, at any status.
    for (int code : {65, 71, 1}) {
        auto out = judged(w, with_status(exited(code, nested), ""));
        CHECK(out.kind == confine::OutcomeKind::sandbox_unavailable);
        CHECK(out.basis == confine::Basis::attestation);
        CHECK(out.evidence == "sandbox-exec: sandbox_apply: Operation not permitted");
    }
    // Not reached and nothing said: the status is named.
    auto silent = judged(w, with_status(exited(125, ""), ""));
    CHECK(silent.kind == confine::OutcomeKind::sandbox_unavailable);
    CHECK_THAT(silent.evidence, Catch::StartsWith("runner 'seatbelt' ended with exit status 125 before starting the command"));
    // A marker the command could print on stderr is not the descriptor's.
    auto spoofed = judged(w, with_status(exited(71, std::string(confine::seatbelt::status_marker) + "\n" + nested), ""));
    CHECK(spoofed.kind == confine::OutcomeKind::sandbox_unavailable);
}

TEST_CASE("through a stand-in sandbox-exec, the attesting shell runs exactly the command, without the descriptor", "[seatbelt][attestation]") {
    test::Installed confine;
    test::TempDir programs("/var/tmp"), ws("/var/tmp");
    fs::permissions(programs.path(), fs::perms(0755));
    // Runs what follows "--", as sandbox-exec does once the profile is applied; or fails
    // the way it does when it cannot apply one.
    const fs::path fake = programs / "sandbox-exec";
    test::write_file(fake,
                     "#!/bin/sh\nif [ -n \"${FAKE_SANDBOX_EXEC_FAIL:-}\" ]; then echo 'sandbox-exec: sandbox_apply: Operation not permitted' >&2; exit 71; fi\n"
                     "while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n",
                     fs::perms(0755));
    const fs::path cfg = confine.scratch("c.toml");
    test::write_file(cfg, "[platform.linux]\nchain = [\"seatbelt\"]\n[runner.seatbelt]\nprogram = \"" + fake.string() +
                              "\"\n[policy.enforcement]\nprocesses = \"best-effort\"\n");
    auto run = [&](const std::vector<std::string>& command, const std::vector<std::string>& env = {}) {
        std::vector<std::string> args{"run", "--config", cfg.string(), "--workspace", ws.path().string(), "--"};
        args.insert(args.end(), command.begin(), command.end());
        return confine.run(args, env);
    };
    // Hostile arguments arrive intact, one each.
    const std::vector<std::string> hostile{"$0", "$(touch " + (ws / "injected").string() + ")", "a b", "'\"", "-c", ";", ""};
    std::vector<std::string> printing{"/usr/bin/printf", "[%s]\\n"};
    printing.insert(printing.end(), hostile.begin(), hostile.end());
    auto r = run(printing);
    CHECK(r.exit_code == 0);
    std::string expected;
    for (const auto& h : hostile) expected += "[" + h + "]\n";
    CHECK(r.out == expected);
    CHECK_FALSE(fs::exists(ws / "injected"));

    // The command has only the standard descriptors: the status descriptor was closed.
    auto fds = run({"/bin/sh", "-c", "n=3; while [ $n -lt 64 ]; do if (true >&$n) 2>/dev/null; then echo $n; fi; n=$((n+1)); done; echo end"});
    CHECK(fds.exit_code == 0);
    CHECK(fds.out == "end\n");

    // A nested sandbox-exec's line at 71 is the command's own; confinectl exits 71.
    auto nested = run({"/bin/sh", "-c", "echo 'sandbox-exec: sandbox_apply: Operation not permitted' >&2; exit 71"});
    CHECK(nested.exit_code == 71);
    CHECK(nested.err == "sandbox-exec: sandbox_apply: Operation not permitted\n");

    // sandbox-exec failing before the command: 125, its line, the command not run.
    auto failed = run({"/usr/bin/touch", (ws / "ran").string()}, {"FAKE_SANDBOX_EXEC_FAIL=1"});
    CHECK(failed.exit_code == 125);
    CHECK(failed.err == "sandbox-exec: sandbox_apply: Operation not permitted\n"
                        "confinectl: sandbox unavailable: runner 'seatbelt' ended with exit status 71 before starting the command "
                        "(its status descriptor never reported the command)\n");
    CHECK_FALSE(fs::exists(ws / "ran"));
    // With a report, the line is read, and it is the evidence.
    const fs::path report = confine.scratch("report.json");
    auto reported = confine.run({"run", "--report", report.string(), "--config", cfg.string(), "--workspace", ws.path().string(), "--",
                                 "/usr/bin/touch", (ws / "ran").string()},
                                {"FAKE_SANDBOX_EXEC_FAIL=1"});
    CHECK(reported.exit_code == 125);
    auto j = json::parse(test::read_file(report));
    CHECK(j["outcome"] == "sandbox_unavailable");
    CHECK(j["basis"] == "attestation");
    CHECK(j["evidence"]["line"] == "sandbox-exec: sandbox_apply: Operation not permitted");
    CHECK_FALSE(fs::exists(ws / "ran"));
}

TEST_CASE("seatbelt refuses a command whose name begins with '-', which the attesting shell's exec would take for an option", "[seatbelt]") {
    Seatbelt s;
    test::TempDir ws("/var/tmp");
    auto w = s.library_wrap({confine::Mode::workspace_write, ws.path(), {}}, {"-x", "y"});
    REQUIRE_FALSE(w);
    CHECK_THAT(w.error().message, Catch::EndsWith("wrap failed: the command '-x' begins with '-'; name it by a path (./-x)"));
}

// --- macOS only: the real sandbox-exec.

namespace {

// What Seatbelt does in the confinement matrix (scenarios.hpp), with confinectl's
// default configuration (seatbelt alone on macOS): the host's /tmp and /dev, denials in
// its own dialect, attested by the status descriptor of the shell sandbox-exec starts
// (sbpl.hpp), and the command's signal passed on as confinectl's own (sandbox-exec and
// that shell exec the command).
const test::RunnerExpectations seatbelt{.name = "seatbelt",
                                        .runner = "seatbelt",
                                        .config = "",
                                        .require = nullptr,
                                        .denial = "Operation not permitted",
                                        .fatal_signature = "sandbox-exec: ",
                                        .fatal_statuses = {65, 71},
                                        .basis = test::Basis::attestation,
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
