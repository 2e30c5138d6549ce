#include <confine/log.hpp>

#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <mutex>
#include <string>

namespace confine {
namespace detail {
namespace {

std::shared_ptr<spdlog::logger> make_logger() {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto log = std::make_shared<spdlog::logger>("confine", std::move(sink));
    log->set_pattern("confine: %v");
    log->set_level(spdlog::level::warn);
    return log;
}

}  // namespace

spdlog::logger& logger() {
    static std::shared_ptr<spdlog::logger> instance = make_logger();
    return *instance;
}

}  // namespace detail

void set_log_level(LogLevel level) {
    static constexpr spdlog::level::level_enum map[] = {spdlog::level::debug, spdlog::level::info,
                                                        spdlog::level::warn, spdlog::level::err,
                                                        spdlog::level::off};
    detail::logger().set_level(map[static_cast<int>(level)]);
}

void set_log_program_name(std::string_view name) {
    detail::logger().set_pattern(std::string(name) + ": %v");
}

}  // namespace confine
