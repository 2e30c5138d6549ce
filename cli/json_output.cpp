#include "json_output.hpp"

#include "effective_config.hpp"

#include <confine/internal/network_filter_linux.hpp>
#include <confine/prove.hpp>

#include <nlohmann/json.hpp>

namespace confinectl {
namespace {

using nlohmann::json;

// Raised only when a document loses or changes the meaning of a field.
constexpr int schema_version = 1;

// Text from outside (a command's stderr line, a path) need not be UTF-8, and JSON must
// be: a byte that is not is written as U+FFFD.
std::string text_of(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace) + '\n'; }

json or_null(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

template <typename T>
json or_null(const std::optional<T>& value) {
    return value ? json(*value) : json(nullptr);
}

json enforcement_or_null(const std::optional<confine::Enforcement>& e) {
    return e ? json(std::string(confine::to_string(*e))) : json(nullptr);
}

#if defined(CONFINE_NETWORK_FILTER_PROGRAM)
std::string base64(const unsigned char* data, std::size_t size) {
    static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < size; i += 3) {
        const std::uint32_t n = (std::uint32_t{data[i]} << 16) | (i + 1 < size ? std::uint32_t{data[i + 1]} << 8 : 0) | (i + 2 < size ? data[i + 2] : 0);
        out += digits[(n >> 18) & 63];
        out += digits[(n >> 12) & 63];
        out += i + 1 < size ? digits[(n >> 6) & 63] : '=';
        out += i + 2 < size ? digits[n & 63] : '=';
    }
    return out;
}
#endif

// What a host fills in before it runs the argv, argument by argument; the network
// filter's program comes with it (base64), for the host to put in a file.
json placeholders_json(const confine::WrapResult& w) {
    json list = json::array();
    for (const auto& p : w.placeholders) {
        json entry{{"argument", p.argument}, {"text", w.argv[p.argument]}, {"kind", std::string(confine::to_string(p.kind))}};
        if (!p.path.empty()) entry["path"] = p.path;
        if (p.kind == confine::Placeholder::Kind::network_filter_fd || p.kind == confine::Placeholder::Kind::loopback_filter_fd) {
#if defined(CONFINE_NETWORK_FILTER_PROGRAM)
            const auto kind = p.kind == confine::Placeholder::Kind::loopback_filter_fd ? confine::network::Filter::loopback : confine::network::Filter::closed;
            const auto* bytes = reinterpret_cast<const unsigned char*>(confine::network::filter_code(kind));
            entry["program_base64"] = base64(bytes, confine::network::filter_size(kind) * sizeof(sock_filter));
#else
            entry["program_base64"] = nullptr;  // no program for this platform: a host cannot run this argv
#endif
        }
        list.push_back(std::move(entry));
    }
    return list;
}

// Which /tmp the command got: "private", "host", or null where the runner did not say.
json tmp_json(confine::Tmp tmp) { return tmp == confine::Tmp::unsaid ? json(nullptr) : json(std::string(confine::to_string(tmp))); }

// With the network none, the command's loopback: "own", "none", or null (not none, or unsaid).
json loopback_json(confine::Loopback l) { return l == confine::Loopback::unsaid ? json(nullptr) : json(std::string(confine::to_string(l))); }

// {"write", "network", "processes", "read", "protect", "lifetime", "limits", "open"}: each
// a level ("full", "partial", "none"), or "not asked": the network when the policy allowed
// it, read and protect when it had no path to deny or to protect, limits when it set none,
// the read scope when reads were not scoped.
json dimensions_json(const confine::Dimensions& d, const confine::Asked& asked) {
    auto level = [](bool is, confine::Level l) { return is ? std::string(confine::to_string(l)) : std::string("not asked"); };
    return {{"write", std::string(confine::to_string(d.write))},
            {"network", level(asked.network_asked, d.network)},
            {"processes", std::string(confine::to_string(d.processes))},
            {"read", level(asked.read_asked, d.read)},
            {"read_scope", level(asked.read_scoped, d.read_scope)},
            {"protect", level(asked.protect_asked, d.protect)},
            {"lifetime", std::string(confine::to_string(d.lifetime))},
            {"limits", level(asked.limits_asked, d.limits)},
            {"open", or_null(d.open)}};
}

json error_json(const confine::Error& e) { return {{"code", confine::error_code_name(e.code)}, {"message", e.message}}; }

json candidate_json(const confine::Candidate& c) {
    json j{{"runner", c.runner}, {"probed", c.probed}, {"cached", c.from_cache}, {"plugin", or_null(c.plugin_file.string())}};
    if (c.verdict) {
        j["verdict"] = std::string(confine::to_string(c.verdict->kind));
        j["reason"] = c.verdict->reason;
    } else {
        j["verdict"] = nullptr;
        j["reason"] = "selected without probing";
    }
    return j;
}

json plugin_entry_json(const confine::PluginSearch::Entry& e) {
    json j{{"file", e.file.string()}, {"runner", e.runner_name}};
    if (e.loaded) {
        j["status"] = "ok";
        j["version"] = e.loaded->version;
        j["abi"] = std::to_string(e.loaded->abi_major) + "." + std::to_string(e.loaded->abi_minor);
        j["summary"] = e.loaded->summary;
    } else {
        j["status"] = "refused";
        j["error"] = error_json(e.loaded.error());
    }
    return j;
}

// A host that spawns the argv itself needs to know how to attest it.
json attestation_json(const confine::Attestation& a) {
    switch (a.kind) {
    case confine::Attestation::Kind::none: return {{"kind", "none"}};
    case confine::Attestation::Kind::exec: return {{"kind", "exec"}, {"exec_index", a.exec_index}};
    case confine::Attestation::Kind::status_fd:
        return {{"kind", "status_fd"},
                {"status_argument", a.status_argument},
                {"status_marker", a.status_marker},
                {"status_pid_key", or_null(a.status_pid_key)}};
    }
    return {{"kind", "none"}};  // a kind this confinectl does not know: nothing to attest
}

}  // namespace

std::string probe_json(const confine::Selection& s, const confine::Config& config, const std::string& workspace,
                       const std::optional<std::string>& run_refused) {
    json j{{"schema_version", schema_version},
           {"platform", s.platform},
           {"config", config.source},
           {"effective", effective_document(config)},
           {"chain", s.chain},
           {"asserted", s.asserted},
           {"usable", s.usable()}};
    if (s.asserted) j["runner_command"] = s.runner_command;
    j["runners"] = json::array();
    for (const auto& c : s.candidates) j["runners"].push_back(candidate_json(c));
    j["selected"] = or_null(s.runner);
    j["enforcement"] = enforcement_or_null(s.enforcement);
    j["error"] = s.failure ? error_json(*s.failure) : json(nullptr);
    j["workspace"] = or_null(workspace);
    j["run_refused"] = or_null(run_refused);
    return text_of(j, 2);
}

std::string plugins_json(std::span<const std::filesystem::path> dirs, std::span<const confine::PluginSearch::Entry> entries) {
    json dir_list = json::array();
    for (const auto& d : dirs) dir_list.push_back(d.string());
    json plugin_list = json::array();
    for (const auto& e : entries) plugin_list.push_back(plugin_entry_json(e));
    return text_of(json{{"schema_version", schema_version}, {"plugin_dirs", dir_list}, {"plugins", plugin_list}}, 2);
}

namespace {

// {"variables": {NAME: VALUE, ...}, "removed": [NAME, ...], "set": [NAME, ...]}: what the
// host gives the runner, exactly, and what the filter did. A name's first entry is the
// one the command's getenv() would see. Never a removed variable's value.
std::expected<json, std::string> environment_json(const confine::FilteredEnvironment& env) {
    json variables = json::object();
    for (const auto& entry : env.variables) {
        const std::size_t eq = entry.find('=', 1);
        const std::string name = entry.substr(0, eq), value = eq == std::string::npos ? std::string() : entry.substr(eq + 1);
        try {
            (void)json(name).dump();
            (void)json(value).dump();
        } catch (const json::type_error&) {
            return std::unexpected("wrap --json: the environment variable " + json(name).dump(-1, ' ', false, json::error_handler_t::replace) +
                                   " is not UTF-8, which JSON cannot carry (unset it, or leave it out with [policy.env] exclude)");
        }
        if (!variables.contains(name)) variables[name] = value;
    }
    return json{{"variables", variables}, {"removed", env.removed}, {"set", env.set}};
}

}  // namespace

std::expected<std::string, std::string> wrap_json(const confine::WrapResult& w, const confine::FilteredEnvironment& environment,
                                                  std::span<const int> pass_fds) {
    auto env = environment_json(environment);
    if (!env) return std::unexpected(env.error());
    // What of git the run-end check holds (confine::run_end_check) is not held for a host
    // that runs this argv itself and does not check afterwards: said, and protect is then
    // partial where it was full.
    confine::Dimensions dimensions = w.dimensions;
    confine::Enforcement enforcement = w.enforcement;
    confine::Asked asked = w;
    // Nor are protected paths put back for it: the runner's own level is what it gets.
    if (w.protect_restored) {
        dimensions.protect = w.own_protect;
        if (const auto at = dimensions.open.find(w.restore_open); !w.restore_open.empty() && at != std::string::npos)
            dimensions.open.erase(at >= 2 ? at - 2 : at, w.restore_open.size() + (at >= 2 ? 2 : 0));
        if (!w.own_protect_open.empty()) dimensions.open += std::string(dimensions.open.empty() ? "" : "; ") + w.own_protect_open;
    }
    const bool absent_held = w.git_watch || w.protect_watch;  // put back, or held absent, only by the run-end check
    if (absent_held && (!asked.protect_asked || dimensions.protect == confine::Level::full)) {
        asked.protect_asked = true;
        dimensions.protect = confine::Level::partial;
        enforcement = confine::Enforcement::partial;
        dimensions.open += std::string(dimensions.open.empty() ? "" : "; ") +
                           "protect: what git or another tool reads that is missing at the start (a commondir, a config.worktree, an included "
                           "file, the .git of a root inside a parent repository, of a tracked directory or of a submodule, a protect entry "
                           "such as .envrc or .vscode) is held absent only by the run-end check that confinectl run and the library's run() "
                           "make after the runner has ended";
    }
    // Nor does such a host start it under confine's supervisor: what the runner's own
    // mechanism ends is all there is of lifetime.
    if (w.host_supervised) {
        dimensions.lifetime = w.own_lifetime;
        if (const auto at = dimensions.open.find(w.supervision_open); !w.supervision_open.empty() && at != std::string::npos)
            dimensions.open.erase(at >= 2 ? at - 2 : at, w.supervision_open.size() + (at >= 2 ? 2 : 0));
        if (dimensions.lifetime != confine::Level::full) {
            enforcement = confine::Enforcement::partial;
            dimensions.open += std::string(dimensions.open.empty() ? "" : "; ") +
                               "lifetime: what the command leaves running is ended only by the supervisor that confinectl run and the library's "
                               "run() and spawn() start the runner under; a host that runs this argv itself must end it";
        }
    }
    json j{{"schema_version", schema_version},
           {"runner", w.runner},
           {"argv", w.argv},
           {"enforcement", std::string(confine::to_string(enforcement))},
           {"denial_signatures", w.denial_signatures},
           {"denial_paths", w.denial_paths},
           {"failure_rule",
            {{"evidence_exit_codes", w.failure_rule.evidence_exit_codes},
             {"allowed_exit_codes", w.failure_rule.evidence_exit_codes},  // its older name, kept for readers of schema 1
             {"fatal_signatures", w.failure_rule.fatal_signatures},
             {"informational_lines", w.failure_rule.informational_lines}}},
           {"attestation", attestation_json(w.attestation)},
           {"dimensions", dimensions_json(dimensions, asked)},
           {"tmp", tmp_json(w.tmp)},
           {"loopback", loopback_json(w.loopback)},
           {"placeholders", placeholders_json(w)},
           {"environment", std::move(*env)},
           {"pass_fds", std::vector<int>(pass_fds.begin(), pass_fds.end())}};
    // An argv is run as it is: one that JSON cannot carry exactly is refused, never altered.
    for (std::size_t i = 0; i < w.argv.size(); ++i) {
        try {
            (void)json(w.argv[i]).dump();
        } catch (const json::type_error&) {
            return std::unexpected("wrap --json: argument " + std::to_string(i) + " of the wrapped command line is not UTF-8, which JSON cannot carry");
        }
    }
    return text_of(j, 2);
}

std::string error_json(confine::ErrorCode code, const std::string& message) {
    return text_of(json{{"schema_version", schema_version},
                        {"error", {{"code", std::string(confine::error_code_name(code))}, {"message", message}}}},
                   2);
}

std::string run_report_json(const confine::Outcome& o, const std::vector<confine::Candidate>& skipped) {
    const json evidence = o.evidence.empty() ? json(nullptr) : json{{"line", o.evidence}, {"rule", or_null(o.matched_rule)}};
    json j{{"schema_version", schema_version},
           {"outcome", std::string(confine::to_string(o.kind))},
           {"exit_code", or_null(o.exit_code)},
           {"signal", or_null(o.signal)},
           {"timed_out", o.timed_out},
           {"limit", or_null(o.limit)},
           {"limit_possible", o.limit_possible},
           {"limit_note", o.limit_note.empty() ? json(nullptr) : json(o.limit_note)},
           {"runner", or_null(o.runner)},
           {"enforcement", enforcement_or_null(o.enforcement)},
           {"basis", std::string(confine::to_string(o.basis))},
           {"evidence", evidence},
           {"denial_hint", or_null(o.denial_hint)},
           {"denial_advice", or_null(o.denial_advice)},
           {"dimensions", o.dimensions ? dimensions_json(*o.dimensions, o) : json(nullptr)},
           {"tmp", tmp_json(o.tmp)},
           {"loopback", loopback_json(o.loopback)},
           {"environment", {{"removed", o.environment_removed}}},
           {"passed_fds", o.passed_fds}};
    j["skipped"] = json::array();
    for (const auto& c : skipped) j["skipped"].push_back({{"runner", c.runner}, {"reason", c.verdict ? c.verdict->reason : std::string()}});
    json set_aside = json::array();
    for (const auto& m : o.set_aside)
        set_aside.push_back({{"path", m.path.string()},
                             {"moved_to", m.moved_to.empty() ? json(nullptr) : json(m.moved_to.string())},
                             {"error", or_null(m.error)},
                             {"restored", m.restored}});
    j["set_aside"] = set_aside;
    // With the network through the run's proxy, what it saw: one entry per host, port and
    // verdict; null for any other network.
    json requests = o.network_proxied ? json::array() : json(nullptr);
    for (const auto& r : o.network_requests) {
        json entry{{"host", r.host}, {"port", r.port}, {"allowed", r.allowed}, {"bytes_up", r.bytes_up}, {"bytes_down", r.bytes_down},
                   {"connections", r.connections}};
        if (!r.allowed) entry["reason"] = r.reason;
        requests.push_back(std::move(entry));
    }
    j["network_requests"] = std::move(requests);
    j["network_over_limit"] = o.network_proxied ? json(o.network_over_limit) : json(nullptr);
    return text_of(j, -1);
}

std::string proof_json(const confine::Proof& proof) {
    json checks = json::array();
    json summary{{"held", 0}, {"open", 0}, {"over_claim", 0}, {"cost", 0}};
    for (const auto& c : proof.checks) {
        const confine::ProofOutcome outcome = c.outcome();
        const char* name = outcome == confine::ProofOutcome::held   ? "held"
                           : outcome == confine::ProofOutcome::open ? "open"
                           : outcome == confine::ProofOutcome::cost ? "cost"
                                                           : "over_claim";
        summary[name] = summary[name].get<int>() + 1;
        checks.push_back({{"check", c.check},
                          {"dimension", c.dimension},
                          {"expected", c.expected},
                          {"observed", c.observed},
                          {"held", c.held()},
                          {"open", c.open()},
                          {"outcome", outcome == confine::ProofOutcome::over_claim ? "over-claim" : name},
                          {"reported", or_null(c.reported)},
                          {"left_open", or_null(c.explained)},
                          {"named_by", c.hole}});
    }
    return text_of(json{{"schema_version", schema_version}, {"runner", proof.runner}, {"network", proof.network}, {"checks", checks}, {"summary", summary}},
                   2);
}

}  // namespace confinectl
