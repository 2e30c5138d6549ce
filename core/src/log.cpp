#include <confine/log.hpp>

#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
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
