// Windows command lines: an argv joined so that CommandLineToArgvW (and the C
// runtime's own parser) splits it back into exactly the same arguments. Windows passes
// a process one string, not an argv, so every launcher and host on Windows needs this.
// Portable (plain strings), so that it is tested on any OS.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace confine::windows {

// One argument after the first, quoted by the parsing rules: 2n backslashes followed
// by a quote mean n backslashes and the end of a quoted part, 2n+1 followed by a quote
// mean n backslashes and a literal quote, and backslashes not followed by a quote are
// literal.
inline std::string quote_argument(std::string_view arg) {
    if (!arg.empty() && arg.find_first_of(" \t\n\v\"") == std::string_view::npos) return std::string(arg);
    std::string out = "\"";
    std::size_t backslashes = 0;
    for (char c : arg) {
        if (c == '\\') {
            ++backslashes;
            continue;
        }
        // Backslashes before a quote are doubled, and the quote itself escaped.
        out.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
        backslashes = 0;
        out.push_back(c);
    }
    // Before the closing quote, backslashes are doubled so that it stays a delimiter.
    out.append(backslashes * 2, '\\');
    out.push_back('"');
    return out;
}

// The whole command line. The program name (argv[0]) is parsed by different rules —
// quotes delimit, backslashes are literal — so it is quoted plainly and may contain no
// quote, tab, newline or NUL at all; such an argv is refused, as is an empty one.
inline std::expected<std::string, std::string> command_line(const std::vector<std::string>& argv) {
    if (argv.empty() || argv.front().empty()) return std::unexpected(std::string("no program to run"));
    const std::string& program = argv.front();
    if (program.find_first_of(std::string_view("\"\t\n\v\0", 5)) != std::string::npos)
        return std::unexpected("program name " + program + " contains a quote, a NUL or a control character");
    std::string out = program.find(' ') == std::string::npos ? program : "\"" + program + "\"";
    for (std::size_t i = 1; i < argv.size(); ++i) {
        if (argv[i].find('\0') != std::string::npos) return std::unexpected(std::string("an argument contains a NUL character"));
        out += ' ';
        out += quote_argument(argv[i]);
    }
    return out;
}

}  // namespace confine::windows
