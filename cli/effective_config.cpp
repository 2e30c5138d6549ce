#include "effective_config.hpp"

#include <confine/managed.hpp>
#include <confine/wrap_result.hpp>

#include <algorithm>
#include <map>

namespace confinectl {
namespace {

using nlohmann::json;

std::string_view minimum_name(confine::Minimum m) {
    return m == confine::Minimum::full ? "full" : m == confine::Minimum::partial ? "partial" : "best-effort";
}

// "managed FILE:LINE:COLUMN"
std::string managed_origin(const std::string& where) {
    std::string out = "managed ";
    out += where;
    return out;
}

json strings(const std::vector<std::string>& items) { return json(items); }

json paths(const std::vector<std::filesystem::path>& items) {
    json out = json::array();
    for (const auto& p : items) out.push_back(p.string());
    return out;
}

// The managed bound a key is held to, by Managed::where's name ("" for none).
std::string bound_of(const std::string& key) {
    static const std::map<std::string, std::string> bounds{{"policy.network", "network"},   {"policy.allow_hosts", "network"},
                                                           {"policy.tmp", "tmp"},           {"policy.read", "read"},
                                                           {"policy.timeout", "timeout"},   {"policy.env.inherit", "env_inherit"}};
    if (const auto it = bounds.find(key); it != bounds.end()) return it->second;
    if (key.starts_with("policy.limits.")) return "limits." + key.substr(14);
    if (key.starts_with("policy.enforcement.")) return "enforcement." + key.substr(19);
    if (key.starts_with("platform.") && key.ends_with(".chain")) return "runners";
    return {};
}

class Collector {
public:
    explicit Collector(const confine::Config& c) : c_(c) {}

    std::vector<Setting> run() {
        add("probe_timeout_ms", c_.probe_timeout_ms);
        add("plugin_dirs", paths(c_.plugin_dirs));
        for (const auto& [os, p] : c_.platforms) {
            const std::string key = "platform." + os;
            if (!p.runner_command.empty()) {
                add(key + ".runner_command", strings(p.runner_command));
                add(key + ".runner_failure_signatures", strings(p.runner_failure_signatures));
            } else {
                add(key + ".chain", strings(p.chain));
            }
        }
        for (const auto& [name, table] : c_.runners)
            for (const auto& s : table.settings) add_setting("runner." + name + "." + s.key, s);
        policy();
        return std::move(out_);
    }

private:
    const confine::Config& c_;
    std::vector<Setting> out_;

    std::string origin_of(const std::string& key) const {
        if (const auto it = c_.origins.find(key); it != c_.origins.end()) return confine::to_string(it->second);
        const std::string bound = bound_of(key);
        if (!bound.empty())
            if (const auto it = c_.managed.where.find(bound); it != c_.managed.where.end()) return managed_origin(confine::to_string(it->second));
        return "default";
    }
    void add(const std::string& key, json value) { out_.push_back({key, std::move(value), origin_of(key)}); }

    void add_setting(const std::string& key, const confine::RunnerSetting& s) {
        json value;
        switch (s.kind) {
        case confine::RunnerSetting::Kind::string: value = s.string_value; break;
        case confine::RunnerSetting::Kind::integer: value = s.integer_value; break;
        case confine::RunnerSetting::Kind::boolean: value = s.boolean_value; break;
        case confine::RunnerSetting::Kind::string_array: value = s.array_value; break;
        }
        out_.push_back({key, std::move(value), confine::to_string(s.where)});
    }

    // deny_read and protect, entry by entry, each where it is written.
    void entries(const std::string& key, const std::vector<std::string>& list, const std::vector<confine::SourcePosition>& where,
                 const std::vector<std::string>& managed) {
        for (std::size_t i = 0; i < list.size(); ++i) {
            std::string origin = "default";
            if (i < where.size() && where[i].file != confine::embedded_config_name) origin = confine::to_string(where[i]);
            if (std::find(managed.begin(), managed.end(), list[i]) != managed.end()) origin = managed_origin(origin);
            out_.push_back({key + "[]", list[i], origin});
        }
    }

    void policy() {
        add("policy.network", std::string(confine::to_string(c_.network)));
        // The hosts' list makes the network the proxy's: said where the list is.
        if (c_.network == confine::Network::proxy && c_.origins.contains("policy.allow_hosts"))
            out_.back().origin = confine::to_string(c_.origins.at("policy.allow_hosts"));
        add("policy.allow_hosts", strings(c_.allow_hosts));
        add("policy.tmp", std::string(confine::to_string(c_.tmp)));
        add("policy.read", c_.read_scoped ? "scoped" : "all");
        add("policy.read_roots", strings(c_.read_roots));
        entries("policy.deny_read", c_.deny_read, c_.deny_read_where, c_.managed.deny_read);
        entries("policy.protect", c_.protect, c_.protect_where, c_.managed.protect);
        add("policy.unprotect", strings(c_.unprotect));
        add("policy.timeout", c_.timeout ? json(confine::format_duration(*c_.timeout)) : json(nullptr));
        add("policy.kill_after", c_.kill_after ? json(confine::format_duration(*c_.kill_after)) : json(nullptr));
        add("policy.env.inherit", std::string(confine::to_string(c_.environment.inherit)));
        add("policy.env.exclude", strings(c_.environment.exclude));
        add("policy.env.include", strings(c_.environment.include));
        json set = json::object();
        for (const auto& [name, value] : c_.environment.set) set[name] = value;
        add("policy.env.set", set);
        add("policy.env.exclude_url_passwords", c_.environment.exclude_url_passwords);
        if (!c_.environment.held.empty()) out_.push_back({"policy.env.held", strings(c_.environment.held), "managed"});
        const confine::Minimums& m = c_.minimums;
        for (const auto& [dim, level] : {std::pair{"write", m.write}, {"network", m.network}, {"processes", m.processes}, {"read", m.read},
                                         {"protect", m.protect}, {"lifetime", m.lifetime}, {"limits", m.limits}})
            add(std::string("policy.enforcement.") + dim, std::string(minimum_name(level)));
        const confine::Limits& l = c_.limits;
        for (const auto& [name, value] : {std::pair{"memory", l.memory}, {"processes", l.processes}, {"cpu", l.cpu}, {"file-size", l.file_size},
                                          {"open-files", l.open_files}})
            if (value) add(std::string("policy.limits.") + name, *value);
        add("policy.packages.dir", c_.packages.dir);
        add("policy.packages.tools", strings(c_.packages.tools));
    }
};

}  // namespace

std::vector<Setting> effective_settings(const confine::Config& config) { return Collector(config).run(); }

std::vector<std::pair<std::string, std::string>> managed_bounds(const confine::Managed& managed) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [key, where] : managed.where) out.emplace_back(key, confine::describe_bound(managed, key));
    return out;
}

std::string effective_text(const confine::Config& config) {
    std::string out = "# files:";
    for (const auto& f : config.files) (out += ' ') += f.string();
    if (config.files.empty()) out += " none (the embedded default)";
    out += "\n# managed:";
    for (const auto& f : config.managed.files) (out += ' ') += f.string();
    if (!config.managed.any()) out += " none";
    out += '\n';
    for (const auto& [key, text] : managed_bounds(config.managed)) out += "# managed bound: " + text + '\n';
    for (const auto& s : effective_settings(config)) {
        std::string line = s.key + " = " + s.value.dump();
        if (line.size() < 56) line.append(56 - line.size(), ' ');
        out += line + "  # " + s.origin + '\n';
    }
    return out;
}

json effective_document(const confine::Config& config) {
    json settings = json::array();
    for (const auto& s : effective_settings(config)) settings.push_back({{"key", s.key}, {"value", s.value}, {"origin", s.origin}});
    json bounds = json::object();
    for (const auto& [key, text] : managed_bounds(config.managed)) bounds[key] = text;
    return {{"files", paths(config.files)}, {"managed", {{"files", paths(config.managed.files)}, {"bounds", bounds}}}, {"settings", settings}};
}

std::string effective_json(const confine::Config& config) {
    json doc = effective_document(config);
    doc["schema_version"] = 1;
    return doc.dump(2) + '\n';
}

}  // namespace confinectl
