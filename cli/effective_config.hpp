// `confinectl config`: the configuration in effect, each value with where it comes from
// (a file and position, the managed layer, or the embedded default), as
// `git config --show-origin` shows git's.
#pragma once

#include <confine/config.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace confinectl {

// One value in effect: its key as confine.toml spells it, its value as TOML writes it,
// and where it comes from: "FILE:LINE:COLUMN", "managed FILE:LINE:COLUMN" (the managed
// layer brought it within a bound, or added it) or "default".
struct Setting {
    std::string key;
    nlohmann::json value;
    std::string origin;
};

// Every value in effect, in confine.toml's order; the entries of deny_read and protect
// one by one (keys "policy.deny_read[]", "policy.protect[]"), each with its own origin.
std::vector<Setting> effective_settings(const confine::Config& config);

// The managed layer's bounds, each as describe_bound() says it, by key.
std::vector<std::pair<std::string, std::string>> managed_bounds(const confine::Managed& managed);

// `config`: "# files: ...", "# managed: ..." and one line per value, "KEY = VALUE  # ORIGIN".
std::string effective_text(const confine::Config& config);
// `config --json`: {"schema_version": 1, "files": [...], "managed": {"files": [...],
// "bounds": {KEY: TEXT}}, "settings": [{"key", "value", "origin"}]}. Indented.
std::string effective_json(const confine::Config& config);
// The same document's "files", "managed" and "settings", for probe --json's "config".
nlohmann::json effective_document(const confine::Config& config);

}  // namespace confinectl
