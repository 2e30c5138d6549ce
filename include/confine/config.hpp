// confine.toml: what an operator configures.
//
//   auto cfg = confine::load_config({.explicit_path = flag_value});
//   if (!cfg) { report(cfg.error().message); return 125; }
//
// Where the configuration comes from, each layer over the one before (load_config): the
// default embedded at build time from config/confine.toml, the system file and its
// drop-ins, the user's file, then an explicit path (`--config`) or CONFINE_CONFIG; above
// them, the managed layer's bounds (confine/managed.hpp). Never a file from the current
// directory or the workspace.
#pragma once

#include <confine/environment.hpp>
#include <confine/error.hpp>
#include <confine/limits.hpp>
#include <confine/sdk/vocabulary.hpp>

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

using sdk::Network;
using sdk::Tmp;

struct SourcePosition {
    std::string file;  // a path, or "<embedded default>"
    std::uint32_t line = 0;
    std::uint32_t column = 0;

    bool operator==(const SourcePosition&) const = default;
};

// "file:line:column"
std::string to_string(const SourcePosition& where);

// One value of a `[runner.<name>]` table.
struct RunnerSetting {
    enum class Kind { string, integer, boolean, string_array };
    std::string key;
    Kind kind = Kind::string;
    std::string string_value;
    std::int64_t integer_value = 0;
    bool boolean_value = false;
    std::vector<std::string> array_value;
    SourcePosition where;  // of its key

    bool operator==(const RunnerSetting&) const = default;
};

struct RunnerTable {
    std::vector<RunnerSetting> settings;
    SourcePosition where;

    bool operator==(const RunnerTable&) const = default;
};

// `[platform.<os>]`: either a chain, or an asserted runner command.
struct PlatformConfig {
    std::vector<std::string> chain;
    // Operator assertion of a bwrap-shaped runner; when set, it replaces the chain.
    std::vector<std::string> runner_command;
    std::vector<std::string> runner_failure_signatures;
    SourcePosition where;

    bool operator==(const PlatformConfig&) const = default;
};

// The least level of enforcement a run accepts for a dimension ([policy.enforcement]):
// best_effort accepts a runner that enforces none of it (and says so).
enum class Minimum { best_effort, partial, full };
struct Minimums {
    Minimum write = Minimum::partial;
    Minimum network = Minimum::partial;
    Minimum processes = Minimum::partial;
    Minimum read = Minimum::partial;
    // partial: a run never leaves the protected paths unguarded. Landlock where it cannot
    // make a mount namespace (not root) is partial: the host puts them back after the run.
    Minimum protect = Minimum::partial;
    // partial: a run whose processes could all outlive it (a command executed in place of
    // confinectl) is not accepted unless the operator says so. Where the host has no way
    // to end a run's processes (the portable POSIX build, macOS), best-effort, and the
    // report says none.
#if (defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)) || defined(_WIN32)
    Minimum lifetime = Minimum::partial;
#else
    Minimum lifetime = Minimum::best_effort;
#endif
    // best-effort: limits by rlimits (per process) are accepted where no cgroup can be
    // made for the run; asked only when the policy sets a limit.
    Minimum limits = Minimum::best_effort;
    // What an explicit ask must be enforced at: a deny_read or protect entry of the call's
    // policy (--deny-read, --protect, Policy) or one a configuration file writes — not the
    // embedded default's. nullopt: full. A configuration file that writes the dimension's
    // minimum sets it too, to that minimum: the operator lowered it knowingly.
    std::optional<Minimum> explicit_read;
    std::optional<Minimum> explicit_protect;

    bool operator==(const Minimums&) const = default;
};

// [policy.packages]: where npm, pip and cargo keep their caches in a workspace-write run
// (README, "Package installs"): in `dir`, a directory relative to the run's workspace,
// instead of the host's own caches, which a confined command must not write; the user's
// settings reach them without their secrets. `tools` names the package managers so
// redirected ("npm", "pip", "cargo"); empty, or `dir` empty: none.
struct PackageCaches {
    std::string dir = ".confine";
    std::vector<std::string> tools{"npm", "pip", "cargo"};

    bool operator==(const PackageCaches&) const = default;
};

// [report]: where confinectl writes the record of every run it is asked for (refused
// ones too), for an operator to collect (docs/operators.md).
struct RunRecords {
    // records: a directory; each user's records are appended, one JSON line each, to
    // DIRECTORY/USER.jsonl. Empty: none.
    std::filesystem::path directory;
    // journal: each record also to the systemd journal (native protocol, through
    // libsystemd's sd_journal_sendv), where one runs.
    bool journal = false;

    bool operator==(const RunRecords&) const = default;
};

// The managed layer in force (confine/managed.hpp): bounds no configuration file or
// flag below can cross.
struct Managed {
    // The files read, in order.
    std::vector<std::filesystem::path> files;
    std::optional<std::vector<std::string>> runners;
    bool plugins = true, runner_settings = true, runner_command = true;
    enum class NetworkBound { none, hosts, allow };
    std::optional<NetworkBound> network;
    std::vector<std::string> allow_hosts;  // canonical host patterns, with network = hosts
    std::vector<std::string> deny_read, protect, env_exclude;
    std::optional<EnvInherit> env_inherit;
    std::optional<std::chrono::milliseconds> timeout;
    Limits limits;
    bool tmp_private = false, read_scoped = false;
    // With read_scoped: the read roots a run may have at most (absolute, or "~/...");
    // unset, the built-in default's.
    std::optional<std::vector<std::string>> read_roots;
    std::map<std::string, Minimum> enforcement;  // by dimension ("write", ...)
    RunRecords records;  // required: the directory, and the journal when true
    // Where each bound is written, by its key ("network", "limits.memory",
    // "enforcement.write"; "protect:.git/hooks" for one entry of a list): the file that
    // set the tightest.
    std::map<std::string, SourcePosition> where;

    bool any() const noexcept { return !files.empty(); }
    bool operator==(const Managed&) const = default;
};

struct Config {
    std::string source;  // where it came from: a path or "<embedded default>"
    std::uint32_t probe_timeout_ms = 2000;
    // [policy] network: what a call asks of the network when it does not say; proxy when
    // [policy] allow_hosts lists any host (and network is none or unsaid).
    Network network = Network::none;
    // [policy] allow_hosts: the hosts a command may reach through the run's proxy, each a
    // host pattern (confine/allow_hosts.hpp) in its canonical form, and where each is written.
    std::vector<std::string> allow_hosts;
    std::vector<SourcePosition> allow_hosts_where;
    // [policy] tmp: which /tmp a call asks for when it does not say (unsaid: either).
    Tmp tmp = Tmp::unsaid;
    // [policy] read: "scoped" (true) limits what a command may read to the system's
    // directories, the writable roots, where it runs and `read_roots`; everything else —
    // the rest of the home, other users' data — is hidden as deny_read hides a path.
    // "all" (false, the default): everything but deny_read.
    bool read_scoped = false;
    // [policy] read_roots: what a scoped run may read besides, as written: absolute, or
    // "~/..." (the toolchains and settings in the home that builds need).
    std::vector<std::string> read_roots;
    // [policy] deny_read: what no command may read or list, as written: absolute, or
    // "~/..." beneath the caller's home. The provider adds it to every policy.
    std::vector<std::string> deny_read;
    // [policy] protect: what stays read-only inside the writable roots, as written: a path
    // relative to each writable root (".git/hooks"), absolute, or "~/...".
    std::vector<std::string> protect;
    // [policy] unprotect: protect entries lifted, as written (".git/config" lets a command
    // run `git config`): an entry equal to one of these, or beneath one, is dropped from
    // protect, and so is what it resolves to in every writable root, git's own files too.
    std::vector<std::string> unprotect;
    // Where each entry of deny_read and protect is written, in the same order: an entry of
    // the embedded default ("<embedded default>") is a default; one a configuration file
    // writes is the operator's explicit ask (Minimums::explicit_read). An entry added
    // without a position (a host's own) counts as explicit.
    std::vector<SourcePosition> deny_read_where;
    std::vector<SourcePosition> protect_where;
    // [policy] timeout and kill_after: the time limit of every run that sets none, and how
    // long after its SIGTERM the run's processes get SIGKILL (RunOptions).
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<std::chrono::milliseconds> kill_after;
    // [policy.env]: what of the caller's environment the command gets (environment.hpp).
    // run() and spawn() apply it to every run, on every runner and path.
    EnvironmentPolicy environment;
    // [policy.enforcement]: what each dimension must be enforced at, at least.
    Minimums minimums;
    // [policy.limits]: what every run may take; run() and spawn() apply it under the
    // call's own (RunOptions::limits), whose entries take precedence name by name.
    Limits limits;
    // [policy.packages]: the package managers' caches and settings in a run.
    PackageCaches packages;
    RunRecords records;
    std::vector<std::filesystem::path> plugin_dirs;
    std::vector<SourcePosition> plugin_dirs_where;  // where each entry of plugin_dirs is written
    std::map<std::string, PlatformConfig> platforms;
    std::map<std::string, RunnerTable> runners;
    // The configuration files applied, in order, each over the one before (the embedded
    // default is none of them); `source` is the last.
    std::vector<std::filesystem::path> files;
    // Where each value in force is written, by its key as the file spells it
    // ("policy.network", "policy.limits.memory", "platform.linux.chain",
    // "runner.bwrap"): a key the embedded default gives has none.
    std::map<std::string, SourcePosition> origins;
    Managed managed;

    bool operator==(const Config&) const = default;
};

inline constexpr std::string_view embedded_config_name = "<embedded default>";
inline constexpr std::string_view system_config_path = "/etc/confine/confine.toml";

// The default configuration text compiled into the library (config/confine.toml).
std::string_view embedded_default_config() noexcept;

// Parses and validates TOML text. `source` names it in error messages. What the text
// leaves unsaid takes the embedded default's value: a key it does not set, and each
// [platform.<os>] or [runner.<name>] table it does not give (one it gives replaces the
// default's of that name whole; an explicit `chain = []` stays empty, and fails closed).
std::expected<Config, Error> parse_config(std::string_view text, std::string source);

// Reads and parses one file. The file must not be writable by group or others nor
// owned by a user other than root or the caller.
std::expected<Config, Error> load_config_file(const std::filesystem::path& file);

struct ConfigLookup {
    std::optional<std::filesystem::path> explicit_path;  // --config
    // CONFINE_CONFIG as read by the caller; nullopt reads the environment.
    std::optional<std::string> environment_value;
    // Whether CONFINE_CONFIG, XDG_CONFIG_HOME and HOME are read (for CONFINE_CONFIG and the
    // user's file).
    bool read_environment = true;
    // The operator's file. Beside it: confine.d/*.toml (drop-ins, over it, in name order),
    // managed.toml and managed.d/*.toml (the managed layer, confine/managed.hpp).
    std::filesystem::path system_path = std::string(system_config_path);
    // The user's file; nullopt: user_config_path() where the environment is read.
    std::optional<std::filesystem::path> user_path;
};

// $XDG_CONFIG_HOME/confine/confine.toml, else ~/.config/confine/confine.toml; empty when
// neither variable holds an absolute path.
std::filesystem::path user_config_path();

// The configuration in force, each layer over the one before, key by key (a key a layer
// writes replaces the one below; a [platform.<os>], [runner.<name>] or [policy.limits]
// table replaces its namesake whole): the embedded default < the system file <
// its confine.d/*.toml in name order < the user's file < --config, else CONFINE_CONFIG.
// Then the managed layer's bounds (apply_managed). Every file is judged as trusted
// configuration (owned by root or the caller, writable by no one else).
std::expected<Config, Error> load_config(const ConfigLookup& lookup = {});

// True when `name` is a valid runner name: [a-z0-9][a-z0-9_-]* up to 64 bytes.
bool is_valid_runner_name(std::string_view name) noexcept;

// A duration as confinectl's flags and [policy] take it: a positive number (a fraction
// allowed) with the unit ms, s, m or h, or none for seconds ("500ms", "30s", "1.5m",
// "5"). Otherwise why not, one phrase naming the text.
std::expected<std::chrono::milliseconds, std::string> parse_duration(std::string_view text);

// A duration as the files write it, in its largest whole unit: "10m", "90s", "1500ms".
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace confine
