// The loader's variables judged against where a confined command may write
// (confine/loader_environment.hpp).
#include <confine/loader_environment.hpp>

#include "roots.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace confine {
namespace {

namespace fs = std::filesystem;

#if !defined(_WIN32)
// A place a confined command may write, as the user would name it, and the forms a path
// inside it can take: as given, and with its links resolved.
struct Place {
    std::string name;
    std::vector<fs::path> forms;
};

std::vector<Place> writable_places(const Policy& policy, const fs::path& cwd) {
    std::vector<Place> places;
    auto add = [&places, &cwd](std::string name, const fs::path& root) {
        if (root.empty()) return;
        const fs::path absolute = (root.is_absolute() ? root : cwd / root).lexically_normal();
        std::error_code ec;
        fs::path real = fs::weakly_canonical(absolute, ec);
        Place place{std::move(name), {absolute}};
        if (!ec && real != absolute) place.forms.push_back(std::move(real));
        places.push_back(std::move(place));
    };
    if (policy.mode == Mode::workspace_write) {
        add("the workspace " + policy.workspace.string(), policy.workspace);
        for (const auto& w : policy.writable) add("the writable root " + w.string(), w);
    }
    for (const auto& place : sdk::always_writable_places()) add(place.string(), place);
    return places;
}

// The first place of `places` that resolving `path` (absolute) passes through or ends
// in, following links as the kernel does (at most 40; ".." after a link is the parent of
// where the link led) and judging every step; nullptr.
const Place* reached(const fs::path& path, const std::vector<Place>& places) {
    auto inside = [&places](const fs::path& p) -> const Place* {
        for (const auto& place : places)
            for (const auto& form : place.forms)
                if (detail::is_within(p, form)) return &place;
        return nullptr;
    };
    if (const Place* p = inside(path.lexically_normal())) return p;
    std::vector<fs::path> pending;  // components still to walk, the next one last
    for (const auto& c : path.relative_path()) pending.insert(pending.begin(), c);
    fs::path at = "/";
    for (int links = 0; !pending.empty();) {
        const fs::path component = std::move(pending.back());
        pending.pop_back();
        if (component.empty() || component == ".") continue;
        if (component == "..") {
            at = at.parent_path();
            continue;
        }
        const fs::path next = at / component;
        if (const Place* p = inside(next)) return p;
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(next, ec)) || ec || ++links > 40) {
            at = next;
            continue;
        }
        const fs::path target = fs::read_symlink(next, ec);
        if (ec) {
            at = next;
            continue;
        }
        // The target's components come next, in their order, before what is left.
        const fs::path relative = target.relative_path();
        const std::vector<fs::path> head(relative.begin(), relative.end());
        pending.insert(pending.end(), head.rbegin(), head.rend());
        if (target.is_absolute()) at = "/";
    }
    return nullptr;
}

// What the loader reads from the environment (ld.so(8)), in the order judged below.
constexpr std::string_view loader_variables[] = {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"};

// The entries of a variable's value, split where the loader splits them.
std::vector<std::string> entries(std::string_view value, std::string_view separators) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= value.size(); ++i)
        if (i == value.size() || separators.find(value[i]) != std::string_view::npos) {
            out.emplace_back(value.substr(start, i - start));
            start = i + 1;
        }
    return out;
}

#endif  // !_WIN32

}  // namespace

std::optional<Error> loader_environment_problem(std::span<const std::string> environment, const Policy& policy,
                                                const fs::path& working_directory, std::string_view who) {
#if defined(_WIN32)
    (void)environment, (void)policy, (void)working_directory, (void)who;
    return std::nullopt;
#else
    struct Variable {
        std::string_view name;
        std::string_view separators;
        bool directories;  // a search path, whose empty and relative entries are the working directory's
    };
    static constexpr Variable variables[] = {{loader_variables[0], " :", false}, {loader_variables[1], ":;", true}, {loader_variables[2], ":", false}};
    std::error_code ec;
    fs::path cwd = working_directory.is_absolute() ? working_directory : fs::current_path(ec) / working_directory;
    cwd = cwd.lexically_normal();
    if (!cwd.has_filename() && cwd != cwd.root_path()) cwd = cwd.parent_path();  // no trailing separator
    std::vector<Place> places;
    const std::string loader = who.empty() ? std::string("a program started before the sandbox would load it unconfined") : std::string(who);
    for (const auto& entry : environment) {
        const auto eq = entry.find('=');
        if (eq == std::string::npos) continue;
        const std::string_view name(entry.data(), eq);
        for (const auto& v : variables) {
            if (name != v.name) continue;
            const std::string_view value(entry.data() + eq + 1, entry.size() - eq - 1);
            if (!v.directories && value.empty()) continue;
            for (const auto& item : entries(value, v.separators)) {
                if (!v.directories && item.empty()) continue;  // LD_PRELOAD="a.so  b.so"
                const bool relative = fs::path(item).is_relative();
                const std::string shown = "'" + item + "'" +
                                          (item.empty() ? " (the working directory " + cwd.string() + ")"
                                           : relative   ? " (from the working directory " + cwd.string() + ")"
                                                        : std::string());
                auto refuse = [&](const std::string& why) {
                    return Error{ErrorCode::invalid_policy, std::string(v.name) + " entry " + shown + " " + why + ": " + loader + "; refusing to run"};
                };
                if (item.find("$ORIGIN") != std::string::npos || item.find("${ORIGIN}") != std::string::npos)
                    return refuse("names $ORIGIN, which cannot be judged before the loader expands it");
                if (!v.directories && item.find('/') == std::string::npos) continue;  // looked up on the library path
                const fs::path path = relative ? cwd / item : fs::path(item);
                if (places.empty()) places = writable_places(policy, cwd);
                if (const Place* place = reached(path, places))
                    return refuse("lies in " + place->name + ", where a confined command may write");
            }
        }
    }
    return std::nullopt;
#endif
}

#if !defined(_WIN32)
namespace {

bool names_loader_variable(std::string_view entry) noexcept {
    for (const std::string_view name : loader_variables)
        if (entry.size() > name.size() && entry[name.size()] == '=' && entry.starts_with(name)) return true;
    return false;
}

}  // namespace
#endif

bool sets_loader_variable(std::span<const std::string> environment) noexcept {
#if defined(_WIN32)
    (void)environment;
    return false;
#else
    return std::any_of(environment.begin(), environment.end(), [](const std::string& entry) { return names_loader_variable(entry); });
#endif
}

bool sets_loader_variable() noexcept {
#if defined(_WIN32)
    return false;
#else
    for (char** entry = environ; entry && *entry; ++entry)
        if (names_loader_variable(*entry)) return true;
    return false;
#endif
}

}  // namespace confine
