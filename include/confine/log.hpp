// Diagnostics of the library go to stderr through one logger, quiet by default
// (warnings and errors only). Lines start with the program name, so they are never
// mistaken for a confined command's output.
#pragma once

#include <string_view>

namespace confine {

enum class LogLevel { debug, info, warn, error, off };

void set_log_level(LogLevel level);
void set_log_program_name(std::string_view name);  // default "confine"

}  // namespace confine
