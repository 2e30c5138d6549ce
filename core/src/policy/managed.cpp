#include <confine/managed.hpp>

#include <confine/allow_hosts.hpp>
#include <confine/wrap_result.hpp>

#include "default_config.hpp"
#include "trust.hpp"

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "toml_text.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

#if !defined(_WIN32)
#include <sys/stat.h>
#endif

namespace fs = std::filesystem;

namespace confine {
namespace {

constexpr std::size_t max_managed_bytes = 1 << 20;
constexpr std::size_t max_entries = 64;

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

int rank(Minimum m) { return m == Minimum::best_effort ? 0 : m == Minimum::partial ? 1 : 2; }
std::string_view name_of(Minimum m) { return m == Minimum::best_effort ? "best-effort" : m == Minimum::partial ? "partial" : "full"; }
int rank(EnvInherit e) { return e == EnvInherit::none ? 0 : e == EnvInherit::core ? 1 : 2; }
int rank(Managed::NetworkBound n) { return static_cast<int>(n); }
std::string_view name_of(Managed::NetworkBound n) {
    return n == Managed::NetworkBound::none ? "none" : n == Managed::NetworkBound::hosts ? "hosts" : "allow";
}


// "2G", "512M", "100": a limit as the files write it.
std::string amount_text(std::uint64_t n, bool bytes) {
    if (bytes && n % (1ull << 30) == 0) return std::to_string(n >> 30) + "G";
    if (bytes && n % (1ull << 20) == 0) return std::to_string(n >> 20) + "M";
    if (bytes && n % (1ull << 10) == 0) return std::to_string(n >> 10) + "K";
    return std::to_string(n);
}

// The limits, each with its name, as --limit and [policy.limits] spell it.
struct LimitField {
    const char* name;
    std::optional<std::uint64_t> Limits::*field;
    bool bytes;
};
constexpr std::array<LimitField, 5> limit_fields{{{"memory", &Limits::memory, true},
                                                  {"processes", &Limits::processes, false},
                                                  {"cpu", &Limits::cpu, false},
                                                  {"file-size", &Limits::file_size, true},
                                                  {"open-files", &Limits::open_files, false}}};

constexpr std::array<const char*, 7> dimensions{"write", "network", "processes", "read", "protect", "lifetime", "limits"};

Minimum& minimum_of(Minimums& m, std::string_view dimension) {
    if (dimension == "write") return m.write;
    if (dimension == "network") return m.network;
    if (dimension == "processes") return m.processes;
    if (dimension == "read") return m.read;
    if (dimension == "protect") return m.protect;
    if (dimension == "lifetime") return m.lifetime;
    return m.limits;
}

// The ports a pattern allows: its own, or 80 and 443.
std::vector<std::uint16_t> ports_of(const HostPattern& p) {
    return p.port ? std::vector<std::uint16_t>{*p.port} : std::vector<std::uint16_t>{80, 443};
}

// Whether every request `asked` allows, `bound` allows too.
bool covers(const HostPattern& bound, const HostPattern& asked) {
    const auto bound_ports = ports_of(bound);
    for (const auto port : ports_of(asked))
        if (std::find(bound_ports.begin(), bound_ports.end(), port) == bound_ports.end()) return false;
    using Kind = HostPattern::Kind;
    const bool beneath = asked.host.size() > bound.host.size() + 1 && asked.host.ends_with("." + bound.host);
    switch (asked.kind) {
    case Kind::name: return (bound.kind == Kind::name && bound.host == asked.host) || (bound.kind == Kind::wildcard && beneath);
    case Kind::wildcard: return bound.kind == Kind::wildcard && (bound.host == asked.host || beneath);
    case Kind::address: return bound.kind == Kind::address && bound.host == asked.host;
    }
    return false;
}

bool hosts_cover(const std::vector<std::string>& bound, const std::string& asked) {
    const auto a = parse_host_pattern(asked);
    if (!a) return false;
    return std::any_of(bound.begin(), bound.end(), [&](const std::string& b) {
        const auto p = parse_host_pattern(b);
        return p && covers(*p, *a);
    });
}

// The parts of a path as written, empty ones (a trailing slash) left out.
std::vector<std::string> parts_of(const std::string& path) {
    std::vector<std::string> out;
    for (const auto& part : fs::path(path).lexically_normal())
        if (!part.empty()) out.push_back(part.string());
    return out;
}

// Whether lifting `unprotect` could lift the protect entry `entry` (the same, or beneath
// it), as written: a relative entry names a path in every writable root, which any
// absolute or home one may be, or lie above — so that pair is taken to lift it (fail
// closed); a relative `unprotect` lifts an absolute entry wherever it names a part of it.
bool lifts(const std::string& unprotect, const std::string& entry) {
    auto relative = [](const std::string& p) { return p != "~" && !p.starts_with("~/") && !fs::path(p).is_absolute() && !p.starts_with("/"); };
    const auto u = parts_of(unprotect), e = parts_of(entry);
    if (relative(unprotect) == relative(entry)) {
        if (!relative(unprotect) && unprotect.starts_with("~") != entry.starts_with("~")) return true;  // a home against a path: either may be the other
        return u.size() <= e.size() && std::equal(u.begin(), u.end(), e.begin());
    }
    if (!relative(unprotect)) return true;
    // Relative `unprotect`, absolute entry: lifted where a root holds it.
    for (std::size_t k = 0; k + u.size() <= e.size(); ++k)
        if (std::equal(u.begin(), u.end(), e.begin() + static_cast<std::ptrdiff_t>(k))) return true;
    return false;
}

// `path` with a leading "~" as the caller's home.
std::string home_expanded(const std::string& path) {
    if (path != "~" && !path.starts_with("~/")) return path;
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : "/nonexistent") + path.substr(1);
}

// Whether `root` is one of `allowed`, or beneath one (a "~" read as the caller's home).
bool within_roots(const std::vector<std::string>& allowed, const std::string& root) {
    const auto r = parts_of(home_expanded(root));
    return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) {
        const auto p = parts_of(home_expanded(a));
        return p.size() <= r.size() && std::equal(p.begin(), p.end(), r.begin());
    });
}

class Reader {
public:
    Reader(std::string source, Managed& into) : source_(std::move(source)), m_(into) {}

    std::optional<Error> run(const toml::table& root) {
        for (auto&& [key, node] : root) {
            const std::string k(key.str());
            if (auto err = read(k, key.source(), node)) return err;
        }
        return std::nullopt;
    }

private:
    std::string source_;
    Managed& m_;

    SourcePosition at(const toml::source_region& r) const {
        return {source_, static_cast<std::uint32_t>(r.begin.line), static_cast<std::uint32_t>(r.begin.column)};
    }
    Error fail(const toml::source_region& r, const std::string& message) const {
        return {ErrorCode::config_invalid, detail::one_line(to_string(at(r)) + ": " + message)};
    }

    std::expected<std::vector<std::string>, Error> strings(const toml::node& node, const std::string& what) const {
        const toml::array* arr = node.as_array();
        if (!arr) return std::unexpected(fail(node.source(), what + " must be an array of strings"));
        if (arr->size() > max_entries) return std::unexpected(fail(node.source(), what + " has more than " + std::to_string(max_entries) + " entries"));
        std::vector<std::string> out;
        for (const toml::node& item : *arr) {
            const auto* s = item.as_string();
            if (!s || s->get().empty() || s->get().find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
                return std::unexpected(fail(item.source(), "every entry of " + what + " must be a non-empty string on one line"));
            out.push_back(s->get());
        }
        return out;
    }

    std::expected<std::string, Error> one_of(const toml::node& node, const std::string& what, std::initializer_list<const char*> allowed) const {
        const auto text = node.value<std::string>();
        std::string names;
        for (const char* a : allowed) {
            if (text && *text == a) return *text;
            names += std::string(names.empty() ? "" : " or ") + in_quotes(a);
        }
        return std::unexpected(fail(node.source(), what + " must be " + names));
    }

    // Tightens `key`'s bound when `tighter`, noting where.
    void note(const std::string& key, const toml::source_region& r, bool tighter) {
        if (tighter || !m_.where.contains(key)) m_.where[key] = at(r);
    }

    std::optional<Error> read(const std::string& k, const toml::source_region& key_at, const toml::node& node) {
        if (k == "limits") return read_limits(node);
        if (k == "enforcement") return read_enforcement(node);
        if (k == "deny_read" || k == "protect" || k == "env_exclude") return read_entries(k, node);
        if (k == "read_roots" || k == "records" || k == "journal") return read_reads_and_records(k, node);
        if (k == "runners") {
            auto names = strings(node, k);
            if (!names) return names.error();
            for (std::size_t i = 0; i < names->size(); ++i)
                if (!is_valid_runner_name((*names)[i])) return fail((*node.as_array())[i].source(), "runners entry '" + (*names)[i] + "' is not a runner name");
            if (m_.runners) std::erase_if(*names, [&](const std::string& n) { return std::find(m_.runners->begin(), m_.runners->end(), n) == m_.runners->end(); });
            m_.runners = std::move(*names);
            note(k, node.source(), true);
        } else if (k == "plugins" || k == "runner_settings" || k == "runner_command") {
            if (!node.is_boolean()) return fail(node.source(), k + " must be true or false");
            bool& into = k == "plugins" ? m_.plugins : k == "runner_settings" ? m_.runner_settings : m_.runner_command;
            const bool value = *node.value<bool>();
            note(k, node.source(), into && !value);
            into = into && value;
        } else if (k == "network") {
            auto text = one_of(node, k, {"none", "hosts", "allow"});
            if (!text) return text.error();
            const auto bound = *text == "none" ? Managed::NetworkBound::none : *text == "hosts" ? Managed::NetworkBound::hosts : Managed::NetworkBound::allow;
            return tighten_network(bound, node.source());
        } else if (k == "allow_hosts") {
            auto hosts = strings(node, k);
            if (!hosts) return hosts.error();
            std::vector<std::string> canonical;
            for (std::size_t i = 0; i < hosts->size(); ++i) {
                auto pattern = parse_host_pattern((*hosts)[i]);
                if (!pattern) return fail((*node.as_array())[i].source(), "allow_hosts: " + pattern.error());
                // With another file's list, only what both allow.
                if (m_.where.contains("allow_hosts") && !hosts_cover(m_.allow_hosts, pattern->text())) continue;
                canonical.push_back(pattern->text());
            }
            m_.allow_hosts = std::move(canonical);
            note(k, node.source(), true);
            // Listed hosts are what the network may reach at most.
            if (auto err = tighten_network(Managed::NetworkBound::hosts, node.source())) return err;
        } else if (k == "env_inherit") {
            auto text = one_of(node, k, {"none", "core", "all"});
            if (!text) return text.error();
            const EnvInherit e = *text == "none" ? EnvInherit::none : *text == "core" ? EnvInherit::core : EnvInherit::all;
            const bool tighter = !m_.env_inherit || rank(e) < rank(*m_.env_inherit);
            note(k, node.source(), tighter);
            if (tighter) m_.env_inherit = e;
        } else if (k == "timeout") {
            const auto text = node.value<std::string>();
            const auto d = text ? parse_duration(*text) : std::unexpected(std::string("must be a string such as \"10m\""));
            if (!d) return fail(node.source(), "timeout " + d.error());
            const bool tighter = !m_.timeout || *d < *m_.timeout;
            note(k, node.source(), tighter);
            if (tighter) m_.timeout = *d;
        } else if (k == "tmp") {
            auto text = one_of(node, k, {"private"});
            if (!text) return text.error();
            m_.tmp_private = true;
            note(k, node.source(), false);
        } else if (k == "read") {
            auto text = one_of(node, k, {"scoped"});
            if (!text) return text.error();
            m_.read_scoped = true;
            note(k, node.source(), false);
        } else {
            return fail(key_at, "unknown key '" + k +
                                    "' in a managed file (known: runners, plugins, runner_settings, runner_command, network, allow_hosts, deny_read, "
                                    "protect, env_exclude, env_inherit, timeout, tmp, read, read_roots, records, journal, limits, enforcement)");
        }
        return std::nullopt;
    }

    // deny_read, protect, env_exclude: what stays, whichever file lists it.
    std::optional<Error> read_entries(const std::string& k, const toml::node& node) {
        auto entries = strings(node, k);
        if (!entries) return entries.error();
        auto& list = k == "deny_read" ? m_.deny_read : k == "protect" ? m_.protect : m_.env_exclude;
        for (std::size_t i = 0; i < entries->size(); ++i) {
            const std::string& e = (*entries)[i];
            const auto& item = (*node.as_array())[i].source();
            if (auto why = bad_entry(k, e)) return fail(item, k + " entry '" + e + "' " + *why);
            if (std::find(list.begin(), list.end(), e) != list.end()) continue;
            list.push_back(e);
            m_.where[k + ":" + e] = at(item);
        }
        return std::nullopt;
    }

    // read_roots: at most what every file lists; records, journal: required.
    std::optional<Error> read_reads_and_records(const std::string& k, const toml::node& node) {
        if (k == "read_roots") {
            auto roots = strings(node, k);
            if (!roots) return roots.error();
            for (std::size_t i = 0; i < roots->size(); ++i)
                if (auto why = bad_entry("deny_read", (*roots)[i])) return fail((*node.as_array())[i].source(), "read_roots entry '" + (*roots)[i] + "' " + *why);
            // With another file's list, only what both allow.
            if (m_.read_roots) std::erase_if(*roots, [&](const std::string& r) { return !within_roots(*m_.read_roots, r); });
            m_.read_roots = std::move(*roots);
            note(k, node.source(), true);
        } else if (k == "records") {
            const auto text = node.value<std::string>();
            if (!text || !fs::path(*text).is_absolute()) return fail(node.source(), "records must be an absolute directory");
            m_.records.directory = fs::path(*text).lexically_normal();
            note(k, node.source(), true);
        } else if (k == "journal") {
            if (!node.is_boolean()) return fail(node.source(), "journal must be true or false");
            note(k, node.source(), !m_.records.journal && *node.value<bool>());
            m_.records.journal = m_.records.journal || *node.value<bool>();
        }
        return std::nullopt;
    }

    // [limits]: each at most the least any file sets.
    std::optional<Error> read_limits(const toml::node& node) {
        const toml::table* table = node.as_table();
        if (!table) return fail(node.source(), "limits must be a table");
        for (auto&& [lk, lv] : *table) {
            const std::string name(lk.str());
            std::string text;
            if (const auto* n = lv.as_integer()) text = std::to_string(n->get());
            else if (const auto* str = lv.as_string()) text = str->get();
            else return fail(lv.source(), "limits." + name + " must be a number or a string");
            Limits one;
            if (auto why = set_limit(one, name, text, "limits." + name)) return fail(why->starts_with("unknown") ? lk.source() : lv.source(), *why);
            for (const auto& f : limit_fields) {
                if (!(one.*f.field)) continue;
                const bool tighter = !(m_.limits.*f.field) || *(one.*f.field) < *(m_.limits.*f.field);
                note("limits." + name, lv.source(), tighter);
                if (tighter) m_.limits.*f.field = one.*f.field;
            }
        }
        return std::nullopt;
    }

    // [enforcement]: each dimension at least the most any file asks.
    std::optional<Error> read_enforcement(const toml::node& node) {
        const toml::table* table = node.as_table();
        if (!table) return fail(node.source(), "enforcement must be a table");
        for (auto&& [ek, ev] : *table) {
            const std::string dim(ek.str());
            if (std::find(dimensions.begin(), dimensions.end(), dim) == dimensions.end())
                return fail(ek.source(), "unknown dimension '" + dim + "' in [enforcement] (known: write, network, processes, read, protect, lifetime, limits)");
            auto text = one_of(ev, "enforcement." + dim, {"full", "partial", "best-effort"});
            if (!text) return text.error();
            const Minimum m = *text == "full" ? Minimum::full : *text == "partial" ? Minimum::partial : Minimum::best_effort;
            const auto it = m_.enforcement.find(dim);
            const bool tighter = it == m_.enforcement.end() || rank(m) > rank(it->second);
            note("enforcement." + dim, ev.source(), tighter);
            if (tighter) m_.enforcement[dim] = m;
        }
        return std::nullopt;
    }

    std::optional<Error> tighten_network(Managed::NetworkBound bound, const toml::source_region& r) {
        const bool tighter = !m_.network || rank(bound) < rank(*m_.network);
        note("network", r, tighter);
        if (tighter) m_.network = bound;
        return std::nullopt;
    }

    static std::optional<std::string> bad_entry(const std::string& list, const std::string& e) {
        if (list == "env_exclude") return invalid_environment_pattern(e);
        const bool home = e == "~" || e.starts_with("~/");
        const bool absolute = fs::path(e).is_absolute() || e.front() == '/';
        if (list == "deny_read" && !home && !absolute) return std::string("must be an absolute path or begin with ~/");
        if (!home && !absolute)
            for (const auto& part : fs::path(e))
                if (part == "..") return std::string("must not climb out of its root with '..'");
        return std::nullopt;
    }
};

// The managed file's own rule, beyond the configuration's: it is the operator's, so
// owned by root, as is its directory (POSIX).
std::optional<Error> not_operators(const fs::path& file) {
#if !defined(_WIN32)
    for (const fs::path& p : {file, file.parent_path()}) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0 && st.st_uid != 0)
            return Error{ErrorCode::config_untrusted, file.string() + ": refusing managed configuration: " + p.string() + " is owned by uid " +
                                                          std::to_string(st.st_uid) + ", not root"};
    }
#else
    (void)file;
#endif
    return std::nullopt;
}

Error crossing_error(const SourcePosition& origin, const std::string& subject, const Managed& m, std::string_view key) {
    return {ErrorCode::config_managed, to_string(origin) + ": " + subject + " crosses a managed bound: " + describe_bound(m, key)};
}

// The read roots a scoped run may have at most: the managed layer's, else the default's.
std::vector<std::string> allowed_read_roots(const Managed& m) {
    if (m.read_roots) return *m.read_roots;
    static const Config defaults = detail::compiled_default_config();
    return defaults.read_roots;
}

}  // namespace

std::string describe_bound(const Managed& m, std::string_view key) {
    const std::string k(key);
    std::string what;
    if (k == "runners") {
        what = "runners: only";
        for (const auto& r : m.runners.value_or(std::vector<std::string>{})) what += " " + r;
        if (!m.runners || m.runners->empty()) what += " none";
    } else if (k == "plugins" || k == "runner_settings" || k == "runner_command") {
        what = k + " = false";
    } else if (k == "network") {
        what = "network at most " + in_quotes(name_of(m.network.value_or(Managed::NetworkBound::allow)));
        if (m.network == Managed::NetworkBound::hosts) {
            what += " (allow_hosts:";
            for (const auto& h : m.allow_hosts) what += " " + h;
            what += m.allow_hosts.empty() ? " none)" : ")";
        }
    } else if (k == "allow_hosts") {
        what = "allow_hosts: only";
        for (const auto& h : m.allow_hosts) what += " " + h;
        if (m.allow_hosts.empty()) what += " none";
    } else if (k == "env_inherit") {
        what = "env_inherit at most " + in_quotes(to_string(m.env_inherit.value_or(EnvInherit::all)));
    } else if (k == "timeout") {
        what = "timeout at most " + (m.timeout ? format_duration(*m.timeout) : std::string("none"));
    } else if (k == "read_roots") {
        what = "read_roots: only";
        for (const auto& r : allowed_read_roots(m)) what += " " + r;
    } else if (k == "records") {
        what = "records must be " + in_quotes(m.records.directory.string());
    } else if (k == "journal") {
        what = "journal must be true";
    } else if (k == "tmp") {
        what = "tmp must be \"private\"";
    } else if (k == "read") {
        what = "read must be \"scoped\"";
    } else if (k.starts_with("limits.")) {
        what = k + " at most ";
        for (const auto& f : limit_fields)
            if (k == std::string("limits.") + f.name) what += amount_text((m.limits.*f.field).value_or(0), f.bytes);
    } else if (k.starts_with("enforcement.")) {
        const auto it = m.enforcement.find(k.substr(12));
        what = k + " at least " + in_quotes(it == m.enforcement.end() ? "best-effort" : name_of(it->second));
    } else if (const auto colon = k.find(':'); colon != std::string::npos) {
        what = k.substr(0, colon) + " holds " + in_quotes(k.substr(colon + 1));
    } else {
        what = k;
    }
    const auto it = m.where.find(k);
    return it == m.where.end() ? what : what + " (" + to_string(it->second) + ")";
}

std::optional<Error> parse_managed(std::string_view text, const std::string& source, Managed& into) {
    auto root = detail::parse_toml_text(text, source);
    if (!root) return root.error();
    return Reader(source, into).run(*root);
}

std::expected<Managed, Error> load_managed(const fs::path& file, const fs::path& dir) {
    Managed m;
    std::vector<fs::path> files;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(file, ec))) files.push_back(file);
    auto drop_ins = detail::drop_in_files(dir, "managed configuration");
    if (!drop_ins) return std::unexpected(drop_ins.error());
    // Each file's directory is judged with it (not_operators).
    files.insert(files.end(), drop_ins->begin(), drop_ins->end());
    for (const auto& f : files) {
        auto text = detail::read_trusted_file(f, max_managed_bytes);
        if (!text) {
            const auto code = text.error().kind == detail::ReadFailure::Kind::untrusted ? ErrorCode::config_untrusted : ErrorCode::config_unreadable;
            return std::unexpected(Error{code, f.string() + ": refusing managed configuration: " + text.error().message});
        }
        if (auto bad = not_operators(f)) return std::unexpected(*bad);
        if (auto err = parse_managed(*text, f.string(), m)) return std::unexpected(*err);
        m.files.push_back(f);
    }
    return m;
}

namespace {

// A configuration brought within its managed layer (apply_managed).
class Bounding {
public:
    Bounding(Config& cfg, const std::vector<fs::path>& user_files) : cfg_(cfg), m_(cfg.managed), user_files_(user_files) {}

    std::optional<Error> run() {
        for (auto step : {&Bounding::runners, &Bounding::network, &Bounding::entries, &Bounding::environment, &Bounding::amounts, &Bounding::enforcement})
            if (auto err = (this->*step)()) return err;
        return std::nullopt;
    }

private:
    Config& cfg_;
    const Managed& m_;
    const std::vector<fs::path>& user_files_;

    // Where a configuration file wrote `key`, or nullopt (the embedded default's value).
    std::optional<SourcePosition> written(const std::string& key) const {
        const auto it = cfg_.origins.find(key);
        return it == cfg_.origins.end() ? std::nullopt : std::optional(it->second);
    }
    bool by_user(const SourcePosition& where) const {
        return std::any_of(user_files_.begin(), user_files_.end(), [&](const fs::path& f) { return f.string() == where.file; });
    }

    // What runs the sandbox: the chains, a runner command, plugins and runner settings.
    std::optional<Error> runners() {
        for (auto& [os, platform] : cfg_.platforms) {
            const std::string key = "platform." + os;
            if (!platform.runner_command.empty() && (!m_.runner_command || m_.runners)) {
                const auto where = written(key + ".runner_command").value_or(platform.where);
                return crossing_error(where, key + ".runner_command", m_, m_.runner_command ? "runners" : "runner_command");
            }
            if (!m_.runners) continue;
            const auto& allowed = *m_.runners;
            auto outside = [&](const std::string& n) { return std::find(allowed.begin(), allowed.end(), n) == allowed.end(); };
            for (const auto& name : platform.chain)
                if (outside(name))
                    if (const auto where = written(key + ".chain")) return crossing_error(*where, key + ".chain names " + in_quotes(name), m_, "runners");
            std::erase_if(platform.chain, outside);
        }
        for (const auto& [key, where] : cfg_.origins) {
            if (!m_.plugins && key == "plugin_dirs" && by_user(where)) return crossing_error(where, "plugin_dirs", m_, "plugins");
            if (!m_.runner_settings && key.starts_with("runner.") && key.find('.', 7) == std::string::npos && by_user(where))
                return crossing_error(where, "[" + key + "]", m_, "runner_settings");
        }
        return std::nullopt;
    }

    std::optional<Error> network() {
        if (!m_.network || *m_.network == Managed::NetworkBound::allow) return std::nullopt;
        if (cfg_.network == Network::allow) {
            if (const auto where = written("policy.network")) return crossing_error(*where, "policy.network = \"allow\"", m_, "network");
            cfg_.network = Network::none;
        }
        if (cfg_.network != Network::proxy) return std::nullopt;
        for (std::size_t i = 0; i < cfg_.allow_hosts.size(); ++i) {
            if (*m_.network == Managed::NetworkBound::hosts && hosts_cover(m_.allow_hosts, cfg_.allow_hosts[i])) continue;
            const SourcePosition where = i < cfg_.allow_hosts_where.size() ? cfg_.allow_hosts_where[i] : SourcePosition{};
            return crossing_error(where, "policy.allow_hosts entry " + in_quotes(cfg_.allow_hosts[i]), m_, "network");
        }
        return std::nullopt;
    }

    // What stays denied and protected.
    std::optional<Error> entries() {
        for (const auto& [list, where_list, key] : {std::tuple{&cfg_.deny_read, &cfg_.deny_read_where, "deny_read"},
                                                    std::tuple{&cfg_.protect, &cfg_.protect_where, "protect"}}) {
            const auto& bound = std::string(key) == "deny_read" ? m_.deny_read : m_.protect;
            for (const auto& e : bound) {
                if (std::find(list->begin(), list->end(), e) != list->end()) continue;
                list->push_back(e);
                where_list->push_back(m_.where.at(std::string(key) + ":" + e));
            }
        }
        for (const auto& u : cfg_.unprotect)
            for (const auto& p : m_.protect)
                if (lifts(u, p))
                    return crossing_error(written("policy.unprotect").value_or(SourcePosition{}), "policy.unprotect entry " + in_quotes(u), m_, "protect:" + p);
        return std::nullopt;
    }

    std::optional<Error> environment() {
        EnvironmentPolicy& env = cfg_.environment;
        for (const auto& e : m_.env_exclude) {
            for (const auto& inc : env.include)
                if (inc.find('*') == std::string::npos && environment_pattern_matches(e, inc))
                    return crossing_error(written("policy.env.include").value_or(SourcePosition{}), "policy.env.include entry " + in_quotes(inc), m_,
                                          "env_exclude:" + e);
            for (const auto& [name, value] : env.set)
                if (environment_pattern_matches(e, name))
                    return crossing_error(written("policy.env.set." + name).value_or(SourcePosition{}), "policy.env.set." + name, m_, "env_exclude:" + e);
            if (std::find(env.exclude.begin(), env.exclude.end(), e) == env.exclude.end()) env.exclude.push_back(e);
            env.held.push_back(e);
        }
        if (m_.env_inherit && rank(env.inherit) > rank(*m_.env_inherit)) {
            if (const auto where = written("policy.env.inherit"))
                return crossing_error(*where, "policy.env.inherit = " + in_quotes(to_string(env.inherit)), m_, "env_inherit");
            env.inherit = *m_.env_inherit;
        }
        return std::nullopt;
    }

    // Time, limits, /tmp, reads.
    std::optional<Error> amounts() {
        if (m_.timeout && cfg_.timeout && *cfg_.timeout > *m_.timeout)
            if (const auto where = written("policy.timeout"))
                return crossing_error(*where, "policy.timeout = " + in_quotes(format_duration(*cfg_.timeout)), m_, "timeout");
        if (m_.timeout && (!cfg_.timeout || *cfg_.timeout > *m_.timeout)) cfg_.timeout = m_.timeout;
        for (const auto& f : limit_fields) {
            const auto bound = m_.limits.*f.field;
            auto& value = cfg_.limits.*f.field;
            if (!bound) continue;
            if (value && *value > *bound)
                if (const auto where = written(std::string("policy.limits.") + f.name))
                    return crossing_error(*where, std::string("policy.limits.") + f.name + " = " + amount_text(*value, f.bytes), m_,
                                          std::string("limits.") + f.name);
            if (!value || *value > *bound) value = bound;
        }
        if (m_.tmp_private && cfg_.tmp == Tmp::host)
            if (const auto where = written("policy.tmp")) return crossing_error(*where, "policy.tmp = \"host\"", m_, "tmp");
        if (m_.tmp_private) cfg_.tmp = Tmp::private_;
        if (m_.read_scoped && !cfg_.read_scoped)
            if (const auto where = written("policy.read")) return crossing_error(*where, "policy.read = \"all\"", m_, "read");
        if (m_.read_scoped) cfg_.read_scoped = true;
        if (m_.read_scoped)
            for (const auto& r : cfg_.read_roots)
                if (!within_roots(allowed_read_roots(m_), r))
                    if (const auto where = written("policy.read_roots"))
                        return crossing_error(*where, "policy.read_roots entry " + in_quotes(r), m_, "read_roots");
        if (m_.read_scoped) std::erase_if(cfg_.read_roots, [&](const std::string& r) { return !within_roots(allowed_read_roots(m_), r); });
        return records();
    }

    // Where every run's record goes, when the operator requires it.
    std::optional<Error> records() {
        if (!m_.records.directory.empty() && cfg_.records.directory != m_.records.directory) {
            if (const auto where = written("report.records"))
                return crossing_error(*where, "report.records = " + in_quotes(cfg_.records.directory.string()), m_, "records");
            cfg_.records.directory = m_.records.directory;
        }
        if (m_.records.journal && !cfg_.records.journal) {
            if (const auto where = written("report.journal")) return crossing_error(*where, "report.journal = false", m_, "journal");
            cfg_.records.journal = true;
        }
        return std::nullopt;
    }

    std::optional<Error> enforcement() {
        for (const auto& [dim, floor] : m_.enforcement) {
            Minimum& have = minimum_of(cfg_.minimums, dim);
            if (rank(have) < rank(floor)) {
                if (const auto where = written("policy.enforcement." + dim))
                    return crossing_error(*where, "policy.enforcement." + dim + " = " + in_quotes(name_of(have)), m_, "enforcement." + dim);
                have = floor;
            }
            auto* explicit_min = dim == "read" ? &cfg_.minimums.explicit_read : dim == "protect" ? &cfg_.minimums.explicit_protect : nullptr;
            if (explicit_min && *explicit_min && rank(**explicit_min) < rank(floor)) *explicit_min = floor;
        }
        return std::nullopt;
    }
};

}  // namespace

std::optional<Error> apply_managed(Config& cfg, const std::vector<fs::path>& user_files) {
    if (!cfg.managed.any()) return std::nullopt;
    return Bounding(cfg, user_files).run();
}

std::optional<std::string> managed_crossing(const Config& config, const ManagedAsk& ask, const std::map<std::string, std::string>& flag) {
    const Managed& m = config.managed;
    if (!m.any()) return std::nullopt;
    auto named = [&](const char* field) {
        const auto it = flag.find(field);
        return it == flag.end() ? std::string(field) : it->second;
    };
    auto cross = [&](const std::string& subject, std::string_view key) { return subject + " crosses a managed bound: " + describe_bound(m, key); };
    if (ask.plugin && !m.plugins) return cross(named("plugin"), "plugins");
    if (m.network && *m.network != Managed::NetworkBound::allow) {
        if (ask.network == Network::allow) return cross(named("network") + " allow", "network");
        for (const auto& h : ask.allow_hosts)
            if (*m.network == Managed::NetworkBound::none || !hosts_cover(m.allow_hosts, h)) return cross(named("allow_hosts") + " " + h, "network");
    }
    if (m.tmp_private && ask.tmp == Tmp::host) return cross(named("tmp") + " host", "tmp");
    if (m.read_scoped && ask.read_scoped == false) return cross(named("read") + " all", "read");
    if (m.read_scoped)
        for (const auto& r : ask.read_roots)
            if (!within_roots(allowed_read_roots(m), r)) return cross(named("read_roots") + " " + r, "read_roots");
    if (m.timeout && ask.timeout && *ask.timeout > *m.timeout) return cross(named("timeout") + " " + format_duration(*ask.timeout), "timeout");
    for (const auto& f : limit_fields) {
        const auto bound = m.limits.*f.field;
        const auto asked = ask.limits.*f.field;
        if (bound && asked && *asked > *bound)
            return cross(named("limits") + " " + f.name + "=" + amount_text(*asked, f.bytes), std::string("limits.") + f.name);
    }
    for (const auto& e : ask.env) {
        const std::string name = e.substr(0, e.find('='));
        if (name.find('*') != std::string::npos) continue;  // a pattern: what it matches that is held stays out
        for (const auto& held : m.env_exclude)
            if (environment_pattern_matches(held, name)) return cross(named("env") + " " + name, "env_exclude:" + held);
    }
    for (const auto& u : ask.unprotect)
        for (const auto& p : m.protect)
            if (lifts(u, p)) return cross(named("unprotect") + " " + u, "protect:" + p);
    return std::nullopt;
}

}  // namespace confine
