// Where a program is, as execvp would find it (executor.hpp).
#include "executor.hpp"

#include <unistd.h>

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
        std::error_code ec;
        if (!fs::exists(p, ec)) return false;
        if (fs::is_directory(p, ec) || ::access(p.c_str(), X_OK) != 0) {
            error = EACCES;
            return false;
        }
        return true;
    };
    error = ENOENT;
    if (name.empty()) return std::nullopt;
    if (name.find('/') != std::string::npos) return usable(name) ? std::optional<std::string>(name) : std::nullopt;
    const char* own = std::getenv("PATH");
    std::string dirs = own ? own : "/usr/local/bin:/usr/bin:/bin";
    if (environment)
        for (const auto& e : *environment)
            if (e.starts_with("PATH=")) dirs = e.substr(5);
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
