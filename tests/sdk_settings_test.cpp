// The SDK's readers of a runner's `[runner.<name>]` settings (confine/sdk/plugin.hpp,
// Settings): each gives the value of its type, the fallback when the key is absent, and
// otherwise an error naming the key (Error::setting), which the host reports at that
// key's place in the configuration.
#include <confine/sdk/plugin.hpp>
#include <confine/sdk/testing.hpp>

#include <catch2/catch.hpp>

namespace sdk = confine::sdk;
using namespace confine::sdk::testing;

namespace {

sdk::Settings sample() {
    return sdk::Settings({string_setting("text", "hello"), int_setting("count", 7), bool_setting("flag", true),
                          strings_setting("list", {"a", "b"}), string_setting("program", "/usr/bin/env"),
                          string_setting("relative", "bin/tool")});
}

// The error a reader gives for `key`: its message, and the key it names.
template <class T>
std::pair<std::string, std::string> refusal(const std::expected<T, sdk::Error>& read) {
    REQUIRE_FALSE(read);
    CHECK(read.error().code == CONFINE_E_INVALID_ARGUMENT);
    return {read.error().message, read.error().setting};
}

}  // namespace

TEST_CASE("bool_or reads a boolean, falls back when absent and names a key of another type", "[sdk]") {
    const auto s = sample();
    CHECK(s.bool_or("flag", false) == true);
    CHECK(s.bool_or("absent", true) == true);
    CHECK(s.bool_or("absent", false) == false);
    CHECK(refusal(s.bool_or("text", false)) == std::pair<std::string, std::string>{"setting 'text' must be a boolean, not a string", "text"});
    CHECK(refusal(s.bool_or("count", false)) == std::pair<std::string, std::string>{"setting 'count' must be a boolean, not an integer", "count"});
}

TEST_CASE("int_or reads an integer, falls back when absent and names a key of another type", "[sdk]") {
    const auto s = sample();
    CHECK(s.int_or("count", 0) == 7);
    CHECK(s.int_or("absent", -3) == -3);
    CHECK(refusal(s.int_or("flag", 0)) == std::pair<std::string, std::string>{"setting 'flag' must be an integer, not a boolean", "flag"});
    // The older spelling reads the same.
    CHECK(s.integer_or("count", 0) == 7);
    CHECK(refusal(s.integer_or("list", 0)).second == "list");
}

TEST_CASE("strings_or reads an array of strings, falls back when absent and names a key of another type", "[sdk]") {
    const auto s = sample();
    CHECK(s.strings_or("list", {}) == std::vector<std::string>{"a", "b"});
    CHECK(s.strings_or("absent", {"x"}) == std::vector<std::string>{"x"});
    CHECK(refusal(s.strings_or("text", {})) == std::pair<std::string, std::string>{"setting 'text' must be an array of strings, not a string", "text"});
    // The older spelling reads the same.
    CHECK(s.string_list_or("list", {}) == std::vector<std::string>{"a", "b"});
    CHECK(refusal(s.string_list_or("count", {})).second == "count");
}

TEST_CASE("string_or reads a string, falls back when absent and names a key of another type", "[sdk]") {
    const auto s = sample();
    CHECK(s.string_or("text", "") == "hello");
    CHECK(s.string_or("absent", "fallback") == "fallback");
    CHECK(refusal(s.string_or("list", "")) == std::pair<std::string, std::string>{"setting 'list' must be a string, not an array of strings", "list"});
}

TEST_CASE("absolute_path_or reads an absolute path and names a relative one or one of another type", "[sdk]") {
    const auto s = sample();
    CHECK(s.absolute_path_or("program", "/bin/false", sdk::PathRules::posix) == "/usr/bin/env");
    CHECK(s.absolute_path_or("absent", "/bin/false", sdk::PathRules::posix) == "/bin/false");
    CHECK(s.absolute_path_or("absent", "", sdk::PathRules::posix) == "");  // no fallback: none
    CHECK(refusal(s.absolute_path_or("relative", "/bin/false", sdk::PathRules::posix)) ==
          std::pair<std::string, std::string>{"setting 'relative' must be an absolute path, got 'bin/tool'", "relative"});
    CHECK(refusal(s.absolute_path_or("flag", "/bin/false", sdk::PathRules::posix)) ==
          std::pair<std::string, std::string>{"setting 'flag' must be a string, not a boolean", "flag"});
    // A relative fallback is refused too, naming the key it stands for.
    CHECK(refusal(s.absolute_path_or("absent", "tool", sdk::PathRules::posix)).second == "absent");
}

TEST_CASE("reject_unknown names the first key it does not know", "[sdk]") {
    const auto s = sample();
    CHECK_FALSE(s.reject_unknown({"text", "count", "flag", "list", "program", "relative"}));
    auto bad = s.reject_unknown({"text", "count", "flag", "list", "program"});
    REQUIRE(bad);
    CHECK(bad->message == "unknown setting 'relative'");
    CHECK(bad->setting == "relative");
}
