// Secrets a caller could uncover by what it sets around the run: a HOME pointed elsewhere
// must not uncover the account's own credential stores (`~` stands for both homes), and
// the environment filter removes what carries a credential (by name, or a URL with a
// password in its value) while it keeps configuration that is not secret. Each end-to-end
// case runs on every Linux way and is judged by what came out of the command.
#include "roots.hpp"
#include "support.hpp"
#include "ways.hpp"

#include <confine/environment.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>

namespace fs = std::filesystem;
using test::name_of;
using test::Way;

namespace {

// The account's home from the user database, resolved, or empty.
fs::path account_home() {
    const passwd* pw = ::getpwuid(::geteuid());
    if (!pw || !pw->pw_dir || *pw->pw_dir != '/') return {};
    std::error_code ec;
    fs::path real = fs::canonical(pw->pw_dir, ec);
    return ec ? fs::path() : real;
}

// HOME set to `home` for as long as it lives, then as it was.
struct HomeSetTo {
    std::string before;
    bool had;
    explicit HomeSetTo(const fs::path& home) {
        const char* h = std::getenv("HOME");
        had = h != nullptr;
        if (had) before = h;
        ::setenv("HOME", home.c_str(), 1);
    }
    ~HomeSetTo() {
        if (had) ::setenv("HOME", before.c_str(), 1);
        else ::unsetenv("HOME");
    }
    HomeSetTo(const HomeSetTo&) = delete;
    HomeSetTo& operator=(const HomeSetTo&) = delete;
};

// Uniquely named directories created beneath the account's own home for one test, and
// removed afterwards: nothing that was there before is touched.
struct InAccountHome {
    fs::path home = account_home();
    std::string denied_name = test::unique_text(".confine-test-denied-"), visible_name = test::unique_text(".confine-test-visible-");
    fs::path denied = home / denied_name, visible = home / visible_name;
    std::string canary = test::unique_text("CANARY-");

    InAccountHome() {
        if (home.empty() || ::access(home.c_str(), W_OK) != 0) test::skip_test("the account's home is not a writable directory");
        fs::create_directory(denied);
        fs::create_directory(visible);
        test::write_file(denied / "secret", canary + "\n", fs::perms(0600));
        test::write_file(visible / "plain", "visible\n");
    }
    ~InAccountHome() {
        std::error_code ec;
        fs::remove_all(denied, ec);
        fs::remove_all(visible, ec);
    }
    InAccountHome(const InAccountHome&) = delete;
    InAccountHome& operator=(const InAccountHome&) = delete;
};

// As root (the account whose home the user database names exists and is writable;
// nobody's is /nonexistent): HOME points at the tree's own home, and the configuration
// denies "~/<a directory that exists only in the account's home>". Before `~` meant
// both homes, the entry resolved under HOME, did not exist there, and was skipped.
void attempt_home_elsewhere(Way way) {
    test::Sandbox box(way);
    InAccountHome account;
    test::Tree tree(false);
    REQUIRE(account.home != fs::canonical(tree.home));
    test::write_file(box.config, test::way_config(way) + "[policy]\ndeny_read = [\"~/" + account.denied_name + "\"]\n");
    const std::string d = account.denied.string();
    const std::string script = "cat " + d + "/secret; ls -a " + d + "; od -c " + d + "/secret; cat " + account.visible.string() + "/plain; echo REACHED";
    auto args = box.args(tree, {"/bin/sh", "-c", script});
    args.insert(args.begin(), "-v");
    auto r = box.confine.run(args, {"HOME=" + tree.home.string()});
    INFO(name_of(way) << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("REACHED"));
    CHECK_THAT(r.out + r.err, !Catch::Contains(account.canary));
    CHECK_THAT(r.out, !Catch::Contains("secret\n"));  // the listing showed no name
    CHECK_THAT(r.out, Catch::Contains("visible\n"));  // the rest of the account's home stays readable
    CHECK_THAT(r.err, Catch::Contains("policy: deny_read ") && Catch::Contains(d));
}


// The names of finding 8 and their kin, with the values a caller's environment gives
// them: what the default filter must remove (a credential by its name, or a URL that
// carries a password whatever the name) ...
const std::vector<std::string> secret_entries{
    "PGPASSWORD=pg-secret-1",
    "MYSQL_PWD=mysql-secret-2",
    "DATABASE_URL=postgres://app:db-secret-3@db.example.org:5432/app",
    "REDIS_URL=redis://:redis-secret-4@cache.example.org:6379/0",
    "HTTPS_PROXY=http://proxyuser:proxy-secret-5@proxy.example.org:3128",
    "npm_config__authToken=npm-secret-6",
    "NPM_CONFIG__AUTH=npm-secret-7",
    "npm_config_//registry.npmjs.org/:_authToken=npm-secret-8",
    "DOCKER_AUTH_CONFIG={\"auths\":{\"r.example.org\":{\"auth\":\"docker-secret-9\"}}}",
    "AWS_ACCESS_KEY_ID=aws-secret-10",
    "AWS_SECRET_ACCESS_KEY=aws-secret-11",
    "AWS_SESSION_TOKEN=aws-secret-12",
    "GITHUB_TOKEN=gh-secret-13",
    "GH_TOKEN=gh-secret-14",
    "OPENAI_API_KEY=api-secret-15",
    "CLIENT_SECRET=client-secret-16",
    "REDISCLI_AUTH=redis-secret-17",
    "SSHPASS=ssh-secret-18",
    "GOOGLE_CREDENTIALS={\"private_key\":\"gcp-secret-19\"}",
    "AWS_SHARED_CREDENTIALS_FILE=/home/me/.aws/credentials-secret-20",
    "PIP_INDEX_URL=https://pypi.example.org/simple https://ci:pip-secret-21@pypi.corp.example.org/simple",
};
// ... and what it must keep: configuration that is not a secret, and names that only
// look like one.
const std::vector<std::string> plain_entries{
    "AWS_REGION=eu-west-3",
    "AWS_DEFAULT_REGION=eu-west-1",
    "AWS_PROFILE=build",
    "AWS_CONFIG_FILE=/etc/aws/config",
    "AWS_CA_BUNDLE=/etc/ssl/certs/ca.pem",
    "PWD=/work",
    "OLDPWD=/",
    "GIT_AUTHOR_NAME=Someone",
    "GIT_ASKPASS=/usr/bin/true",
    "TOKENIZERS_PARALLELISM=false",
    "SECRETARY=ok",
    "KEYBOARD=us",
    "KUBECONFIG=/etc/kube/config",
    "HTTP_PROXY=http://proxy.example.org:3128",
    "DATABASE_HOST_URL=postgres://app@db.example.org/app",
    "GIT_REMOTE=ssh://git@github.com/o/r.git",
    "NO_PROXY=localhost,127.0.0.1",
};

std::string entry_name(const std::string& entry) { return entry.substr(0, entry.find('=')); }
std::string entry_value(const std::string& entry) { return entry.substr(entry_name(entry).size() + 1); }

bool holds(const std::vector<std::string>& list, const std::string& item) { return std::find(list.begin(), list.end(), item) != list.end(); }

}  // namespace

TEST_CASE("the home ~ stands for $HOME and for the account's home from the user database, each once", "[secrets][roots]") {
    test::TempDir elsewhere;
    HomeSetTo at(elsewhere.path());
    const fs::path set_home = fs::canonical(elsewhere.path()), account = account_home();
    const auto homes = confine::detail::caller_homes();
    REQUIRE_FALSE(homes.empty());
    CHECK(homes.front() == set_home);
    if (!account.empty()) {
        CHECK(homes == std::vector<fs::path>{set_home, account});
        // HOME pointing at the account's home itself (through a link, too): one home.
        fs::create_directory_symlink(account, elsewhere / "link");
        HomeSetTo same(elsewhere / "link");
        CHECK(confine::detail::caller_homes() == std::vector<fs::path>{account});
    }
    const std::vector<fs::path> only_account = account.empty() ? std::vector<fs::path>{} : std::vector<fs::path>{account};
    for (const char* not_a_home : {"not/absolute", "/", "/nonexistent-confine-home"}) {
        HomeSetTo set(not_a_home);  // only the account's
        CHECK(confine::detail::caller_homes() == only_account);
    }

    const std::vector<fs::path> two{"/h/one", "/h/two"};
    CHECK(confine::detail::with_homes({"~/.ssh", "/srv/keys", "~", ".git/hooks"}, two) ==
          std::vector<fs::path>{"/h/one/.ssh", "/h/two/.ssh", "/srv/keys", "/h/one", "/h/two", ".git/hooks"});
    CHECK(confine::detail::with_homes({"~/.ssh", "/srv/keys"}, {}) == std::vector<fs::path>{"/srv/keys"});
    CHECK(confine::detail::with_homes({"~user/x", "a/~/b"}, two) == std::vector<fs::path>{"~user/x", "a/~/b"});
}

TEST_CASE("deny_read's ~ entries resolve beneath both homes when HOME points elsewhere", "[secrets][roots]") {
    const fs::path account = account_home();
    if (account.empty()) test::skip_test("the account has no home in the user database");
    test::TempDir elsewhere;
    fs::create_directories(elsewhere / ".ssh");
    HomeSetTo at(elsewhere.path());
    confine::Policy policy{confine::Mode::read_only, {}, {}};
    policy.deny_read = {"~", "~/.ssh"};
    auto resolved = confine::detail::resolve_policy(policy);
    REQUIRE(resolved);
    // "~" is both homes (each holds its own .ssh, dropped as within it).
    CHECK(resolved->deny_read == std::vector<fs::path>{fs::canonical(elsewhere.path()), account});

    policy.deny_read = {"~/.ssh"};
    resolved = confine::detail::resolve_policy(policy);
    REQUIRE(resolved);
    std::vector<fs::path> expected{fs::canonical(elsewhere / ".ssh")};
    std::error_code ec;
    if (fs::exists(account / ".ssh", ec)) expected.push_back(fs::canonical(account / ".ssh"));
    CHECK(resolved->deny_read == expected);
}

#define HOME_ELSEWHERE_CASES(WAY, TAG, TAGS)                                                                                                \
    TEST_CASE("a denied path beneath the account's home stays unread when HOME points elsewhere, through " TAG, "[escape][e2e][secrets]" TAGS) { \
        attempt_home_elsewhere(WAY);                                                                                                      \
    }

HOME_ELSEWHERE_CASES(Way::bwrap, "the bwrap plugin", "[linux-only]")
HOME_ELSEWHERE_CASES(Way::runner_command, "an asserted runner_command", "[linux-only]")
HOME_ELSEWHERE_CASES(Way::landlock_launcher, "landlock-run", "[linux-only]")
HOME_ELSEWHERE_CASES(Way::landlock_forked, "landlock in a forked child", "[linux-only]")
HOME_ELSEWHERE_CASES(Way::landlock_in_place, "landlock in place", "[linux-only]")

TEST_CASE("a URL carries a password when its authority holds user:password@", "[environment][secrets]") {
    using confine::url_carries_password;
    CHECK(url_carries_password("postgres://user:password@db:5432/app"));
    CHECK(url_carries_password("redis://:password@cache:6379"));
    CHECK(url_carries_password("http://u:p@proxy:3128"));
    CHECK(url_carries_password("mongodb+srv://u:p%40ss@cluster.example.org/db?retryWrites=true"));
    CHECK(url_carries_password("postgres://user:p@ss@db/app"));  // an '@' in the password, unencoded
    CHECK(url_carries_password("https://a.example.org/x https://u:p@b.example.org/y"));  // the second of a list
    CHECK(url_carries_password("amqp://u:p,q@h/v"));
    CHECK_FALSE(url_carries_password("postgres://user@db/app"));  // a user alone
    CHECK_FALSE(url_carries_password("ssh://git@github.com/o/r.git"));
    CHECK_FALSE(url_carries_password("postgres://user:@db/app"));  // an empty password
    CHECK_FALSE(url_carries_password("http://proxy:3128"));
    CHECK_FALSE(url_carries_password("http://[::1]:8080/x@y"));  // '@' in the path
    CHECK_FALSE(url_carries_password("http://h/?q=a:b@c"));      // in the query
    CHECK_FALSE(url_carries_password("user:password@host"));     // no scheme: not a URL
    CHECK_FALSE(url_carries_password("://u:p@h"));
    CHECK_FALSE(url_carries_password(""));
}

TEST_CASE("the default environment filter removes each credential of finding 8 and keeps configuration that is not secret", "[environment][secrets]") {
    const auto policy = test::config_from("").environment;
    CHECK(policy.exclude_url_passwords);
    std::vector<std::string> environment = secret_entries;
    environment.insert(environment.end(), plain_entries.begin(), plain_entries.end());
    auto env = confine::filter_environment(policy, environment);
    REQUIRE(env);
    for (const auto& e : secret_entries) {
        INFO(e);
        CHECK(holds(env->removed, entry_name(e)));
        for (const auto& kept : env->variables) CHECK_THAT(kept, !Catch::Contains(entry_value(e)));
    }
    for (const auto& e : plain_entries) {
        INFO(e);
        CHECK(holds(env->variables, e));
        CHECK_FALSE(holds(env->removed, entry_name(e)));
    }
    CHECK(env->removed.size() == secret_entries.size());

    // The other way: each one passed through by name (--env NAME), kept with its value.
    for (const auto& e : secret_entries) {
        INFO(e);
        auto passed = confine::filter_environment(policy, environment, std::vector<std::string>{entry_name(e)});
        REQUIRE(passed);
        CHECK(holds(passed->variables, e));
        CHECK(passed->removed.size() == secret_entries.size() - 1);
    }
    // A URL's password is judged by the value: the operator can turn that off.
    auto no_urls = policy;
    no_urls.exclude_url_passwords = false;
    auto loose = confine::filter_environment(no_urls, environment);
    REQUIRE(loose);
    for (const char* name : {"DATABASE_URL", "REDIS_URL", "HTTPS_PROXY", "PIP_INDEX_URL"}) {
        INFO(name);
        CHECK_FALSE(holds(loose->removed, name));
    }
    CHECK(holds(loose->removed, "PGPASSWORD"));
}

TEST_CASE("patterns in --env and include: --env 'AWS_*' keeps every AWS_ variable, and a pattern cannot be set", "[environment][secrets]") {
    const auto policy = test::config_from("").environment;
    const std::vector<std::string> environment{"AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY=b", "aws_session_token=c", "AWS_REGION=d", "GITHUB_TOKEN=e",
                                               "AWS_*=literal"};
    auto env = confine::filter_environment(policy, environment, std::vector<std::string>{"AWS_*"});
    REQUIRE(env);
    CHECK(env->variables == std::vector<std::string>{"AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY=b", "aws_session_token=c", "AWS_REGION=d", "AWS_*=literal"});
    CHECK(env->removed == std::vector<std::string>{"GITHUB_TOKEN"});
    // Without it, the credentials go and the region stays.
    auto plain = confine::filter_environment(policy, environment);
    REQUIRE(plain);
    CHECK(plain->variables == std::vector<std::string>{"AWS_REGION=d", "AWS_*=literal"});
    // The same pattern as [policy.env] include.
    auto with_include = policy;
    with_include.include = {"aws_*"};
    auto included = confine::filter_environment(with_include, environment);
    REQUIRE(included);
    CHECK(included->removed == std::vector<std::string>{"GITHUB_TOKEN"});
    // A pattern names no one variable to set.
    auto set = confine::filter_environment(policy, environment, std::vector<std::string>{"AWS_*=x"});
    REQUIRE_FALSE(set);
    CHECK(set.error().code == confine::ErrorCode::invalid_policy);
    CHECK(set.error().message == "environment override 'AWS_*=x': a pattern cannot be set; name one variable");
}

TEST_CASE("[policy.env] exclude_url_passwords is read, true by default", "[environment][config][secrets]") {
    CHECK(test::config_from("").environment.exclude_url_passwords);
    CHECK_FALSE(test::config_from("[policy.env]\nexclude_url_passwords = false\n").environment.exclude_url_passwords);
    CHECK(confine::EnvironmentPolicy{}.exclude_url_passwords);
    auto bad = confine::parse_config("[policy.env]\nexclude_url_passwords = \"no\"\n", "env.toml");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "env.toml:2:25: policy.env.exclude_url_passwords must be true or false, not string");
}

namespace {

// Every credential of finding 8 in confinectl's environment: none reaches the command
// (by name or value, in its output), the configuration that is not secret does, -v and
// the report name the removed ones, never a value; --env 'AWS_*' then passes the AWS
// ones through.
void attempt_environment(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    test::Sandbox box(way);
    test::Tree tree(unprivileged);
    std::vector<std::string> environment = secret_entries;
    environment.insert(environment.end(), plain_entries.begin(), plain_entries.end());
    const fs::path report = tree.root / "env-report.json";
    for (const bool aws : {false, true}) {
        std::vector<std::string> args{"-v", "run", "--config", box.config.string(), "--workspace", tree.ws.string()};
        if (way != Way::landlock_in_place) args.insert(args.end(), {"--report", report.string()});
        if (aws) args.insert(args.end(), {"--env", "AWS_*"});
        args.insert(args.end(), {"--", "/usr/bin/env"});
        auto r = box.confine.run(args, environment, test::as_user(unprivileged));
        INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << (aws ? ", --env 'AWS_*'" : "") << "\nstdout: " << r.out << "\nstderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        const std::string lines = "\n" + r.out;
        for (const auto& e : secret_entries) {
            INFO(e);
            const bool passed = aws && e.starts_with("AWS_");
            CHECK((lines.find("\n" + e + "\n") != std::string::npos) == passed);
            if (!passed) CHECK_THAT(r.out + r.err, !Catch::Contains(entry_value(e)));
            CHECK((r.err.find(" " + entry_name(e) + " ") != std::string::npos || r.err.find(" '" + entry_name(e) + "' ") != std::string::npos) == !passed);
        }
        for (const auto& e : plain_entries) {
            if (e.starts_with("PWD=") || e.starts_with("OLDPWD=")) continue;  // the shell's own, not ours to judge
            INFO(e);
            CHECK(lines.find("\n" + e + "\n") != std::string::npos);
        }
        if (way == Way::landlock_in_place) continue;
        const std::string text = test::read_file(report);
        const auto removed = nlohmann::json::parse(text)["environment"]["removed"];
        for (const auto& e : secret_entries) {
            INFO(e);
            const bool passed = aws && e.starts_with("AWS_");
            CHECK((std::find(removed.begin(), removed.end(), entry_name(e)) != removed.end()) == !passed);
            if (!passed) CHECK_THAT(text, !Catch::Contains(entry_value(e)));
        }
    }
}

}  // namespace

#define ENVIRONMENT_CASES(WAY, TAG, TAGS)                                                                                                   \
    TEST_CASE("credentials in the environment never reach the command, configuration does, through " TAG ", as root",                      \
              "[escape][e2e][environment][secrets]" TAGS) {                                                                               \
        attempt_environment(WAY, false);                                                                                                  \
    }                                                                                                                                     \
    TEST_CASE("credentials in the environment never reach the command, configuration does, through " TAG ", as an unprivileged user",      \
              "[escape][e2e][environment][secrets]" TAGS) {                                                                               \
        attempt_environment(WAY, true);                                                                                                   \
    }

ENVIRONMENT_CASES(Way::bwrap, "the bwrap plugin", "[linux-only]")
ENVIRONMENT_CASES(Way::runner_command, "an asserted runner_command", "[linux-only]")
ENVIRONMENT_CASES(Way::landlock_launcher, "landlock-run", "[linux-only]")
ENVIRONMENT_CASES(Way::landlock_forked, "landlock in a forked child", "[linux-only]")
ENVIRONMENT_CASES(Way::landlock_in_place, "landlock in place", "[linux-only]")

namespace {

// Every entry of the default deny_read list, created in a home of the test's own (a
// directory holding a canary where the store is a directory, else a file that is one),
// with configuration the tools need beside them: none of the stores is read or listed,
// the configuration is.
void attempt_default_stores(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    test::Sandbox box(way);
    test::Tree tree(false);
    const std::string canary = test::unique_text("CANARY-");
    const std::vector<std::string> directories{".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".oci", ".config/doctl",
                                               ".config/glab-cli", ".config/rclone", ".password-store", ".local/share/keyrings"};
    std::string script;
    for (const auto& entry : test::config_from("").deny_read) {
        REQUIRE(entry.starts_with("~/"));
        const std::string relative = entry.substr(2);
        const fs::path path = tree.home / relative;
        const bool directory = holds(directories, relative);
        fs::create_directories(directory ? path : path.parent_path());
        test::write_file(directory ? path / "stored" : path, canary + " " + relative + "\n", fs::perms(0600));
        script += "cat $HOME/" + relative + (directory ? "/stored; ls -a $HOME/" + relative : "") + "; ";
    }
    // What the tools need to run stays readable: gh's config.yml, cargo's config.toml.
    test::write_file(tree.home / ".config" / "gh" / "config.yml", "git_protocol: ssh\n");
    test::write_file(tree.home / ".cargo" / "config.toml", "[net]\nretry = 2\n");
    script += "cat $HOME/.config/gh/config.yml $HOME/.cargo/config.toml; echo REACHED";
    if (unprivileged) {
        for (const auto& entry : fs::recursive_directory_iterator(tree.root.path())) REQUIRE(::lchown(entry.path().c_str(), test::nobody, test::nobody) == 0);
        REQUIRE(::chown(tree.root.path().c_str(), test::nobody, test::nobody) == 0);
    }
    auto r = box.confine.run(box.args(tree, {"/bin/sh", "-c", script}), {"HOME=" + tree.home.string()}, test::as_user(unprivileged));
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::EndsWith("git_protocol: ssh\n[net]\nretry = 2\nREACHED\n"));
    CHECK_THAT(r.out + r.err, !Catch::Contains(canary));
    CHECK_THAT(r.out, !Catch::Contains("stored"));  // no listing showed a name
}

}  // namespace

#define DEFAULT_STORE_CASES(WAY, TAG, TAGS)                                                                                                 \
    TEST_CASE("the default deny_read list keeps every credential store unread, the GitHub CLI's token included, through " TAG,             \
              "[escape][e2e][secrets]" TAGS) {                                                                                            \
        attempt_default_stores(WAY, false);                                                                                               \
        attempt_default_stores(WAY, true);                                                                                                \
    }

DEFAULT_STORE_CASES(Way::bwrap, "the bwrap plugin", "[linux-only]")
DEFAULT_STORE_CASES(Way::runner_command, "an asserted runner_command", "[linux-only]")
DEFAULT_STORE_CASES(Way::landlock_launcher, "landlock-run", "[linux-only]")
DEFAULT_STORE_CASES(Way::landlock_forked, "landlock in a forked child", "[linux-only]")
DEFAULT_STORE_CASES(Way::landlock_in_place, "landlock in place", "[linux-only]")

TEST_CASE("confinectl refuses --env with a pattern to set in one line and 125, nothing run", "[environment][cli][secrets]") {
    test::Installed confine;
    const test::TempDir ws;
    const fs::path marker = ws / "ran";
    for (const std::string command : {"run", "wrap"}) {
        std::vector<std::string> args{command};
        if (command == "wrap") args.push_back("--json");
        args.insert(args.end(), {"--workspace", ws.path().string(), "--env", "AWS_*=x", "--", "/usr/bin/touch", marker.string()});
        auto r = confine.run(args);
        INFO(command << ": " << r.err);
        CHECK(r.exit_code == 125);
        CHECK(r.err == "confinectl: --env 'AWS_*=x': a pattern cannot be set; name one variable\n");
        if (command == "run") CHECK(r.out.empty());
        CHECK_FALSE(fs::exists(marker));
    }
}
