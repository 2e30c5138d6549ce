// Whether a runner program may be trusted to confine (design.md §11): a program
// that another user, or a command confined by confine, could have replaced is no
// sandbox at all. The one program-trust rule of confine, for the host (an operator's
// asserted runner_command) and for runner plugins (bubblewrap's program, the Landlock
// launcher):
//
//   // at every wrap, with the places this policy lets the command write:
//   std::vector<std::filesystem::path> writable{policy.workspace};
//   writable.insert(writable.end(), policy.writable.begin(), policy.writable.end());
//   if (auto bad = confine::sdk::untrusted_program(program_, writable))
//       return std::unexpected(sdk::unsupported("my runner cannot be used: " + *bad));
//
// Each function takes the program and the roots as strings or as paths (the policy's).
//
// On POSIX systems the rule is open_trusted's (trust_posix.hpp): the program and every
// directory above it, walked from "/", owned by root or the caller, writable by nobody
// else, nowhere a sandbox may write; and the program must be executable. On Windows it
// is untrusted_path's (trust_windows.hpp, which needs advapi32): nothing on the way
// changeable by everyone, every authenticated user or every local user; writable roots
// are not judged there.
#pragma once

#if defined(_WIN32)
#include <confine/sdk/trust_windows.hpp>
#else
#include <confine/sdk/trust_posix.hpp>

#include <fcntl.h>
#include <unistd.h>
#endif

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace confine::sdk {

// Why `program` cannot be trusted to run as (part of) a sandbox, or nullopt; one line
// naming the offending path. `writable_roots` are places the confined command may write
// beyond those every sandbox may (/tmp, /dev/shm), resolved (a host gives a runner the
// policy's roots resolved): a program there is refused whoever owns it.
inline std::optional<std::string> untrusted_program(const std::string& program, const std::vector<std::string>& writable_roots = {}) {
#if defined(_WIN32)
    (void)writable_roots;
    return trust::untrusted_path(program);
#else
    auto file = trust::open_trusted(program, trust::path_only, writable_roots);
    if (!file) return file.error();
    if ((file->status.st_mode & 0111) == 0 || ::faccessat(AT_FDCWD, file->real_path.c_str(), X_OK, AT_EACCESS) != 0)
        return file->real_path + " is not executable";
    return std::nullopt;
#endif
}

// The same, with the program and the roots as paths (a policy's workspace and writable
// roots are), and with the program as a C string.
inline std::optional<std::string> untrusted_program(const std::filesystem::path& program,
                                                    const std::vector<std::filesystem::path>& writable_roots = {}) {
#if defined(_WIN32)
    (void)writable_roots;
    return trust::untrusted_path(program);  // as a path: no narrowing to the code page
#else
    std::vector<std::string> roots;
    roots.reserve(writable_roots.size());
    for (const auto& root : writable_roots) roots.push_back(root.string());
    return untrusted_program(program.string(), roots);
#endif
}
inline std::optional<std::string> untrusted_program(const char* program, const std::vector<std::string>& writable_roots = {}) {
    return untrusted_program(std::string(program), writable_roots);
}

// The same for a program an operator named in a setting, judged when the runner is
// created so that check-config says so. One that is not there (yet) is left to the
// probe and the run, which judge it again.
inline std::optional<std::string> untrusted_named_program(const std::string& program) {
    std::error_code ec;
    if (!std::filesystem::exists(program, ec)) return std::nullopt;
    return untrusted_program(program);
}
inline std::optional<std::string> untrusted_named_program(const std::filesystem::path& program) {
    std::error_code ec;
    if (!std::filesystem::exists(program, ec)) return std::nullopt;
    return untrusted_program(program);
}
inline std::optional<std::string> untrusted_named_program(const char* program) {
    return untrusted_named_program(std::string(program));
}

}  // namespace confine::sdk
