// Reads the bytes of an exported data symbol straight from an ELF file, without
// loading it: the loader's version checks happen before any of a plugin's code
// (its static constructors included) can run (docs/design.md §2). Built where plugins
// are ELF files (platform/posix/elf_symbol.cpp: POSIX calls, ELF headers). Internal to
// libconfine.
#pragma once

#include <cstddef>
#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

struct ElfSymbolRequest {
    std::string_view name;
    std::size_t size;  // the bytes wanted from the symbol's start
};

// One answer per request, in order (the file is opened once): nullopt when the file
// has no defined dynamic symbol of that name other than a local one (which the dynamic
// loader would not find by it). An error when the file is not an ELF
// shared object of this machine's class and byte order, when a table it needs lies
// outside the file or is larger than a plugin's, or when a symbol asked for is smaller
// than wanted or its bytes are not in the file. Never reads outside the file.
std::expected<std::vector<std::optional<std::vector<std::byte>>>, std::string>
read_elf_symbols(const std::filesystem::path& file, std::span<const ElfSymbolRequest> wanted);
// The same, read with pread from the open descriptor `fd` (left open).
std::expected<std::vector<std::optional<std::vector<std::byte>>>, std::string>
read_elf_symbols(int fd, std::span<const ElfSymbolRequest> wanted);

// The names of the file's defined dynamic symbols other than local ones: what it
// exports, in table order. The same errors as read_elf_symbols for the file and tables.
std::expected<std::vector<std::string>, std::string> exported_elf_symbols(const std::filesystem::path& file);

}  // namespace confine::detail
