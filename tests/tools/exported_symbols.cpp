// exported-symbols FILE...: what each ELF file exports (its defined dynamic symbols that
// are not local), one name a line, read by libconfine's own ELF reader; for the
// scripted tests of plugins built outside this tree. Exit 1 with one line when a file
// cannot be read.
#include "elf_symbol.hpp"

#include <cstdio>

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        auto names = confine::detail::exported_elf_symbols(argv[i]);
        if (!names) {
            std::fprintf(stderr, "exported-symbols: %s: %s\n", argv[i], names.error().c_str());
            return 1;
        }
        for (const auto& name : *names) std::printf("%s\n", name.c_str());
    }
    return 0;
}
