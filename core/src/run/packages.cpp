#include "packages.hpp"

#include "ascii_case.hpp"

#include "log.hpp"
#include "roots.hpp"

#include <confine/environment.hpp>

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "toml_text.hpp"

#if !defined(_WIN32)
#include "fd.hpp"
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <utility>

#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace confine::detail {

namespace fs = std::filesystem;

namespace {

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// npm's settings a copy keeps (README, "Package installs"): where packages come from
// (registries, certificate authorities, proxies), how they are fetched, and how an
// install behaves. Nothing that authenticates (_auth, _authToken, _password, username,
// password, email, always-auth, cert, key, certfile, keyfile, any //host/: key).
constexpr auto npm_settings = std::to_array<std::string_view>({
    "registry", "replace-registry-host", "ca", "ca[]", "cafile", "strict-ssl",
    "proxy", "https-proxy", "noproxy", "maxsockets",
    "fetch-retries", "fetch-retry-factor", "fetch-retry-mintimeout", "fetch-retry-maxtimeout", "fetch-timeout",
    "prefer-offline", "prefer-online", "offline",
    "engine-strict", "save-exact", "save-prefix", "legacy-peer-deps", "strict-peer-deps", "package-lock",
    "package-lock-only", "lockfile-version", "ignore-scripts", "omit", "include", "install-strategy", "install-links",
    "prefer-dedupe", "audit", "audit-level", "fund", "update-notifier", "progress", "loglevel", "color", "unicode",
});

// cargo's settings a copy keeps: registries' and sources' places, [net] and [http]'s
// fetching, [build]'s jobs, targets and flags. Never a token or credential provider.
constexpr auto cargo_settings = std::to_array<CargoSetting>({
    {"registry", "default"},
    {"registries.*", "index"}, {"registries.*", "protocol"},
    {"source.*", "replace-with"}, {"source.*", "registry"}, {"source.*", "local-registry"}, {"source.*", "directory"},
    {"source.*", "git"}, {"source.*", "branch"}, {"source.*", "tag"}, {"source.*", "rev"},
    {"net", "retry"}, {"net", "git-fetch-with-cli"}, {"net", "offline"},
    {"http", "proxy"}, {"http", "timeout"}, {"http", "cainfo"}, {"http", "check-revoke"}, {"http", "multiplexing"}, {"http", "low-speed-limit"},
    {"build", "jobs"}, {"build", "target"}, {"build", "rustflags"}, {"build", "rustdocflags"}, {"build", "incremental"}, {"build", "pipelining"},
});

// The ASCII printable characters of a plain npmrc value: read by npm's reader (the ini
// package) as they are written — no quote, no escape, no comment.
bool plain_npm_value(std::string_view v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x7f && std::string_view("\"';#\\").find(c) == std::string_view::npos;
    });
}

// An npmrc line's setting as a copy keeps it (`key=value`, as npm reads it), or nullopt.
std::optional<std::string> npm_setting_kept(std::string_view line) {
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = trimmed(line.substr(0, eq));
    std::string_view value = trimmed(line.substr(eq + 1));
    // Unquoted and unescaped, a value ends where a comment starts (as npm reads it).
    if (value.find_first_of("\"'\\") == std::string_view::npos) value = trimmed(value.substr(0, value.find_first_of(";#")));
    if (!npm_setting_copied(key) || carries_credentials(value)) return std::nullopt;
    // A CA's certificate is written as a JSON string ("-----BEGIN...\n..."), which npm reads
    // whole: printable ASCII, whose only escape is \n, hides nothing from the test above.
    const auto certificate_text = [](std::string_view v) {
        if (v.size() < 2 || v.front() != '"' || v.back() != '"') return false;
        v = v.substr(1, v.size() - 2);
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto u = static_cast<unsigned char>(v[i]);
            if (u < 0x20 || u >= 0x7f || v[i] == '"' || (v[i] == '\\' && (i + 1 == v.size() || v[++i] != 'n'))) return false;
        }
        return true;
    };
    const bool certificate = (key == "ca" || key == "ca[]") && certificate_text(value);
    if (!certificate && !plain_npm_value(value)) return std::nullopt;
    return std::string(key) + "=" + std::string(value);
}

}  // namespace

std::span<const std::string_view> npm_settings_copied() { return npm_settings; }

std::span<const CargoSetting> cargo_settings_copied() { return cargo_settings; }

bool npm_setting_copied(std::string_view key) {
    if (std::find(npm_settings.begin(), npm_settings.end(), key) != npm_settings.end()) return true;
    // @scope:registry, a scope's name as npm spells one.
    if (!key.starts_with('@') || !key.ends_with(":registry")) return false;
    const std::string_view scope = key.substr(1, key.size() - 1 - std::string_view(":registry").size());
    return !scope.empty() && std::all_of(scope.begin(), scope.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    });
}

bool carries_credentials(std::string_view value) {
    if (url_carries_password(value)) return true;
    const std::string v = lowered(value);
    for (const std::string_view scheme : {"http://", "https://"})
        for (std::size_t at = v.find(scheme); at != std::string::npos; at = v.find(scheme, at + 1)) {
            const std::size_t from = at + scheme.size();
            const std::size_t end = v.find_first_of("/?# \t\n", from);
            if (v.substr(from, end == std::string::npos ? std::string::npos : end - from).find('@') != std::string::npos) return true;
        }
    return false;
}

std::string npmrc_copy(std::string_view text) {
    // npm's reader ends a line at a carriage return too: "a=b\r_authToken=..." is two.
    std::vector<std::string_view> lines;
    for (std::size_t end; !text.empty(); text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1))
        lines.push_back(text.substr(0, end = text.find_first_of("\r\n")));
    std::string out;
    std::size_t left_out = 0;
    bool top = true;
    for (const std::string_view line : lines) {
        if (trimmed(line).empty()) continue;
        // A section ([name]) holds what follows, which npm does not read as its settings:
        // a line that starts as one (or as an odd key) ends what is copied.
        if (line.front() == '[') top = false;
        const auto kept = top ? npm_setting_kept(line) : std::nullopt;
        if (kept) out += *kept + "\n";
        else ++left_out;
    }
    if (left_out) out += "; (" + std::to_string(left_out) + " other lines left out: comments, and every setting confine does not copy)\n";
    return out;
}

namespace {

// `s` as a TOML basic string, or as a bare key where `key` and it can be one.
std::string toml_quoted(std::string_view s, bool key = false) {
    const auto bare = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; };
    if (key && !s.empty() && std::all_of(s.begin(), s.end(), bare)) return std::string(s);
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out = "\"";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7f) {
            out += "\\u00";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// A setting's value as a copy writes it: a string (no URL with credentials), an integer,
// a boolean, or an array of such strings; nullopt for anything else.
std::optional<std::string> toml_value(const toml::node& node) {
    if (const auto* s = node.as_string()) return carries_credentials(s->get()) ? std::nullopt : std::optional(toml_quoted(s->get()));
    if (const auto* i = node.as_integer()) return std::to_string(i->get());
    if (const auto* b = node.as_boolean()) return std::string(b->get() ? "true" : "false");
    const auto* a = node.as_array();
    if (!a) return std::nullopt;
    std::string out = "[";
    for (const auto& item : *a) {
        const auto* s = item.as_string();
        if (!s || carries_credentials(s->get())) return std::nullopt;
        out += (out.size() > 1 ? ", " : "") + toml_quoted(s->get());
    }
    return out + "]";
}

// The settings of `table` (`pattern` names it in cargo_settings) that a copy keeps, under
// `header`; nothing when it keeps none.
std::string cargo_section(const toml::table& table, std::string_view pattern, const std::string& header) {
    std::string lines;
    for (const auto& setting : cargo_settings) {
        if (setting.table != pattern) continue;
        const toml::node* node = table.get(setting.key);
        const auto value = node ? toml_value(*node) : std::nullopt;
        if (value) lines += std::string(setting.key) + " = " + *value + "\n";
    }
    return lines.empty() ? std::string() : "[" + header + "]\n" + lines;
}

}  // namespace

std::optional<std::string> cargo_config_copy(std::string_view text) {
    // Parsed with stand-ins for the characters toml++ cannot read safely (toml_text.hpp);
    // what is written is made here, not by toml++'s writer.
    const auto root = parse_toml_text(text, "config.toml");
    if (!root) return std::nullopt;
    std::string out;
    for (const std::string_view pattern : {"registry", "registries.*", "source.*", "net", "http", "build"}) {
        const std::string_view name = pattern.substr(0, pattern.find('.'));
        const auto* table = root->get_as<toml::table>(name);
        if (!table) continue;
        if (!pattern.ends_with(".*")) {
            out += cargo_section(*table, pattern, std::string(name));
            continue;
        }
        for (auto&& [key, value] : *table)
            if (const auto* inner = value.as_table()) out += cargo_section(*inner, pattern, std::string(name) + "." + toml_quoted(key.str(), true));
    }
    return out;
}

#if defined(_WIN32)

void apply_packages(const PackageCaches&, const Policy&, std::span<const std::string>, std::span<const std::string>, std::vector<std::string>&) {}

#else

namespace {

std::string errno_text() { return std::strerror(errno); }

// Why a directory could not be had: the errno, and one phrase naming it.
struct Failure {
    int error = 0;
    std::string message;
};

std::unexpected<Failure> failed(std::string what) {
    const int error = errno;
    return std::unexpected(Failure{error, what + ": " + std::strerror(error)});
}

// The directory `rel` beneath `dir`, made where missing, one component at a time and
// never through a link: the workspace is where confined commands write, so any name in
// it may have been replaced by a link since a previous run.
std::expected<Fd, Failure> open_dirs(const Fd& dir, const fs::path& rel) {
    Fd at(::fcntl(dir.get(), F_DUPFD_CLOEXEC, 0));
    if (at.get() < 0) return failed("cannot open the workspace");
    for (const auto& part : rel.lexically_normal()) {
        if (part.empty() || part == ".") continue;
        if (::mkdirat(at.get(), part.c_str(), 0755) != 0 && errno != EEXIST) return failed("cannot make " + part.string());
        Fd next(::openat(at.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (next.get() < 0) return failed("cannot open " + part.string() + " as a directory");
        at = std::move(next);
    }
    return at;
}

// Whether `name` in `dir` is a regular file holding exactly `text`. Read only to spare a
// rewrite (a watcher of the workspace would see one on every run); never trusted beyond.
bool holds(const Fd& dir, const std::string& name, const std::string& text) {
    Fd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (file.get() < 0 || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) != text.size()) return false;
    std::string there(text.size(), '\0');
    std::size_t got = 0;
    while (got < there.size()) {
        const ssize_t n = ::read(file.get(), there.data() + got, there.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += static_cast<std::size_t>(n);
    }
    return there == text;
}

// Writes `text` as `name` in `dir`: a new file renamed over the name, so that whatever
// stood there (a link, a file someone else holds open) is replaced, never written through.
// Left as it is when it holds `text` already.
std::optional<std::string> write_at(const Fd& dir, const std::string& name, const std::string& text, mode_t mode) {
    if (holds(dir, name, text)) return std::nullopt;
    const std::string temp = "." + name + ".confine-" + std::to_string(::getpid());
    ::unlinkat(dir.get(), temp.c_str(), 0);
    Fd file(::openat(dir.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (file.get() < 0) return "cannot write " + name + ": " + errno_text();
    if (!write_all(file.get(), text.data(), text.size())) {
        const std::string why = errno_text();
        ::unlinkat(dir.get(), temp.c_str(), 0);
        return "cannot write " + name + ": " + why;
    }
    if (::renameat(dir.get(), temp.c_str(), dir.get(), name.c_str()) != 0) {
        const std::string why = errno_text();
        ::unlinkat(dir.get(), temp.c_str(), 0);
        return "cannot write " + name + ": " + why;
    }
    return std::nullopt;
}

// The user's file at `file` (a link followed, as the tool follows it), at most 1 MiB
// of it, read in one piece of the size the file has; nullopt when it is not a regular
// file (a FIFO does not hold the run up: it is opened without blocking and refused).
std::optional<std::string> read_settings(const fs::path& file) {
    constexpr std::size_t most = std::size_t{1} << 20;
    Fd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    // One byte more than the size says: a file that grew since is read as far as the
    // limit, in a second read.
    std::string text(std::min(static_cast<std::size_t>(st.st_size) + 1, most), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
        if (got == text.size() && text.size() < most) text.resize(std::min(text.size() * 2, most));
    }
    text.resize(got);
    return text;
}

// A path as a copy's comment names it: a line break or other control character in it
// (from HOME, CARGO_HOME, npm_config_userconfig) written as '?', so that it cannot end
// the comment and start a setting.
std::string comment_text(std::string text) {
    for (char& c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return text;
}

// The variables of a run's environment, as the package managers read them.
class Variables {
public:
    Variables(std::vector<std::string>& environment, std::span<const std::string> explicit_names)
        : env_(environment), explicit_(explicit_names) {}

    // NAME's value (npm reads its variables whatever their case: `ignore_case`).
    std::string get(std::string_view name, bool ignore_case = false) const {
        for (const std::string_view e : env_) {
            const std::size_t eq = e.find('=');
            if (eq != std::string::npos && same(e.substr(0, eq), name, ignore_case)) return std::string(e.substr(eq + 1));
        }
        return {};
    }
    // Whether the caller or the operator named NAME: then it is theirs.
    bool named(std::string_view name, bool ignore_case = false) const {
        return std::any_of(explicit_.begin(), explicit_.end(), [&](const std::string& n) {
            return n.find('*') != std::string::npos ? environment_pattern_matches(n, name) : same(n, name, ignore_case);
        });
    }
    void set(const std::string& name, const std::string& value, bool ignore_case = false) {
        std::erase_if(env_, [&](const std::string& e) { return same(std::string_view(e).substr(0, e.find('=')), name, ignore_case); });
        env_.push_back(name + "=" + value);
    }

private:
    static bool same(std::string_view a, std::string_view b, bool ignore_case) { return ignore_case ? equal_ignoring_ascii_case(a, b) : a == b; }
    std::vector<std::string>& env_;
    std::span<const std::string> explicit_;
};

// Where paths lead (as much of each as exists), for comparing with a resolved policy's
// paths: the run's roots are known directories, and each directory above the homes and
// caches asked about is looked at once (PathResolver), not once for every question.
class RealPaths {
public:
    explicit RealPaths(const Policy& resolved) {
        resolver_.known_directory(resolved.workspace);
        for (const auto& root : resolved.writable) resolver_.known_directory(root);
    }
    fs::path operator()(const fs::path& p) {
        if (!plain_absolute(p) && (!p.is_absolute() || p.lexically_normal() != p || !p.has_relative_path())) return weakly(p);
        if (auto there = resolver_.canonical(p)) return *there;
        // Not there: where its directory leads, and its name.
        const fs::path dir = p.parent_path();
        return dir == p ? p : (*this)(dir) / p.filename();
    }
    bool within_any(const fs::path& p, const std::vector<fs::path>& places) {
        if (places.empty()) return false;  // nothing to resolve `p` for
        const fs::path r = (*this)(p);
        return std::any_of(places.begin(), places.end(), [&](const fs::path& place) { return is_within(r, place); });
    }

private:
    static fs::path weakly(const fs::path& p) {
        std::error_code ec;
        fs::path r = fs::weakly_canonical(p, ec);
        return ec ? p : r;
    }
    PathResolver resolver_;
};

// One run's preparation: the directory beneath the workspace, and what -v says of it.
struct Run {
    const Policy& policy;
    Variables& vars;
    fs::path base;  // the workspace's packages.dir
    Fd dir;         // base, opened; none (-1) when this run makes nothing (see apply_packages)
    RealPaths real;
    std::vector<std::string> said;

    // `relative` beneath base, as a variable's value gives it.
    std::string under(std::string_view relative) const { return joined(base, relative).string(); }
    // What -v says of the step: made only when it is said.
    template <class Text>
    void say(Text text) {
        if (log_enabled(spdlog::level::debug)) said.push_back(text());
    }
};

// npm: its cache, and a copy of the settings of the user's npmrc where the policy denies it.
void prepare_npm(Run& run) {
    const std::string home = run.vars.get("HOME");
    std::string user_cache = run.vars.get("npm_config_cache", true);
    if (user_cache.empty() && !home.empty()) user_cache = home + "/.npm";
    // The cache the caller granted stays (its settings still need the copy below).
    if (!user_cache.empty() && run.real.within_any(user_cache, run.policy.writable)) {
        run.say([&] { return "npm keeps " + user_cache + " (a writable root)"; });
    } else if (!run.vars.named("npm_config_cache", true)) {
        const std::string cache = run.under("cache/npm");
        run.vars.set("npm_config_cache", cache, true);
        run.say([&] { return "npm cache " + cache; });
    }
    if (run.vars.named("npm_config_userconfig", true)) return;
    std::string user_config = run.vars.get("npm_config_userconfig", true);
    if (user_config.empty() && !home.empty()) user_config = home + "/.npmrc";
    // npm reads it itself (not denied, or this run's own copy already), or there is none.
    if (run.dir.get() < 0 || user_config.empty() || !run.real.within_any(user_config, run.policy.deny_read) ||
        is_within(run.real(user_config), run.real(run.base)))
        return;
    const auto text = read_settings(user_config);
    if (!text) return;
    const std::string copy = "; " + comment_text(user_config) + " as confine gives it to confined runs: only the settings an install needs, none that " +
                             "authenticates (rewritten before each run)\n" + npmrc_copy(*text);
    if (auto bad = write_at(run.dir, "npmrc", copy, 0600)) {
        log_warn("packages: {} in {}: npm runs without the settings of {}", *bad, run.base.string(), user_config);
        return;
    }
    const std::string settings = run.under("npmrc");
    run.vars.set("npm_config_userconfig", settings, true);
    run.say([&] { return "npm settings " + settings + " (" + user_config + ": only the settings copied)"; });
}

void prepare_pip(Run& run) {
    const std::string home = run.vars.get("HOME");
    std::string user_cache = run.vars.get("PIP_CACHE_DIR");
    if (user_cache.empty() && !run.vars.get("XDG_CACHE_HOME").empty()) user_cache = run.vars.get("XDG_CACHE_HOME") + "/pip";
    if (user_cache.empty() && !home.empty()) user_cache = home + "/.cache/pip";
    if (!user_cache.empty() && run.real.within_any(user_cache, run.policy.writable)) {
        run.say([&] { return "pip keeps " + user_cache + " (a writable root)"; });
        return;
    }
    if (run.vars.named("PIP_CACHE_DIR")) return;
    const std::string cache = run.under("cache/pip");
    run.vars.set("PIP_CACHE_DIR", cache);
    run.say([&] { return "pip cache " + cache; });
}

// The user's cargo configuration for a CARGO_HOME of the run's own: of what cargo would
// read from the user's CARGO_HOME, the settings a copy keeps (cargo_config_copy) —
// unless cargo's own search (the working directory's ancestors' .cargo) finds that file
// anyway: then nothing, so that no setting is read twice.
std::string cargo_config(Run& run, const fs::path& user_home) {
    const std::string header = "# confine's CARGO_HOME for confined runs (rewritten before each run).\n";
    fs::path source;
    for (const char* name : {"config.toml", "config"}) {
        std::error_code ec;
        if (source.empty() && fs::is_regular_file(user_home / name, ec)) source = user_home / name;
    }
    if (source.empty()) return header;
    const fs::path real_home = run.real(user_home);
    if (real_home.filename() == ".cargo" && is_within(run.policy.working_directory, real_home.parent_path()))
        return header + "# " + comment_text(source.string()) + " is read by cargo itself, from the working directory's ancestors.\n";
    const auto text = read_settings(source);
    const auto copy = text ? cargo_config_copy(*text) : std::nullopt;
    if (!copy) return header + "# " + comment_text(source.string()) + " could not be read as TOML: cargo runs without it.\n";
    return header + "# " + comment_text(source.string()) + ", only the settings confine copies (none that authenticates):\n" + *copy;
}

void prepare_cargo(Run& run) {
    const std::string home = run.vars.get("HOME");
    std::string user_home = run.vars.get("CARGO_HOME");
    if (user_home.empty() && !home.empty()) user_home = home + "/.cargo";
    if (!user_home.empty() && run.real.within_any(user_home, run.policy.writable)) {
        run.say([&] { return "cargo keeps " + user_home + " (a writable root)"; });
        return;
    }
    // Named by the caller, or beneath the directory already (a run started inside a run).
    if (run.vars.named("CARGO_HOME") || (!user_home.empty() && is_within(run.real(user_home), run.real(run.base)))) return;
    if (run.dir.get() < 0) {
        const std::string cargo = run.under("cargo");
        run.vars.set("CARGO_HOME", cargo);
        run.say([&] { return "cargo home " + cargo + " (not made: cargo makes it; the copy of your settings comes with a run of cargo)"; });
        return;
    }
    auto dir = open_dirs(run.dir, "cargo");
    const auto bad = dir ? write_at(*dir, "config.toml", cargo_config(run, user_home), 0644) : std::optional(dir.error().message);
    if (bad) {
        log_warn("packages: {} in {}: cargo keeps {}", *bad, run.base.string(), user_home.empty() ? std::string("its home") : user_home);
        return;
    }
    const std::string cargo = run.under("cargo");
    run.vars.set("CARGO_HOME", cargo);
    run.say([&] { return "cargo home " + cargo; });
}

// The workspace's packages.dir, opened (made where missing, with a .gitignore that keeps
// it out of the repository).
std::expected<Fd, Failure> open_base(const Policy& resolved, const std::string& dir) {
    Fd workspace(::open(resolved.workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (workspace.get() < 0) return failed("cannot open the workspace");
    auto base = open_dirs(workspace, dir);
    if (!base) return base;
    Fd ignore(::openat(base->get(), ".gitignore", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (ignore.get() >= 0) {
        const std::string text = "# What confined runs' package managers keep (confine, [policy.packages]).\n*\n";
        if (::write(ignore.get(), text.data(), text.size()) < 0) return failed("cannot write .gitignore");
    }
    return base;
}

// Whether the program `word` names is one of `tools`: npm or npx; pip, pip3 or pip3.11;
// cargo.
bool names_tool(std::string_view word, std::span<const std::string> tools) {
    const std::string name = fs::path(word).filename().string();
    const auto has = [&](std::string_view tool) { return std::find(tools.begin(), tools.end(), tool) != tools.end(); };
    const bool pip = name.starts_with("pip") && name.find_first_not_of("0123456789.", 3) == std::string::npos;
    return (has("npm") && (name == "npm" || name == "npx")) || (has("pip") && pip) || (has("cargo") && name == "cargo");
}

// Whether `words` start one of `tools`: its program is one (a python's `-m pip` too), or
// a shell's `-c` script (`bash -lc "cd app && npm ci"`, as agents run commands) names one
// among its words. Only such a run makes the directory where it is missing.
bool runs_a_tool(std::span<const std::string> words, std::span<const std::string> tools) {
    if (words.empty()) return false;
    if (names_tool(words.front(), tools)) return true;
    const bool pip = std::find(tools.begin(), tools.end(), "pip") != tools.end();
    for (std::size_t i = 1; pip && i + 1 < words.size(); ++i)
        if (words[i] == "-m" && words[i + 1] == "pip") return true;
    static constexpr std::array shells{"sh", "bash", "dash", "zsh", "ksh"};
    const std::string program = fs::path(words.front()).filename().string();
    if (std::find(shells.begin(), shells.end(), program) == shells.end()) return false;
    for (std::size_t i = 1; i + 1 < words.size(); ++i) {
        if (!words[i].starts_with("-") || words[i].starts_with("--") || words[i].find('c') == std::string::npos) continue;
        std::vector<std::string> script;
        std::string word;
        for (const char c : words[i + 1] + " ") {
            if (std::string_view(" \t\n;&|()<>`'\"$={}").find(c) == std::string_view::npos) word += c;
            else if (!word.empty()) script.push_back(std::exchange(word, {}));
        }
        for (std::size_t w = 0; w < script.size(); ++w)
            if (names_tool(script[w], tools) || (pip && script[w] == "-m" && w + 1 < script.size() && script[w + 1] == "pip")) return true;
        return false;
    }
    return false;
}

}  // namespace

void apply_packages(const PackageCaches& packages, const Policy& resolved, std::span<const std::string> command,
                    std::span<const std::string> explicit_names, std::vector<std::string>& environment) {
    if (resolved.mode != Mode::workspace_write || resolved.workspace.empty() || packages.dir.empty() || packages.tools.empty()) return;
    const fs::path base = resolved.workspace / fs::path(packages.dir).lexically_normal();
    // Made (with its copies of the user's settings) for a run of a package manager, or kept
    // current where it is already; any other run (`make test`) makes nothing: its variables
    // name the places, which a package manager it starts makes itself.
    std::error_code ec;
    const bool make = runs_a_tool(command, packages.tools) || fs::symlink_status(base, ec).type() != fs::file_type::not_found;
    auto dir = make ? open_base(resolved, packages.dir) : std::expected<Fd, Failure>(Fd(-1));
    if (!dir) {
        // A workspace this user may not write, the command may not either: nothing to say.
        const int e = dir.error().error;
        log(e == EACCES || e == EPERM || e == EROFS ? spdlog::level::debug : spdlog::level::warn,
            "packages: {} ({}): npm, pip and cargo keep the host's caches, read-only", dir.error().message, base.string());
        return;
    }
    Variables vars(environment, explicit_names);
    Run run{resolved, vars, base, std::move(*dir), RealPaths(resolved), {}};
    for (const auto& tool : packages.tools) {
        if (tool == "npm") prepare_npm(run);
        else if (tool == "pip") prepare_pip(run);
        else if (tool == "cargo") prepare_cargo(run);
    }
    if (log_enabled(spdlog::level::debug)) {
        std::string line;
        for (const auto& s : run.said) line += (line.empty() ? "" : "; ") + s;
        log_debug("packages: {}", line.empty() ? std::string("(none)") : line);
    }
}

#endif

}  // namespace confine::detail
