#include "trust.hpp"

#include <confine/sdk/trust_posix.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace confine::detail {
namespace {

std::mutex judged_mutex;
std::map<std::string, JudgedFile>& judged_files() {
    static std::map<std::string, JudgedFile> files;
    return files;
}

// When a file was last modified, to the nanosecond (macOS names the field differently).
std::string modified_text(const struct stat& st) {
#if defined(__APPLE__)
    const struct timespec& t = st.st_mtimespec;
#else
    const struct timespec& t = st.st_mtim;
#endif
    return std::to_string(t.tv_sec) + '.' + std::to_string(t.tv_nsec);
}

}  // namespace

std::string file_identity(const struct stat& st) {
    return std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) + ':' + std::to_string(st.st_size) + ':' + modified_text(st);
}

void remember_judged(const std::filesystem::path& asked, JudgedFile judged) {
    std::lock_guard lock(judged_mutex);
    judged_files().insert_or_assign(asked.string(), std::move(judged));
}

std::optional<JudgedFile> judged_file(const std::filesystem::path& asked) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(asked, ec);
    if (ec) return std::nullopt;
    std::lock_guard lock(judged_mutex);
    const auto it = judged_files().find(absolute.string());
    if (it == judged_files().end()) return std::nullopt;
    return it->second;
}

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
    remember_judged(absolute, JudgedFile{opened->real_path, file_identity(opened->status)});
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
