// The environment filter (include/confine/environment.hpp) and its configuration,
// [policy.env]: what of the caller's environment a confined command gets.
#include <confine/config.hpp>
#include <confine/environment.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Strings = std::vector<std::string>;

confine::Config config_of(const std::string& text) {
    auto cfg = confine::parse_config(text, "env.toml");
    if (!cfg) FAIL(cfg.error().message);
    return *cfg;
}

std::string error_of(const std::string& text) {
    auto cfg = confine::parse_config(text, "env.toml");
    if (cfg) FAIL("configuration was accepted:\n" << text);
    CHECK(cfg.error().code == confine::ErrorCode::config_invalid);
    return cfg.error().message;
}

confine::FilteredEnvironment filtered(const confine::EnvironmentPolicy& policy, const Strings& environment, const Strings& overrides = {}) {
    auto env = confine::filter_environment(policy, environment, overrides);
    if (!env) FAIL(env.error().message);
    return *env;
}

bool has(const Strings& list, const std::string& item) { return std::find(list.begin(), list.end(), item) != list.end(); }

// The embedded default's policy, as every run gets it unless a file says otherwise.
confine::EnvironmentPolicy default_policy() { return config_of("").environment; }

}  // namespace

TEST_CASE("a name pattern is a glob compared without regard to case", "[environment]") {
    using confine::environment_pattern_matches;
    CHECK(environment_pattern_matches("GITHUB_TOKEN", "GITHUB_TOKEN"));
    CHECK(environment_pattern_matches("GITHUB_TOKEN", "github_token"));
    CHECK(environment_pattern_matches("*_token", "NPM_TOKEN"));
    CHECK_FALSE(environment_pattern_matches("*_TOKEN", "TOKEN"));
    CHECK_FALSE(environment_pattern_matches("*_TOKEN", "NPM_TOKENS"));
    CHECK(environment_pattern_matches("*_SECRET*", "CLIENT_SECRET"));
    CHECK(environment_pattern_matches("*_SECRET*", "app_secret_value"));
    CHECK_FALSE(environment_pattern_matches("*_SECRET*", "SECRETARY"));
    CHECK(environment_pattern_matches("A*B*C", "AxxBxxC"));
    CHECK(environment_pattern_matches("A*B*C", "ABC"));
    CHECK(environment_pattern_matches("A*B*C", "ABBBCBC"));
    CHECK_FALSE(environment_pattern_matches("A*B*C", "ACB"));
    CHECK(environment_pattern_matches("**", "ANYTHING"));
    CHECK(environment_pattern_matches("*", ""));
    CHECK_FALSE(environment_pattern_matches("PATH", "PATH2"));
    CHECK_FALSE(environment_pattern_matches("PATH", "XPATH"));
}

namespace {

// The glob, said recursively and without regard to case: what every pattern means.
bool glob_reference(std::string_view pattern, std::string_view name) {
    if (pattern.empty()) return name.empty();
    if (pattern.front() == '*') return glob_reference(pattern.substr(1), name) || (!name.empty() && glob_reference(pattern, name.substr(1)));
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    return !name.empty() && lower(pattern.front()) == lower(name.front()) && glob_reference(pattern.substr(1), name.substr(1));
}

// Every word of `letters` up to `longest` long, the empty one first.
std::vector<std::string> words_of(std::string_view letters, std::size_t longest) {
    std::vector<std::string> words{""};
    for (std::size_t at = 0; at < words.size(); ++at)
        if (words[at].size() < longest)
            for (char c : letters) words.push_back(words[at] + c);
    return words;
}

}  // namespace

TEST_CASE("every pattern's shape matches exactly what the glob says", "[environment]") {
    // Short patterns and names over a small alphabet reach every shape (NAME, *PART,
    // PART*, *PART*, stars inside, stars only, empty) and every overlap of them.
    const std::vector<std::string> words = words_of("aB*_", 4);
    std::size_t compared = 0;
    for (const auto& pattern : words)
        for (const auto& name : words) {
            if (name.find('*') != std::string::npos) continue;
            INFO("pattern '" << pattern << "', name '" << name << "'");
            REQUIRE(confine::environment_pattern_matches(pattern, name) == glob_reference(pattern, name));
            ++compared;
        }
    CHECK(compared > 10000);
}

TEST_CASE("the environment's filter keeps or drops each name exactly as the glob answers, for every pattern shape", "[environment]") {
    // Patterns of every shape, over letters in both cases, '_' and stars; names without
    // stars. Filtered one name at a time, each pattern in exclude, then in held, then in
    // include over an exclude of everything.
    const std::vector<std::string> names = words_of("aB_", 3);
    std::vector<std::string> patterns{"", "*", "**", "***"};
    for (const auto& n : names)
        if (!n.empty())
            for (const std::string& p : {n, "*" + n, n + "*", "*" + n + "*", n.substr(0, 1) + "*" + n.substr(1), "*" + n + "*" + n}) patterns.push_back(p);
    std::size_t compared = 0;
    for (const auto& pattern : patterns) {
        if (pattern.empty()) continue;  // not a pattern a policy may hold
        for (const auto& name : names) {
            if (name.empty()) continue;
            const Strings environment{name + "=v"};
            const bool matches = glob_reference(pattern, name);
            INFO("pattern '" << pattern << "', name '" << name << "'");
            confine::EnvironmentPolicy excluding;
            excluding.exclude = {pattern};
            REQUIRE(filtered(excluding, environment).variables.empty() == matches);
            confine::EnvironmentPolicy holding;
            holding.held = {pattern};
            REQUIRE(filtered(holding, environment).variables.empty() == matches);
            confine::EnvironmentPolicy including;
            including.exclude = {"*"};
            including.include = {pattern};
            REQUIRE(filtered(including, environment).variables.empty() == !matches);
            ++compared;
        }
    }
    CHECK(compared > 1000);
}

TEST_CASE("the default removes the names that look like secrets and keeps the rest", "[environment][config]") {
    const auto policy = default_policy();
    CHECK(policy.inherit == confine::EnvInherit::all);
    const Strings environment{"PATH=/usr/bin",  "HOME=/home/me",      "MY_API_KEY=k1",     "GITHUB_TOKEN=k2",     "aws_secret_access_key=k3",
                              "AWS_REGION=k4",  "DB_PASSWORD_FILE=k5", "SSH_AUTH_SOCK=k6", "SIGNING_KEY=k7",      "npm_token=k8",
                              "KEYBOARD=us",    "MONKEY=banana",       "SECRETARY=ok",     "TERM=xterm"};
    const auto env = filtered(policy, environment);
    // A region is configuration, not a secret: it stays.
    CHECK(env.variables == Strings{"PATH=/usr/bin", "HOME=/home/me", "AWS_REGION=k4", "KEYBOARD=us", "MONKEY=banana", "SECRETARY=ok", "TERM=xterm"});
    CHECK(env.removed == Strings{"DB_PASSWORD_FILE", "GITHUB_TOKEN", "MY_API_KEY", "SIGNING_KEY", "SSH_AUTH_SOCK", "aws_secret_access_key", "npm_token"});
    CHECK(env.set.empty());
    // Names only, never a value.
    for (const auto& name : env.removed) CHECK(name.find('=') == std::string::npos);
}

TEST_CASE("inherit core keeps only the documented core set, and none keeps nothing", "[environment]") {
    confine::EnvironmentPolicy policy;
    policy.inherit = confine::EnvInherit::core;
    const Strings environment{"PATH=/bin", "HOME=/h", "LC_ALL=C.UTF-8", "LANG=C", "EDITOR=vi", "TERM=dumb", "PYTHONPATH=/x"};
    auto core = filtered(policy, environment);
    CHECK(core.variables == Strings{"PATH=/bin", "HOME=/h", "LC_ALL=C.UTF-8", "LANG=C", "TERM=dumb"});
    CHECK(core.removed == Strings{"EDITOR", "PYTHONPATH"});
    for (const char* name : {"HOME", "LOGNAME", "USER", "PATH", "SHELL", "TERM", "LANG", "LC_*", "TZ", "TMPDIR"})
        CHECK(has(Strings(confine::core_environment_patterns().begin(), confine::core_environment_patterns().end()), name));

    policy.inherit = confine::EnvInherit::none;
    auto none = filtered(policy, environment);
    CHECK(none.variables.empty());
    CHECK(none.removed.size() == environment.size());
}

TEST_CASE("include passes a name through exclude and the core set, and set gives a value whatever the rest says", "[environment]") {
    confine::EnvironmentPolicy policy;
    policy.inherit = confine::EnvInherit::core;
    policy.exclude = {"*_TOKEN", "PATH"};
    policy.include = {"npm_*", "EDITOR"};
    policy.set = {{"CI", "1"}, {"DEPLOY_TOKEN", "operator's"}};
    const Strings environment{"PATH=/bin", "NPM_TOKEN=secret", "EDITOR=vi", "PAGER=less", "DEPLOY_TOKEN=caller's", "CI=0"};
    auto env = filtered(policy, environment);
    // PATH is excluded though core; NPM_TOKEN is included though excluded; EDITOR is
    // included though not core; the set values replace the caller's.
    CHECK(env.variables == Strings{"NPM_TOKEN=secret", "EDITOR=vi", "CI=1", "DEPLOY_TOKEN=operator's"});
    CHECK(env.removed == Strings{"PAGER", "PATH"});
    CHECK(env.set == Strings{"CI", "DEPLOY_TOKEN"});
}

TEST_CASE("an override NAME passes the caller's value through and NAME=VALUE sets it, over the policy", "[environment]") {
    auto policy = default_policy();
    policy.set = {{"MODE", "from the configuration"}};
    const Strings environment{"MY_API_KEY=k1", "GITHUB_TOKEN=k2", "PATH=/bin"};
    auto env = filtered(policy, environment, {"MY_API_KEY", "EXTRA=1", "MODE=from the command line", "ABSENT"});
    CHECK(env.variables == Strings{"MY_API_KEY=k1", "PATH=/bin", "MODE=from the command line", "EXTRA=1"});
    CHECK(env.removed == Strings{"GITHUB_TOKEN"});
    CHECK(env.set == Strings{"EXTRA", "MODE"});
    // An empty value is a value.
    CHECK(has(filtered(policy, environment, {"EMPTY="}).variables, "EMPTY="));
}

TEST_CASE("a bad override, pattern or name is refused, naming it", "[environment]") {
    const confine::EnvironmentPolicy policy;
    for (const std::string bad : {"", "=VALUE"}) {
        auto env = confine::filter_environment(policy, {}, Strings{bad});
        REQUIRE_FALSE(env);
        CHECK(env.error().code == confine::ErrorCode::invalid_policy);
        CHECK_THAT(env.error().message, Catch::Contains("an empty variable name"));
    }
    auto nul = confine::filter_environment(policy, {}, Strings{std::string("A\0B", 3)});
    REQUIRE_FALSE(nul);
    CHECK_THAT(nul.error().message, Catch::Contains("must not contain NUL"));

    confine::EnvironmentPolicy bad_pattern;
    bad_pattern.exclude = {"A=B"};
    auto refused = confine::filter_environment(bad_pattern, {});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message == "[policy.env] exclude entry 'A=B': a name pattern must not contain '='");
    confine::EnvironmentPolicy bad_name;
    bad_name.set = {{"", "x"}};
    CHECK_FALSE(confine::filter_environment(bad_name, {}));

    CHECK(confine::invalid_environment_name("GOOD_NAME") == std::nullopt);
    CHECK(confine::invalid_environment_pattern("*_GOOD*") == std::nullopt);
}

TEST_CASE("[policy.env] is read, and each key a file gives replaces the default's", "[environment][config]") {
    const auto cfg = config_of("[policy.env]\ninherit = \"core\"\nexclude = [\"CORP_*\"]\ninclude = [\"EDITOR\", \"LC_*\"]\n"
                               "set = { CI = \"1\", HTTP_PROXY = \"\" }\n");
    CHECK(cfg.environment.inherit == confine::EnvInherit::core);
    CHECK(cfg.environment.exclude == Strings{"CORP_*"});
    CHECK(cfg.environment.include == Strings{"EDITOR", "LC_*"});
    CHECK(cfg.environment.set == std::vector<std::pair<std::string, std::string>>{{"CI", "1"}, {"HTTP_PROXY", ""}});
    // A file that says only `inherit` keeps the default's exclude list.
    const auto only_inherit = config_of("[policy.env]\ninherit = \"none\"\n");
    CHECK(only_inherit.environment.inherit == confine::EnvInherit::none);
    CHECK(only_inherit.environment.exclude == default_policy().exclude);
    CHECK(has(default_policy().exclude, "*API_KEY*"));
    CHECK(default_policy().exclude.size() == 26);
    // An explicit empty list is the list: nothing excluded.
    CHECK(config_of("[policy.env]\nexclude = []\n").environment.exclude.empty());
}

TEST_CASE("[policy.env] errors name file, line and column", "[environment][config]") {
    CHECK(error_of("[policy.env]\ninherit = \"some\"\n") == "env.toml:2:11: policy.env.inherit must be \"all\", \"core\" or \"none\"");
    CHECK(error_of("[policy.env]\ninherit = 1\n") == "env.toml:2:11: policy.env.inherit must be \"all\", \"core\" or \"none\"");
    CHECK(error_of("[policy.env]\nexclude = [\"A_*\", 3]\n") == "env.toml:2:19: every entry of policy.env.exclude must be a string, not integer");
    CHECK(error_of("[policy.env]\ninclude = \"A_*\"\n") == "env.toml:2:11: policy.env.include must be an array of strings, not string");
    CHECK(error_of("[policy.env]\nexclude = [\"A=B\"]\n") == "env.toml:2:12: policy.env.exclude entry 'A=B': a name pattern must not contain '='");
    CHECK(error_of("[policy.env]\nset = { \"A=B\" = \"x\" }\n") == "env.toml:2:9: policy.env.set 'A=B': a variable name must not contain '='");
    CHECK(error_of("[policy.env]\nset = { \"\" = \"x\" }\n") == "env.toml:2:9: policy.env.set '': an empty variable name");
    CHECK(error_of("[policy.env]\nset = { CI = 1 }\n") == "env.toml:2:14: policy.env.set.CI must be a string, not integer");
    CHECK(error_of("[policy.env]\nset = [\"CI=1\"]\n") == "env.toml:2:7: policy.env.set must be a table of names and strings, not array");
    CHECK(error_of("[policy.env]\npass = [\"X\"]\n") == "env.toml:2:1: unknown key 'pass' in [policy.env] (known: inherit, exclude, include, set, exclude_url_passwords)");
    CHECK(error_of("[policy]\nenv = \"all\"\n") == "env.toml:2:7: policy.env must be a table, not string");
}
