// Package installs that just work without writing the host's caches ([policy.packages];
// README, "Package installs"): the settings copies (an allow-list of settings), the
// configuration keys, which variables a run gets and whose wins; then, end to end on
// bubblewrap and Landlock, as root and as nobody, a real `npm install` from the registry
// the machine's npm names, `pip install` of a package built from a local source archive,
// and `cargo fetch` of a crate with a vendored dependency, each in a HOME of the test's
// own, judged by the host's caches (unchanged), the user's setting (in effect) and the
// token (never seen by the command).
#include "packages.hpp"
#include "support.hpp"
#include "toml_text.hpp"
#include "ways.hpp"

#include <confine/config.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using test::name_of;
using test::Way;

namespace {

std::string value_in(const std::vector<std::string>& env, const std::string& name) {
    for (const auto& e : env)
        if (e.starts_with(name + "=")) return e.substr(name.size() + 1);
    return "<unset>";
}

std::size_t count_of(const std::vector<std::string>& env, const std::string& name) {
    return static_cast<std::size_t>(std::count_if(env.begin(), env.end(), [&](const std::string& e) { return e.starts_with(name + "="); }));
}

// A run of a package manager itself: the directory is made for it.
const std::vector<std::string> tool_run{"npm", "install"};

confine::Policy workspace_policy(const fs::path& ws) {
    confine::Policy p;
    p.mode = confine::Mode::workspace_write;
    p.workspace = fs::canonical(ws);
    p.working_directory = p.workspace;
    return p;
}

}  // namespace

TEST_CASE("an npmrc copy keeps each setting of the allow-list, as npm reads it, and nothing else", "[packages]") {
    std::string text = "@scope:registry=https://scoped.example/\n@my-org.x_y~z:registry = https://org.example/\n";
    std::vector<std::string> expected{"@scope:registry=https://scoped.example/", "@my-org.x_y~z:registry=https://org.example/"};
    for (const std::string_view key : confine::detail::npm_settings_copied()) {
        const std::string value = key == "ca" || key == "ca[]" ? "\"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\"" : "value-of-" + std::string(key);
        text += "  " + std::string(key) + " = " + value + "   \n";
        expected.push_back(std::string(key) + "=" + value);
    }
    // Unknown settings, harmless or not, and comments: left out.
    text += "init-author-name=A. Author\nscript-shell=/bin/zsh\nMY_SETTING=harmless\nRegistry=https://upper.example/\nregistry[]=https://array.example/\n"
            "; a comment\n# //registry.example/:_authToken=commented-token-1\n";
    const std::string copy = confine::detail::npmrc_copy(text);
    for (const auto& line : expected) CHECK_THAT(copy, Catch::Contains("\n" + line + "\n") || Catch::StartsWith(line + "\n"));
    for (const char* dropped : {"init-author", "zsh", "MY_SETTING", "upper.example", "array.example", "a comment", "commented-token-1"})
        CHECK_THAT(copy, !Catch::Contains(dropped));
    CHECK_THAT(copy, Catch::EndsWith("; (7 other lines left out: comments, and every setting confine does not copy)\n"));
    CHECK(confine::detail::npmrc_copy(text) == copy);  // the same copy each time
    // A value's comment, as npm cuts it, stays behind too.
    CHECK(confine::detail::npmrc_copy("registry=https://r.example/ ; old token npm-token-0\nfund=false#x\n") ==
          "registry=https://r.example/\nfund=false\n");
    CHECK(confine::detail::npmrc_copy("") == "");
}

TEST_CASE("an npmrc copy leaves out every token, password and auth setting, however npm would spell it", "[packages]") {
    const std::string copy = confine::detail::npmrc_copy(
        "registry=https://registry.example/\r\n"
        "//registry.example/:_authToken=npm-token-1\n"
        "_auth = npm-token-2\n"
        "//registry.example/:_password=npm-token-3\n"
        "//registry.example/:username=npm-user-4\n"
        "username=npm-user-5\npassword=npm-token-6\nemail=npm-mail-7\nalways-auth=true\n"
        "_authToken=npm-token-8\nMY_TOKEN=npm-token-9\n"
        "certfile=/home/u/client-cert-10\nkeyfile=/home/u/client-key-11\ncert=client-cert-12\nkey=client-key-13\n"
        "proxy=http://user:proxy-password-14@proxy:3128\n"            // a URL's password
        "https-proxy=https://npm-token-15@proxy:3128\n"               // a token as a URL's user
        "@scope:registry=https://u:npm-token-16@scoped.example/\n"
        "color=true\r_authToken=npm-token-17\r\n"                    // npm ends a line at a carriage return
        "\"\\u005fauth\" = npm-token-18\n"                            // a quoted key is a JSON string
        "proxy = \"http://u:p\\u0040proxy-19:3128\"\n"                // so is a quoted value: p@proxy hidden
        "noproxy = 'npm-token-20'\n"                                  // a quoted value is not plain
        "\f_authToken=npm-token-21\n"                                 // npm trims more than blanks
        "//reg.example/:x#:_authToken=npm-token-22\n"                 // npm cuts the key at '#'
        "registry #x=https://npm-token-23.example/\n"
        "ca=-----BEGIN npm-token-24\\n-----END\n"                     // a certificate only as a JSON string
        "@scope:_authToken=npm-token-25\n@:registry=https://npm-token-26.example/\n"
        "[section]x_auth=npm-token-27\n"                              // not a section: a setting, and the end of the copy
        "fund=false\n"
        "[section]\nregistry=https://npm-token-28.example/\n"
        "package-lock=false\r\n");
    CHECK_THAT(copy, Catch::StartsWith("registry=https://registry.example/\ncolor=true\n"));
    for (const char* secret : {"npm-token", "npm-user", "npm-mail", "client-", "password", "always-auth", "u0040", "fund", "package-lock"})
        CHECK_THAT(copy, !Catch::Contains(secret));
    CHECK(copy.find('\r') == std::string::npos);
    CHECK(copy.find("\n\n") == std::string::npos);  // a CRLF ends one line, not two
}

TEST_CASE("a cargo config copy keeps each setting of the allow-list and nothing else", "[packages]") {
    using confine::detail::CargoSetting;
    std::map<std::string, std::string> tables;  // a table's name: its settings, each given the value "<table>.<key>"
    for (const CargoSetting& s : confine::detail::cargo_settings_copied()) {
        std::string table(s.table);
        if (table.ends_with(".*")) table.replace(table.size() - 1, 1, "\"a b\"");  // a name that must be quoted
        tables[table] += std::string(s.key) + " = \"" + std::string(s.table) + "." + std::string(s.key) + "\"\n";
    }
    // Beside them, settings the list does not name, in those tables and in others.
    tables["build"] += "rustc-wrapper = \"sccache\"\nnumber = 1.5\n";
    tables["net"] += "list = [{ keep = 1 }]\nssh = { known-hosts = [\"h\"] }\n";
    tables["registries.\"a b\""] += "token = \"cargo-token-1\"\n";
    std::string text = "# a comment: \u00e9, \u2603\n";
    for (const auto& [table, settings] : tables) text += "[" + table + "]\n" + settings;
    text += "[alias]\nb = \"build\"\n[env]\nSECRET = \"cargo-env-1\"\n[credential]\nhelper = \"x\"\n[[registries-list]]\nname = \"a\"\n";
    const auto copy = confine::detail::cargo_config_copy(text);
    REQUIRE(copy);
    INFO(*copy);
    auto parsed = confine::detail::parse_toml_text(*copy, "copy");
    REQUIRE(parsed);
    std::size_t settings = 0;
    for (const CargoSetting& s : confine::detail::cargo_settings_copied()) {
        INFO(s.table << " " << s.key);
        std::string table(s.table);
        const auto* node = table.ends_with(".*") ? (*parsed)[table.substr(0, table.size() - 2)]["a b"].as_table() : (*parsed)[table].as_table();
        REQUIRE(node);
        CHECK(node->get_as<std::string>(s.key));
        if (const auto* v = node->get_as<std::string>(s.key)) CHECK(v->get() == std::string(s.table) + "." + std::string(s.key));
        ++settings;
    }
    CHECK(settings == confine::detail::cargo_settings_copied().size());
    for (const char* dropped : {"rustc-wrapper", "number", "alias", "cargo-env-1", "credential", "registries-list", "list", "known-hosts", "comment", "token"})
        CHECK_THAT(*copy, !Catch::Contains(dropped));
    CHECK_THAT(*copy, Catch::Contains("[source.\"a b\"]\n"));
    CHECK(confine::detail::cargo_config_copy(text) == copy);
    // Integers, booleans and arrays of strings are written as they are.
    CHECK(confine::detail::cargo_config_copy("[net]\nretry = 7\noffline = false\n[build]\nrustflags = [\"-C\", \"target-cpu=native\"]\n") ==
          "[net]\nretry = 7\noffline = false\n[build]\nrustflags = [\"-C\", \"target-cpu=native\"]\n");
    // Strings come back as cargo reads them: quotes, backslashes, control characters, and
    // the characters toml++ reads only through stand-ins.
    const auto odd = confine::detail::cargo_config_copy("[source.v]\ndirectory = '/srv/a\"b\\c\u00e9'\n[http]\ncainfo = \"x\\u0001\\ty\"\n");
    REQUIRE(odd);
    CHECK(*odd == "[source.v]\ndirectory = \"/srv/a\\\"b\\\\c\u00e9\"\n[http]\ncainfo = \"x\\u0001\\u0009y\"\n");
    CHECK_FALSE(confine::detail::cargo_config_copy("[not toml"));
    CHECK(confine::detail::cargo_config_copy("") == "");
}

TEST_CASE("a cargo config copy leaves out tokens, credential providers and URL credentials, wherever they are", "[packages]") {
    const auto copy = confine::detail::cargo_config_copy(
        "[source.crates-io]\nreplace-with = \"vendored\"\n"
        "[source.vendored]\ndirectory = \"/srv/vendor\"\n"
        "[source.mine]\ngit = \"https://cargo-token-1@git.example/r\"\n"
        "[source.theirs]\nregistry = \"sparse+https://u:cargo-password-2@cargo.example/\"\n"
        "[registry]\ntoken = \"cargo-token-3\"\ncredential-provider = \"cargo:token-4\"\nglobal-credential-providers = [\"cargo-token-5\"]\n"
        "[registries.company]\nindex = \"sparse+https://cargo.example/\"\ntoken = \"cargo-token-6\"\n"
        "[registries.other]\nindex = \"https://u:cargo-password-7@cargo.example/\"\n"
        "[http]\nproxy = \"http://u:proxy-password-8@proxy:3128\"\n"
        "[build]\nrustflags = [\"-C\", \"https://u:cargo-password-9@x/\"]\n"
        "[[registries-list]]\nname = \"a\"\ntoken = \"cargo-token-10\"\n"
        "[net]\nlist = [{ password = \"cargo-password-11\", keep = 1 }]\n");
    REQUIRE(copy);
    for (const char* kept : {"replace-with = \"vendored\"", "directory = \"/srv/vendor\"", "[registries.company]\nindex = \"sparse+https://cargo.example/\"\n"})
        CHECK_THAT(*copy, Catch::Contains(kept));
    for (const char* secret : {"cargo-token", "cargo-password", "proxy-password", "token", "credential", "[registries.other]", "[source.mine]", "[http]", "[build]"})
        CHECK_THAT(*copy, !Catch::Contains(secret));
}

TEST_CASE("the README lists every setting the package settings copies keep", "[packages][docs]") {
    const std::string readme = test::read_file(fs::path(SOURCE_DIR) / "README.md");
    const std::string section = readme.substr(readme.find("## Package installs"));
    for (const std::string_view key : confine::detail::npm_settings_copied()) CHECK_THAT(section, Catch::Contains("`" + std::string(key) + "`"));
    for (const auto& s : confine::detail::cargo_settings_copied()) {
        std::string table(s.table);
        if (table.ends_with(".*")) table.replace(table.size() - 1, 1, "NAME");
        INFO(s.table << " " << s.key);
        CHECK_THAT(section, Catch::Contains("`[" + table + "]`") && Catch::Contains("`" + std::string(s.key) + "`"));
    }
}

TEST_CASE("policy.packages takes a directory beneath the workspace and the tools by name", "[packages][config]") {
    auto c = confine::parse_config("[policy.packages]\ndir = \"build/pkg-cache\"\ntools = [\"npm\"]\n", "/etc/confine/confine.toml");
    REQUIRE(c);
    CHECK(c->packages.dir == "build/pkg-cache");
    CHECK(c->packages.tools == std::vector<std::string>{"npm"});
    auto off = confine::parse_config("[policy.packages]\ndir = \"\"\n", "/etc/confine/confine.toml");
    REQUIRE(off);
    CHECK(off->packages.dir.empty());
    auto defaults = confine::parse_config("", "/etc/confine/confine.toml");
    REQUIRE(defaults);
    CHECK(defaults->packages.dir == ".confine");
    CHECK(defaults->packages.tools == std::vector<std::string>{"npm", "pip", "cargo"});
    const std::map<std::string, std::string> refused{
        {"dir = \"/var/cache/x\"", "must be relative to the workspace"},
        {"dir = \"~/cache\"", "must be relative to the workspace"},
        {"dir = \"a/../../b\"", "must not climb out of the workspace"},
        {"dir = \".\"", "not the workspace itself"},
        {"dir = 3", "must be a string"},
        {"tools = [\"gem\"]", "is not one of npm, pip, cargo"},
        {"tools = [\"npm\", \"npm\"]", "names 'npm' twice"},
        {"cache = \"x\"", "unknown key 'cache' in [policy.packages]"},
    };
    for (const auto& [line, why] : refused) {
        INFO(line);
        auto bad = confine::parse_config("[policy.packages]\n" + line + "\n", "/etc/confine/confine.toml");
        REQUIRE_FALSE(bad);
        CHECK_THAT(bad.error().message, Catch::Contains(why) && Catch::Contains("/etc/confine/confine.toml:2:"));
    }
}

TEST_CASE("a workspace-write run points npm, pip and cargo beneath the workspace, and what is named explicitly wins", "[packages]") {
    const test::Tree tree{false};
    const test::TempDir& dir = tree.root;
    fs::create_directories(tree.home / ".cargo");
    const confine::Policy policy = workspace_policy(dir / "ws");
    const fs::path base = policy.workspace / ".confine";
    const std::string home = tree.home_entry();
    confine::PackageCaches packages;

    std::vector<std::string> env{home, "PATH=/usr/bin", "CARGO_HOME=" + (dir / "home" / ".cargo").string(), "NPM_CONFIG_CACHE=/elsewhere"};
    confine::detail::apply_packages(packages, policy, tool_run, {}, env);
    CHECK(value_in(env, "npm_config_cache") == (base / "cache" / "npm").string());
    CHECK(count_of(env, "NPM_CONFIG_CACHE") == 0);  // npm reads either case: one of them stays
    CHECK(value_in(env, "PIP_CACHE_DIR") == (base / "cache" / "pip").string());
    CHECK(value_in(env, "CARGO_HOME") == (base / "cargo").string());
    CHECK(count_of(env, "CARGO_HOME") == 1);
    CHECK(value_in(env, "PATH") == "/usr/bin");
    CHECK(test::read_file(base / ".gitignore").find("\n*\n") != std::string::npos);
    CHECK(fs::is_regular_file(base / "cargo" / "config.toml"));

    SECTION("a variable the caller or the operator names is theirs") {
        std::vector<std::string> mine{home, "PIP_CACHE_DIR=/my/pip", "CARGO_HOME=/my/cargo"};
        confine::detail::apply_packages(packages, policy, tool_run, std::vector<std::string>{"PIP_CACHE_DIR", "CARGO_*"}, mine);
        CHECK(value_in(mine, "PIP_CACHE_DIR") == "/my/pip");
        CHECK(value_in(mine, "CARGO_HOME") == "/my/cargo");
        CHECK(value_in(mine, "npm_config_cache") == (base / "cache" / "npm").string());
    }
    SECTION("a tool whose host cache the run makes writable keeps it") {
        confine::Policy granted = policy;
        granted.writable.push_back(fs::canonical(dir / "home" / ".cargo"));
        std::vector<std::string> kept{home};
        confine::detail::apply_packages(packages, granted, tool_run, {}, kept);
        CHECK(value_in(kept, "CARGO_HOME") == "<unset>");
        CHECK(value_in(kept, "PIP_CACHE_DIR") == (base / "cache" / "pip").string());
    }
    SECTION("off: no directory, or no tool, or a read-only run") {
        for (const auto& [d, tools] : std::vector<std::pair<std::string, std::vector<std::string>>>{{"", {"npm"}}, {".confine", {}}}) {
            std::vector<std::string> none{home};
            confine::detail::apply_packages(confine::PackageCaches{d, tools}, policy, tool_run, {}, none);
            CHECK(none == std::vector<std::string>{home});
        }
        confine::Policy read_only;
        read_only.mode = confine::Mode::read_only;
        std::vector<std::string> none{home};
        confine::detail::apply_packages(packages, read_only, tool_run, {}, none);
        CHECK(none == std::vector<std::string>{home});
    }
    SECTION("a link planted where the directory goes is not followed") {
        fs::remove_all(base);
        fs::create_directories(dir / "elsewhere");
        fs::create_directory_symlink(dir / "elsewhere", base);
        std::vector<std::string> linked{home};
        confine::detail::apply_packages(packages, policy, tool_run, {}, linked);
        CHECK(linked == std::vector<std::string>{home});
        CHECK(fs::is_empty(dir / "elsewhere"));
    }
}

TEST_CASE("the directory is made for a run of a package manager, or kept where it is, never for another run", "[packages]") {
    const test::Tree tree{false};
    const test::TempDir& dir = tree.root;
    fs::create_directories(tree.home / ".cargo");
    test::write_file(dir / "home" / ".npmrc", "fund=false\n", fs::perms(0600));
    test::write_file(dir / "home" / ".cargo" / "config.toml", "[net]\nretry = 7\n");
    confine::Policy policy = workspace_policy(dir / "ws");
    policy.deny_read.push_back(fs::canonical(dir / "home" / ".npmrc"));
    const fs::path base = policy.workspace / ".confine";
    const std::string home = tree.home_entry();
    using Words = std::vector<std::string>;

    // Another command (`make test`, `true`): the variables name the places, nothing is made,
    // and no copy of the user's settings is named that is not there.
    for (const Words& command : {Words{"true"}, Words{"/usr/bin/make", "test"}, Words{},
                                 Words{"bash", "-lc", "make && ./pipeline --cargo-free"}}) {
        INFO((command.empty() ? std::string("(none)") : command.front()));
        std::vector<std::string> env{home};
        confine::detail::apply_packages({}, policy, command, {}, env);
        CHECK_FALSE(fs::exists(fs::symlink_status(base)));
        CHECK(value_in(env, "npm_config_cache") == (base / "cache" / "npm").string());
        CHECK(value_in(env, "PIP_CACHE_DIR") == (base / "cache" / "pip").string());
        CHECK(value_in(env, "CARGO_HOME") == (base / "cargo").string());
        CHECK(value_in(env, "npm_config_userconfig") == "<unset>");
    }
    // A package manager, itself, through a path, a python, or a shell's script: made, with the copies.
    for (const Words& command : {Words{"npm", "ci"}, Words{"/usr/bin/npx", "x"}, Words{"pip3.11", "install", "a"}, Words{"python3", "-m", "pip", "install"},
                                 Words{"cargo", "build"}, Words{"/bin/bash", "-lc", "cd app && npm ci"}, Words{"sh", "-c", "X=1 $HOME/bin/cargo fetch"}}) {
        INFO(command.front());
        fs::remove_all(base);
        std::vector<std::string> env{home};
        confine::detail::apply_packages({}, policy, command, {}, env);
        CHECK(fs::is_regular_file(base / ".gitignore"));
        CHECK(value_in(env, "npm_config_userconfig") == (base / "npmrc").string());
        CHECK_THAT(test::read_file(base / "cargo" / "config.toml"), Catch::Contains("retry = 7"));
    }
    SECTION("a tool [policy.packages] leaves out makes nothing") {
        fs::remove_all(base);
        std::vector<std::string> env{home};
        confine::detail::apply_packages(confine::PackageCaches{".confine", {"pip"}}, policy, Words{"npm", "ci"}, {}, env);
        CHECK_FALSE(fs::exists(base));
        CHECK(value_in(env, "PIP_CACHE_DIR") == (base / "cache" / "pip").string());
    }
    SECTION("once there, any run keeps its copies current") {
        fs::remove(base / "npmrc");
        std::vector<std::string> env{home};
        confine::detail::apply_packages({}, policy, Words{"true"}, {}, env);
        CHECK(value_in(env, "npm_config_userconfig") == (base / "npmrc").string());
        CHECK_THAT(test::read_file(base / "npmrc"), Catch::Contains("fund=false"));
    }
    SECTION("a link planted where it goes is refused by any run") {
        fs::remove_all(base);
        fs::create_directories(dir / "elsewhere");
        fs::create_directory_symlink(dir / "elsewhere", base);
        std::vector<std::string> env{home};
        confine::detail::apply_packages({}, policy, Words{"true"}, {}, env);
        CHECK(env == std::vector<std::string>{home});
        CHECK(fs::is_empty(dir / "elsewhere"));
    }
}

TEST_CASE("the user's denied npmrc reaches npm as a copy of the settings on the allow-list, cargo's config as CARGO_HOME's", "[packages]") {
    const test::Tree tree{false};
    const test::TempDir& dir = tree.root;
    fs::create_directories(tree.home / ".cargo");
    test::write_file(dir / "home" / ".npmrc", "fund=false\n//registry.example/:_authToken=npm-token-9\ninit-author-name=unknown-setting\n", fs::perms(0600));
    test::write_file(dir / "home" / ".cargo" / "config.toml", "[net]\nretry = 7\n[registry]\ntoken = \"cargo-token-9\"\n[alias]\nunknown = \"setting\"\n");
    confine::Policy policy = workspace_policy(dir / "ws");
    const fs::path base = policy.workspace / ".confine";
    std::vector<std::string> env{tree.home_entry()};

    // Not denied: npm reads it itself.
    confine::detail::apply_packages({}, policy, tool_run, {}, env);
    CHECK(value_in(env, "npm_config_userconfig") == "<unset>");
    // Denied (as the default deny_read does): a copy, without the token.
    policy.deny_read.push_back(fs::canonical(dir / "home" / ".npmrc"));
    confine::detail::apply_packages({}, policy, tool_run, {}, env);
    REQUIRE(value_in(env, "npm_config_userconfig") == (base / "npmrc").string());
    const std::string npmrc = test::read_file(base / "npmrc");
    CHECK_THAT(npmrc, Catch::Contains("\nfund=false\n") && !Catch::Contains("npm-token-9") && !Catch::Contains("unknown-setting"));
    const std::string cargo = test::read_file(base / "cargo" / "config.toml");
    CHECK_THAT(cargo, Catch::Contains("\n[net]\nretry = 7\n") && !Catch::Contains("cargo-token-9") && !Catch::Contains("unknown"));

    SECTION("a copy already as it should be is left alone, any other is replaced, never written through") {
        struct stat first {};
        REQUIRE(::stat((base / "npmrc").c_str(), &first) == 0);
        env = {tree.home_entry()};
        confine::detail::apply_packages({}, policy, tool_run, {}, env);
        struct stat again {};
        REQUIRE(::stat((base / "npmrc").c_str(), &again) == 0);
        CHECK(again.st_ino == first.st_ino);
        test::write_file(dir / "target", "not confine's\n");
        fs::remove(base / "npmrc");
        fs::create_symlink(dir / "target", base / "npmrc");
        test::write_file(base / "cargo" / "config.toml", "[net]\nretry = 1\n");
        env = {tree.home_entry()};
        confine::detail::apply_packages({}, policy, tool_run, {}, env);
        CHECK(test::read_file(dir / "target") == "not confine's\n");
        CHECK_FALSE(fs::is_symlink(base / "npmrc"));
        CHECK_THAT(test::read_file(base / "npmrc"), Catch::Contains("fund=false"));
        CHECK_THAT(test::read_file(base / "cargo" / "config.toml"), Catch::Contains("retry = 7"));
    }
    SECTION("an npm cache the caller grants stays, and npm still gets the settings") {
        confine::Policy granted = policy;
        fs::create_directories(dir / "home" / ".npm");
        granted.writable.push_back(fs::canonical(dir / "home" / ".npm"));
        std::vector<std::string> fresh{tree.home_entry()};
        confine::detail::apply_packages({}, granted, tool_run, {}, fresh);
        CHECK(value_in(fresh, "npm_config_cache") == "<unset>");
        CHECK(value_in(fresh, "npm_config_userconfig") == (base / "npmrc").string());
    }
    SECTION("a run inside a run keeps the copies as they are") {
        const std::string npmrc_before = test::read_file(base / "npmrc"), cargo_before = test::read_file(base / "cargo" / "config.toml");
        confine::detail::apply_packages({}, policy, tool_run, {}, env);  // env: what the first run gave its command
        CHECK(test::read_file(base / "npmrc") == npmrc_before);
        CHECK(test::read_file(base / "cargo" / "config.toml") == cargo_before);
        CHECK(value_in(env, "CARGO_HOME") == (base / "cargo").string());
    }
    SECTION("a line break in the path the copies name in their comments starts no setting") {
        const fs::path odd = dir / "h\nregistry=https://named.example/\r[net]\rretry = 9";
        fs::create_directories(odd / ".cargo");
        test::write_file(odd / ".npmrc", "fund=false\n", fs::perms(0600));
        test::write_file(odd / ".cargo" / "config.toml", "[net]\nretry = 7\n");
        confine::Policy denied = policy;
        denied.deny_read.push_back(fs::canonical(odd / ".npmrc"));
        std::vector<std::string> fresh{"HOME=" + odd.string()};
        confine::detail::apply_packages({}, denied, tool_run, {}, fresh);
        const std::string copied = test::read_file(base / "npmrc"), cargo_copied = test::read_file(base / "cargo" / "config.toml");
        CHECK_THAT(copied, Catch::Contains("h?registry=https://named.example/?[net]?retry = 9") && Catch::Contains("\nfund=false\n"));
        CHECK_THAT(copied, !Catch::Contains("\nregistry="));
        CHECK_THAT(cargo_copied, Catch::Contains("\n[net]\nretry = 7\n") && !Catch::Contains("retry = 9\n"));
    }
    SECTION("a FIFO where the npmrc was holds nothing up and is not copied") {
        fs::remove(dir / "home" / ".npmrc");
        REQUIRE(::mkfifo((dir / "home" / ".npmrc").c_str(), 0600) == 0);
        fs::remove(base / "npmrc");
        std::vector<std::string> fresh{tree.home_entry()};
        confine::detail::apply_packages({}, policy, tool_run, {}, fresh);
        CHECK(value_in(fresh, "npm_config_userconfig") == "<unset>");
        CHECK_FALSE(fs::exists(base / "npmrc"));
    }
    SECTION("of an npmrc larger than 1 MiB, the first MiB is read") {
        std::string big;
        while (big.size() < (std::size_t{3} << 19)) big += "fund=false\n";
        big += "registry=https://past-the-limit.example/\n";
        test::write_file(dir / "home" / ".npmrc", big, fs::perms(0600));
        std::vector<std::string> fresh{tree.home_entry()};
        confine::detail::apply_packages({}, policy, tool_run, {}, fresh);
        const std::string copied = test::read_file(base / "npmrc");
        CHECK_THAT(copied, Catch::Contains("\nfund=false\n") && !Catch::Contains("past-the-limit"));
    }
    SECTION("beneath HOME cargo finds the config itself") {
        fs::create_directories(dir / "home" / "src");
        policy.working_directory = fs::canonical(dir / "home" / "src");
        std::vector<std::string> fresh{tree.home_entry()};
        confine::detail::apply_packages({}, policy, tool_run, {}, fresh);
        CHECK_THAT(test::read_file(base / "cargo" / "config.toml"), !Catch::Contains("retry = 7") && Catch::Contains("read by cargo itself"));
    }
}

namespace {

// What lies beneath `dir`: each path, relative, with a file's bytes.
std::map<std::string, std::string> listing(const fs::path& dir) {
    std::map<std::string, std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        out[fs::relative(it->path(), dir).string()] = it->is_regular_file() ? test::read_file(it->path()) : std::string("<dir>");
    return out;
}

// test::write_file, its directories made first.
void put(const fs::path& file, const std::string& text, fs::perms mode = fs::perms(0644)) {
    fs::create_directories(file.parent_path());
    test::write_file(file, text, mode);
}

void require_program(const fs::path& program, const std::string& package) {
    if (::access(program.c_str(), X_OK) != 0) test::skip_test(program.string() + " is not installed (Debian's " + package + "; scripts/install-deps --tests)");
}

// One end-to-end run of a package manager: a tree whose HOME is the test's own, the
// way's configuration (the default deny_read: ~/.npmrc, ~/.pypirc, ~/.cargo/credentials.toml
// denied), and the network allowed.
struct PackageRun {
    test::Installed confine;
    fs::path config = confine.scratch("packages.toml");
    Way way;
    bool unprivileged;
    test::Tree tree{unprivileged};

    PackageRun(Way w, bool as_nobody) : way(w), unprivileged(as_nobody) {
        put(config, test::way_config(w));
        fs::create_directories(tree.home / ".cache");
    }

    test::Result sh(const std::string& script) {
        if (unprivileged) test::give_to_nobody(tree.root.path());
        std::vector<std::string> args{"run", "--config", config.string(), "--workspace", tree.ws.string(), "--network", "allow"};
        if (way == Way::landlock_forked) args.insert(args.end(), {"--report", (tree.root / "report.json").string()});
        // The system's programs (cargo's rustc among them), not a toolchain of the caller's home.
        args.insert(args.end(), {"--", "/bin/sh", "-c", "PATH=/usr/bin:/bin; export PATH; " + script});
        return confine.run(args, {tree.home_entry(), "XDG_CACHE_HOME=" + (tree.home / ".cache").string()}, test::as_user(unprivileged));
    }
};

// Landlock in place too: nothing is left in front of the command there, so what it gets
// must be ready before the exec.
const std::vector<Way> package_ways{Way::bwrap, Way::landlock_forked, Way::landlock_in_place};

// The registry the machine's own npm configuration names, asked with a cache of the
// test's own (npm writes its log there).
std::string npm_registry(const test::TempDir& scratch) {
    auto r = test::run({"/usr/bin/npm", "config", "get", "registry", "--cache", (scratch / "npm-cache").string()});
    std::string registry = r.out.substr(0, r.out.find('\n'));
    if (r.exit_code != 0 || !registry.starts_with("http")) FAIL("npm config get registry: " << r.out << r.err);
    if (!registry.ends_with("/")) registry += "/";
    auto ping = test::run({"/usr/bin/npm", "ping", "--registry", registry, "--cache", (scratch / "npm-cache").string()});
    if (ping.exit_code != 0) test::skip_test("the npm registry " + registry + " (npm config get registry) is not reachable from here: " + ping.err);
    return registry;
}

}  // namespace

TEST_CASE("npm install works confined, with the user's settings and without the token, and the host's npm cache stays as it was",
          "[packages][e2e][npm][network-reach][linux-only]") {
    require_program("/usr/bin/npm", "npm");
    test::TempDir scratch{"/var/tmp"};
    const std::string registry = npm_registry(scratch);
    const std::string token = test::unique_text("npm-token-");
    for (const Way way : package_ways)
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            INFO(name_of(way) << (unprivileged ? " as nobody" : " as root"));
            PackageRun run(way, unprivileged);
            test::require_way(way);
            // The user's settings: the registry, no lock file; and a token for that registry.
            put(run.tree.home / ".npmrc",
                             "registry=" + registry + "\npackage-lock=false\n" + registry.substr(registry.find("//")) + ":_authToken=" + token + "\n",
                             fs::perms(0600));
            put(run.tree.home / ".npm" / "marker", "the host's npm cache");
            const auto before = listing(run.tree.home / ".npm");
            auto r = run.sh("cd '" + run.tree.ws.string() +
                            "' && /usr/bin/npm install --no-audit --no-fund is-number@7.0.0 >npm.log 2>&1; echo install=$?; "
                            "test -e package-lock.json && echo lock=yes || echo lock=no; "
                            "cat \"$HOME/.npmrc\" >/dev/null 2>&1 && echo npmrc=read || echo npmrc=denied; "
                            "echo cache=\"$npm_config_cache\"; cat \"$npm_config_userconfig\"; /usr/bin/npm config list 2>&1");
            INFO(r.out << r.err << test::read_file(run.tree.ws / "npm.log"));
            REQUIRE(r.exit_code == 0);
            CHECK_THAT(r.out, Catch::Contains("install=0"));
            CHECK(fs::is_regular_file(run.tree.ws / "node_modules" / "is-number" / "package.json"));
            CHECK_THAT(r.out, Catch::Contains("lock=no"));           // the user's setting took effect
            CHECK_THAT(r.out, Catch::Contains("npmrc=denied"));      // the original stays denied
            CHECK_THAT(r.out + r.err, !Catch::Contains(token));      // and its token never reached the command
            CHECK_THAT(test::read_file(run.tree.ws / "npm.log"), !Catch::Contains(token));
            CHECK_THAT(r.out, Catch::Contains("cache=" + (fs::canonical(run.tree.ws) / ".confine" / "cache" / "npm").string()));
            CHECK(fs::is_directory(run.tree.ws / ".confine" / "cache" / "npm" / "_cacache"));
            CHECK(listing(run.tree.home / ".npm") == before);  // the host's cache: untouched
        }
}

TEST_CASE("pip install works confined, with the user's pip.conf, and the host's pip cache stays as it was", "[packages][e2e][pip][linux-only]") {
    require_program("/usr/bin/python3", "python3");
    if (test::run({"/usr/bin/python3", "-c", "import setuptools, wheel, pip"}).exit_code != 0)
        test::skip_test("Debian's python3-pip, python3-setuptools and python3-wheel are not installed (scripts/install-deps --tests)");
    const std::string token = test::unique_text("pypi-token-");
    for (const Way way : package_ways)
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            INFO(name_of(way) << (unprivileged ? " as nobody" : " as root"));
            PackageRun run(way, unprivileged);
            test::require_way(way);
            // A local index: a source archive pip builds into a wheel, which it caches.
            const fs::path src = run.tree.root / "src" / "confinetestsrc-0.1.0";
            put(src / "confinetestsrc" / "__init__.py", "VALUE = 42\n");
            put(src / "setup.py", "from setuptools import setup\nsetup(name='confinetestsrc', version='0.1.0', packages=['confinetestsrc'])\n");
            fs::create_directories(run.tree.root / "index");
            REQUIRE(test::run({"/bin/tar", "-C", (run.tree.root / "src").string(), "-czf", (run.tree.root / "index" / "confinetestsrc-0.1.0.tar.gz").string(),
                               "confinetestsrc-0.1.0"})
                        .exit_code == 0);
            // The user's settings name the index; ~/.pypirc holds a token.
            put(run.tree.home / ".config" / "pip" / "pip.conf", "[global]\nno-index = true\nfind-links = " + (run.tree.root / "index").string() + "\n");
            put(run.tree.home / ".pypirc", "[pypi]\nusername = __token__\npassword = " + token + "\n", fs::perms(0600));
            put(run.tree.home / ".cache" / "pip" / "marker", "the host's pip cache");
            const auto before = listing(run.tree.home / ".cache" / "pip");
            auto r = run.sh("unset PIP_FIND_LINKS PIP_INDEX_URL PIP_NO_INDEX PIP_CONFIG_FILE; cd '" + run.tree.ws.string() +
                            "' && /usr/bin/python3 -m pip install --no-build-isolation --target lib confinetestsrc >pip.log 2>&1; echo install=$?; "
                            "cat \"$HOME/.pypirc\" 2>/dev/null || echo pypirc=denied; echo cache=\"$PIP_CACHE_DIR\"");
            INFO(r.out << r.err << test::read_file(run.tree.ws / "pip.log"));
            REQUIRE(r.exit_code == 0);
            CHECK_THAT(r.out, Catch::Contains("install=0"));  // found only through the user's pip.conf
            CHECK(fs::is_regular_file(run.tree.ws / "lib" / "confinetestsrc" / "__init__.py"));
            CHECK_THAT(r.out, Catch::Contains("pypirc=denied"));
            CHECK_THAT(r.out + r.err, !Catch::Contains(token));
            CHECK_THAT(r.out, Catch::Contains("cache=" + (fs::canonical(run.tree.ws) / ".confine" / "cache" / "pip").string()));
            CHECK(fs::is_directory(run.tree.ws / ".confine" / "cache" / "pip" / "wheels"));  // the wheel it built, cached here
            CHECK(listing(run.tree.home / ".cache" / "pip") == before);
        }
}

TEST_CASE("cargo fetch works confined, with the user's config.toml and without its token, and the host's cargo home stays as it was",
          "[packages][e2e][cargo][linux-only]") {
    require_program("/usr/bin/cargo", "cargo");
    const std::string token = test::unique_text("cargo-token-");
    const std::string credential = test::unique_text("cargo-credential-");
    for (const Way way : package_ways)
        for (const bool unprivileged : {false, true}) {
            if (unprivileged) test::require_user_switch();
            INFO(name_of(way) << (unprivileged ? " as nobody" : " as root"));
            PackageRun run(way, unprivileged);
            test::require_way(way);
            // A crate that depends on `dep` from crates.io, which the user's config replaces
            // with a vendored directory: without that setting, cargo would need crates.io.
            const fs::path vendor = run.tree.root / "vendor";
            put(vendor / "dep" / "Cargo.toml", "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
            put(vendor / "dep" / "src" / "lib.rs", "pub fn f() {}\n");
            put(vendor / "dep" / ".cargo-checksum.json", "{\"files\":{},\"package\":null}\n");
            const fs::path app = run.tree.ws / "app";
            put(app / "Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\ndep = \"0.1\"\n");
            put(app / "src" / "main.rs", "fn main() { dep::f() }\n");
            put(run.tree.home / ".cargo" / "config.toml",
                             "[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"" + vendor.string() +
                                 "\"\n[registry]\ntoken = \"" + token + "\"\n");
            put(run.tree.home / ".cargo" / "credentials.toml", "[registry]\ntoken = \"" + credential + "\"\n", fs::perms(0600));
            const auto before = listing(run.tree.home / ".cargo");
            auto r = run.sh("cd '" + app.string() + "' && /usr/bin/cargo fetch >cargo.log 2>&1; echo fetch=$?; "
                            "cat \"$HOME/.cargo/credentials.toml\" 2>/dev/null || echo credentials=denied; cat \"$CARGO_HOME/config.toml\"");
            INFO(r.out << r.err << test::read_file(app / "cargo.log"));
            REQUIRE(r.exit_code == 0);
            CHECK_THAT(r.out, Catch::Contains("fetch=0"));
            CHECK_THAT(test::read_file(app / "Cargo.lock"), Catch::Contains("name = \"dep\""));  // through the user's source replacement
            CHECK_THAT(r.out, Catch::Contains("replace-with = \"vendored\""));
            CHECK_THAT(r.out, Catch::Contains("credentials=denied"));
            CHECK_THAT(r.out + r.err, !Catch::Contains(token) && !Catch::Contains(credential));
            CHECK(fs::exists(run.tree.ws / ".confine" / "cargo" / ".package-cache"));  // cargo's lock, in the run's own home
            CHECK(listing(run.tree.home / ".cargo") == before);
        }
}

TEST_CASE("wrap --json gives a host the package managers' variables a run gets, and the caller's own stays", "[packages][e2e]") {
    test::require_bwrap();
    test::Installed confine;
    const fs::path config = confine.scratch("packages.toml");
    test::write_file(config, test::way_config(Way::bwrap) + "[policy.env]\nset = { CARGO_HOME = \"/opt/operator-cargo\" }\n");
    test::Tree tree(false);
    auto r = confine.run({"wrap", "--json", "--config", config.string(), "--workspace", tree.ws.string(), "--env", "PIP_CACHE_DIR=/srv/my-pip",
                          "--", "true"},
                         {tree.home_entry(), "npm_config_cache=" + (tree.home / ".npm").string()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto variables = nlohmann::json::parse(r.out)["environment"]["variables"];
    const std::string base = (fs::canonical(tree.ws) / ".confine").string();
    CHECK(variables["npm_config_cache"] == base + "/cache/npm");  // the caller's ambient one, replaced
    CHECK(variables["PIP_CACHE_DIR"] == "/srv/my-pip");           // --env NAME=VALUE: the caller's
    CHECK(variables["CARGO_HOME"] == "/opt/operator-cargo");      // [policy.env] set: the operator's
    CHECK_FALSE(fs::exists(tree.ws / ".confine"));                  // `true` is no package manager: nothing made

    auto npm = confine.run({"wrap", "--json", "--config", config.string(), "--workspace", tree.ws.string(), "--", "/bin/sh", "-c", "npm ci"},
                           {tree.home_entry()});
    INFO(npm.out << npm.err);
    REQUIRE(npm.exit_code == 0);
    CHECK(fs::is_regular_file(tree.ws / ".confine" / ".gitignore"));
}

TEST_CASE("run -- true leaves no .confine in the workspace, a run of npm gets its directory and the copy of its settings",
          "[packages][e2e][linux-only]") {
    for (const Way way : package_ways) {
        INFO(name_of(way));
        test::require_way(way);
        PackageRun run(way, false);
        put(run.tree.home / ".npmrc", "fund=false\n", fs::perms(0600));
        auto r = run.sh("true");
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_FALSE(fs::exists(run.tree.ws / ".confine"));
        // A package manager's run (as a shell's script names it): the directory, the copy of the denied npmrc.
        r = run.sh("cat \"$npm_config_userconfig\"; echo; /usr/bin/npm --version >/dev/null 2>&1; echo npm=$?");
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(fs::is_regular_file(run.tree.ws / ".confine" / ".gitignore"));
        CHECK_THAT(r.out, Catch::Contains("fund=false"));
    }
}

TEST_CASE("run -v says where a run's package managers keep their caches, as their variables name them", "[packages][e2e][linux-only]") {
    test::require_way(Way::landlock_forked);
    PackageRun run(Way::landlock_forked, false);
    const auto r = run.confine.run({"run", "-v", "--config", run.config.string(), "--workspace", run.tree.ws.string(), "--", "/bin/sh", "-c",
                                    "echo \"$npm_config_cache|$PIP_CACHE_DIR|$CARGO_HOME\""},
                                   {run.tree.home_entry(), "XDG_CACHE_HOME=" + (run.tree.home / ".cache").string()}, test::as_user(false));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const fs::path base = fs::canonical(run.tree.ws) / ".confine";
    CHECK(r.out == (base / "cache" / "npm").string() + "|" + (base / "cache" / "pip").string() + "|" + (base / "cargo").string() + "\n");
    CHECK_THAT(r.err, Catch::Contains("packages: npm cache " + (base / "cache" / "npm").string() + "; pip cache " + (base / "cache" / "pip").string() +
                                      "; cargo home " + (base / "cargo").string() + " (not made: "));
    CHECK_FALSE(fs::exists(base));
}
