// The managed layer: what an operator sets that nothing below can cross.
//
//   /etc/confine/managed.toml, then /etc/confine/managed.d/*.toml in name order:
//
//     runners = ["bwrap"]           # the runners a chain may hold
//     plugins = false               # no --plugin, no plugin_dirs in a user's file
//     runner_settings = false       # no [runner.<name>] table in a user's file
//     runner_command = false        # no [platform.<os>] runner_command anywhere below
//     network = "hosts"             # at most: "none", "hosts" (allow_hosts), "allow"
//     allow_hosts = ["registry.npmjs.org"]
//     deny_read = ["/srv/secrets"]  # always denied, never lifted
//     protect = [".git/hooks"]      # always protected, never lifted by unprotect
//     env_exclude = ["GITHUB_TOKEN", "*_TOKEN"]  # never reach a command
//     env_inherit = "core"          # at most: "none", "core", "all"
//     timeout = "10m"               # at most, and the default
//     tmp = "private"               # required
//     read = "scoped"               # required
//     read_roots = ["~/.cargo"]     # with it: the read roots at most (else the default's)
//     [limits]                      # at most, and the default
//     memory = "2G"
//     processes = 512
//     [enforcement]                 # at least
//     write = "full"
//
// Several files: each bound is the tightest any of them sets. A value the embedded
// default gives is brought within the bounds; one that a configuration file writes, or a
// flag asks, and that crosses a bound fails the run (125) with one line naming it, the
// managed file and line, and what it allows. Every managed file must be owned by root
// and writable by no one else (a file the caller owns is not the operator's).
#pragma once

#include <confine/config.hpp>
#include <confine/environment.hpp>
#include <confine/error.hpp>
#include <confine/limits.hpp>

#include <chrono>
#include <expected>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

// struct Managed is in config.hpp: a Config carries the one in force.

inline constexpr std::string_view managed_config_path = "/etc/confine/managed.toml";
inline constexpr std::string_view managed_config_dir = "/etc/confine/managed.d";

// "network at most \"none\" (/etc/confine/managed.toml:3:11)": what `key`'s bound allows
// and where it is written. Keys as Managed::where names them.
std::string describe_bound(const Managed& managed, std::string_view key);

// Reads the managed files: `file` if it exists, then `dir`'s *.toml in name order. An
// empty Managed when there are none; an error naming the file and position for one that
// cannot be read, is not trusted (owned by root, writable by no one else) or is invalid.
std::expected<Managed, Error> load_managed(const std::filesystem::path& file = std::string(managed_config_path),
                                           const std::filesystem::path& dir = std::string(managed_config_dir));

// Parses one managed file's text (`source` names it), its bounds tightened into `into`.
std::optional<Error> parse_managed(std::string_view text, const std::string& source, Managed& into);

// `config` within `managed`: the managed entries added (deny_read, protect, env_exclude)
// and each value the embedded default gives brought within its bound (the chain filtered,
// a minimum raised, a timeout or limit set where none is); an error (config_managed)
// naming the first value a configuration file writes that crosses a bound. `user_files`:
// the files whose runner settings `plugins` and `runner_settings` refuse (the user's).
std::optional<Error> apply_managed(Config& config, const std::vector<std::filesystem::path>& user_files = {});

// What a call asks beyond its configuration, each as the caller names it ("--network").
struct ManagedAsk {
    std::optional<Network> network;
    std::vector<std::string> allow_hosts;  // canonical patterns
    std::optional<Tmp> tmp;
    std::optional<bool> read_scoped;
    std::optional<std::chrono::milliseconds> timeout;
    Limits limits;
    std::vector<std::string> env;        // NAME or NAME=VALUE
    std::vector<std::string> unprotect;  // as written
    std::vector<std::string> read_roots;  // absolute, or "~/..." 
    bool plugin = false;                 // a plugin file the caller names
};

// Why `ask` crosses `config.managed`, as one line naming the flag (`flag` maps a field,
// "network", "allow_hosts", "tmp", "read", "read_roots", "timeout", "limits", "env",
// "unprotect", "plugin", to what the caller calls it), or nullopt.
std::optional<std::string> managed_crossing(const Config& config, const ManagedAsk& ask,
                                            const std::map<std::string, std::string>& flag = {});

}  // namespace confine
