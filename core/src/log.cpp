#include <confine/log.hpp>

#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <cctype>
#include <string_view>
#include <mutex>
#include <string>

namespace confine {
namespace detail {
namespace {

std::atomic<int> g_level{spdlog::level::warn};

struct State {
    std::mutex mutex;
    std::string program = "confine";
    std::shared_ptr<spdlog::logger> logger;
};

State& state() {
    static State s;
    return s;
}

}  // namespace

bool log_enabled(spdlog::level::level_enum level) { return level >= g_level.load(std::memory_order_relaxed); }

spdlog::logger& logger() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!s.logger) {
        s.logger = std::make_shared<spdlog::logger>("confine", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        s.logger->set_pattern(s.program + ": %v");
        s.logger->set_level(spdlog::level::trace);  // log_enabled decides
    }
    return *s.logger;
}

std::string shell_words(const std::vector<std::string>& words) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string line;
    for (const std::string& w : words) {
        if (!line.empty()) line += ' ';
        bool plain = !w.empty(), control = false;
        for (unsigned char c : w) {
            plain = plain && (std::isalnum(c) || std::string_view("_./:=@%+,-").find(static_cast<char>(c)) != std::string_view::npos);
            control = control || c < 0x20 || c == 0x7f;
        }
        if (plain) {
            line += w;
        } else if (!control) {
            line += '\'';
            for (char c : w) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
            line += '\'';
        } else {
            line += "$'";
            for (unsigned char c : w) {
                if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') {
                    line += "\\x";
                    line += hex[c >> 4];
                    line += hex[c & 15];
                } else {
                    line += static_cast<char>(c);
                }
            }
            line += '\'';
        }
    }
    return line;
}

}  // namespace detail

void set_log_level(LogLevel level) {
    static constexpr spdlog::level::level_enum map[] = {spdlog::level::debug, spdlog::level::info,
                                                        spdlog::level::warn, spdlog::level::err,
                                                        spdlog::level::off};
    detail::g_level = map[static_cast<int>(level)];
}

void set_log_program_name(std::string_view name) {
    detail::State& s = detail::state();
    std::lock_guard lock(s.mutex);
    s.program = std::string(name);
    if (s.logger) s.logger->set_pattern(s.program + ": %v");
}

}  // namespace confine
