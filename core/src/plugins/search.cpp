// Where plugins are found (docs/design.md §2): a runner's file by its name, the
// directories searched, and the install's own plugin directory.
#include "plugins/loader.hpp"

#include <algorithm>
#include <map>

#ifndef CONFINE_RELATIVE_PLUGIN_DIR
#define CONFINE_RELATIVE_PLUGIN_DIR "../lib/confine/plugins"
#endif

namespace fs = std::filesystem;

namespace confine {
namespace {

// The file name's ending: the platform's own for a loadable module.
#if defined(_WIN32)
constexpr std::string_view plugin_suffix = ".dll";
#elif defined(__APPLE__)
constexpr std::string_view plugin_suffix = ".dylib";
#else
constexpr std::string_view plugin_suffix = ".so";
#endif
constexpr std::string_view plugin_prefix = "confine-runner-";

// The directories, each once (two spellings of one directory count once).
std::vector<fs::path> unique_dirs(const std::vector<fs::path>& dirs) {
    if (dirs.size() < 2) return dirs;
    std::vector<fs::path> out, seen;
    for (const auto& d : dirs) {
        std::error_code ec;
        fs::path key = fs::weakly_canonical(d, ec);
        if (ec) key = d;
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        out.push_back(d);
    }
    return out;
}

std::string join(const std::vector<fs::path>& dirs) {
    std::string s;
    for (const auto& d : dirs) s += (s.empty() ? "" : ", ") + d.string();
    return s.empty() ? "(no plugin directories)" : s;
}

}  // namespace

std::string plugin_file_name(std::string_view runner) {
    return std::string(plugin_prefix) + std::string(runner) + std::string(plugin_suffix);
}

std::string runner_name_from_file(const fs::path& file) {
    const std::string name = file.filename().string();
    if (name.size() <= plugin_prefix.size() + plugin_suffix.size()) return {};
    if (!name.starts_with(plugin_prefix) || !name.ends_with(plugin_suffix)) return {};
    std::string runner = name.substr(plugin_prefix.size(), name.size() - plugin_prefix.size() - plugin_suffix.size());
    return is_valid_runner_name(runner) ? runner : std::string();
}

std::expected<fs::path, Error> PluginSearch::locate(std::string_view runner) const {
    const std::vector<fs::path> dirs = unique_dirs(dirs_);
    std::vector<fs::path> found;
    const std::string name = plugin_file_name(runner);
    for (const auto& d : dirs) {
        std::error_code ec;
        fs::path candidate = d / name;
        if (fs::symlink_status(candidate, ec).type() != fs::file_type::not_found && !ec) found.push_back(candidate);
    }
    if (found.empty())
        return std::unexpected(Error{ErrorCode::plugin_not_found, "no plugin for runner '" + std::string(runner) +
                                                                      "': " + name + " is in none of " + join(dirs)});
    if (found.size() > 1)
        return std::unexpected(Error{ErrorCode::plugin_duplicate, "runner '" + std::string(runner) +
                                                                      "' is provided by more than one file: " + join(found)});
    return found.front();
}

std::vector<PluginSearch::Entry> PluginSearch::scan() const {
    std::vector<Entry> entries;
    std::map<std::string, std::vector<std::size_t>> by_name;
    for (const auto& d : unique_dirs(dirs_)) {
        std::error_code ec;
        fs::directory_iterator it(d, ec), end;
        if (ec) continue;
        std::vector<fs::path> files;
        for (; it != end; it.increment(ec)) {
            if (ec) break;
            if (!runner_name_from_file(it->path()).empty()) files.push_back(it->path());
        }
        std::sort(files.begin(), files.end());
        for (auto& f : files) {
            std::string n = runner_name_from_file(f);
            by_name[n].push_back(entries.size());
            entries.push_back(Entry{f, n, std::unexpected(Error{ErrorCode::plugin_not_found, ""})});
        }
    }
    for (auto& [name, indexes] : by_name) {
        if (indexes.size() > 1) {
            std::vector<fs::path> files;
            for (auto i : indexes) files.push_back(entries[i].file);
            for (auto i : indexes)
                entries[i].loaded = std::unexpected(Error{ErrorCode::plugin_duplicate, entries[i].file.string() + ": runner '" + name +
                                                                                           "' is provided by more than one file: " + join(files)});
            continue;
        }
        Entry& e = entries[indexes.front()];
        auto plugin = load_plugin(e.file, name);
        if (plugin) e.loaded = (*plugin)->info();
        else e.loaded = std::unexpected(plugin.error());
    }
    return entries;
}

std::vector<fs::path> detail::installation_plugin_dirs(const char* dir) {
    if (!dir || !*dir) return {};
    // A relative directory would be found from the working directory, which may be a
    // workspace: none then, and the program fails closed.
    const fs::path given(dir);
    if (!given.is_absolute()) return {};
    // confine.pc spells it from ${pcfiledir}: <prefix>/lib/pkgconfig/../../lib/...
    return {given.lexically_normal()};
}

fs::path detail::confine_program(const std::vector<fs::path>& dirs, std::string_view name) {
    for (const auto& d : dirs) {
        std::error_code ec;
        const fs::path candidate = d / name;
        if (fs::symlink_status(candidate, ec).type() == fs::file_type::regular) return candidate;
    }
    return {};
}

fs::path builtin_plugin_dir() {
    const fs::path self = detail::running_program();
    if (self.empty()) return {};
    return (self.parent_path() / CONFINE_RELATIVE_PLUGIN_DIR).lexically_normal();
}

}  // namespace confine
