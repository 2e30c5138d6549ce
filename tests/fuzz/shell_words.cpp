// Fuzz target: the shell quoting of what -v prints (core/src/log.hpp, shell_words), read
// back by a POSIX shell's word rules (and bash's $'...'), written here. Properties: the
// line is one line with no control character, and it reads back as the same words.
#include "fuzz.hpp"

#include "log.hpp"

#include <algorithm>

using confine::fuzz::require;

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Words separated by blanks; in a word, '...' is literal, $'...' takes the escapes
// \xHH (one or two digits), \\ and \', and a backslash outside quotes takes the next
// byte as it is.
std::vector<std::string> read_words(std::string_view line) {
    std::vector<std::string> words;
    std::size_t i = 0;
    for (;;) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i == line.size()) return words;
        std::string w;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
            if (line[i] == '\'') {
                const std::size_t close = line.find('\'', i + 1);
                require(close != std::string_view::npos, "a quote is closed", line);
                w.append(line.substr(i + 1, close - i - 1));
                i = close + 1;
            } else if (line.substr(i, 2) == "$'") {
                for (i += 2; i < line.size() && line[i] != '\''; ++i) {
                    if (line[i] != '\\') {
                        w += line[i];
                        continue;
                    }
                    require(++i < line.size(), "an escape is whole", line);
                    if (line[i] == 'x') {
                        int value = 0, digits = 0;
                        while (digits < 2 && i + 1 < line.size() && hex_digit(line[i + 1]) >= 0) value = value * 16 + hex_digit(line[++i]), ++digits;
                        require(digits > 0, "\\x has a digit", line);
                        w += static_cast<char>(value);
                    } else {
                        require(line[i] == '\\' || line[i] == '\'', "only the escapes written", line);
                        w += line[i];
                    }
                }
                require(i < line.size(), "a $'...' is closed", line);
                ++i;
            } else if (line[i] == '\\') {
                require(i + 1 < line.size(), "a backslash escapes something", line);
                w += line[i + 1];
                i += 2;
            } else {
                require(std::string_view("\"`$&|;<>()*?[]#~!{}").find(line[i]) == std::string_view::npos,
                        "no byte the shell would act on is left bare", line);
                w += line[i++];
            }
        }
        words.push_back(std::move(w));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    confine::fuzz::Input in(data, size);
    std::vector<std::string> words = in.strings('\0', 16);  // an argv holds no NUL
    const std::string line = confine::detail::shell_words(words);
    require(std::none_of(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }),
            "the line is one line with no control character", line);
    require(read_words(line) == words, "the line reads back as the same words", line);
    return 0;
}
