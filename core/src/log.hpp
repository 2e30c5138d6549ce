#pragma once

#include <spdlog/logger.h>

#include <memory>

namespace confine::detail {

spdlog::logger& logger();

}  // namespace confine::detail
