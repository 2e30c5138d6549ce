// Whether a runner program may be trusted to confine: a program that someone else, or
// a confined command, could have replaced is no sandbox at all. The rule itself is
// confine's one trust rule (confine/sdk/trust_posix.hpp), spelled for the built-in plugins.
// POSIX only.
#pragma once

#include <confine/sdk/trust_posix.hpp>

#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

namespace confine::builtin {

// Why `program` cannot be trusted, or nullopt. `writable_roots` are places the confined
// command may write, resolved (the host gives a policy's roots resolved): a program
// there is refused whoever owns it.
inline std::optional<std::string> untrusted_program(const std::string& program, const std::vector<std::string>& writable_roots = {}) {
    std::string why = trust::untrusted_program(program, writable_roots);
    if (why.empty()) return std::nullopt;
    return why;
}

// The same for a program the operator named in a setting, judged when the runner is
// created so that check-config says so: one that is not there (yet) is left to the
// probe, and every wrap judges it again.
inline std::optional<std::string> untrusted_named_program(const std::string& program) {
    if (::access(program.c_str(), F_OK) != 0) return std::nullopt;
    return untrusted_program(program);
}

}  // namespace confine::builtin
