// The embedded default configuration (config/confine.toml) as parse_config reads it,
// compiled in (default_config.cpp, written by scripts/default-config): a run takes it
// from here instead of parsing the text. Internal to libconfine.
#pragma once

#include <confine/config.hpp>

namespace confine::detail {

Config compiled_default_config();

}  // namespace confine::detail
