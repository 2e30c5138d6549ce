// Fuzz target: the Windows command line confine builds from an argv
// (internal/confine/internal/windows_command_line.hpp), split again by the documented
// rules of the C runtime and CommandLineToArgvW, written here. Properties: an argv is
// refused exactly when it cannot be written (no program, a program with a quote or a
// control character that ends it, a NUL anywhere); otherwise the line splits
// back into the same argv.
#include "fuzz.hpp"

#include <confine/internal/windows_command_line.hpp>

#include <algorithm>

using confine::fuzz::require;

namespace {

// The program name: up to the next quote if it starts with one, else up to a space or
// a tab; no escapes. Then the arguments: separated by spaces and tabs outside quotes;
// 2n backslashes and a quote are n backslashes and a quote that opens or closes a
// quoted part, 2n+1 and a quote are n backslashes and a literal quote, other
// backslashes are literal; inside a quoted part "" is a literal quote.
std::vector<std::string> split(std::string_view line) {
    std::vector<std::string> argv;
    std::size_t i = 0;
    if (!line.empty() && line[0] == '"') {
        const std::size_t close = line.find('"', 1);
        argv.emplace_back(line.substr(1, close - 1));
        i = close == std::string_view::npos ? line.size() : close + 1;
    } else {
        const std::size_t end = std::min(line.find_first_of(" \t"), line.size());
        argv.emplace_back(line.substr(0, end));
        i = end;
    }
    for (;;) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i == line.size()) break;
        std::string arg;
        bool quoted = false;
        while (i < line.size() && (quoted || (line[i] != ' ' && line[i] != '\t'))) {
            if (line[i] == '\\') {
                std::size_t n = 0;
                while (i < line.size() && line[i] == '\\') ++n, ++i;
                if (i < line.size() && line[i] == '"') {
                    arg.append(n / 2, '\\');
                    if (n % 2) arg += '"', ++i;
                } else {
                    arg.append(n, '\\');
                }
            } else if (line[i] == '"') {
                if (quoted && i + 1 < line.size() && line[i + 1] == '"') arg += '"', i += 2;
                else quoted = !quoted, ++i;
            } else {
                arg += line[i++];
            }
        }
        argv.push_back(std::move(arg));
    }
    return argv;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    confine::fuzz::Input in(data, size);
    std::vector<std::string> argv = in.strings('\xff', 8);
    if (argv.empty()) argv.emplace_back();
    const std::string& program = argv.front();
    const bool writable = !program.empty() && program.find_first_of("\"\t\n\v") == std::string::npos &&
                          std::none_of(argv.begin(), argv.end(), [](const std::string& a) { return a.find('\0') != std::string::npos; });
    const auto line = confine::windows::command_line(argv);
    require(line.has_value() == writable, "an argv is refused exactly when it cannot be written", line ? *line : line.error());
    if (!line) return 0;
    require(line->find('\0') == std::string::npos, "a line holds no NUL: Windows would end it there");
    require(split(*line) == argv, "the line splits back into the argv", *line);
    return 0;
}
