// Every offset, size and index in the file is checked against the file before it is
// used or anything is allocated for it: a crafted file may not make the reader read
// out of bounds, wrap an offset around, or allocate what the file does not hold.
#include "elf_symbol.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>

namespace confine::detail {
namespace {

// The ELF class of this process: plugins must match it anyway to be loadable.
using Ehdr = ElfW(Ehdr);
using Shdr = ElfW(Shdr);
using Sym = ElfW(Sym);
#if __SIZEOF_POINTER__ == 8
constexpr unsigned char native_class = ELFCLASS64;
#else
constexpr unsigned char native_class = ELFCLASS32;
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char native_data = ELFDATA2LSB;
#else
constexpr unsigned char native_data = ELFDATA2MSB;
#endif
// A plugin's dynamic symbol and string tables are small; larger ones are not a plugin's.
constexpr std::uint64_t max_table_bytes = 16u << 20;

class File {
public:
    explicit File(const std::filesystem::path& p) : fd_(::open(p.c_str(), O_RDONLY | O_CLOEXEC)), open_errno_(errno) {
        struct stat st {};
        if (fd_ >= 0 && ::fstat(fd_, &st) == 0) size_ = static_cast<std::uint64_t>(st.st_size);
    }
    // A descriptor open for reading, left open.
    explicit File(int fd) : fd_(fd), open_errno_(fd < 0 ? EBADF : 0), owned_(false) {
        struct stat st {};
        if (fd_ >= 0 && ::fstat(fd_, &st) == 0) size_ = static_cast<std::uint64_t>(st.st_size);
    }
    ~File() {
        if (fd_ >= 0 && owned_) ::close(fd_);
    }
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    bool ok() const { return fd_ >= 0; }
    int open_errno() const { return open_errno_; }
    // Reads exactly n bytes at off, bounds-checked against the file size.
    bool read(std::uint64_t off, void* into, std::size_t n) const {
        if (off > size_ || n > size_ - off) return false;
        auto* p = static_cast<char*>(into);
        while (n) {
            ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(off));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return false;
            p += r;
            off += static_cast<std::uint64_t>(r);
            n -= static_cast<std::size_t>(r);
        }
        return true;
    }
    // `bytes` bytes at `off`, or nullopt when they are not all in the file (checked before
    // anything is allocated) or more than a plugin's table.
    template <class T>
    std::optional<std::vector<T>> read_array(std::uint64_t off, std::uint64_t bytes) const {
        if (bytes > max_table_bytes || off > size_ || bytes > size_ - off) return std::nullopt;
        std::vector<T> out(static_cast<std::size_t>(bytes / sizeof(T)));
        if (!read(off, out.data(), out.size() * sizeof(T))) return std::nullopt;
        return out;
    }

private:
    int fd_;
    int open_errno_;
    bool owned_ = true;
    std::uint64_t size_ = 0;
};

std::unexpected<std::string> refuse(std::string why) { return std::unexpected(std::move(why)); }

// The section table of a shared object of this machine's class and byte order.
std::expected<std::vector<Shdr>, std::string> read_sections(const File& f) {
    Ehdr eh{};
    if (!f.read(0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return refuse("not an ELF shared object");
    if (eh.e_ident[EI_CLASS] != native_class || eh.e_ident[EI_DATA] != native_data)
        return refuse("ELF class or byte order differs from this host's");
    if (eh.e_type != ET_DYN) return refuse("not an ELF shared object");
    if (eh.e_shentsize != sizeof(Shdr) || eh.e_shnum == 0 || eh.e_shnum >= SHN_LORESERVE)
        return refuse("malformed ELF section table");
    auto sections = f.read_array<Shdr>(eh.e_shoff, std::uint64_t{eh.e_shnum} * sizeof(Shdr));
    if (!sections) return refuse("malformed ELF section table");
    return std::move(*sections);
}

// The symbol's first `size` bytes, from the section that holds it.
std::expected<std::vector<std::byte>, std::string> symbol_bytes(const File& f, const std::vector<Shdr>& sections, const Sym& s,
                                                                 const std::string& name, std::size_t size) {
    if (s.st_size < size) return refuse("symbol " + name + " is smaller than expected");
    const Shdr& home = sections[s.st_shndx];
    if (home.sh_type == SHT_NOBITS || s.st_value < home.sh_addr) return refuse("symbol " + name + " has no contents in the file");
    const std::uint64_t into = s.st_value - home.sh_addr;
    if (into > home.sh_size || size > home.sh_size - into) return refuse("symbol " + name + " has no contents in the file");
    std::vector<std::byte> bytes(size);
    if (into > std::numeric_limits<std::uint64_t>::max() - home.sh_offset || !f.read(home.sh_offset + into, bytes.data(), size))
        return refuse("symbol " + name + " lies outside the file");
    return bytes;
}

// The dynamic symbol table and its names, each bounds-checked; no table, none.
struct DynamicSymbols {
    std::vector<Shdr> sections;
    std::vector<Sym> symbols;
    std::vector<char> names;

    // Each defined symbol's entry and name (names cut at the table's end), local ones
    // left out: the dynamic loader finds no local symbol by its name.
    template <class F>
    void each_defined(F&& f) const {
        for (const Sym& s : symbols) {
            if (s.st_shndx == SHN_UNDEF || s.st_shndx >= sections.size() || s.st_name >= names.size()) continue;
            if (ELF32_ST_BIND(s.st_info) == STB_LOCAL) continue;  // the same in both classes
            const char* text = names.data() + s.st_name;
            f(s, std::string_view(text, ::strnlen(text, names.size() - s.st_name)));
        }
    }
};

std::expected<DynamicSymbols, std::string> read_dynamic_symbols(const File& f) {
    if (!f.ok()) return refuse(std::string("cannot open: ") + std::strerror(f.open_errno()));
    auto sections = read_sections(f);
    if (!sections) return std::unexpected(sections.error());
    DynamicSymbols out;
    out.sections = std::move(*sections);
    const Shdr* symtab = nullptr;  // the one dynamic symbol table
    for (const Shdr& s : out.sections)
        if (s.sh_type == SHT_DYNSYM && !symtab) symtab = &s;
    if (!symtab) return out;
    if (symtab->sh_entsize != sizeof(Sym) || symtab->sh_link >= out.sections.size()) return refuse("malformed ELF dynamic symbol table");
    auto symbols = f.read_array<Sym>(symtab->sh_offset, symtab->sh_size - symtab->sh_size % sizeof(Sym));
    if (!symbols) return refuse("malformed ELF dynamic symbol table");
    const Shdr& strtab = out.sections[symtab->sh_link];
    auto names = f.read_array<char>(strtab.sh_offset, strtab.sh_size);  // in one read
    if (!names) return refuse("malformed ELF string table");
    out.symbols = std::move(*symbols);
    out.names = std::move(*names);
    return out;
}

std::expected<std::vector<std::optional<std::vector<std::byte>>>, std::string> read_symbols(const File& f,
                                                                                         std::span<const ElfSymbolRequest> wanted) {
    std::vector<std::optional<std::vector<std::byte>>> found(wanted.size());
    auto table = read_dynamic_symbols(f);
    if (!table) return std::unexpected(table.error());
    std::optional<std::string> failure;
    table->each_defined([&](const Sym& s, std::string_view sym_name) {
        for (std::size_t w = 0; w < wanted.size() && !failure; ++w) {
            if (found[w] || sym_name != wanted[w].name) continue;
            auto bytes = symbol_bytes(f, table->sections, s, std::string(wanted[w].name), wanted[w].size);
            if (!bytes) failure = bytes.error();
            else found[w] = std::move(*bytes);
        }
    });
    if (failure) return refuse(*failure);
    return found;
}

}  // namespace

std::expected<std::vector<std::optional<std::vector<std::byte>>>, std::string>
read_elf_symbols(const std::filesystem::path& path, std::span<const ElfSymbolRequest> wanted) {
    return read_symbols(File(path), wanted);
}

std::expected<std::vector<std::optional<std::vector<std::byte>>>, std::string>
read_elf_symbols(int fd, std::span<const ElfSymbolRequest> wanted) {
    return read_symbols(File(fd), wanted);
}

std::expected<std::vector<std::string>, std::string> exported_elf_symbols(const std::filesystem::path& path) {
    File f(path);
    auto table = read_dynamic_symbols(f);
    if (!table) return std::unexpected(table.error());
    std::vector<std::string> names;
    table->each_defined([&](const Sym&, std::string_view name) { names.emplace_back(name); });
    return names;
}

}  // namespace confine::detail
