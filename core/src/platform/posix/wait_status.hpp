// A wait status, as the classifier reads it. Internal to libconfine.
#pragma once

#include <confine/execute.hpp>

#include "observation.hpp"

#include <sys/wait.h>

namespace confine::detail {

inline void record_status(Observation& o, int status) {
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
}

}  // namespace confine::detail
