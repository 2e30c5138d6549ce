// The one trust rule of confine on Windows, for the host and for runner plugins
// (design.md §11): nothing confine executes, loads or reads as configuration may
// be changeable by a broad group of users.
//
//   if (auto bad = confine::trust::untrusted_path(file)) { report(*bad); return; }
//
// A file is refused when its access list lets everyone, every authenticated user or
// every local user change it (or it has none at all), and so is every directory above
// it. Header-only; Windows only, and the caller links advapi32.
#pragma once

#include <windows.h>

#include <aclapi.h>
#include <sddl.h>

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

namespace confine::trust {

namespace detail {

// Why `p` itself could be changed by a broad group, or nullopt.
inline std::optional<std::string> broadly_changeable(const std::filesystem::path& p) {
    PSECURITY_DESCRIPTOR descriptor = nullptr;
    PACL dacl = nullptr;
    const DWORD rc = ::GetNamedSecurityInfoW(p.wstring().c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, &dacl,
                                             nullptr, &descriptor);
    if (rc != ERROR_SUCCESS) return p.string() + ": cannot read its access list (error " + std::to_string(rc) + ")";
    std::optional<std::string> why;
    if (!dacl) why = p.string() + " has no access list: anyone may change it";
    const DWORD changes = FILE_WRITE_DATA | FILE_APPEND_DATA | WRITE_DAC | WRITE_OWNER | DELETE | GENERIC_WRITE | GENERIC_ALL;
    struct Broad {
        const wchar_t* sid;
        const char* name;
    };
    for (const Broad& b : {Broad{L"S-1-1-0", "everyone"}, Broad{L"S-1-5-11", "every authenticated user"},
                           Broad{L"S-1-5-32-545", "every local user"}}) {
        if (why) break;
        PSID sid = nullptr;
        if (!::ConvertStringSidToSidW(b.sid, &sid)) continue;
        TRUSTEE_W trustee{};
        ::BuildTrusteeWithSidW(&trustee, sid);
        ACCESS_MASK mask = 0;
        if (::GetEffectiveRightsFromAclW(dacl, &trustee, &mask) == ERROR_SUCCESS && (mask & changes))
            why = p.string() + " can be changed by " + b.name;
        ::LocalFree(sid);
    }
    ::LocalFree(descriptor);
    return why;
}

}  // namespace detail

// Why `path` (a file or a directory), resolved, or a directory above it could be changed
// by everyone, every authenticated user or every local user, or nullopt; one line naming
// the offending path.
inline std::optional<std::string> untrusted_path(const std::filesystem::path& path) {
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(path, ec);
    if (ec) return path.string() + ": " + ec.message();
    if (auto bad = detail::broadly_changeable(real)) return bad;
    for (std::filesystem::path dir = real.parent_path();; dir = dir.parent_path()) {
        if (auto bad = detail::broadly_changeable(dir)) return bad;
        if (dir == dir.root_path() || dir.empty()) break;
    }
    return std::nullopt;
}

}  // namespace confine::trust
