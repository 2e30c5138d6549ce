// Whether a file may be trusted as configuration or code: the way sudo and ssh
// judge their files. Internal to libconfine.
#pragma once

#include <confine/error.hpp>

#include <cstddef>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if !defined(_WIN32)
#include <sys/stat.h>
#endif

namespace confine::detail {

// nullopt when `file` (or directory), its directory and every directory above it are
// trusted; otherwise why not, naming the offending path. Refused: anything writable by
// group or others (a root-owned sticky directory such as /var/tmp is accepted above the
// file's own directory: nobody else can replace what lies beneath it), and anything
// owned by a user other than root or the caller; on POSIX also anything under /tmp or
// /dev/shm. The rule itself is the SDK's (confine/sdk/trust_posix.hpp,
// confine/sdk/trust_windows.hpp), which plugins use as well.
std::optional<std::string> untrusted_reason(const std::filesystem::path& file);

// The *.toml files of the drop-in directory `dir` (dot files left out), in name order;
// none when it does not exist; an error, naming it and `what` it holds ("configuration"),
// when it is not trusted or cannot be listed.
std::expected<std::vector<std::filesystem::path>, Error> drop_in_files(const std::filesystem::path& dir, std::string_view what);

// Why a trusted file could not be read.
struct ReadFailure {
    enum class Kind { not_found, not_regular, untrusted, unreadable, too_large } kind;
    std::string message;  // names the path
};

// The contents of `file` (at most `max_bytes`), judged with the file and every directory
// above it and read through the same descriptor that was judged (POSIX), so that
// nothing can be swapped between the check and the read.
std::expected<std::string, ReadFailure> read_trusted_file(const std::filesystem::path& file, std::size_t max_bytes);

// A file this process judged and then read (read_trusted_file) or loaded (a plugin), as
// the trust walk found it: where it really is (absolute, no link) and its identity there
// ("device:inode:size:modified", of the descriptor that was read or loaded). Recorded
// by the path it was asked for, so that what a run relies on is named by what was used,
// without resolving the path again.
struct JudgedFile {
    std::filesystem::path real_path;
    std::string identity;
};
void remember_judged(const std::filesystem::path& asked, JudgedFile judged);
#if !defined(_WIN32)
// "device:inode:size:modified" of a file's status (POSIX).
std::string file_identity(const struct stat& status);
#endif
// What was recorded for `asked` (as given to remember_judged, or relative to the working
// directory), or nullopt: never judged here, or on Windows, which records nothing.
std::optional<JudgedFile> judged_file(const std::filesystem::path& asked);

}  // namespace confine::detail
