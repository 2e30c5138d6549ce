// Confining the calling process itself and replacing it with the command (executor.hpp).
#include "log.hpp"
#include "exec_arrays.hpp"
#include "executor.hpp"
#include "fd.hpp"
#include "linux_features.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace confine::detail {

Observation exec_in_place(const ExecSpec& spec) {
    Observation o;
    auto refuse = [&o](int error, std::string detail) {
        o.spawned = false;
        o.spawn_errno = error;
        o.attestation_detail = std::move(detail);
        return o;
    };
    if (auto missing = missing_feature(spec)) return refuse(ENOSYS, *missing);
    int resolve_error = 0;
    auto program = spec.argv.empty() ? std::nullopt : find_program(spec.argv.front(), spec.environment, spec.working_directory, resolve_error);
    if (!program || !spec.in_process) return refuse(program ? EINVAL : resolve_error, {});
    if (log_enabled(spdlog::level::debug)) log_debug("exec (confined in place, then exec'd by this process): {}", shell_words(spec.argv));
    const ExecArrays arrays(spec.argv, spec.environment);
    if (!spec.working_directory.empty() && ::chdir(spec.working_directory.c_str()) != 0) {
        const int chdir_errno = errno;
        return refuse(chdir_errno, "cannot enter the working directory " + spec.working_directory.string());
    }
    char message[256] = {};
    if (spec.in_process->apply(spec.in_process->state, message, sizeof message) != 0) {
        message[sizeof message - 1] = '\0';
        o.attested = Observation::Attested::runner_stopped;
        o.runner_message = message;
        return o;
    }
    // The command gets descriptors 0, 1 and 2 and those passed on, nothing else this
    // process holds or was leaked (docs/design.md §11).
    if (const int error = inherit_only(spec.pass_fds.data(), spec.pass_fds.size())) {
        o.attested = Observation::Attested::runner_stopped;
        o.runner_message = std::string("cannot keep the caller's other descriptors from the command: ") + std::strerror(error);
        return o;
    }
    ::execve(program->c_str(), arrays.argv(), arrays.envp());
    o.attested = Observation::Attested::runner_stopped;
    o.runner_message = std::string("exec failed: ") + std::strerror(errno);
    return o;
}

}  // namespace confine::detail
