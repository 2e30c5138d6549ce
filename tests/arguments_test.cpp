// confinectl's command-line grammar, directly.
#include "arguments.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using confine::cli::CommandSpec;
using confine::cli::Operands;
using confine::cli::Parsed;

namespace {

const std::vector<CommandSpec> commands{
    {"probe", "Probe", "", Operands::none, {{"--config", "FILE", false, ""}, {"--json", "", false, ""}}},
    {"check", "Check", "[FILE]", Operands::optional, {}},
    {"run", "Run", "[--] COMMAND", Operands::command,
     {{"--config", "FILE", false, ""}, {"--writable", "PATH", true, ""}}},
};

auto parse(std::vector<const char*> args) { return confine::cli::parse(args, commands); }

}  // namespace

TEST_CASE("arguments: a command, its options in both spellings, and its operands", "[cli][arguments]") {
    auto p = parse({"-v", "run", "--config", "a.toml", "--writable=/w1", "--writable", "/w2", "--", "ls", "-l"});
    REQUIRE(p);
    CHECK(p->action == Parsed::Action::run);
    CHECK(p->command->name == "run");
    CHECK(p->verbose);
    CHECK(p->value("--config") == "a.toml");
    CHECK(p->all("--writable") == std::vector<std::string>{"/w1", "/w2"});
    CHECK(p->operands == std::vector<std::string>{"ls", "-l"});
    CHECK_FALSE(p->has("--json"));
}

TEST_CASE("arguments: everything after a command's first word is the command's own", "[cli][arguments]") {
    auto p = parse({"run", "--config", "c", "/bin/echo", "--config", "-v", "--", "x"});
    REQUIRE(p);
    CHECK_FALSE(p->verbose);
    CHECK(p->value("--config") == "c");
    CHECK(p->operands == std::vector<std::string>{"/bin/echo", "--config", "-v", "--", "x"});
    // "-" is an operand, and a value may itself start with a dash.
    auto dash = parse({"run", "--config", "-odd", "-"});
    REQUIRE(dash);
    CHECK(dash->value("--config") == "-odd");
    CHECK(dash->operands == std::vector<std::string>{"-"});
}

TEST_CASE("arguments: help and version, globally and per command", "[cli][arguments]") {
    CHECK(parse({"--help"})->action == Parsed::Action::help);
    CHECK(parse({"-h"})->command == nullptr);
    CHECK(parse({"--version"})->action == Parsed::Action::version);
    auto run_help = parse({"run", "--config", "x", "--help"});
    REQUIRE(run_help);
    CHECK(run_help->action == Parsed::Action::help);
    CHECK(run_help->command->name == "run");
    // After the command's first word, --help is the command's.
    auto inner = parse({"run", "ls", "--help"});
    REQUIRE(inner);
    CHECK(inner->action == Parsed::Action::run);
    CHECK(inner->operands == std::vector<std::string>{"ls", "--help"});
    const std::string help = confine::cli::command_help("confinectl", commands[2]);
    CHECK(help.find("--writable PATH") != std::string::npos);
    CHECK(help.find("(repeatable)") != std::string::npos);
    CHECK(confine::cli::global_help("confinectl", "D", commands).find("check ") != std::string::npos);
}

TEST_CASE("arguments: every misuse is one line naming what is wrong", "[cli][arguments]") {
    auto error = [](std::vector<const char*> args) {
        auto p = parse(args);
        REQUIRE_FALSE(p);
        CHECK(p.error().find('\n') == std::string::npos);
        return p.error();
    };
    CHECK(error({}) == "no command given (see confinectl --help)");
    CHECK(error({"-v"}) == "no command given (see confinectl --help)");
    CHECK(error({"--frob"}) == "unknown option '--frob' (see confinectl --help)");
    CHECK(error({"frob"}) == "unknown command 'frob' (see confinectl --help)");
    CHECK(error({"probe", "--frob=1"}) == "probe: unknown option '--frob' (see confinectl probe --help)");
    CHECK(error({"probe", "-x"}) == "probe: unknown option '-x' (see confinectl probe --help)");
    CHECK(error({"probe", "--config"}) == "probe: --config needs a value (FILE)");
    CHECK(error({"probe", "--config="}) == "probe: --config needs a non-empty value (FILE)");
    CHECK(error({"probe", "--config", ""}) == "probe: --config needs a non-empty value (FILE)");
    CHECK(error({"probe", "--json=1"}) == "probe: --json takes no value");
    CHECK(error({"probe", "--config", "a", "--config=b"}) == "probe: --config given more than once");
    CHECK(error({"probe", "x"}) == "probe: unexpected argument 'x' (see confinectl probe --help)");
    CHECK(error({"probe", "--", "x"}) == "probe: unexpected argument 'x' (see confinectl probe --help)");
    CHECK(error({"check", "a", "b"}) == "check: unexpected argument 'b' (see confinectl check --help)");
    CHECK(parse({"check", "a"})->operands == std::vector<std::string>{"a"});
    CHECK(parse({"check"})->operands.empty());
}

TEST_CASE("arguments: --plugin FILE comes before the command, in both spellings, once", "[cli][arguments]") {
    auto p = parse({"--plugin", "./confine-runner-x.so", "-v", "run", "--", "ls"});
    REQUIRE(p);
    CHECK(p->plugin == "./confine-runner-x.so");
    CHECK(p->verbose);
    CHECK(p->command->name == "run");
    CHECK(parse({"--plugin=/p/confine-runner-y.so", "probe"})->plugin == "/p/confine-runner-y.so");
    CHECK_FALSE(parse({"probe"})->plugin);
    // A value that is a command's name is the file, never the command.
    auto named_run = parse({"--plugin", "run", "probe"});
    REQUIRE(named_run);
    CHECK(named_run->plugin == "run");
    CHECK(named_run->command->name == "probe");
    CHECK(parse({"--plugin"}).error() == "--plugin needs a value (FILE)");
    CHECK(parse({"--plugin=", "probe"}).error() == "--plugin needs a non-empty value (FILE)");
    CHECK(parse({"--plugin", "a", "--plugin=b", "probe"}).error() == "--plugin given more than once");
    // After the command it is none of the command's options.
    CHECK(parse({"probe", "--plugin", "a"}).error() == "probe: unknown option '--plugin' (see confinectl probe --help)");
}
