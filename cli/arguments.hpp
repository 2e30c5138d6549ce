// confinectl's command line: a command, its options, and its operands.
//
// A small parser of its own rather than a general library: `confinectl run` sits in
// front of every confined command, and building a general parser's object graph (plus
// the iostream initialisation it brings) cost more than the whole in-process Landlock
// set-up (see bench/landlock). The grammar is the conventional one:
//
//   confinectl [-v|--verbose] [--plugin FILE] COMMAND [OPTION...] [--] [OPERAND...]
//
// Options are `--name VALUE` or `--name=VALUE`; flags take no value. For commands that
// run something, option parsing stops at the first operand or at `--`, so everything
// after belongs to the command (as with env(1)).
#pragma once

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine::cli {

struct OptionSpec {
    std::string_view name;        // "--config"
    std::string_view value_name;  // "FILE"; empty for a flag
    bool repeatable = false;
    std::string_view help;
};

enum class Operands {
    none,        // no operands
    optional,    // at most one
    command,     // a command and its arguments (at least one, checked by the caller)
};

struct CommandSpec {
    std::string_view name;
    std::string_view summary;
    std::string_view operand_usage;  // "[FILE]", "[--] COMMAND [ARG...]"
    Operands operands = Operands::none;
    std::vector<OptionSpec> options;
};

struct Parsed {
    enum class Action { run, help, version } action = Action::run;
    const CommandSpec* command = nullptr;  // null for global help and version
    bool verbose = false;
    std::optional<std::string> plugin;  // the global --plugin FILE
    std::vector<std::pair<std::string_view, std::string>> values;  // in the order given
    std::vector<std::string> operands;

    bool has(std::string_view option) const;
    // The value of a single-valued option, if given.
    std::optional<std::string> value(std::string_view option) const;
    // Every value of a repeatable option, in order.
    std::vector<std::string> all(std::string_view option) const;
};

// Parses argv[1..]. An error is one line, without the program's name.
std::expected<Parsed, std::string> parse(std::span<const char* const> args, std::span<const CommandSpec> commands);

std::string global_help(std::string_view program, std::string_view description, std::span<const CommandSpec> commands);
std::string command_help(std::string_view program, const CommandSpec& command);

}  // namespace confine::cli
