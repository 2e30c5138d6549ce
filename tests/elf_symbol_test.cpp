// The ELF pre-read of a plugin's ABI record (core/src/platform/elf_symbol.hpp), on crafted files:
// whatever a file says about its own layout, the reader reads nothing outside it,
// allocates nothing the file does not hold, and refuses with a reason or skips.
#if defined(__ELF__)
#include "support.hpp"

#include "elf_symbol.hpp"

#include <confine/plugins.hpp>
#include <confine/sdk/abi.h>

#include <catch2/catch.hpp>

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Ehdr = ElfW(Ehdr);
using Shdr = ElfW(Shdr);
using Sym = ElfW(Sym);
constexpr std::uint64_t huge = std::numeric_limits<std::uint64_t>::max();

// The smallest shared object the reader accepts: a section table of four sections
// (none, .dynsym, .dynstr, .data) and, in .data at address 0x1000, the ABI record
// followed by the descriptor's size. A test spoils one field, then writes it.
struct CraftedElf {
    static constexpr std::uint64_t strtab_at = sizeof(Ehdr), data_at = 128, symtab_at = 192, sections_at = 320;
    static constexpr std::uint64_t data_addr = 0x1000;
    static constexpr char names[] = "\0confine_plugin_abi\0confine_plugin";  // offsets 1 and 20
    Ehdr header{};
    Shdr sections[4]{};
    Sym symbols[3]{};
    confine_plugin_abi_info abi{CONFINE_ABI_MAGIC, CONFINE_ABI_MAJOR, CONFINE_ABI_MINOR, sizeof(confine_plugin_descriptor)};
    std::uint32_t descriptor_size = sizeof(confine_plugin_descriptor);

    CraftedElf() {
        std::memcpy(header.e_ident, ELFMAG, SELFMAG);
        header.e_ident[EI_CLASS] = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
        header.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
        header.e_ident[EI_VERSION] = EV_CURRENT;
        header.e_type = ET_DYN;
        header.e_version = EV_CURRENT;
        header.e_ehsize = sizeof(Ehdr);
        header.e_shoff = sections_at;
        header.e_shentsize = sizeof(Shdr);
        header.e_shnum = 4;
        sections[1] = section(SHT_DYNSYM, symtab_at, sizeof symbols, 0);
        sections[1].sh_link = 2;
        sections[1].sh_entsize = sizeof(Sym);
        sections[2] = section(SHT_STRTAB, strtab_at, sizeof names, 0);
        sections[3] = section(SHT_PROGBITS, data_at, 32, data_addr);
        symbols[1] = symbol(1, data_addr, sizeof abi);
        symbols[2] = symbol(20, data_addr + 16, sizeof(confine_plugin_descriptor));
    }
    static Shdr section(std::uint32_t type, std::uint64_t offset, std::uint64_t size, std::uint64_t addr) {
        Shdr s{};
        s.sh_type = type;
        s.sh_offset = offset;
        s.sh_size = size;
        s.sh_addr = addr;
        return s;
    }
    static Sym symbol(std::uint32_t name, std::uint64_t value, std::uint64_t size) {
        Sym s{};
        s.st_name = name;
        s.st_value = value;
        s.st_size = size;
        s.st_shndx = 3;
        s.st_info = ELF32_ST_INFO(STB_GLOBAL, STT_OBJECT);  // the same in both classes
        return s;
    }
    // The file's bytes, cut to `length` when given.
    void write(const fs::path& file, std::optional<std::size_t> length = std::nullopt) const {
        std::string bytes(sections_at + sizeof sections, '\0');
        std::memcpy(bytes.data(), &header, sizeof header);
        std::memcpy(bytes.data() + strtab_at, names, sizeof names);
        std::memcpy(bytes.data() + data_at, &abi, sizeof abi);
        std::memcpy(bytes.data() + data_at + 16, &descriptor_size, sizeof descriptor_size);
        std::memcpy(bytes.data() + symtab_at, symbols, sizeof symbols);
        std::memcpy(bytes.data() + sections_at, sections, sizeof sections);
        if (length) bytes.resize(*length);
        test::write_file(file, bytes, fs::perms(0755));
    }
};

using Answer = std::expected<std::vector<std::optional<std::vector<std::byte>>>, std::string>;

Answer read_record(const fs::path& file) {
    const confine::detail::ElfSymbolRequest wanted[] = {{CONFINE_PLUGIN_ABI_SYMBOL, sizeof(confine_plugin_abi_info)},
                                                        {CONFINE_PLUGIN_DESCRIPTOR_SYMBOL, sizeof(std::uint32_t)}};
    return confine::detail::read_elf_symbols(file, wanted);
}

// What the reader says of `elf`, written to a file: the refusal, or "" when it read.
std::string refusal(const test::TempDir& dir, const CraftedElf& elf, std::optional<std::size_t> length = std::nullopt) {
    const fs::path file = dir / "crafted.so";
    elf.write(file, length);
    auto answer = read_record(file);
    return answer ? std::string() : answer.error();
}

// Which of the two symbols the reader found in `elf` (neither refused).
std::pair<bool, bool> found(const test::TempDir& dir, const CraftedElf& elf) {
    elf.write(dir / "crafted.so");
    auto answer = read_record(dir / "crafted.so");
    REQUIRE(answer);
    return {(*answer)[0].has_value(), (*answer)[1].has_value()};
}

}  // namespace

TEST_CASE("the ELF reader finds the ABI record in a crafted file and in a built plugin", "[loader][elf]") {
    test::TempDir dir;
    CraftedElf elf;
    elf.write(dir / "crafted.so");
    for (const fs::path& file : {dir / "crafted.so", fs::path(FAKE_PLUGIN_DIR) / "confine-runner-usable.so"}) {
        INFO(file);
        auto answer = read_record(file);
        REQUIRE(answer);
        REQUIRE((*answer)[0]);
        REQUIRE((*answer)[1]);
        confine_plugin_abi_info abi{};
        std::uint32_t descriptor_size = 0;
        std::memcpy(&abi, (*answer)[0]->data(), sizeof abi);
        std::memcpy(&descriptor_size, (*answer)[1]->data(), sizeof descriptor_size);
        CHECK(abi.magic == CONFINE_ABI_MAGIC);
        CHECK(abi.major == CONFINE_ABI_MAJOR);
        CHECK(abi.minor == CONFINE_ABI_MINOR);
        CHECK(descriptor_size == sizeof(confine_plugin_descriptor));
    }
    CraftedElf no_descriptor;
    no_descriptor.symbols[2].st_shndx = SHN_UNDEF;  // imported, not defined
    CHECK(found(dir, no_descriptor) == std::pair{true, false});
}

TEST_CASE("the ELF reader refuses what is not a shared object of this host's class and byte order", "[loader][elf]") {
    test::TempDir dir;
    CraftedElf elf;
    CHECK(refusal(dir, elf, 0) == "not an ELF shared object");
    CHECK(refusal(dir, elf, 3) == "not an ELF shared object");                 // cut inside the magic
    CHECK(refusal(dir, elf, sizeof(Ehdr) - 1) == "not an ELF shared object");  // cut inside the header
    test::write_file(dir / "text.so", "#!/bin/sh\necho not a library\n" + std::string(64, ' '));
    CHECK(read_record(dir / "text.so").error() == "not an ELF shared object");
    CHECK(read_record(dir / "absent.so").error() == "cannot open: No such file or directory");

    CraftedElf executable;
    executable.header.e_type = ET_EXEC;
    CHECK(refusal(dir, executable) == "not an ELF shared object");
    CraftedElf other_class;
    other_class.header.e_ident[EI_CLASS] = sizeof(void*) == 8 ? ELFCLASS32 : ELFCLASS64;
    CHECK(refusal(dir, other_class) == "ELF class or byte order differs from this host's");
    CraftedElf other_order;
    other_order.header.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2MSB : ELFDATA2LSB;
    CHECK(refusal(dir, other_order) == "ELF class or byte order differs from this host's");
}

TEST_CASE("the ELF reader refuses a section table that is malformed or not in the file", "[loader][elf]") {
    test::TempDir dir;
    const std::string malformed = "malformed ELF section table";
    CraftedElf elf;
    CHECK(refusal(dir, elf, CraftedElf::sections_at + sizeof(Shdr)) == malformed);  // the file ends inside it
    for (std::uint64_t offset : {CraftedElf::sections_at + 8, std::uint64_t{1} << 40, huge - 16}) {
        INFO(offset);
        CraftedElf beyond;
        beyond.header.e_shoff = offset;
        CHECK(refusal(dir, beyond) == malformed);
    }
    CraftedElf entry_size;
    entry_size.header.e_shentsize = sizeof(Shdr) + 8;
    CHECK(refusal(dir, entry_size) == malformed);
    for (std::uint16_t count : {std::uint16_t{0}, std::uint16_t{SHN_LORESERVE}, std::uint16_t{0xffff}}) {
        INFO(count);
        CraftedElf counted;
        counted.header.e_shnum = count;
        CHECK(refusal(dir, counted) == malformed);
    }
}

TEST_CASE("the ELF reader refuses symbol and string tables that are malformed, not in the file or too large", "[loader][elf]") {
    test::TempDir dir;
    const std::string symbol_table = "malformed ELF dynamic symbol table", string_table = "malformed ELF string table";
    auto spoiled = [&](auto&& spoil) {
        CraftedElf elf;
        spoil(elf);
        return refusal(dir, elf);
    };
    CHECK(spoiled([](CraftedElf& e) { e.sections[1].sh_entsize = sizeof(Sym) + 1; }) == symbol_table);
    CHECK(spoiled([](CraftedElf& e) { e.sections[1].sh_link = 4; }) == symbol_table);
    CHECK(spoiled([](CraftedElf& e) { e.sections[1].sh_offset = 1u << 20; }) == symbol_table);
    CHECK(spoiled([](CraftedElf& e) { e.sections[1].sh_offset = huge - 8; }) == symbol_table);
    // Sizes the file could not hold: refused before anything that size is allocated.
    CHECK(spoiled([](CraftedElf& e) { e.sections[1].sh_size = std::uint64_t{1} << 62; }) == symbol_table);
    CHECK(spoiled([](CraftedElf& e) { e.sections[1].sh_size = huge - huge % sizeof(Sym); }) == symbol_table);
    CHECK(spoiled([](CraftedElf& e) { e.sections[2].sh_offset = 1u << 20; }) == string_table);
    CHECK(spoiled([](CraftedElf& e) { e.sections[2].sh_size = 17u << 20; }) == string_table);
    CHECK(spoiled([](CraftedElf& e) { e.sections[2].sh_size = huge; }) == string_table);
}

TEST_CASE("the ELF reader skips symbols whose names or sections are out of range, and reads no name past its table", "[loader][elf]") {
    test::TempDir dir;
    for (std::uint32_t name : {std::uint32_t{sizeof CraftedElf::names}, std::uint32_t{1} << 20, ~std::uint32_t{0}}) {
        INFO(name);
        CraftedElf elf;
        elf.symbols[1].st_name = name;
        CHECK(found(dir, elf) == std::pair{false, true});
    }
    // The table ends inside the second name, with no NUL after it: read only that far.
    CraftedElf cut_name;
    cut_name.sections[2].sh_size = 20 + 8;  // "confine_"
    CHECK(found(dir, cut_name) == std::pair{true, false});
    for (std::uint16_t index : {std::uint16_t{4}, std::uint16_t{SHN_ABS}, std::uint16_t{0xffff}}) {
        INFO(index);
        CraftedElf elf;
        elf.symbols[1].st_shndx = index;
        CHECK(found(dir, elf) == std::pair{false, true});
    }
}

TEST_CASE("the ELF reader refuses a symbol whose size or place is out of range", "[loader][elf]") {
    test::TempDir dir;
    const std::string abi = CONFINE_PLUGIN_ABI_SYMBOL;
    auto spoiled = [&](auto&& spoil) {
        CraftedElf elf;
        spoil(elf);
        return refusal(dir, elf);
    };
    CHECK(spoiled([](CraftedElf& e) { e.symbols[1].st_size = sizeof(confine_plugin_abi_info) - 1; }) ==
          "symbol " + abi + " is smaller than expected");
    const std::string no_contents = "symbol " + abi + " has no contents in the file";
    CHECK(spoiled([](CraftedElf& e) { e.symbols[1].st_value = CraftedElf::data_addr - 4; }) == no_contents);
    CHECK(spoiled([](CraftedElf& e) { e.symbols[1].st_value = CraftedElf::data_addr + 24; }) == no_contents);
    CHECK(spoiled([](CraftedElf& e) {
              e.sections[3].sh_addr = 0;
              e.symbols[2].st_value = 16;
              e.symbols[1].st_value = huge - 3;  // its end wraps round to 8, inside the section
          }) == no_contents);
    CHECK(spoiled([](CraftedElf& e) { e.sections[3].sh_type = SHT_NOBITS; }) == no_contents);
    const std::string outside = "symbol " + abi + " lies outside the file";
    CHECK(spoiled([](CraftedElf& e) { e.sections[3].sh_offset = 1u << 20; }) == outside);
    CHECK(spoiled([](CraftedElf& e) { e.sections[3].sh_offset = huge - 4; }) == outside);
    CHECK(spoiled([](CraftedElf& e) {
              e.sections[3].sh_offset = huge - 8;
              e.symbols[1].st_value = CraftedElf::data_addr + 16;  // the offset wraps round to 7
          }) == outside);
}

TEST_CASE("a crafted file whose ABI record reads well is still refused by the dynamic loader", "[loader][elf]") {
    test::TempDir dir;
    CraftedElf elf;
    elf.write(dir / "confine-runner-crafted.so");
    auto plugin = confine::load_plugin(dir / "confine-runner-crafted.so", "crafted");
    REQUIRE_FALSE(plugin);
    CHECK(plugin.error().code == confine::ErrorCode::plugin_load_failed);
    CHECK_THAT(plugin.error().message, Catch::StartsWith((dir / "confine-runner-crafted.so").string() + ": cannot load: "));
    CraftedElf other;
    other.header.e_ident[EI_CLASS] = sizeof(void*) == 8 ? ELFCLASS32 : ELFCLASS64;
    other.write(dir / "confine-runner-other.so");
    auto refused = confine::load_plugin(dir / "confine-runner-other.so", "other");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message ==
          (dir / "confine-runner-other.so").string() + ": cannot load: ELF class or byte order differs from this host's");
}

namespace {

// What `file` exports, sorted; a refusal fails the test.
std::vector<std::string> exports_of(const fs::path& file) {
    auto names = confine::detail::exported_elf_symbols(file);
    INFO(file);
    REQUIRE(names);
    std::sort(names->begin(), names->end());
    return *names;
}

}  // namespace

TEST_CASE("the ELF reader lists what a file exports, its defined symbols that are not local", "[loader][elf]") {
    test::TempDir dir;
    const std::vector<std::string> both{CONFINE_PLUGIN_DESCRIPTOR_SYMBOL, CONFINE_PLUGIN_ABI_SYMBOL};
    CraftedElf elf;
    elf.write(dir / "crafted.so");
    CHECK(exports_of(dir / "crafted.so") == both);
    CraftedElf local;
    local.symbols[2].st_info = ELF32_ST_INFO(STB_LOCAL, STT_OBJECT);
    local.write(dir / "crafted.so");
    CHECK(exports_of(dir / "crafted.so") == std::vector<std::string>{CONFINE_PLUGIN_ABI_SYMBOL});
    CraftedElf weak_and_undefined;
    weak_and_undefined.symbols[1].st_info = ELF32_ST_INFO(STB_WEAK, STT_FUNC);
    weak_and_undefined.symbols[2].st_shndx = SHN_UNDEF;  // imported, not defined
    weak_and_undefined.write(dir / "crafted.so");
    CHECK(exports_of(dir / "crafted.so") == std::vector<std::string>{CONFINE_PLUGIN_ABI_SYMBOL});
    // Refused as the record reader refuses.
    CraftedElf executable;
    executable.header.e_type = ET_EXEC;
    executable.write(dir / "crafted.so");
    auto refused = confine::detail::exported_elf_symbols(dir / "crafted.so");
    REQUIRE_FALSE(refused);
    CHECK(refused.error() == "not an ELF shared object");
    auto missing = confine::detail::exported_elf_symbols(dir / "missing.so");
    REQUIRE_FALSE(missing);
    CHECK(missing.error() == "cannot open: No such file or directory");
}

TEST_CASE("every plugin built with confine_add_runner_plugin exports exactly its two symbols", "[loader][elf]") {
    // The two confine-plugin(7) names, as abi.h spells them.
    const std::vector<std::string> both{CONFINE_PLUGIN_DESCRIPTOR_SYMBOL, CONFINE_PLUGIN_ABI_SYMBOL};
    std::vector<fs::path> plugins;
    for (const auto& entry : fs::directory_iterator(BUILTIN_PLUGIN_DIR))
        if (entry.path().filename().string().starts_with("confine-runner-")) plugins.push_back(entry.path());
    CHECK(plugins.size() >= 2);  // bwrap and landlock at least, with seatbelt and appcontainer where built
    plugins.push_back(fs::path(LANDLOCK_ABI_CAP_DIR) / "confine-runner-landlock.so");
    plugins.push_back(fs::path(FAKE_PLUGIN_DIR) / "confine-runner-usable.so");
    for (const auto& plugin : plugins) {
        INFO(plugin);
        CHECK(exports_of(plugin) == both);
    }
    // Built with EXPORT_RUNTIME, a plugin keeps whatever else it makes visible: the raw
    // fake's third symbol, which the reader sees — and, in a build with AddressSanitizer,
    // the sanitizer's own ODR indicator beside each global (__odr_asan.<name>).
    std::vector<std::string> raw = exports_of(fs::path(FAKE_PLUGIN_DIR) / "confine-runner-raw-ok.so");
#if defined(__SANITIZE_ADDRESS__)
    std::erase_if(raw, [](const std::string& name) { return name.starts_with("__odr_asan."); });
#endif
    CHECK(raw == std::vector<std::string>{CONFINE_PLUGIN_DESCRIPTOR_SYMBOL, CONFINE_PLUGIN_ABI_SYMBOL, "confine_raw_placeholder"});
}
#endif
