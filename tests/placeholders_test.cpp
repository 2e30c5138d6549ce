// Placeholders as the SDK writes and reads them (confine/sdk/placeholders.hpp), and as
// the host reads them among a runner's arguments (core/src/selection/placeholders.hpp): every kind
// read back as its constructor made it, a malformed one refused in one line, text that
// only looks like one left alone, each kind only where it may stand.
#include "placeholders.hpp"

#include <confine/config.hpp>
#include <confine/sdk/bwrap_profile.hpp>
#include <confine/sdk/placeholders.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

namespace sdk = confine::sdk;
using Kind = sdk::PlaceholderKind;

namespace {

// What the parser makes of `text`, which must be well-formed.
sdk::Placeholder read(const std::string& text) {
    const auto parsed = sdk::parse_placeholder(text);
    INFO(text);
    REQUIRE(parsed);
    REQUIRE(parsed->has_value());
    return **parsed;
}

// Why the parser refuses `text`, which must be malformed.
std::string refusal(const std::string& text) {
    const auto parsed = sdk::parse_placeholder(text);
    INFO(text);
    if (parsed) FAIL("accepted as " + (parsed->has_value() ? sdk::placeholder_text(**parsed) : std::string("no placeholder")));
    return parsed.error();
}

}  // namespace

TEST_CASE("each placeholder kind's constructor makes the text the parser reads back as that kind", "[sdk][placeholders]") {
    CHECK(sdk::status_fd_placeholder() == "{status-fd}");
    CHECK(sdk::network_filter_fd_placeholder() == "{network-filter-fd}");
    CHECK(sdk::dir_fd_placeholder("/srv/ws") == "{dir-fd:/srv/ws}");
    CHECK(sdk::dir_path_placeholder("/srv/ws") == "{dir-path:/srv/ws}");
    CHECK(read(sdk::status_fd_placeholder()) == sdk::Placeholder{Kind::status_fd, {}});
    CHECK(read(sdk::network_filter_fd_placeholder()) == sdk::Placeholder{Kind::network_filter_fd, {}});
    // A directory's path is everything between the first ':' and the last '}', whatever
    // it holds: a colon, braces, spaces, a newline.
    for (const std::string path : {"/", "/srv/ws", "/a:b/c", "/x}y", "/{dir-fd:/z}", "/with space", "/line\nbreak"}) {
        CHECK(read(sdk::dir_fd_placeholder(path)) == sdk::Placeholder{Kind::dir_fd, path});
        CHECK(read(sdk::dir_path_placeholder(path)) == sdk::Placeholder{Kind::dir_path, path});
    }
    for (const auto kind : {Kind::status_fd, Kind::dir_fd, Kind::dir_path, Kind::network_filter_fd}) {
        const sdk::Placeholder p{kind, sdk::placeholder_has_path(kind) ? "/srv/ws" : ""};
        CHECK(read(sdk::placeholder_text(p)) == p);
        CHECK(sdk::placeholder_text(p).starts_with(std::string("{").append(sdk::placeholder_name(kind))));
    }
    CHECK(sdk::placeholder_name(Kind::status_fd) == "status-fd");
    CHECK(sdk::placeholder_name(Kind::dir_fd) == "dir-fd");
    CHECK(sdk::placeholder_name(Kind::dir_path) == "dir-path");
    CHECK(sdk::placeholder_name(Kind::network_filter_fd) == "network-filter-fd");
}

TEST_CASE("the placeholder parser refuses a malformed placeholder in one line that names it and what is wrong", "[sdk][placeholders]") {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"{status-fd", "malformed placeholder '{status-fd': it does not end with '}'"},
        {"{dir-fd:/srv", "malformed placeholder '{dir-fd:/srv': it does not end with '}'"},
        {"{dir-path:/srv}x", "malformed placeholder '{dir-path:/srv}x': it does not end with '}'"},
        {"{status-fd:3}", "malformed placeholder '{status-fd:3}': {status-fd} takes nothing after its name"},
        {"{status-fd}}", "malformed placeholder '{status-fd}}': {status-fd} takes nothing after its name"},
        {"{network-filter-fd:/x}", "malformed placeholder '{network-filter-fd:/x}': {network-filter-fd} takes nothing after its name"},
        {"{dir-fd}", "malformed placeholder '{dir-fd}': {dir-fd:PATH} needs the directory's path after the ':'"},
        {"{dir-fd:}", "malformed placeholder '{dir-fd:}': {dir-fd:PATH} needs the directory's path after the ':'"},
        {"{dir-path:}", "malformed placeholder '{dir-path:}': {dir-path:PATH} needs the directory's path after the ':'"},
        {"{dir-fd:srv/ws}", "malformed placeholder '{dir-fd:srv/ws}': the directory's path must be absolute"},
        {"{dir-path:./ws}", "malformed placeholder '{dir-path:./ws}': the directory's path must be absolute"},
        {"{dir-fd:~/ws}", "malformed placeholder '{dir-fd:~/ws}': the directory's path must be absolute"},
        {std::string("{dir-fd:/a\0b}", 13), "malformed placeholder '{dir-fd:/a?b}': the directory's path holds a NUL byte"},
        {"{dir-fd:rel\n}", "malformed placeholder '{dir-fd:rel?}': the directory's path must be absolute"},
    };
    for (const auto& [text, message] : cases) {
        CHECK(refusal(text) == message);
        CHECK(refusal(text).find('\n') == std::string::npos);
    }
}

TEST_CASE("text that only looks like a placeholder is not one, and reaches the runner as it is", "[sdk][placeholders]") {
    for (const std::string text : {"", "{", "{}", "{status}", "{Status-FD}", "{STATUS-FD}", " {status-fd}", "x{status-fd}", "status-fd",
                                   "--status-fd", "{{status-fd}}", "{status-fds}", "{status-fd-2}", "{dir-fdx:/a}", "{dir_fd:/a}",
                                   "{dir-paths:/a}", "{network-filter}", "{network-filter-fd2}", "{tmp}", "{dir:/a}", "/proc/self/fd/3",
                                   "3", "(version 1)(deny default)", "/srv/{dir-fd:/a}"}) {
        const auto parsed = sdk::parse_placeholder(text);
        INFO(text);
        REQUIRE(parsed);
        CHECK_FALSE(parsed->has_value());
    }
}

TEST_CASE("the host reads each placeholder of a runner's own arguments where its kind may stand", "[core][placeholders]") {
    using confine::Placeholder;
    using confine::detail::runner_placeholders;
    const confine::Attestation status = confine::Attestation::status_fd(2, "ok");
    const confine::Attestation none;

    SECTION("the bubblewrap profile's, in argument order, the status descriptor at the attestation's argument") {
        confine::Policy policy{confine::Mode::workspace_write, "/srv/ws", {"/srv/cache"}, confine::Network::none};
        std::uint32_t status_argument = 0;
        std::vector<std::string> argv = sdk::bwrap_profile(std::vector<std::string>{"/usr/bin/bwrap"}, policy, &status_argument);
        argv.insert(argv.end(), {"--", "make", "{dir-fd:relative}", "{status-fd}"});
        const auto found = runner_placeholders(argv, argv.size() - 3, confine::Attestation::status_fd(status_argument, "\"exit-code\""));
        REQUIRE(found);
        REQUIRE(found->size() == 4);
        CHECK((*found)[0].kind == Kind::loopback_filter_fd);
        CHECK(argv[(*found)[0].argument] == "{loopback-filter-fd}");
        CHECK((*found)[1].kind == Kind::status_fd);
        CHECK((*found)[1].argument == status_argument);
        CHECK((*found)[2].kind == Kind::dir_fd);
        CHECK((*found)[2].path == "/srv/ws");
        CHECK(argv[(*found)[2].argument + 1] == "/srv/ws");
        CHECK((*found)[3].kind == Kind::dir_fd);
        CHECK((*found)[3].path == "/srv/cache");
    }
    SECTION("the status descriptor's argument whatever its text, as the ABI lets a runner choose it") {
        const std::vector<std::string> argv{"/usr/bin/runner", "--status", "{status}", "--", "true"};
        const auto found = runner_placeholders(argv, 4, status);
        REQUIRE(found);
        REQUIRE(found->size() == 1);
        CHECK((*found)[0].kind == Kind::status_fd);
        CHECK((*found)[0].argument == 2);
        CHECK(runner_placeholders(argv, 4, none)->empty());
    }
    SECTION("never the command's arguments, nor the \"--\" before them") {
        const std::vector<std::string> argv{"/usr/bin/runner", "--", "{dir-fd:}", "{status-fd}", "{dir-fd:/a}"};
        const auto found = runner_placeholders(argv, 2, none);
        REQUIRE(found);
        CHECK(found->empty());
    }
    SECTION("a placeholder where its kind may not stand, or a malformed one, is refused in one line naming the argument") {
        using Case = std::pair<std::vector<std::string>, std::string>;
        const std::vector<Case> cases{
            {{"/usr/bin/runner", "{dir-fd:srv}", "{status-fd}", "--", "true"},
             "argument 1: malformed placeholder '{dir-fd:srv}': the directory's path must be absolute"},
            {{"/usr/bin/runner", "{status-fd}", "{status-fd}", "--", "true"}, "argument 1 is {status-fd}, but the attestation names argument 2"},
            {{"/usr/bin/runner", "-s", "{dir-path:/a}", "--", "true"},
             "argument 2, where the attestation puts the status descriptor, is a dir-path placeholder"},
            {{"{dir-fd:/bin}", "-s", "{status-fd}", "--", "true"}, "argument 0, the runner's program, is a placeholder"},
        };
        for (const auto& [argv, message] : cases) {
            const auto found = runner_placeholders(argv, 4, status);
            REQUIRE_FALSE(found);
            CHECK(found.error() == message);
        }
        const std::vector<std::string> unattested{"/usr/bin/runner", "-s", "{status-fd}", "--", "true"};
        CHECK(runner_placeholders(unattested, 4, none).error() == "argument 2 is {status-fd}, but the attestation names no status descriptor");
    }
}

// A POSIX runner_command: on Windows its program is no absolute path, and no placeholder is
// filled there (a run whose argv holds one is refused).
#if !defined(_WIN32)
TEST_CASE("an operator's runner_command holds no malformed placeholder, nor one the asserted runner has no use for", "[config][placeholders]") {
    auto error_of = [](const std::string& command) {
        auto cfg = confine::parse_config("[platform.linux]\nrunner_command = " + command + "\nrunner_failure_signatures = [\"bwrap: \"]\n", "test.toml");
        INFO(command);
        REQUIRE_FALSE(cfg);
        return cfg.error().message;
    };
    CHECK(error_of(R"(["/usr/bin/bwrap", "--bind-fd", "{dir-fd:srv}", "/srv"])") ==
          "test.toml:2:18: platform.linux.runner_command: argument 2: malformed placeholder '{dir-fd:srv}': the directory's path must be absolute");
    CHECK(error_of(R"(["/usr/bin/bwrap", "--json-status-fd", "{status-fd}"])") ==
          "test.toml:2:18: platform.linux.runner_command: argument 2 is {status-fd}, but the attestation names no status descriptor");
    // A well-formed one is the operator's to ask for: filled in as a plugin's.
    auto cfg = confine::parse_config("[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\", \"--bind-fd\", \"{dir-fd:/srv}\", \"/srv\"]\n"
                                     "runner_failure_signatures = [\"bwrap: \"]\n",
                                     "test.toml");
    CHECK(cfg);
}
#endif
