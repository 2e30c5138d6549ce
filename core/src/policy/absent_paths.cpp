#include <confine/absent_paths.hpp>

#include "default_config.hpp"
#include "roots.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

namespace confine {
namespace {

namespace fs = std::filesystem;

// Whether `p` is there, where a link leads (a link to nothing is resolved to nothing, as
// the policy's resolution skips it).
bool there(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

// Whether a relative protect entry is in `root`: `.git/...` in a worktree or a submodule,
// whose .git is a file naming the repository, is resolved through that file by the
// policy, and counts as there.
bool relative_there(const fs::path& root, const fs::path& relative) {
    std::error_code ec;
    if (!relative.empty() && *relative.begin() == ".git" && fs::is_regular_file(root / ".git", ec)) return true;
    return there(root / relative);
}

struct Checker {
    std::vector<std::string> roots;

    // Whether `entry` names something, and for a relative protect entry the roots it is
    // in none of.
    bool names_something(const std::string& entry, bool relative_allowed, std::vector<std::string>& missing_in) const {
        const fs::path p(entry);
        if (entry == "~" || entry.starts_with("~/")) {
            // No home at all: the policy skips it, with nothing of it to hide.
            const std::vector<fs::path>& homes = caller_homes();
            return homes.empty() || std::any_of(homes.begin(), homes.end(), [&](const fs::path& h) {
                       return there(entry == "~" ? h : h / entry.substr(2));
                   });
        }
        if (p.is_absolute()) return there(p);
        // A relative deny_read entry is refused by the policy, which says so.
        if (!relative_allowed || roots.empty()) return true;
        const fs::path relative = p.lexically_normal();
        if (std::any_of(roots.begin(), roots.end(), [&](const std::string& r) { return relative_there(r, relative); })) return true;
        missing_in = roots;
        return false;
    }

private:
    // Asked for only by an entry beneath a home.
    const std::vector<fs::path>& caller_homes() const {
        if (!homes_) homes_ = detail::caller_homes();
        return *homes_;
    }
    mutable std::optional<std::vector<fs::path>> homes_;
};

}  // namespace

std::vector<AbsentPath> absent_policy_paths(const PolicyRequest& request, const Config& config) {
    Checker check;
    if (request.mode == Mode::workspace_write) {
        if (!request.workspace.empty()) check.roots.push_back(request.workspace.string());
        for (const auto& w : request.writable) check.roots.push_back(w.string());
    }
    // The built-in lists, made when an entry does not come from the embedded default
    // itself (those are built-in): most runs add none of their own.
    const auto defaults = []() -> const Config& {
        static const Config built_in = detail::compiled_default_config();
        return built_in;
    };
    std::vector<AbsentPath> absent;
    auto from_config = [&](const std::vector<std::string>& entries, const std::vector<SourcePosition>& where,
                           std::vector<std::string> Config::*built_in, const char* key, bool relative_allowed) {
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (i < where.size() && where[i].file == embedded_config_name) continue;
            const std::vector<std::string>& listed = defaults().*built_in;
            if (std::find(listed.begin(), listed.end(), entries[i]) != listed.end()) continue;
            std::vector<std::string> missing_in;
            if (check.names_something(entries[i], relative_allowed, missing_in)) continue;
            absent.push_back({key, entries[i], i, i < where.size() ? std::optional(where[i]) : std::nullopt, std::move(missing_in)});
        }
    };
    from_config(config.deny_read, config.deny_read_where, &Config::deny_read, "deny_read", false);
    from_config(config.protect, config.protect_where, &Config::protect, "protect", true);
    auto from_request = [&](const std::vector<fs::path>& entries, const char* key) {
        for (std::size_t i = 0; i < entries.size(); ++i) {
            std::vector<std::string> missing_in;
            if (!check.names_something(entries[i].string(), true, missing_in))
                absent.push_back({key, entries[i].string(), i, std::nullopt, std::move(missing_in)});
        }
    };
    from_request(request.deny_read, "deny_read");
    from_request(request.protect, "protect");
    return absent;
}

}  // namespace confine
