// execve's argument and environment arrays, built before a fork so that the child
// allocates nothing. Internal to libconfine.
#pragma once

#include <optional>
#include <string>
#include <vector>

extern "C" char** environ;

namespace confine::detail {

// Points into `argv` and `environment`, which must outlive it; no environment: this
// process's own.
class ExecArrays {
public:
    ExecArrays(const std::vector<std::string>& argv, const std::optional<std::vector<std::string>>& environment) {
        for (const auto& a : argv) argv_.push_back(const_cast<char*>(a.c_str()));
        argv_.push_back(nullptr);
        if (environment) {
            for (const auto& e : *environment) envp_.push_back(const_cast<char*>(e.c_str()));
            envp_.push_back(nullptr);
        }
    }
    char* const* argv() const { return argv_.data(); }
    char* const* envp() const { return envp_.empty() ? environ : envp_.data(); }

private:
    std::vector<char*> argv_, envp_;
};

}  // namespace confine::detail
