// Whether a file may be trusted as configuration or code, on Windows: confine's one
// trust rule (confine/sdk/trust_windows.hpp), and the read that follows it.
#include "trust.hpp"

#include <confine/sdk/trust_windows.hpp>

#include <cstdio>
#include <memory>

namespace confine::detail {

std::optional<std::string> untrusted_reason(const std::filesystem::path& file) { return trust::untrusted_path(file); }

void remember_judged(const std::filesystem::path&, JudgedFile) {}
std::optional<JudgedFile> judged_file(const std::filesystem::path&) { return std::nullopt; }

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
