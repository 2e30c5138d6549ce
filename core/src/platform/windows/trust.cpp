// Whether a file may be trusted as configuration or code, on Windows: refused when its
// access list lets everyone, every authenticated user or every local user change it
// (or has no access list at all), for the file and, if asked, every directory above.
#include "trust.hpp"
#include "win.hpp"

#include <aclapi.h>
#include <sddl.h>

#include <cstdio>
#include <memory>

namespace confine::detail {
namespace {

std::optional<std::string> check_one(const std::filesystem::path& p) {
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

}  // namespace

std::optional<std::string> untrusted_reason(const std::filesystem::path& file) {
    std::error_code ec;
    std::filesystem::path real = std::filesystem::canonical(file, ec);
    if (ec) return file.string() + ": " + ec.message();
    if (auto bad = check_one(real)) return bad;
    for (std::filesystem::path dir = real.parent_path();; dir = dir.parent_path()) {
        if (auto bad = check_one(dir)) return bad;
        if (dir == dir.root_path() || dir.empty()) break;
    }
    return std::nullopt;
}

std::expected<std::string, ReadFailure> read_trusted_file(const std::filesystem::path& file, std::size_t max_bytes) {
    using Kind = ReadFailure::Kind;
    std::error_code ec;
    const auto status = std::filesystem::status(file, ec);
    if (status.type() == std::filesystem::file_type::not_found) return std::unexpected(ReadFailure{Kind::not_found, file.string() + ": not found"});
    if (ec) return std::unexpected(ReadFailure{Kind::unreadable, file.string() + ": cannot stat: " + ec.message()});
    if (status.type() != std::filesystem::file_type::regular) return std::unexpected(ReadFailure{Kind::not_regular, file.string() + ": not a regular file"});
    if (auto bad = untrusted_reason(file)) return std::unexpected(ReadFailure{Kind::untrusted, *bad});
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(::_wfopen(file.wstring().c_str(), L"rb"), &std::fclose);
    if (!in) return std::unexpected(ReadFailure{Kind::unreadable, file.string() + ": cannot open for reading"});
    std::string text;
    char chunk[4096];
    std::size_t n = 0;
    while (text.size() <= max_bytes && (n = std::fread(chunk, 1, sizeof chunk, in.get())) > 0) text.append(chunk, n);
    if (std::ferror(in.get())) return std::unexpected(ReadFailure{Kind::unreadable, file.string() + ": read error"});
    if (text.size() > max_bytes) return std::unexpected(ReadFailure{Kind::too_large, file.string() + ": larger than " + std::to_string(max_bytes) + " bytes"});
    return text;
}

}  // namespace confine::detail
