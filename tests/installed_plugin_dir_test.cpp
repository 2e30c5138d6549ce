// A program compiled against an installed confine, as its CMake package and confine.pc
// compile one: with CONFINE_INSTALLED_PLUGIN_DIR. Built twice (tests/CMakeLists.txt),
// with an absolute directory spelt as confine.pc spells it, and with a relative one;
// EXPECTED_BUILTIN_PLUGIN_DIR is what each must look in ("" for none).
#include <confine/provider.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

confine::Config config_from(const std::string& text) {
    auto config = confine::parse_config(text, "test.toml");
    if (!config) FAIL("test configuration does not parse: " << config.error().message);
    return *config;
}

const fs::path expected_dir = EXPECTED_BUILTIN_PLUGIN_DIR;

std::vector<fs::path> expected_dirs() {
    if (expected_dir.empty()) return {};
    return {expected_dir};
}

}  // namespace

TEST_CASE("a program compiled against an installed confine names that installation's plugin directory to its provider", "[plugins]") {
    CHECK(confine::installed_plugin_dirs() == expected_dirs());
    auto provider = confine::Provider::create(config_from("plugin_dirs = [\"/opt/one\"]\n"),
                                              {.builtin_plugin_dirs = confine::installed_plugin_dirs()});
    REQUIRE(provider);
    std::vector<fs::path> dirs{"/opt/one"};
    if (!expected_dir.empty()) dirs.push_back(expected_dir);
    CHECK((*provider)->plugin_dirs() == dirs);
}

TEST_CASE("without an installed plugin directory it can use, a program fails closed", "[plugins]") {
    auto provider = confine::Provider::create(config_from("[platform.linux]\nchain = [\"landlock\"]\n"),
                                              {.platform = "linux", .builtin_plugin_dirs = confine::installed_plugin_dirs()});
    REQUIRE(provider);
    auto wrapped = (*provider)->wrap({confine::Mode::read_only, {}, {}}, std::vector<std::string>{"true"});
    REQUIRE_FALSE(wrapped);
    CHECK(wrapped.error().code == confine::ErrorCode::sandbox_unavailable);
    const std::string where = expected_dir.empty() ? "(no plugin directories)" : expected_dir.string();
    CHECK_THAT(wrapped.error().message, Catch::Contains("confine-runner-landlock.so is in none of " + where));
}

TEST_CASE("a host program's own plugin directories come before the installed one", "[plugins]") {
    auto provider = confine::Provider::create(config_from(""), {.builtin_plugin_dirs = std::vector<fs::path>{"/opt/mine"}});
    REQUIRE(provider);
    CHECK((*provider)->plugin_dirs() == std::vector<fs::path>{"/opt/mine"});
}

TEST_CASE("nothing but the program's own options gives its provider the installed plugin directory", "[plugins]") {
    // Compiled with CONFINE_INSTALLED_PLUGIN_DIR, yet unasked the provider searches only
    // the directory beside the running binary: nothing is registered behind the program's back.
    auto provider = confine::Provider::create(config_from(""));
    REQUIRE(provider);
    const fs::path beside = confine::builtin_plugin_dir();
    CHECK((*provider)->plugin_dirs() == (beside.empty() ? std::vector<fs::path>{} : std::vector<fs::path>{beside}));
    if (!expected_dir.empty()) CHECK(beside != expected_dir);
}
