// What the plugin loader's parts share: the loaded plugin's state, and the steps of
// loading that each OS does its own way (core/src/platform/<os>/plugin_loading.cpp).
// Internal to libconfine.
#pragma once

#include <confine/error.hpp>
#include <confine/plugins.hpp>
#include <confine/sdk/abi.h>

#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS
#endif
#include <boost/dll/shared_library.hpp>

#include <expected>
#include <filesystem>
#include <optional>
#include <string>

namespace confine {

struct Plugin::Impl {
    boost::dll::shared_library library;  // mapped for as long as the plugin lives
    const confine_plugin_descriptor* descriptor = nullptr;
    PluginInfo info;
};

namespace detail {

// An error of `code` whose message starts with the plugin's file.
inline Error plugin_error(ErrorCode code, const std::filesystem::path& file, const std::string& what) {
    return Error{code, file.string() + ": " + what};
}

// What a plugin file is loaded by, once it has passed the trust rule (docs/design.md
// §11): the path for the dynamic loader (where the OS can load from a descriptor, the
// one the trust walk judged, so that no other file can take its place in between), and
// that descriptor, open for reading (POSIX; -1 where there is none), which the ELF
// records are read from.
struct LoadTarget {
    std::filesystem::path path;
    int descriptor = -1;
};
// Refusals: plugin_untrusted, plugin_not_executable.
std::expected<LoadTarget, Error> trusted_load_path(const std::filesystem::path& file);

// Maps the library at `load_path` into `library`, resolving every symbol now and
// keeping its symbols to itself; nullopt once mapped, otherwise the dynamic loader's
// reason. The library's initialisers run here.
std::optional<std::string> map_library(boost::dll::shared_library& library, const std::filesystem::path& load_path);

// The running program's own file, resolved; empty when it cannot be told.
std::filesystem::path running_program();

// A program of confine's own installed beside the built-in plugins (confine-proxy,
// confine-loopback): `name` in the first of `dirs` that holds it, not through a link;
// empty when none does. The caller judges it (program_trust.hpp) before it runs it.
std::filesystem::path confine_program(const std::vector<std::filesystem::path>& dirs, std::string_view name);

}  // namespace detail
}  // namespace confine
