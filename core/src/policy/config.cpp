#include <confine/config.hpp>
#include <confine/allow_hosts.hpp>
#include <confine/managed.hpp>

#include "default_config.hpp"

#include "placeholders.hpp"
#include "trust.hpp"

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "toml_text.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <set>

namespace confine {

// Generated at build time from config/confine.toml.
extern const char embedded_default_config_text[];
extern const std::size_t embedded_default_config_size;

std::string_view embedded_default_config() noexcept {
    return {embedded_default_config_text, embedded_default_config_size};
}

std::string to_string(const SourcePosition& where) {
    return where.file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
}

bool is_valid_runner_name(std::string_view name) noexcept {
    if (name.empty() || name.size() > 64) return false;
    auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lower_or_digit(name.front())) return false;
    for (char c : name)
        if (!lower_or_digit(c) && c != '-' && c != '_') return false;
    return true;
}

namespace {

constexpr std::uint32_t max_probe_timeout_ms = 600'000;
constexpr std::array known_platforms{"linux", "darwin", "windows", "freebsd", "netbsd", "openbsd"};
constexpr std::size_t max_config_bytes = 1 << 20;
constexpr std::size_t max_list_entries = 64;

// A table's entries in the order the file gives them (toml++ keeps them sorted by
// key), so that errors and runner settings follow the file.
std::vector<std::pair<const toml::key*, const toml::node*>> in_file_order(const toml::table& table) {
    std::vector<std::pair<const toml::key*, const toml::node*>> entries;
    for (auto&& [key, node] : table) entries.emplace_back(&key, &node);
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const auto& x = a.first->source().begin;
        const auto& y = b.first->source().begin;
        return x.line != y.line ? x.line < y.line : x.column < y.column;
    });
    return entries;
}

using detail::one_line;

class Validator {
public:
    explicit Validator(std::string source) : source_(std::move(source)) {}

    SourcePosition at(const toml::source_region& r) const {
        return {source_, static_cast<std::uint32_t>(r.begin.line), static_cast<std::uint32_t>(r.begin.column)};
    }
    Error fail(const toml::source_region& r, const std::string& message) const {
        return {ErrorCode::config_invalid, one_line(to_string(at(r)) + ": " + message)};
    }

    // The file's values over `base` (the embedded default): a key the file does not set
    // keeps the base's value; a [platform.<os>] or [runner.<name>] table the file gives
    // replaces the base's table of that name whole.
    std::expected<Config, Error> run(const toml::table& root, Config base) {
        Config cfg = std::move(base);
        cfg.source = source_;
        for (auto [key_ptr, node_ptr] : in_file_order(root)) {
            const toml::key& key = *key_ptr;
            const toml::node& node = *node_ptr;
            const std::string k(key.str());
            std::optional<Error> err;
            if (k == "probe_timeout_ms") err = read_timeout(node, cfg);
            else if (k == "plugin_dirs") err = read_plugin_dirs(node, cfg);
            else if (k == "platform") err = read_platforms(node, cfg);
            else if (k == "runner") err = read_runners(node, cfg);
            else if (k == "policy") err = read_policy(node, cfg);
            else if (k == "report") err = read_report(node, cfg.records);
            else err = fail(key.source(), "unknown key '" + k + "' (known: probe_timeout_ms, plugin_dirs, platform, runner, policy, report)");
            if (err) return std::unexpected(*err);
        }
        if (source_ != embedded_config_name) record_origins(root, "", cfg.origins);
        return cfg;
    }

private:
    std::string source_;

    // Where each key of `table` (named beneath `prefix`) is written, over what the files
    // before said; a table that replaces its namesake whole ([platform.<os>],
    // [runner.<name>], [policy.limits]) takes the origins of the one it replaces with it.
    void record_origins(const toml::table& table, const std::string& prefix, std::map<std::string, SourcePosition>& origins) const {
        for (auto [key_ptr, node_ptr] : in_file_order(table)) {
            const std::string name = prefix + std::string(key_ptr->str());
            const toml::table* inner = node_ptr->as_table();
            const bool whole = inner && (prefix == "platform." || prefix == "runner." || name == "policy.limits");
            if (whole) std::erase_if(origins, [&](const auto& o) { return o.first.starts_with(name + "."); });
            origins[name] = at(key_ptr->source());
            if (inner) record_origins(*inner, name + ".", origins);
        }
    }
    toml::source_region network_at_;  // where [policy] network is written, if it is

    static std::string type_name(const toml::node& n) {
        switch (n.type()) {
        case toml::node_type::none: return "none";
        case toml::node_type::table: return "table";
        case toml::node_type::array: return "array";
        case toml::node_type::string: return "string";
        case toml::node_type::integer: return "integer";
        case toml::node_type::floating_point: return "floating-point";
        case toml::node_type::boolean: return "boolean";
        case toml::node_type::date: return "date";
        case toml::node_type::time: return "time";
        case toml::node_type::date_time: return "date-time";
        }
        return "value";
    }

    // [report]: records (an absolute directory, or "" for none) and journal.
    std::optional<Error> read_report(const toml::node& node, RunRecords& records) const {
        const toml::table* table = node.as_table();
        if (!table) return fail(node.source(), "report must be a table, not " + type_name(node));
        for (auto [key_ptr, value_ptr] : in_file_order(*table)) {
            const std::string k(key_ptr->str());
            if (k == "records") {
                const auto text = value_ptr->value<std::string>();
                if (!text || (!text->empty() && (!std::filesystem::path(*text).is_absolute() || text->find('\0') != std::string::npos)))
                    return fail(value_ptr->source(), "report.records must be an absolute directory, or \"\" for none");
                records.directory = std::filesystem::path(*text).lexically_normal();
            } else if (k == "journal") {
                if (!value_ptr->is_boolean()) return fail(value_ptr->source(), "report.journal must be true or false, not " + type_name(*value_ptr));
                records.journal = *value_ptr->value<bool>();
            } else {
                return fail(key_ptr->source(), "unknown key '" + k + "' in [report] (known: records, journal)");
            }
        }
        return std::nullopt;
    }

    // [policy]: what a call asks when it does not say.
    std::optional<Error> read_policy(const toml::node& node, Config& cfg) {
        const toml::table* table = node.as_table();
        if (!table) return fail(node.source(), "policy must be a table, not " + type_name(node));
        for (auto [key_ptr, value_ptr] : in_file_order(*table)) {
            const std::string k(key_ptr->str());
            if (k == "enforcement") {
                if (auto err = read_minimums(*value_ptr, cfg)) return err;
                continue;
            }
            if (k == "env") {
                if (auto err = read_environment(*value_ptr, cfg.environment)) return err;
                continue;
            }
            if (k == "limits") {
                if (auto err = read_limits(*value_ptr, cfg)) return err;
                continue;
            }
            if (k == "packages") {
                if (auto err = read_packages(*value_ptr, cfg.packages)) return err;
                continue;
            }
            if (k == "tmp") {
                const auto text = value_ptr->value<std::string>();
                if (!text || (*text != "private" && *text != "host"))
                    return fail(value_ptr->source(), "policy.tmp must be \"private\" or \"host\"");
                cfg.tmp = *text == "private" ? sdk::Tmp::private_ : sdk::Tmp::host;
                continue;
            }
            if (k == "unprotect" || k == "read" || k == "read_roots") {
                if (auto err = read_lifted_and_scoped(k, *value_ptr, cfg)) return err;
                continue;
            }
            if (k == "deny_read" || k == "protect") {
                auto paths = policy_paths(*value_ptr, "policy." + k, k == "protect");
                if (!paths) return paths.error();
                std::vector<SourcePosition> where;
                for (const toml::node& item : *value_ptr->as_array()) where.push_back(at(item.source()));
                (k == "deny_read" ? cfg.deny_read : cfg.protect) = std::move(*paths);
                (k == "deny_read" ? cfg.deny_read_where : cfg.protect_where) = std::move(where);
                continue;
            }
            if (k == "timeout" || k == "kill_after") {
                const auto text = value_ptr->value<std::string>();
                const auto duration = text ? parse_duration(*text) : std::unexpected(std::string("must be a string such as \"30s\""));
                if (!duration) return fail(value_ptr->source(), "policy." + k + " " + duration.error());
                (k == "timeout" ? cfg.timeout : cfg.kill_after) = *duration;
                continue;
            }
            if (k == "allow_hosts") {
                if (auto err = read_allow_hosts(*value_ptr, cfg)) return err;
                continue;
            }
            if (k != "network")
                return fail(key_ptr->source(), "unknown key '" + k +
                                                   "' in [policy] (known: network, allow_hosts, tmp, read, read_roots, deny_read, protect, unprotect, env, timeout, "
                                                   "kill_after, "
                                                   "enforcement, limits, packages)");
            const auto text = value_ptr->value<std::string>();
            if (!text || (*text != "none" && *text != "allow"))
                return fail(value_ptr->source(), "policy.network must be \"none\" or \"allow\"");
            cfg.network = *text == "none" ? Network::none : Network::allow;
            network_at_ = value_ptr->source();
        }
        return network_with_hosts(cfg);
    }

    // [policy] allow_hosts: host patterns (allow_hosts.hpp), kept in their canonical form,
    // each once.
    std::optional<Error> read_allow_hosts(const toml::node& node, Config& cfg) {
        auto hosts = string_array(node, "policy.allow_hosts");
        if (!hosts) return hosts.error();
        const auto& arr = *node.as_array();
        for (std::size_t i = 0; i < hosts->size(); ++i) {
            auto pattern = parse_host_pattern((*hosts)[i]);
            if (!pattern) return fail(arr[i].source(), "policy.allow_hosts: " + pattern.error());
            const std::string text = pattern->text();
            if (std::find(cfg.allow_hosts.begin(), cfg.allow_hosts.end(), text) != cfg.allow_hosts.end()) continue;
            cfg.allow_hosts.push_back(text);
            cfg.allow_hosts_where.push_back(at(arr[i].source()));
        }
        return std::nullopt;
    }

    // Listed hosts make the network the proxy's, unless it is allowed whole: that is two
    // answers to one question.
    std::optional<Error> network_with_hosts(Config& cfg) const {
        if (cfg.allow_hosts.empty()) return std::nullopt;
        if (cfg.network == Network::allow)
            return fail(network_at_, "policy.network = \"allow\" opens every host, and policy.allow_hosts lists some: give one or the other");
        cfg.network = Network::proxy;
        return std::nullopt;
    }

    // [policy] unprotect (as protect writes its entries); read ("all" or "scoped") and
    // read_roots (absolute, or "~/...").
    std::optional<Error> read_lifted_and_scoped(const std::string& k, const toml::node& value, Config& cfg) const {
        if (k == "read") {
            const auto text = value.value<std::string>();
            if (!text || (*text != "all" && *text != "scoped")) return fail(value.source(), "policy.read must be \"all\" or \"scoped\"");
            cfg.read_scoped = *text == "scoped";
            return std::nullopt;
        }
        auto paths = policy_paths(value, "policy." + k, k == "unprotect");
        if (!paths) return paths.error();
        (k == "unprotect" ? cfg.unprotect : cfg.read_roots) = std::move(*paths);
        return std::nullopt;
    }

    // [policy] deny_read, protect: absolute paths, or "~/..." beneath the caller's home;
    // protect also takes paths relative to each writable root, without "..".
    std::expected<std::vector<std::string>, Error> policy_paths(const toml::node& node, const std::string& what, bool relative_ok) const {
        auto paths = string_array(node, what);
        if (!paths) return std::unexpected(paths.error());
        const auto& arr = *node.as_array();
        for (std::size_t i = 0; i < paths->size(); ++i) {
            const std::string& p = (*paths)[i];
            const bool home = p == "~" || p.starts_with("~/");
            const bool absolute = std::filesystem::path(p).is_absolute() || (!p.empty() && p.front() == '/');
            if (!home && !absolute && !relative_ok)
                return std::unexpected(fail(arr[i].source(), what + " entry '" + p + "' must be an absolute path or begin with ~/"));
            if (!home && !absolute)
                for (const auto& part : std::filesystem::path(p))
                    if (part == "..")
                        return std::unexpected(fail(arr[i].source(), what + " entry '" + p + "' must not climb out of its root with '..'"));
        }
        return paths;
    }

    // [policy.env]: each key the file gives replaces the default's (exclude above all:
    // the file's list is the list, so that an operator can shorten it).
    std::optional<Error> read_environment(const toml::node& node, EnvironmentPolicy& env) const {
        const toml::table* table = node.as_table();
        if (!table) return fail(node.source(), "policy.env must be a table, not " + type_name(node));
        for (auto [key_ptr, value_ptr] : in_file_order(*table)) {
            const std::string k(key_ptr->str());
            const toml::node& value = *value_ptr;
            if (k == "inherit") {
                const auto text = value.value<std::string>();
                if (!text || (*text != "all" && *text != "core" && *text != "none"))
                    return fail(value.source(), "policy.env.inherit must be \"all\", \"core\" or \"none\"");
                env.inherit = *text == "all" ? EnvInherit::all : *text == "core" ? EnvInherit::core : EnvInherit::none;
            } else if (k == "exclude" || k == "include") {
                auto patterns = string_array(value, "policy.env." + k);
                if (!patterns) return patterns.error();
                const auto& arr = *value.as_array();
                for (std::size_t i = 0; i < patterns->size(); ++i)
                    if (auto why = invalid_environment_pattern((*patterns)[i]))
                        return fail(arr[i].source(), "policy.env." + k + " entry '" + (*patterns)[i] + "': " + *why);
                (k == "exclude" ? env.exclude : env.include) = std::move(*patterns);
            } else if (k == "set") {
                auto set = environment_set(value);
                if (!set) return set.error();
                env.set = std::move(*set);
            } else if (k == "exclude_url_passwords") {
                if (!value.is_boolean()) return fail(value.source(), "policy.env.exclude_url_passwords must be true or false, not " + type_name(value));
                env.exclude_url_passwords = *value.value<bool>();
            } else {
                return fail(key_ptr->source(), "unknown key '" + k + "' in [policy.env] (known: inherit, exclude, include, set, exclude_url_passwords)");
            }
        }
        return std::nullopt;
    }

    // [policy.packages]: dir, relative to the workspace without "..", or "" for none;
    // tools, each of npm, pip and cargo once.
    std::optional<Error> read_packages(const toml::node& node, PackageCaches& packages) const {
        const toml::table* table = node.as_table();
        if (!table) return fail(node.source(), "policy.packages must be a table, not " + type_name(node));
        for (auto [key_ptr, value_ptr] : in_file_order(*table)) {
            const std::string k(key_ptr->str());
            if (k == "dir") {
                const auto text = value_ptr->value<std::string>();
                if (!text) return fail(value_ptr->source(), "policy.packages.dir must be a string, not " + type_name(*value_ptr));
                if (auto why = bad_packages_dir(*text)) return fail(value_ptr->source(), "policy.packages.dir '" + *text + "' " + *why);
                packages.dir = *text;
            } else if (k == "tools") {
                auto tools = string_array(*value_ptr, "policy.packages.tools");
                if (!tools) return tools.error();
                const auto& arr = *value_ptr->as_array();
                for (std::size_t i = 0; i < tools->size(); ++i) {
                    const std::string& t = (*tools)[i];
                    if (t != "npm" && t != "pip" && t != "cargo")
                        return fail(arr[i].source(), "policy.packages.tools entry '" + t + "' is not one of npm, pip, cargo");
                    if (std::find(tools->begin(), tools->begin() + static_cast<std::ptrdiff_t>(i), t) != tools->begin() + static_cast<std::ptrdiff_t>(i))
                        return fail(arr[i].source(), "policy.packages.tools names '" + t + "' twice");
                }
                packages.tools = std::move(*tools);
            } else {
                return fail(key_ptr->source(), "unknown key '" + k + "' in [policy.packages] (known: dir, tools)");
            }
        }
        return std::nullopt;
    }

    // Why `dir` cannot be [policy.packages] dir, or nullopt: it must stay inside the
    // workspace, so relative, without "..", one line.
    static std::optional<std::string> bad_packages_dir(const std::string& dir) {
        if (dir.empty()) return std::nullopt;  // none
        if (dir.find_first_of(std::string("\n\r\0", 3)) != std::string::npos) return "must be one line, without NUL";
        if (dir.front() == '/' || std::filesystem::path(dir).is_absolute() || dir.front() == '~')
            return "must be relative to the workspace (or \"\" for none)";
        for (const auto& part : std::filesystem::path(dir))
            if (part == "..") return "must not climb out of the workspace with '..'";
        if (std::filesystem::path(dir).lexically_normal() == ".") return "must name a directory beneath the workspace, not the workspace itself";
        return std::nullopt;
    }

    // [policy.env] set: a table of names and string values, in the file's order.
    std::expected<std::vector<std::pair<std::string, std::string>>, Error> environment_set(const toml::node& node) const {
        const toml::table* table = node.as_table();
        if (!table) return std::unexpected(fail(node.source(), "policy.env.set must be a table of names and strings, not " + type_name(node)));
        if (table->size() > max_list_entries)
            return std::unexpected(fail(node.source(), "policy.env.set has " + std::to_string(table->size()) + " entries; at most " +
                                                           std::to_string(max_list_entries) + " are accepted"));
        std::vector<std::pair<std::string, std::string>> out;
        for (auto [key_ptr, value_ptr] : in_file_order(*table)) {
            const std::string name(key_ptr->str());
            if (auto why = invalid_environment_name(name)) return std::unexpected(fail(key_ptr->source(), "policy.env.set '" + name + "': " + *why));
            const auto* text = value_ptr->as_string();
            if (!text) return std::unexpected(fail(value_ptr->source(), "policy.env.set." + name + " must be a string, not " + type_name(*value_ptr)));
            if (text->get().find('\0') != std::string::npos)
                return std::unexpected(fail(value_ptr->source(), "policy.env.set." + name + " must not contain NUL"));
            out.emplace_back(name, text->get());
        }
        return out;
    }

    // [policy.limits]: what every run may take (limits.hpp); a number, or a string with a
    // K, M or G for memory and file-size.
    std::optional<Error> read_limits(const toml::node& node, Config& cfg) {
        const toml::table* table = node.as_table();
        if (!table) return fail(node.source(), "policy.limits must be a table, not " + type_name(node));
        cfg.limits = {};
        for (auto [key_ptr, value_ptr] : in_file_order(*table)) {
            const std::string k(key_ptr->str());
            std::string text;
            if (const auto* n = value_ptr->as_integer()) text = std::to_string(n->get());
            else if (const auto* str = value_ptr->as_string()) text = str->get();
            else return fail(value_ptr->source(), "policy.limits." + k + " must be a number or a string, not " + type_name(*value_ptr));
            if (auto why = set_limit(cfg.limits, k, text, "policy.limits." + k)) {
                if (why->starts_with("unknown")) return fail(key_ptr->source(), *why + " in [policy.limits]");
                return fail(value_ptr->source(), *why);
            }
        }
        return std::nullopt;
    }

    // [policy.enforcement]: per dimension, the least level a run accepts.
    std::optional<Error> read_minimums(const toml::node& node, Config& cfg) {
        const toml::table* table = node.as_table();
        if (!table) return fail(node.source(), "policy.enforcement must be a table, not " + type_name(node));
        for (auto [key_ptr, value_ptr] : in_file_order(*table)) {
            const std::string k(key_ptr->str());
            Minimum* into = k == "write"       ? &cfg.minimums.write
                            : k == "network"   ? &cfg.minimums.network
                            : k == "processes" ? &cfg.minimums.processes
                            : k == "read"      ? &cfg.minimums.read
                            : k == "protect"   ? &cfg.minimums.protect
                            : k == "lifetime"  ? &cfg.minimums.lifetime
                            : k == "limits"    ? &cfg.minimums.limits
                                               : nullptr;
            if (!into)
                return fail(key_ptr->source(),
                            "unknown dimension '" + k + "' in [policy.enforcement] (known: write, network, processes, read, protect, lifetime, limits)");
            const auto text = value_ptr->value<std::string>();
            if (!text || (*text != "full" && *text != "partial" && *text != "best-effort"))
                return fail(value_ptr->source(), "policy.enforcement." + k + " must be \"full\", \"partial\" or \"best-effort\"");
            *into = *text == "full" ? Minimum::full : *text == "partial" ? Minimum::partial : Minimum::best_effort;
            // Written by the operator: it applies to what they ask explicitly, too.
            if (k == "read") cfg.minimums.explicit_read = *into;
            if (k == "protect") cfg.minimums.explicit_protect = *into;
        }
        return std::nullopt;
    }

    std::optional<Error> read_timeout(const toml::node& node, Config& cfg) {
        auto v = node.as_integer();
        if (!v) return fail(node.source(), "probe_timeout_ms must be an integer, not " + type_name(node));
        const std::int64_t ms = v->get();
        if (ms <= 0) return fail(node.source(), "probe_timeout_ms must be a positive number of milliseconds, got " + std::to_string(ms));
        if (ms > max_probe_timeout_ms)
            return fail(node.source(), "probe_timeout_ms must be at most " + std::to_string(max_probe_timeout_ms) + ", got " + std::to_string(ms));
        cfg.probe_timeout_ms = static_cast<std::uint32_t>(ms);
        return std::nullopt;
    }

    // A non-empty string on one line, without NUL.
    std::expected<std::string, Error> single_line(const toml::node& node, const std::string& what) const {
        auto s = node.as_string();
        if (!s) return std::unexpected(fail(node.source(), what + " must be a string, not " + type_name(node)));
        const std::string& v = s->get();
        if (v.empty()) return std::unexpected(fail(node.source(), what + " must not be empty"));
        if (v.find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
            return std::unexpected(fail(node.source(), what + " must be a single line without NUL"));
        return v;
    }

    std::expected<std::vector<std::string>, Error> string_array(const toml::node& node, const std::string& what) const {
        auto arr = node.as_array();
        if (!arr) return std::unexpected(fail(node.source(), what + " must be an array of strings, not " + type_name(node)));
        // A configuration names a few runners, directories and arguments: a bound keeps
        // every use of them (searches, probes, error lines) small.
        if (arr->size() > max_list_entries)
            return std::unexpected(fail(node.source(), what + " has " + std::to_string(arr->size()) + " entries; at most " +
                                                           std::to_string(max_list_entries) + " are accepted"));
        std::vector<std::string> out;
        for (const toml::node& item : *arr) {
            auto s = single_line(item, "every entry of " + what);
            if (!s) return std::unexpected(s.error());
            out.push_back(*s);
        }
        return out;
    }

    std::optional<Error> read_plugin_dirs(const toml::node& node, Config& cfg) {
        auto dirs = string_array(node, "plugin_dirs");
        if (!dirs) return dirs.error();
        cfg.plugin_dirs.clear();
        cfg.plugin_dirs_where.clear();
        const auto& arr = *node.as_array();
        for (std::size_t i = 0; i < dirs->size(); ++i) {
            std::filesystem::path p((*dirs)[i]);
            if (!p.is_absolute()) return fail(arr[i].source(), "plugin_dirs entry '" + (*dirs)[i] + "' must be an absolute path");
            cfg.plugin_dirs.push_back(p.lexically_normal());
            cfg.plugin_dirs_where.push_back(at(arr[i].source()));
        }
        return std::nullopt;
    }

    std::optional<Error> read_platforms(const toml::node& node, Config& cfg) {
        auto tbl = node.as_table();
        if (!tbl) return fail(node.source(), "platform must be a table of [platform.<os>] tables");
        for (auto [key_ptr, value_ptr] : in_file_order(*tbl)) {
            const toml::key& key = *key_ptr;
            const toml::node& value = *value_ptr;
            const std::string os(key.str());
            bool known = false;
            for (auto p : known_platforms) known = known || os == p;
            if (!known) return fail(key.source(), "unknown platform '" + os + "' (known: linux, darwin, windows, freebsd, netbsd, openbsd)");
            auto ptbl = value.as_table();
            if (!ptbl) return fail(value.source(), "platform." + os + " must be a table");
            PlatformConfig pc;
            pc.where = at(value.source());
            const toml::node* chain_node = nullptr;
            const toml::node* command_node = nullptr;
            const toml::node* signatures_node = nullptr;
            for (auto [pkey_ptr, pvalue_ptr] : in_file_order(*ptbl)) {
                const toml::key& pkey = *pkey_ptr;
                const toml::node& pvalue = *pvalue_ptr;
                const std::string k(pkey.str());
                const std::string what = "platform." + os + "." + k;
                if (k == "chain") {
                    chain_node = &pvalue;
                    auto names = string_array(pvalue, what);
                    if (!names) return names.error();
                    std::set<std::string> seen;
                    const auto& arr = *pvalue.as_array();
                    for (std::size_t i = 0; i < names->size(); ++i) {
                        const std::string& n = (*names)[i];
                        if (!is_valid_runner_name(n))
                            return fail(arr[i].source(), "invalid runner name '" + n + "' in " + what + " (lower-case letters, digits, '-' and '_')");
                        if (!seen.insert(n).second) return fail(arr[i].source(), "runner '" + n + "' appears twice in " + what);
                    }
                    pc.chain = std::move(*names);
                } else if (k == "runner_command") {
                    command_node = &pvalue;
                    auto argv = string_array(pvalue, what);
                    if (!argv) return argv.error();
                    if (!argv->empty() && !std::filesystem::path(argv->front()).is_absolute())
                        return fail((*pvalue.as_array())[0].source(), what + "[0] must be an absolute path, got '" + argv->front() + "'");
                    // The asserted runner's first arguments: a placeholder there is filled in as a plugin's.
                    if (auto found = detail::runner_placeholders(*argv, argv->size() + 1, Attestation{}); !found)
                        return fail(pvalue.source(), what + ": " + found.error());
                    pc.runner_command = std::move(*argv);
                } else if (k == "runner_failure_signatures") {
                    signatures_node = &pvalue;
                    auto sigs = string_array(pvalue, what);
                    if (!sigs) return sigs.error();
                    const auto& arr = *pvalue.as_array();
                    for (std::size_t i = 0; i < sigs->size(); ++i)
                        if ((*sigs)[i].find_first_not_of(" \t") == std::string::npos)
                            return fail(arr[i].source(), "every entry of " + what + " must contain a non-blank character");
                    pc.runner_failure_signatures = std::move(*sigs);
                } else {
                    return fail(pkey.source(), "unknown key '" + k + "' in [platform." + os + "] (known: chain, runner_command, runner_failure_signatures)");
                }
            }
            if (signatures_node && !command_node)
                return fail(signatures_node->source(), "platform." + os + ".runner_failure_signatures requires runner_command");
            if (command_node && pc.runner_command.empty())
                return fail(command_node->source(), "platform." + os + ".runner_command must not be empty");
            if (command_node && pc.runner_failure_signatures.empty())
                return fail(signatures_node ? signatures_node->source() : command_node->source(),
                            "platform." + os + ".runner_command requires at least one runner_failure_signatures entry");
            if (command_node && chain_node)
                return fail(chain_node->source(), "platform." + os + " sets both chain and runner_command; runner_command replaces the chain, so give only one");
            cfg.platforms[os] = std::move(pc);
        }
        return std::nullopt;
    }

    std::optional<Error> read_runners(const toml::node& node, Config& cfg) {
        auto tbl = node.as_table();
        if (!tbl) return fail(node.source(), "runner must be a table of [runner.<name>] tables");
        for (auto [key_ptr, value_ptr] : in_file_order(*tbl)) {
            const toml::key& key = *key_ptr;
            const toml::node& value = *value_ptr;
            const std::string name(key.str());
            if (!is_valid_runner_name(name)) return fail(key.source(), "invalid runner name '" + name + "' (lower-case letters, digits, '-' and '_')");
            auto rtbl = value.as_table();
            if (!rtbl) return fail(value.source(), "runner." + name + " must be a table");
            RunnerTable rt;
            rt.where = at(value.source());
            for (auto [skey_ptr, svalue_ptr] : in_file_order(*rtbl)) {
                const toml::key& skey = *skey_ptr;
                const toml::node& svalue = *svalue_ptr;
                RunnerSetting s;
                s.key = std::string(skey.str());
                s.where = at(skey.source());
                const std::string what = "runner." + name + "." + s.key;
                if (svalue.is_string()) {
                    auto v = single_line(svalue, what);
                    if (!v) return v.error();
                    s.kind = RunnerSetting::Kind::string;
                    s.string_value = *v;
                } else if (auto i = svalue.as_integer()) {
                    s.kind = RunnerSetting::Kind::integer;
                    s.integer_value = i->get();
                } else if (auto b = svalue.as_boolean()) {
                    s.kind = RunnerSetting::Kind::boolean;
                    s.boolean_value = b->get();
                } else if (svalue.is_array()) {
                    auto v = string_array(svalue, what);
                    if (!v) return v.error();
                    s.kind = RunnerSetting::Kind::string_array;
                    s.array_value = std::move(*v);
                } else {
                    return fail(svalue.source(), what + " must be a string, integer, boolean or array of strings, not " + type_name(svalue));
                }
                rt.settings.push_back(std::move(s));
            }
            cfg.runners[name] = std::move(rt);
        }
        return std::nullopt;
    }
};

// `text` (from `source`) over `base`: what it leaves unsaid keeps the base's value.
std::expected<Config, Error> parse_over(std::string_view text, std::string source, Config base) {
    auto root = detail::parse_toml_text(text, source);
    if (!root) return std::unexpected(root.error());
    return Validator(std::move(source)).run(*root, std::move(base));
}

// One file's text, read as trusted configuration (trust.hpp), or why not.
std::expected<std::string, Error> read_config_text(const std::filesystem::path& file) {
    auto text = detail::read_trusted_file(file, max_config_bytes);
    if (text) return std::move(*text);
    using Kind = detail::ReadFailure::Kind;
    const std::string& why = text.error().message;
    switch (text.error().kind) {
    case Kind::not_found: return std::unexpected(Error{ErrorCode::config_not_found, file.string() + ": configuration file not found"});
    case Kind::not_regular:
    case Kind::unreadable: return std::unexpected(Error{ErrorCode::config_unreadable, why});
    case Kind::untrusted: return std::unexpected(Error{ErrorCode::config_untrusted, file.string() + ": refusing configuration: " + why});
    case Kind::too_large: break;
    }
    return std::unexpected(Error{ErrorCode::config_invalid, file.string() + ": larger than 1 MiB"});
}

// `file` over `config`, said as coming from `origin` when it fails.
std::optional<Error> apply_file(Config& config, const std::filesystem::path& file, std::string_view origin) {
    auto text = read_config_text(file);
    auto layered = text ? parse_over(*text, file.string(), std::move(config)) : std::unexpected(text.error());
    if (!layered) {
        Error e = layered.error();
        e.message += " (from " + std::string(origin) + ")";
        return e;
    }
    config = std::move(*layered);
    config.files.push_back(file);
    return std::nullopt;
}

}  // namespace

std::expected<Config, Error> parse_config(std::string_view text, std::string source) {
    // A file is read over the embedded default (config/confine.toml), so that what it
    // leaves unsaid — the chains, above all — is the default's, never nothing.
    // That default is compiled in (default_config.hpp): the text is not parsed again.
    Config base;
    if (source != embedded_config_name) base = detail::compiled_default_config();
    return parse_over(text, std::move(source), std::move(base));
}

std::expected<Config, Error> load_config_file(const std::filesystem::path& file) {
    auto text = read_config_text(file);
    if (!text) return std::unexpected(text.error());
    auto cfg = parse_config(*text, file.string());
    if (cfg) cfg->files = {file};
    return cfg;
}

namespace detail {

std::expected<std::vector<std::filesystem::path>, Error> drop_in_files(const std::filesystem::path& dir, std::string_view what) {
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(dir, ec))) return files;
    if (auto why = untrusted_reason(dir))
        return std::unexpected(Error{ErrorCode::config_untrusted, dir.string() + ": refusing " + std::string(what) + ": " + *why});
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".toml" && it->path().filename().string().front() != '.') files.push_back(it->path());
    if (ec) return std::unexpected(Error{ErrorCode::config_unreadable, dir.string() + ": " + ec.message()});
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace detail

std::filesystem::path user_config_path() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg && std::filesystem::path(xdg).is_absolute()) return std::filesystem::path(xdg) / "confine" / "confine.toml";
    const char* home = std::getenv("HOME");
    if (home && *home && std::filesystem::path(home).is_absolute()) return std::filesystem::path(home) / ".config" / "confine" / "confine.toml";
    return {};
}

std::expected<Config, Error> load_config(const ConfigLookup& lookup) {
    namespace fs = std::filesystem;
    Config config = detail::compiled_default_config();
    std::error_code ec;
    const fs::path etc = lookup.system_path.parent_path();
    // The operator's: the system file, then its drop-ins.
    std::vector<std::pair<fs::path, std::string>> layers;
    if (fs::exists(fs::symlink_status(lookup.system_path, ec))) layers.emplace_back(lookup.system_path, "the system configuration");
    auto system_drop_ins = detail::drop_in_files(etc / "confine.d", "configuration");
    if (!system_drop_ins) return std::unexpected(system_drop_ins.error());
    for (const auto& f : *system_drop_ins) layers.emplace_back(f, "the system configuration");
    const std::size_t operators = layers.size();
    // The user's: their own file, then --config or CONFINE_CONFIG.
    std::optional<fs::path> user = lookup.user_path;
    if (!user && lookup.read_environment) {
        if (fs::path p = user_config_path(); !p.empty()) user = p;
    }
    if (user && fs::exists(fs::symlink_status(*user, ec))) layers.emplace_back(*user, "the user's configuration");
    std::optional<std::string> env = lookup.environment_value;
    if (!env && lookup.read_environment) {
        if (const char* v = std::getenv("CONFINE_CONFIG")) env = std::string(v);
    }
    if (lookup.explicit_path) {
        layers.emplace_back(*lookup.explicit_path, "--config");
    } else if (env && !env->empty()) {
        if (!fs::path(*env).is_absolute())
            return std::unexpected(Error{ErrorCode::config_not_found, "CONFINE_CONFIG must be an absolute path, got '" + *env + "'"});
        layers.emplace_back(fs::path(*env), "CONFINE_CONFIG");
    }
    for (const auto& [file, origin] : layers)
        if (auto err = apply_file(config, file, origin)) return std::unexpected(*err);
    // Above them all, the managed layer's bounds.
    auto managed = load_managed(etc / "managed.toml", etc / "managed.d");
    if (!managed) return std::unexpected(managed.error());
    config.managed = std::move(*managed);
    const std::vector<fs::path> users(config.files.begin() + static_cast<std::ptrdiff_t>(operators), config.files.end());
    if (auto err = apply_managed(config, users)) return std::unexpected(*err);
    return config;
}

std::string format_duration(std::chrono::milliseconds duration) {
    const auto ms = duration.count();
    if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
    if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
    if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

std::expected<std::chrono::milliseconds, std::string> parse_duration(std::string_view text) {
    const std::string_view shape = "is not a duration: a positive number with ms, s, m or h (500ms, 30s, 5m)";
    std::size_t at = 0;
    std::uint64_t whole = 0, fraction = 0, scale = 1;
    bool digits = false;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, digits = true) {
        whole = whole * 10 + static_cast<std::uint64_t>(text[at] - '0');
        if (whole > 100'000'000) return std::unexpected("'" + std::string(text) + "' is too long");
    }
    if (at < text.size() && text[at] == '.') {
        for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, digits = true)
            if (scale < 1'000'000) {
                fraction = fraction * 10 + static_cast<std::uint64_t>(text[at] - '0');
                scale *= 10;
            }
    }
    const std::string_view unit = text.substr(at);
    const std::uint64_t per = unit == "ms" ? 1 : unit == "s" || unit.empty() ? 1000 : unit == "m" ? 60'000 : unit == "h" ? 3'600'000 : 0;
    if (!digits || per == 0) return std::unexpected("'" + std::string(text) + "' " + std::string(shape));
    const std::uint64_t ms = whole * per + fraction * per / scale;
    if (ms == 0) return std::unexpected("'" + std::string(text) + "' is not a duration: it must be at least 1ms");
    if (ms > 100'000'000ull * 1000) return std::unexpected("'" + std::string(text) + "' is too long");
    return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(ms));
}

}  // namespace confine
