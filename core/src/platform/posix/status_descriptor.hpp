// Reading a runner's status descriptor (docs/design.md §6): a channel the command cannot
// write to, on which the runner says how far it got. The executor keeps what is written
// there for the classifier, which judges it; it reads nothing into it but a process ID,
// for the command locator. Internal to libconfine.
#pragma once

#include "linux_features.hpp"
#include "output_pump.hpp"

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>

namespace confine::detail {

// A status is a few lines: what comes past this is read and dropped.
inline constexpr std::size_t status_text_limit = std::size_t{1} << 20;

// The pump's stream for the status descriptor `fd` (-1: none), kept in `text`; each
// addition is shown to `locator` when there is one.
PumpStream status_stream(int fd, std::string& text, CommandLocator* locator);

// The process ID that `text` names after `key`: nullopt while it names none yet (the
// rest of the number may still be coming), 0 when what follows is no process ID.
std::optional<pid_t> reported_number(const std::string& text, const std::string& key);

}  // namespace confine::detail
