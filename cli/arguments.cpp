#include "arguments.hpp"

#include <algorithm>

namespace confine::cli {
namespace {

bool is_help(std::string_view a) { return a == "-h" || a == "--help"; }
bool is_verbose(std::string_view a) { return a == "-v" || a == "--verbose"; }

std::string quoted(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out.append(1, '\'').append(s).append(1, '\'');
    return out;
}

const OptionSpec* find_option(const CommandSpec& command, std::string_view name) {
    for (const auto& o : command.options)
        if (o.name == name) return &o;
    return nullptr;
}

std::string see_help(const CommandSpec* command) {
    return command ? " (see confinectl " + std::string(command->name) + " --help)" : " (see confinectl --help)";
}

}  // namespace

bool Parsed::has(std::string_view option) const {
    return std::any_of(values.begin(), values.end(), [&](const auto& v) { return v.first == option; });
}

std::optional<std::string> Parsed::value(std::string_view option) const {
    for (const auto& [name, value] : values)
        if (name == option) return value;
    return std::nullopt;
}

std::vector<std::string> Parsed::all(std::string_view option) const {
    std::vector<std::string> out;
    for (const auto& [name, value] : values)
        if (name == option) out.push_back(value);
    return out;
}

namespace {

// The global options, then the command's name, from args[i] on; `i` is left past the
// name. A request for help or the version ends the parse there. The error, if any.
std::optional<std::string> read_command_name(std::span<const char* const> args, std::span<const CommandSpec> commands, Parsed& p,
                                             std::size_t& i) {
    for (; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (is_help(a)) {
            p.action = Parsed::Action::help;
            return std::nullopt;
        }
        if (a == "--version") {
            p.action = Parsed::Action::version;
            return std::nullopt;
        }
        if (is_verbose(a)) {
            p.verbose = true;
            continue;
        }
        if (a == "--plugin" || a.starts_with("--plugin=")) {
            if (p.plugin) return "--plugin given more than once";
            if (a == "--plugin" && i + 1 >= args.size()) return "--plugin needs a value (FILE)";
            p.plugin = a == "--plugin" ? std::string(args[++i]) : std::string(a.substr(9));
            if (p.plugin->empty()) return "--plugin needs a non-empty value (FILE)";
            continue;
        }
        if (a.starts_with('-')) return "unknown option " + quoted(a) + see_help(nullptr);
        for (const auto& c : commands)
            if (c.name == a) p.command = &c;
        if (!p.command) return "unknown command " + quoted(a) + see_help(nullptr);
        ++i;
        return std::nullopt;
    }
    return "no command given" + see_help(nullptr);
}

// One of the command's options, args[i] (`--name` or `--name=VALUE`), with its value
// (which may take args[i + 1], leaving `i` on it). The error, if any.
std::optional<std::string> read_option(std::span<const char* const> args, std::size_t& i, Parsed& p) {
    const CommandSpec& command = *p.command;
    const std::string prefix = std::string(command.name) + ": ";
    const std::string_view a = args[i];
    const std::size_t eq = a.find('=');
    const std::string_view name = a.substr(0, eq);
    const OptionSpec* option = name.starts_with("--") ? find_option(command, name) : nullptr;
    if (!option) return prefix + "unknown option " + quoted(name) + see_help(&command);
    std::string value;
    if (option->value_name.empty()) {
        if (eq != std::string_view::npos) return prefix + std::string(name) + " takes no value";
    } else if (eq != std::string_view::npos) {
        value = std::string(a.substr(eq + 1));
    } else if (i + 1 < args.size()) {
        value = args[++i];
    } else {
        return prefix + std::string(name) + " needs a value (" + std::string(option->value_name) + ")";
    }
    if (!option->value_name.empty() && value.empty())
        return prefix + std::string(name) + " needs a non-empty value (" + std::string(option->value_name) + ")";
    if (!option->repeatable && p.has(option->name)) return prefix + std::string(name) + " given more than once";
    p.values.emplace_back(option->name, std::move(value));
    return std::nullopt;
}

// The command's options and operands, from args[i] on. A request for help ends the
// parse there. The error, if any.
std::optional<std::string> read_command_arguments(std::span<const char* const> args, std::size_t i, Parsed& p) {
    const CommandSpec& command = *p.command;
    bool operands_only = false;
    for (; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (!operands_only && a == "--") {
            operands_only = true;
            continue;
        }
        if (operands_only || a == "-" || !a.starts_with('-')) {
            if (command.operands == Operands::none || (command.operands == Operands::optional && !p.operands.empty()))
                return std::string(command.name) + ": unexpected argument " + quoted(a) + see_help(&command);
            p.operands.emplace_back(a);
            // A command to run takes everything after its first word, options included.
            if (command.operands == Operands::command) operands_only = true;
            continue;
        }
        if (is_help(a)) {
            p.action = Parsed::Action::help;
            return std::nullopt;
        }
        if (is_verbose(a)) {
            p.verbose = true;
            continue;
        }
        if (auto error = read_option(args, i, p)) return error;
    }
    return std::nullopt;
}

}  // namespace

std::expected<Parsed, std::string> parse(std::span<const char* const> args, std::span<const CommandSpec> commands) {
    Parsed p;
    std::size_t i = 0;
    if (auto error = read_command_name(args, commands, p, i)) return std::unexpected(*error);
    if (p.action != Parsed::Action::run) return p;
    if (auto error = read_command_arguments(args, i, p)) return std::unexpected(*error);
    return p;
}

namespace {

std::string padded(std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    else s += "  ";
    return s;
}

}  // namespace

std::string global_help(std::string_view program, std::string_view description, std::span<const CommandSpec> commands) {
    std::string out = std::string(description) + "\n\nUsage: " + std::string(program) + " [-v] [--plugin FILE] COMMAND [OPTIONS]\n\nCommands:\n";
    for (const auto& c : commands) out += "  " + padded(std::string(c.name), 16) + std::string(c.summary) + "\n";
    out += "\nOptions:\n"
           "  " + padded("-v, --verbose", 16) + "Log what confine does, to stderr\n"
           "  " + padded("--plugin FILE", 16) + "Confine with this plugin file's runner alone (run, wrap, probe)\n"
           "  " + padded("-h, --help", 16) + "Show this help, or a command's with COMMAND --help\n"
           "  " + padded("--version", 16) + "Show the version\n";
    return out;
}

std::string command_help(std::string_view program, const CommandSpec& command) {
    std::string out = std::string(command.summary) + "\n\nUsage: " + std::string(program) + " " + std::string(command.name);
    if (!command.options.empty()) out += " [OPTIONS]";
    if (!command.operand_usage.empty()) out.append(1, ' ').append(command.operand_usage);
    out += "\n\nOptions:\n";
    for (const auto& o : command.options) {
        std::string left(o.name);
        if (!o.value_name.empty()) left.append(1, ' ').append(o.value_name);
        out += "  " + padded(left, 24) + std::string(o.help);
        if (o.repeatable) out += " (repeatable)";
        out += "\n";
    }
    out += "  " + padded("-v, --verbose", 24) + "Log what confine does, to stderr\n";
    out += "  " + padded("-h, --help", 24) + "Show this help\n";
    return out;
}

}  // namespace confine::cli
