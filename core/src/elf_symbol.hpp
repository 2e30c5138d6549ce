// Reads the bytes of an exported data symbol straight from an ELF file, without
// loading it: the loader's version checks happen before any of a plugin's code
// (its static constructors included) can run. Internal to libconfine.
#pragma once

#include <cstddef>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace confine::detail {

// nullopt when the file has no defined dynamic symbol `name`; an error when the
// file is not an ELF shared object of this machine's class and byte order, or the
// symbol is smaller than `size` or lies outside the file.
std::expected<std::optional<std::vector<std::byte>>, std::string>
read_elf_symbol(const std::filesystem::path& file, const std::string& name, std::size_t size);

}  // namespace confine::detail
