#include "packages.hpp"

#include "log.hpp"
#include "roots.hpp"

#include <confine/environment.hpp>

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "toml_text.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <cctype>
#include <fstream>
#include <sstream>

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
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// Whether a setting's name says it holds a secret: it names a token, password or secret,
// or npm's `_auth`, anywhere in it — an npm key scoped to a registry
// (`//host/path/:_authToken`) included, and whatever npm's reader would cut off the
// name as a comment (`_authToken#x:y`).
bool secret_name(std::string_view key) {
    const std::string name = lowered(key);
    for (const char* word : {"_auth", "token", "password", "passwd", "secret"})
        if (name.find(word) != std::string::npos) return true;
    return false;
}

// Whether an npmrc line is a setting that may hold a secret, as npm's reader (the ini
// package) reads it: it trims more than ASCII blanks, reads a quoted key or value as a
// JSON string, whose escapes ("\u005fauth") can spell any name or '@', and takes a line
// that starts with '[' as a section only when its first ']' ends it.
bool npmrc_secret(std::string_view line) {
    if (line.empty() || line.front() == '#' || line.front() == ';' || (line.front() == '[' && line.find(']') == line.size() - 1)) return false;
    const std::size_t eq = line.find('=');
    const std::string_view key = trimmed(line.substr(0, eq));
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : trimmed(line.substr(eq + 1));
    const bool escaped = key.find_first_of("\"\\") != std::string_view::npos ||
                         (value.find('"') != std::string_view::npos && value.find('\\') != std::string_view::npos);
    return escaped || secret_name(key) || url_carries_password(key) || url_carries_password(value);
}

}  // namespace

std::string sanitised_npmrc(std::string_view text) {
    std::string out;
    while (!text.empty()) {
        // npm's reader ends a line at a carriage return too: "a=b\r_authToken=..." is two.
        const std::size_t end = text.find_first_of("\r\n");
        const std::string_view line = text.substr(0, end);
        const std::size_t next = end == std::string_view::npos ? text.size() : text.compare(end, 2, "\r\n") == 0 ? end + 2 : end + 1;
        text.remove_prefix(next);
        if (npmrc_secret(trimmed(line)))
            out += "; (a setting that holds a secret was left out here)\n";
        else
            out += std::string(line) + "\n";
    }
    return out;
}

namespace {

// Whether a TOML value carries a URL's password, in a string or anywhere in an array.
bool carries_password(const toml::node& node) {
    if (const auto* s = node.as_string()) return url_carries_password(s->get());
    if (const auto* a = node.as_array())
        return std::any_of(a->begin(), a->end(), [](const toml::node& n) { return carries_password(n); });
    return false;
}

void drop_secrets(toml::table& table);

// The tables in `array` (an array of tables, or inline ones), at any depth, without their secrets.
void drop_secrets(toml::array& array) {
    for (auto& value : array) {
        if (auto* inner = value.as_table()) drop_secrets(*inner);
        else if (auto* nested = value.as_array()) drop_secrets(*nested);
    }
}

void drop_secrets(toml::table& table) {
    std::vector<std::string> dropped;
    for (auto&& [key, value] : table) {
        if (auto* inner = value.as_table()) drop_secrets(*inner);  // a table is judged by what it holds
        else if (secret_name(key.str()) || carries_password(value)) dropped.emplace_back(key.str());
        else if (auto* array = value.as_array()) drop_secrets(*array);
    }
    for (const auto& key : dropped) table.erase(key);
}

}  // namespace

std::optional<std::string> sanitised_cargo_config(std::string_view text) {
    // toml++ is given stand-ins for the characters it cannot read safely (toml_text.hpp).
    const auto safe = toml_stand_ins(text);
    if (!safe) return std::nullopt;
    toml::table table;
    try {
        table = toml::parse(*safe);
    } catch (const toml::parse_error&) {
        return std::nullopt;
    }
    drop_secrets(table);
    std::ostringstream out;
    out << toml::toml_formatter(table) << "\n";
    // toml++'s writer can write a string that its reader (and cargo's) refuses, such as
    // a multi-line literal one ending in quotes: a copy that does not read back is none.
    try {
        (void)toml::parse(out.str());
    } catch (const toml::parse_error&) {
        return std::nullopt;
    }
    return toml_restored(out.str());
}

#if defined(_WIN32)

void apply_packages(const PackageCaches&, const Policy&, std::span<const std::string>, std::span<const std::string>, std::vector<std::string>&) {}

#else

namespace {

// A descriptor closed when it goes.
struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) {
            if (fd >= 0) ::close(fd);
            fd = std::exchange(o.fd, -1);
        }
        return *this;
    }
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

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
    Fd at(::fcntl(dir.fd, F_DUPFD_CLOEXEC, 0));
    if (at.fd < 0) return failed("cannot open the workspace");
    for (const auto& part : rel.lexically_normal()) {
        if (part.empty() || part == ".") continue;
        if (::mkdirat(at.fd, part.c_str(), 0755) != 0 && errno != EEXIST) return failed("cannot make " + part.string());
        Fd next(::openat(at.fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (next.fd < 0) return failed("cannot open " + part.string() + " as a directory");
        at = Fd(std::move(next));
    }
    return at;
}

// Whether `name` in `dir` is a regular file holding exactly `text`. Read only to spare a
// rewrite (a watcher of the workspace would see one on every run); never trusted beyond.
bool holds(const Fd& dir, const std::string& name, const std::string& text) {
    Fd file(::openat(dir.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (file.fd < 0 || ::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) != text.size()) return false;
    std::string there(text.size(), '\0');
    std::size_t got = 0;
    while (got < there.size()) {
        const ssize_t n = ::read(file.fd, there.data() + got, there.size() - got);
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
    ::unlinkat(dir.fd, temp.c_str(), 0);
    Fd file(::openat(dir.fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (file.fd < 0) return "cannot write " + name + ": " + errno_text();
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(file.fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::unlinkat(dir.fd, temp.c_str(), 0);
            return "cannot write " + name + ": " + errno_text();
        }
        done += static_cast<std::size_t>(n);
    }
    if (::renameat(dir.fd, temp.c_str(), dir.fd, name.c_str()) != 0) {
        const std::string why = errno_text();
        ::unlinkat(dir.fd, temp.c_str(), 0);
        return "cannot write " + name + ": " + why;
    }
    return std::nullopt;
}

// The user's file at `file`, at most 1 MiB of it; nullopt when it is not a regular file.
std::optional<std::string> read_settings(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text(std::size_t{1} << 20, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

// The variables of a run's environment, as the package managers read them.
class Variables {
public:
    Variables(std::vector<std::string>& environment, std::span<const std::string> explicit_names)
        : env_(environment), explicit_(explicit_names) {}

    // NAME's value (npm reads its variables whatever their case: `ignore_case`).
    std::string get(std::string_view name, bool ignore_case = false) const {
        for (const auto& e : env_) {
            const std::size_t eq = e.find('=');
            if (eq != std::string::npos && same(e.substr(0, eq), name, ignore_case)) return e.substr(eq + 1);
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
        std::erase_if(env_, [&](const std::string& e) { return same(e.substr(0, e.find('=')), name, ignore_case); });
        env_.push_back(name + "=" + value);
    }

private:
    static bool same(std::string_view a, std::string_view b, bool ignore_case) { return ignore_case ? lowered(a) == lowered(b) : a == b; }
    std::vector<std::string>& env_;
    std::span<const std::string> explicit_;
};

// Where `p` leads (as much of it as exists), for comparing with a resolved policy's paths.
fs::path real(const fs::path& p) {
    std::error_code ec;
    fs::path r = fs::weakly_canonical(p, ec);
    return ec ? p : r;
}

bool within_any(const fs::path& p, const std::vector<fs::path>& places) {
    const fs::path r = real(p);
    return std::any_of(places.begin(), places.end(), [&](const fs::path& place) { return is_within(r, place); });
}

// One run's preparation: the directory beneath the workspace, and what -v says of it.
struct Run {
    const Policy& policy;
    Variables& vars;
    fs::path base;  // the workspace's packages.dir
    Fd dir;         // base, opened; none (-1) when this run makes nothing (see apply_packages)
    std::vector<std::string> said;
};

// npm: its cache, and the user's npmrc without its secrets where the policy denies it.
void prepare_npm(Run& run) {
    const std::string home = run.vars.get("HOME");
    std::string user_cache = run.vars.get("npm_config_cache", true);
    if (user_cache.empty() && !home.empty()) user_cache = home + "/.npm";
    // The cache the caller granted stays (its settings still need the copy below).
    if (!user_cache.empty() && within_any(user_cache, run.policy.writable)) {
        run.said.push_back("npm keeps " + user_cache + " (a writable root)");
    } else if (!run.vars.named("npm_config_cache", true)) {
        run.vars.set("npm_config_cache", (run.base / "cache" / "npm").string(), true);
        run.said.push_back("npm cache " + (run.base / "cache" / "npm").string());
    }
    if (run.vars.named("npm_config_userconfig", true)) return;
    std::string user_config = run.vars.get("npm_config_userconfig", true);
    if (user_config.empty() && !home.empty()) user_config = home + "/.npmrc";
    // npm reads it itself (not denied, or this run's own copy already), or there is none.
    if (user_config.empty() || !within_any(user_config, run.policy.deny_read) || is_within(real(user_config), real(run.base))) return;
    if (run.dir.fd < 0) return;
    const auto text = read_settings(user_config);
    if (!text) return;
    const std::string copy = "; " + user_config + " as confine gives it to confined runs, without its secrets (rewritten before each run)\n" +
                             sanitised_npmrc(*text);
    if (auto bad = write_at(run.dir, "npmrc", copy, 0600)) {
        log_warn("packages: {} in {}: npm runs without the settings of {}", *bad, run.base.string(), user_config);
        return;
    }
    run.vars.set("npm_config_userconfig", (run.base / "npmrc").string(), true);
    run.said.push_back("npm settings " + (run.base / "npmrc").string() + " (" + user_config + " without its secrets)");
}

void prepare_pip(Run& run) {
    const std::string home = run.vars.get("HOME");
    std::string user_cache = run.vars.get("PIP_CACHE_DIR");
    if (user_cache.empty() && !run.vars.get("XDG_CACHE_HOME").empty()) user_cache = run.vars.get("XDG_CACHE_HOME") + "/pip";
    if (user_cache.empty() && !home.empty()) user_cache = home + "/.cache/pip";
    if (!user_cache.empty() && within_any(user_cache, run.policy.writable)) {
        run.said.push_back("pip keeps " + user_cache + " (a writable root)");
        return;
    }
    if (run.vars.named("PIP_CACHE_DIR")) return;
    run.vars.set("PIP_CACHE_DIR", (run.base / "cache" / "pip").string());
    run.said.push_back("pip cache " + (run.base / "cache" / "pip").string());
}

// The user's cargo configuration for a CARGO_HOME of the run's own: what cargo would read
// from the user's CARGO_HOME, without its secrets — unless cargo's own search (the
// working directory's ancestors' .cargo) finds that file anyway: then nothing, so that
// no setting is read twice.
std::string cargo_config(const Run& run, const fs::path& user_home) {
    const std::string header = "# confine's CARGO_HOME for confined runs (rewritten before each run).\n";
    fs::path source;
    for (const char* name : {"config.toml", "config"}) {
        std::error_code ec;
        if (source.empty() && fs::is_regular_file(user_home / name, ec)) source = user_home / name;
    }
    if (source.empty()) return header;
    const fs::path real_home = real(user_home);
    if (real_home.filename() == ".cargo" && is_within(run.policy.working_directory, real_home.parent_path()))
        return header + "# " + source.string() + " is read by cargo itself, from the working directory's ancestors.\n";
    const auto text = read_settings(source);
    const auto copy = text ? sanitised_cargo_config(*text) : std::nullopt;
    if (!copy) return header + "# " + source.string() + " could not be read as TOML: cargo runs without it.\n";
    return header + "# " + source.string() + ", without its secrets:\n" + *copy;
}

void prepare_cargo(Run& run) {
    const std::string home = run.vars.get("HOME");
    std::string user_home = run.vars.get("CARGO_HOME");
    if (user_home.empty() && !home.empty()) user_home = home + "/.cargo";
    if (!user_home.empty() && within_any(user_home, run.policy.writable)) {
        run.said.push_back("cargo keeps " + user_home + " (a writable root)");
        return;
    }
    // Named by the caller, or beneath the directory already (a run started inside a run).
    if (run.vars.named("CARGO_HOME") || (!user_home.empty() && is_within(real(user_home), real(run.base)))) return;
    if (run.dir.fd < 0) {
        run.vars.set("CARGO_HOME", (run.base / "cargo").string());
        run.said.push_back("cargo home " + (run.base / "cargo").string() + " (not made: cargo makes it; the copy of your settings comes with a run of cargo)");
        return;
    }
    auto dir = open_dirs(run.dir, "cargo");
    const auto bad = dir ? write_at(*dir, "config.toml", cargo_config(run, user_home), 0644) : std::optional(dir.error().message);
    if (bad) {
        log_warn("packages: {} in {}: cargo keeps {}", *bad, run.base.string(), user_home.empty() ? std::string("its home") : user_home);
        return;
    }
    run.vars.set("CARGO_HOME", (run.base / "cargo").string());
    run.said.push_back("cargo home " + (run.base / "cargo").string());
}

// The workspace's packages.dir, opened (made where missing, with a .gitignore that keeps
// it out of the repository).
std::expected<Fd, Failure> open_base(const Policy& resolved, const std::string& dir) {
    Fd workspace(::open(resolved.workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (workspace.fd < 0) return failed("cannot open the workspace");
    auto base = open_dirs(workspace, dir);
    if (!base) return base;
    Fd ignore(::openat(base->fd, ".gitignore", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (ignore.fd >= 0) {
        const std::string text = "# What confined runs' package managers keep (confine, [policy.packages]).\n*\n";
        if (::write(ignore.fd, text.data(), text.size()) < 0) return failed("cannot write .gitignore");
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
    Run run{resolved, vars, base, std::move(*dir), {}};
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
