#include "plugins/loader.hpp"

#include "log.hpp"
#if defined(__ELF__)
#include "elf_symbol.hpp"
#endif

#include <cstring>

namespace fs = std::filesystem;

namespace confine {
namespace {

using detail::plugin_error;

// The exact descriptor size defined by each minor version of this major, by index.
constexpr std::uint32_t descriptor_size_by_minor[] = {
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.0
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.1: the wrap result grew
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.2: the wrap result grew again
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.3: status-descriptor attestation
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.4: the command's process ID on it
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.5: the policy's network
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.6: the policy's and the wrap's /tmp
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.7: deny_read and protect
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.8: the policy's working directory
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.9: the host's setting_at_fault
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.10: the wrap's own lifetime level
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.11: the network through the run's proxy
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.12: the policy's read scope
    static_cast<std::uint32_t>(sizeof(confine_plugin_descriptor)),  // 1.13: the loopback filter's placeholder
};
static_assert(std::size(descriptor_size_by_minor) == CONFINE_ABI_MINOR + 1);

Error missing_exports(const fs::path& file, bool has_abi, bool has_descriptor) {
    std::string missing;
    if (!has_abi) missing = CONFINE_PLUGIN_ABI_SYMBOL;
    if (!has_descriptor) missing += (missing.empty() ? "" : ", ") + std::string(CONFINE_PLUGIN_DESCRIPTOR_SYMBOL);
    return plugin_error(ErrorCode::plugin_missing_export, file, "missing exported symbol(s): " + missing);
}

std::string version_text(unsigned major, unsigned minor) {
    return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<Error> check_abi(const fs::path& file, const confine_plugin_abi_info& abi, std::uint32_t descriptor_size) {
    const std::string host = version_text(CONFINE_ABI_MAJOR, CONFINE_ABI_MINOR);
    const std::string plugin = version_text(abi.major, abi.minor);
    if (abi.magic != CONFINE_ABI_MAGIC)
        return plugin_error(ErrorCode::plugin_missing_export, file, "exports confine_plugin_abi without the confine ABI marker");
    if (abi.major != CONFINE_ABI_MAJOR)
        return plugin_error(ErrorCode::plugin_abi_major_mismatch, file,
                            "plugin ABI " + plugin + " has a different major version than this host's " + host);
    if (abi.minor > CONFINE_ABI_MINOR)
        return plugin_error(ErrorCode::plugin_abi_minor_newer, file, "plugin ABI " + plugin + " is newer than this host's " + host);
    const std::uint32_t known = descriptor_size_by_minor[abi.minor];
    if (abi.descriptor_size != known || descriptor_size != known)
        return plugin_error(ErrorCode::plugin_descriptor_size_unknown, file,
                            "descriptor size " + std::to_string(descriptor_size) + " (declared " + std::to_string(abi.descriptor_size) +
                                ") is not the size " + std::to_string(known) + " of ABI " + plugin);
    return std::nullopt;
}

#if defined(__ELF__)
// The ABI record read from the file itself, before the dynamic loader maps it: a
// plugin of another ABI is refused before any of its code runs, static constructors
// included (docs/design.md §2). What the loader maps is checked again below.
std::optional<Error> check_abi_in_file(const detail::LoadTarget& target, const fs::path& file) {
    const detail::ElfSymbolRequest wanted[] = {{CONFINE_PLUGIN_ABI_SYMBOL, sizeof(confine_plugin_abi_info)},
                                               {CONFINE_PLUGIN_DESCRIPTOR_SYMBOL, sizeof(std::uint32_t)}};
    // Read through the judged descriptor itself where there is one.
    auto symbols = target.descriptor >= 0 ? detail::read_elf_symbols(target.descriptor, wanted) : detail::read_elf_symbols(target.path, wanted);
    if (!symbols) return plugin_error(ErrorCode::plugin_load_failed, file, "cannot load: " + symbols.error());
    const auto& abi_bytes = (*symbols)[0];
    const auto& desc_bytes = (*symbols)[1];
    if (!abi_bytes || !desc_bytes) return missing_exports(file, abi_bytes.has_value(), desc_bytes.has_value());
    confine_plugin_abi_info abi{};
    std::uint32_t descriptor_size = 0;
    std::memcpy(&abi, abi_bytes->data(), sizeof abi);
    std::memcpy(&descriptor_size, desc_bytes->data(), sizeof descriptor_size);
    return check_abi(file, abi, descriptor_size);
}
#endif

// The mapped plugin's exports, checked, into `impl`: the ABI record, then a descriptor
// with every entry point, naming the runner its file name names.
std::optional<Error> read_exports(Plugin::Impl& impl, const fs::path& file, std::string_view expected_runner) {
    const bool has_abi = impl.library.has(CONFINE_PLUGIN_ABI_SYMBOL);
    const bool has_desc = impl.library.has(CONFINE_PLUGIN_DESCRIPTOR_SYMBOL);
    if (!has_abi || !has_desc) return missing_exports(file, has_abi, has_desc);
    const auto& abi = impl.library.get<const confine_plugin_abi_info>(CONFINE_PLUGIN_ABI_SYMBOL);
    const auto& desc = impl.library.get<const confine_plugin_descriptor>(CONFINE_PLUGIN_DESCRIPTOR_SYMBOL);
    if (auto bad = check_abi(file, abi, desc.struct_size)) return bad;
    if (!desc.runner_name || !desc.create || !desc.destroy || !desc.probe || !desc.wrap || !desc.free_verdict ||
        !desc.free_wrap_result || !desc.free_string)
        return plugin_error(ErrorCode::plugin_missing_export, file, "descriptor lacks a runner name or an entry point");
    if (expected_runner != desc.runner_name)
        return plugin_error(ErrorCode::plugin_name_mismatch, file,
                            "descriptor names runner '" + std::string(desc.runner_name) + "' but the file name says '" +
                                std::string(expected_runner) + "'");
    impl.descriptor = &desc;
    impl.info.file = file;
    impl.info.runner_name = desc.runner_name;
    impl.info.version = desc.plugin_version ? desc.plugin_version : "";
    impl.info.summary = desc.summary ? desc.summary : "";
    impl.info.abi_major = abi.major;
    impl.info.abi_minor = abi.minor;
    return std::nullopt;
}

}  // namespace

Plugin::Plugin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plugin::~Plugin() = default;
const PluginInfo& Plugin::info() const noexcept { return impl_->info; }

std::expected<std::shared_ptr<Plugin>, Error> load_plugin(const fs::path& file, std::string_view expected_runner) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
        return std::unexpected(plugin_error(ErrorCode::plugin_not_found, file, "not a regular file"));
    const auto load_path = detail::trusted_load_path(file);
    if (!load_path) return std::unexpected(load_path.error());
#if defined(__ELF__)
    if (auto bad = check_abi_in_file(*load_path, file)) return std::unexpected(std::move(*bad));
#endif
    auto impl = std::make_unique<Plugin::Impl>();
    if (auto why = detail::map_library(impl->library, load_path->path))
        return std::unexpected(plugin_error(ErrorCode::plugin_load_failed, file, "cannot load: " + *why));
    if (auto bad = read_exports(*impl, file, expected_runner)) return std::unexpected(std::move(*bad));
    detail::log_debug("loaded plugin {} (runner {}, ABI {}.{})", file.string(), impl->info.runner_name, impl->info.abi_major,
                      impl->info.abi_minor);
    return std::make_shared<Plugin>(std::move(impl));
}

}  // namespace confine
