// stream-lines BYTES [LINE...]: writes BYTES bytes of compiler-like lines to stderr (the
// last one cut where the count ends, and ended, if LINEs follow), then each LINE with a
// newline, then prints on
// stdout "<bytes> <fnv-1a 64 in hex>" of everything it wrote to stderr, and exits with
// STREAM_LINES_EXIT (default 0). The output tests use it to check that a stream reached
// the caller whole and unchanged, and that what follows a gigabyte is still found.
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

std::uint64_t fnv = 0xcbf29ce484222325ULL;
std::uint64_t written = 0;
char last_byte = 0;

void emit(const char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) fnv = (fnv ^ static_cast<unsigned char>(p[i])) * 0x100000001b3ULL;
    written += n;
    if (n) last_byte = p[n - 1];
    while (n) {
        const ssize_t w = ::write(2, p, n);
        if (w <= 0) std::exit(3);
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: stream-lines BYTES [LINE...]\n");
        return 2;
    }
    std::uint64_t left = std::strtoull(argv[1], nullptr, 10);
    std::string block;
    for (std::uint64_t line = 0; left > 0;) {
        block.clear();
        while (block.size() < (1 << 16)) {
            char one[160];
            const int n = std::snprintf(one, sizeof one, "src/module%" PRIu64 "/file.cpp:%" PRIu64 ":%" PRIu64
                                                         ": warning: unused variable 'value_%" PRIu64 "' [-Wunused-variable]\n",
                                        line % 97, line % 4099 + 1, line % 81 + 1, line);
            block.append(one, static_cast<std::size_t>(n));
            ++line;
        }
        const std::size_t n = left < block.size() ? static_cast<std::size_t>(left) : block.size();
        emit(block.data(), n);
        left -= n;
    }
    // The lines that follow start lines of their own.
    if (argc > 2 && last_byte != '\n' && written > 0) emit("\n", 1);
    for (int i = 2; i < argc; ++i) {
        emit(argv[i], std::strlen(argv[i]));
        emit("\n", 1);
    }
    std::printf("%" PRIu64 " %016" PRIx64 "\n", written, fnv);
    const char* status = std::getenv("STREAM_LINES_EXIT");
    return status ? std::atoi(status) : 0;
}
