// Loading a runner plugin on Windows: the access-list trust rule, LoadLibrary by path,
// and where the running program is.
#include "plugins/loader.hpp"

#include "trust.hpp"

#include <windows.h>

#include <string>

namespace fs = std::filesystem;

namespace confine::detail {

std::expected<LoadTarget, Error> trusted_load_path(const fs::path& file) {
    // A library cannot be loaded from a handle here: it is loaded by the path judged,
    // which the rule proves no one else may change (docs/design.md §11).
    if (auto bad = untrusted_reason(file))
        return std::unexpected(plugin_error(ErrorCode::plugin_untrusted, file, "refusing plugin: " + *bad));
    return LoadTarget{file, -1};
}

std::optional<std::string> map_library(boost::dll::shared_library& library, const fs::path& load_path) {
    std::error_code ec;
    library.load(load_path, boost::dll::load_mode::default_mode, ec);
    if (!ec) return std::nullopt;
    return ec.message();
}

fs::path running_program() {
    std::wstring buf(32768, L'\0');
    const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0 || n >= buf.size()) return {};
    buf.resize(n);
    std::error_code ec;
    fs::path self = fs::canonical(fs::path(buf), ec);
    return ec ? fs::path(buf) : self;
}

}  // namespace confine::detail
