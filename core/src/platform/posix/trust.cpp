#include "trust.hpp"

#include <confine/sdk/trust_posix.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace confine::detail {

std::optional<std::string> untrusted_reason(const std::filesystem::path& file) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    if (ec) return file.string() + ": " + ec.message();
    std::error_code dir_ec;
    const int kind = std::filesystem::is_directory(absolute, dir_ec) ? O_DIRECTORY : 0;
    auto opened = trust::open_trusted(absolute.string(), trust::path_only | kind);
    if (!opened) return opened.error();
    return std::nullopt;
}

std::expected<std::string, ReadFailure> read_trusted_file(const std::filesystem::path& file, std::size_t max_bytes) {
    using Kind = ReadFailure::Kind;
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    if (ec) return std::unexpected(ReadFailure{Kind::unreadable, file.string() + ": " + ec.message()});
    // Only to name the failure well: what is read is judged below, on its descriptor.
    struct stat st {};
    if (::stat(absolute.c_str(), &st) != 0)
        return std::unexpected(errno == ENOENT ? ReadFailure{Kind::not_found, file.string() + ": not found"}
                                               : ReadFailure{Kind::unreadable, file.string() + ": cannot stat: " + std::strerror(errno)});
    if (!S_ISREG(st.st_mode)) return std::unexpected(ReadFailure{Kind::not_regular, file.string() + ": not a regular file"});
    auto opened = trust::open_trusted(absolute.string(), O_RDONLY);
    if (!opened) return std::unexpected(ReadFailure{Kind::untrusted, opened.error()});
    std::string text;
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(opened->fd.get(), chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::unexpected(ReadFailure{Kind::unreadable, file.string() + ": read error: " + std::strerror(errno)});
        if (n == 0) break;
        text.append(chunk, static_cast<std::size_t>(n));
        if (text.size() > max_bytes) return std::unexpected(ReadFailure{Kind::too_large, file.string() + ": larger than " + std::to_string(max_bytes) + " bytes"});
    }
    return text;
}

}  // namespace confine::detail
