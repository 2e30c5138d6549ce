// Where a program is, as execvp would find it (executor.hpp).
#include "executor.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace confine::detail {

std::optional<std::string> find_program(const std::string& name, const std::optional<std::vector<std::string>>& environment,
                                        const std::filesystem::path& working_directory, int& error) {
    namespace fs = std::filesystem;
    // Judged where the exec will happen: relative paths from the working directory.
    auto usable = [&](const std::string& candidate) {
        fs::path p(candidate);
        if (p.is_relative() && !working_directory.empty()) p = working_directory / p;
        // One look at what is there (as exists() and is_directory() would each take).
        struct stat st {};
        if (::stat(p.c_str(), &st) != 0) return false;
        if (S_ISDIR(st.st_mode) || ::access(p.c_str(), X_OK) != 0) {
            error = EACCES;
            return false;
        }
        return true;
    };
    error = ENOENT;
    if (name.empty()) return std::nullopt;
    if (name.find('/') != std::string::npos) return usable(name) ? std::optional<std::string>(name) : std::nullopt;
    std::string dirs;
    if (environment) {
        // As execvp does in the process that gets it: its first PATH, else the system's
        // default path (an environment filtered to nothing has none).
        const auto it = std::find_if(environment->begin(), environment->end(), [](const std::string& e) { return e.starts_with("PATH="); });
        if (it != environment->end()) {
            dirs = it->substr(5);
        } else {
            dirs.resize(::confstr(_CS_PATH, nullptr, 0));
            if (!dirs.empty() && ::confstr(_CS_PATH, dirs.data(), dirs.size()) > 0) dirs.pop_back();  // its NUL
            else dirs = "/bin:/usr/bin";
        }
    } else {
        const char* own = std::getenv("PATH");
        dirs = own ? own : "/usr/local/bin:/usr/bin:/bin";
    }
    for (std::size_t start = 0;;) {
        std::size_t end = dirs.find(':', start);
        std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
        if (usable(candidate)) return candidate;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return std::nullopt;
}

}  // namespace confine::detail
