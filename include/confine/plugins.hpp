// Finding, trusting and loading runner plugins (design.md §2).
//
//   confine::PluginSearch search({"/opt/confine/plugins"});
//   auto file = search.locate("landlock");           // only the file this name needs
//   auto plugin = confine::load_plugin(*file, "landlock");
//   auto runner = (*plugin)->create_runner(&config.runners.at("landlock"));  // or nullptr
//   confine::Verdict v = (*runner)->probe(2000);
//
// Every refusal is an Error with its own code whose message names the file.
#pragma once

#include <confine/config.hpp>
#include <confine/error.hpp>
#include <confine/wrap_result.hpp>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace confine {

// "confine-runner-<name>.so" (".dylib" on macOS, ".dll" on Windows).
std::string plugin_file_name(std::string_view runner);

// The runner name a plugin file name carries, or "" when it is not a plugin file name.
std::string runner_name_from_file(const std::filesystem::path& file);

struct PluginInfo {
    std::filesystem::path file;
    std::string runner_name;
    std::string version;
    std::string summary;
    std::uint16_t abi_major = 0;
    std::uint16_t abi_minor = 0;
};

class PluginRunner;

// A loaded plugin. Keeps its shared object mapped for as long as it, or any runner
// it created, lives.
class Plugin : public std::enable_shared_from_this<Plugin> {
public:
    struct Impl;
    explicit Plugin(std::unique_ptr<Impl> impl);
    ~Plugin();
    Plugin(const Plugin&) = delete;
    Plugin& operator=(const Plugin&) = delete;

    const PluginInfo& info() const noexcept;

    // Creates a runner with its `[runner.<name>]` settings (nullptr: none).
    std::expected<std::unique_ptr<PluginRunner>, Error> create_runner(const RunnerTable* settings);

private:
    std::unique_ptr<Impl> impl_;
};

// One runner instance of a loaded plugin, as the host holds it (the plugin's side of it
// is an sdk::Runner).
class PluginRunner {
public:
    struct Impl;
    explicit PluginRunner(std::shared_ptr<Impl> impl);
    ~PluginRunner();

    const std::string& name() const noexcept;
    const PluginInfo& plugin() const noexcept;

    // Functional probe, bounded by timeout_ms even if the plugin hangs: then the
    // verdict is unusable, "probe timed out after N ms". Never throws.
    Verdict probe(std::uint32_t timeout_ms);
    // The programs the last probe ran through the host (resolved as they were found):
    // what its verdict rests on.
    std::vector<std::filesystem::path> probed_programs() const;

    // Pure transformation. What the plugin returns is checked before it is used: bounded
    // lists without null items, a known enforcement and attestation, and an argv that
    // ends with "--" and `argv` verbatim; otherwise ErrorCode::plugin_bad_result.
    std::expected<WrapResult, Error> wrap(const Policy& policy, std::span<const std::string> argv);

private:
    std::shared_ptr<Impl> impl_;
};

// Its former name, kept for host programs written against it.
using Runner [[deprecated("confine::Runner is confine::PluginRunner")]] = PluginRunner;

// Loads one plugin file. Before any plugin entry point is called it checks: the file and
// its directories are trusted (and, on POSIX, the file is executable and is loaded
// through the descriptor that was judged), the exports exist, the ABI major matches,
// the minor is not newer than the host's, and the descriptor size is the one of that
// version. Where plugins are ELF files (Linux) the ABI is checked from the file before
// it is mapped, so a plugin of another ABI runs no code at all; elsewhere its
// initialisers run when it is mapped, before the check refuses it. The descriptor's
// runner name must equal `expected_runner`.
std::expected<std::shared_ptr<Plugin>, Error> load_plugin(const std::filesystem::path& file,
                                                          std::string_view expected_runner);

class PluginSearch {
public:
    explicit PluginSearch(std::vector<std::filesystem::path> dirs) : dirs_(std::move(dirs)) {}

    const std::vector<std::filesystem::path>& dirs() const noexcept { return dirs_; }

    // The one file that provides `runner`: not found, or found twice, is an error.
    std::expected<std::filesystem::path, Error> locate(std::string_view runner) const;

    struct Entry {
        std::filesystem::path file;
        std::string runner_name;            // from the file name
        std::expected<PluginInfo, Error> loaded;
    };
    // Every plugin file in every directory, each loaded and checked. Files that
    // claim a runner name another file already claims are reported as duplicates.
    std::vector<Entry> scan() const;

private:
    std::vector<std::filesystem::path> dirs_;
};

// The install's own plugin directory, found relative to the running binary:
// <libdir>/confine/plugins of the tree whose bin/ it runs from (confinectl, or a program in
// the install's own bin/); empty when the running binary cannot be told. What a Provider
// searches unless its options name other directories (ProviderOptions::builtin_plugin_dirs).
std::filesystem::path builtin_plugin_dir();

namespace detail {
// `dir` as an installation's plugin directory: lexically normal, or none at all when it
// is relative (found from the working directory, which may be a workspace).
std::vector<std::filesystem::path> installation_plugin_dirs(const char* dir);
}  // namespace detail

// The plugin directory of the installed confine the calling program was compiled
// against, for a host program to search, said where it creates its provider:
//
//   confine::Provider::create(std::move(*config), {.builtin_plugin_dirs = confine::installed_plugin_dirs()});
//
// confine's CMake package (confine::core) and confine.pc compile a program with
// CONFINE_INSTALLED_PLUGIN_DIR, that installation's plugin directory where the package
// lies when the program is configured; this reads it in the caller's own translation
// unit (internal linkage: libconfine, compiled without it, shares nothing that differs).
// Without it (a program in confine's own tree) it is builtin_plugin_dir(); a relative
// directory names none, so that the program fails closed.
namespace {
[[maybe_unused]] std::vector<std::filesystem::path> installed_plugin_dirs() {
#if defined(CONFINE_INSTALLED_PLUGIN_DIR)
    return detail::installation_plugin_dirs(CONFINE_INSTALLED_PLUGIN_DIR);
#else
    if (std::filesystem::path dir = builtin_plugin_dir(); !dir.empty()) return {dir};
    return {};
#endif
}
}  // namespace

}  // namespace confine
