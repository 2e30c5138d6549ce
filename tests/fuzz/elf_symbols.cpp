// Fuzz target: the ELF reader that takes a plugin file's ABI record before the dynamic
// loader maps it (core/src/platform/elf_symbol.hpp): the file's bytes are the input, read through
// a memory file as the loader reads a judged descriptor. Properties: never a crash and
// never a read outside the file (the sanitizer's part); an answer has exactly the size
// asked and is bytes of the file; a symbol read is one the file exports; a refusal is
// one line.
#include "fuzz.hpp"

#include "elf_symbol.hpp"

#include <confine/sdk/abi.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

using confine::fuzz::require;

namespace {

int memory_file() {
    static const int fd = ::memfd_create("fuzz-elf", MFD_CLOEXEC);
    return fd;
}

void one_line(const std::string& message) {
    require(!message.empty() && message.find('\n') == std::string::npos, "a refusal is one line", message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const int fd = memory_file();
    require(fd >= 0, "a memory file can be made");
    if (::ftruncate(fd, 0) != 0 || (size && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))) return 0;

    const confine::detail::ElfSymbolRequest wanted[] = {{CONFINE_PLUGIN_ABI_SYMBOL, sizeof(confine_plugin_abi_info)},
                                                        {CONFINE_PLUGIN_DESCRIPTOR_SYMBOL, sizeof(std::uint32_t)}};
    const auto symbols = confine::detail::read_elf_symbols(fd, wanted);
    const auto exported = confine::detail::exported_elf_symbols("/proc/self/fd/" + std::to_string(fd));
    if (!symbols) {
        one_line(symbols.error());
        return 0;
    }
    require(symbols->size() == std::size(wanted), "one answer per symbol asked");
    const std::string_view file(reinterpret_cast<const char*>(data), size);
    for (std::size_t i = 0; i < symbols->size(); ++i) {
        const auto& answer = (*symbols)[i];
        if (!answer) continue;
        require(answer->size() == wanted[i].size, "an answer has the size asked");
        const std::string_view bytes(reinterpret_cast<const char*>(answer->data()), answer->size());
        require(file.find(bytes) != std::string_view::npos, "an answer is bytes of the file");
        require(exported && std::find(exported->begin(), exported->end(), wanted[i].name) != exported->end(),
                "a symbol read is one the file exports");
    }
    if (!exported) one_line(exported.error());
    return 0;
}
