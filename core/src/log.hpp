#pragma once

#include <spdlog/logger.h>

#include <string>
#include <utility>
#include <vector>

namespace confine::detail {

// Whether a message of this level would be written. Cheap: the logger itself is only
// built when something is written, so a quiet run never pays for it.
bool log_enabled(spdlog::level::level_enum level);
spdlog::logger& logger();

template <class... Args>
void log(spdlog::level::level_enum level, spdlog::format_string_t<Args...> format, Args&&... args) {
    if (log_enabled(level)) logger().log(level, format, std::forward<Args>(args)...);
}

template <class... Args>
void log_debug(spdlog::format_string_t<Args...> format, Args&&... args) {
    log(spdlog::level::debug, format, std::forward<Args>(args)...);
}

template <class... Args>
void log_warn(spdlog::format_string_t<Args...> format, Args&&... args) {
    log(spdlog::level::warn, format, std::forward<Args>(args)...);
}

// `words` as one line a POSIX shell would read back into the same words: plain words as
// they are, others in single quotes, control characters as $'\xNN'.
std::string shell_words(const std::vector<std::string>& words);

}  // namespace confine::detail
