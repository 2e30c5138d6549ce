#include "elf_symbol.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

class File {
public:
    explicit File(const std::filesystem::path& p) : fd_(::open(p.c_str(), O_RDONLY | O_CLOEXEC)) {
        struct stat st {};
        if (fd_ >= 0 && ::fstat(fd_, &st) == 0) size_ = static_cast<std::uint64_t>(st.st_size);
    }
    ~File() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool ok() const { return fd_ >= 0; }
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

private:
    int fd_;
    std::uint64_t size_ = 0;
};

}  // namespace

std::expected<std::vector<std::optional<std::vector<std::byte>>>, std::string>
read_elf_symbols(const std::filesystem::path& path, std::span<const ElfSymbolRequest> wanted) {
    std::vector<std::optional<std::vector<std::byte>>> found(wanted.size());
    File f(path);
    if (!f.ok()) return std::unexpected(std::string("cannot open: ") + std::strerror(errno));
    Ehdr eh{};
    if (!f.read(0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return std::unexpected(std::string("not an ELF shared object"));
    if (eh.e_ident[EI_CLASS] != native_class || eh.e_ident[EI_DATA] != native_data)
        return std::unexpected(std::string("ELF class or byte order differs from this host's"));
    if (eh.e_type != ET_DYN) return std::unexpected(std::string("not an ELF shared object"));
    if (eh.e_shentsize != sizeof(Shdr) || eh.e_shnum == 0 || eh.e_shnum >= SHN_LORESERVE)
        return std::unexpected(std::string("malformed ELF section table"));
    std::vector<Shdr> sections(eh.e_shnum);
    if (!f.read(eh.e_shoff, sections.data(), sections.size() * sizeof(Shdr)))
        return std::unexpected(std::string("malformed ELF section table"));

    for (const Shdr& symtab : sections) {
        if (symtab.sh_type != SHT_DYNSYM) continue;
        if (symtab.sh_entsize != sizeof(Sym) || symtab.sh_link >= sections.size())
            return std::unexpected(std::string("malformed ELF dynamic symbol table"));
        const Shdr& strtab = sections[symtab.sh_link];
        const std::uint64_t count = symtab.sh_size / sizeof(Sym);
        std::vector<Sym> symbols(count);
        if (!f.read(symtab.sh_offset, symbols.data(), count * sizeof(Sym)))
            return std::unexpected(std::string("malformed ELF dynamic symbol table"));
        // The names, in one read: a plugin's string table is small.
        if (strtab.sh_size > (16u << 20)) return std::unexpected(std::string("malformed ELF string table"));
        std::vector<char> names(strtab.sh_size);
        if (!f.read(strtab.sh_offset, names.data(), names.size())) return std::unexpected(std::string("malformed ELF string table"));
        for (const Sym& s : symbols) {
            if (s.st_shndx == SHN_UNDEF || s.st_shndx >= sections.size() || s.st_name >= names.size()) continue;
            const std::string_view sym_name(names.data() + s.st_name, ::strnlen(names.data() + s.st_name, names.size() - s.st_name));
            for (std::size_t w = 0; w < wanted.size(); ++w) {
                if (found[w] || sym_name != wanted[w].name) continue;
                const std::string name(wanted[w].name);
                const std::size_t size = wanted[w].size;
                if (s.st_size < size) return std::unexpected("symbol " + name + " is smaller than expected");
                const Shdr& home = sections[s.st_shndx];
                if (home.sh_type == SHT_NOBITS || s.st_value < home.sh_addr || s.st_value - home.sh_addr + size > home.sh_size)
                    return std::unexpected("symbol " + name + " has no contents in the file");
                std::vector<std::byte> bytes(size);
                if (!f.read(home.sh_offset + (s.st_value - home.sh_addr), bytes.data(), size))
                    return std::unexpected("symbol " + name + " lies outside the file");
                found[w] = std::move(bytes);
            }
        }
        break;  // one dynamic symbol table
    }
    return found;
}

}  // namespace confine::detail
