#include "roots.hpp"

#include <algorithm>
#include <cstdlib>

#if !defined(_WIN32)
#include <pwd.h>
#include <unistd.h>
#endif

namespace fs = std::filesystem;

namespace confine::detail {

bool is_within(const fs::path& path, const fs::path& root) {
    auto p = path.begin();
    for (auto r = root.begin(); r != root.end(); ++r, ++p) {
        if (r->empty()) continue;  // a trailing separator
        if (p == path.end() || *p != *r) return false;
    }
    return true;
}

std::optional<std::string> refused_writable_root(const fs::path& real, const fs::path& home) {
    if (real == real.root_path()) return std::string("it is the root of the file system");
    if (!home.empty() && is_within(home, real))
        return real == home ? "it is the home directory itself, whose start-up files would become writable"
                            : "it holds the home directory " + home.string() + ", whose start-up files would become writable";
#if !defined(_WIN32)
    // Programs, libraries, configuration, boot files, devices, kernel interfaces, and
    // the spools that cron and at run from: nothing beneath them may become writable.
    for (const char* system : {"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys",
                               "/usr", "/var/spool"})
        if (is_within(real, system) && !is_within(real, "/dev/shm"))
            return "it is " + std::string(real == system ? "" : "inside ") + "the system directory " + system;
    // Directories that hold others: the homes, software, data, and state of the system.
    for (const char* holder : {"/home", "/opt", "/srv", "/mnt", "/media", "/root", "/var", "/var/lib", "/var/log", "/var/cache"})
        if (real == holder) return "it is the system directory " + std::string(holder);
#endif
    return std::nullopt;
}

fs::path caller_home() {
    std::error_code ec;
    auto resolved = [&ec](const fs::path& p) {
        fs::path real = fs::canonical(p, ec);
        return ec ? fs::path() : real;
    };
#if defined(_WIN32)
    if (const char* profile = std::getenv("USERPROFILE"); profile && *profile) return resolved(profile);
    return {};
#else
    if (const char* home = std::getenv("HOME"); home && *home == '/')
        if (fs::path real = resolved(home); !real.empty()) return real;
    if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir && *pw->pw_dir == '/') return resolved(pw->pw_dir);
    return {};
#endif
}

std::expected<Policy, Error> resolve_policy(const Policy& policy) {
    auto bad = [](std::string m) { return std::unexpected(Error{ErrorCode::invalid_policy, std::move(m)}); };
    const fs::path home = caller_home();
    Policy out;
    out.mode = policy.mode;
    out.network = policy.network;
    out.tmp = policy.tmp;
    out.terminal = policy.terminal;
    // Resolved here, once: a root that is a symbolic link is judged, and granted, where
    // it leads (a repository's `build -> /etc` is /etc, and refused as such).
    auto resolve = [&](const fs::path& p, const std::string& what) -> std::expected<fs::path, Error> {
        if (!p.is_absolute()) return bad(what + " must be an absolute path: " + p.string());
        if (p.native().find(fs::path::value_type('\0')) != fs::path::string_type::npos) return bad(what + " path contains a NUL byte");
        std::error_code ec;
        const auto st = fs::status(p, ec);
        if (st.type() == fs::file_type::not_found) return bad(what + " does not exist: " + p.string());
        if (st.type() != fs::file_type::directory) return bad(what + " is not a directory: " + p.string());
        fs::path real = fs::canonical(p, ec);
        if (ec) return bad("cannot resolve " + what + " " + p.string() + ": " + ec.message());
        if (auto why = refused_writable_root(real, home)) {
            const std::string shown = real == p.lexically_normal() ? p.string() : p.string() + " (which resolves to " + real.string() + ")";
            return bad("refusing " + what + " " + shown + ": " + *why);
        }
        return real;
    };
    if (policy.mode == Mode::workspace_write) {
        if (policy.workspace.empty()) return bad("workspace-write mode needs a workspace");
        auto ws = resolve(policy.workspace, "workspace");
        if (!ws) return std::unexpected(ws.error());
        out.workspace = *ws;
    } else if (!policy.writable.empty()) {
        return bad("read-only mode cannot have writable roots");
    }
    for (const auto& w : policy.writable) {
        auto real = resolve(w, "writable root");
        if (!real) return std::unexpected(real.error());
        if (*real != out.workspace && std::find(out.writable.begin(), out.writable.end(), *real) == out.writable.end())
            out.writable.push_back(*real);
    }
    return out;
}

std::vector<std::string> writable_places(const Policy& resolved) {
    std::vector<std::string> places;
    if (!resolved.workspace.empty()) places.push_back(resolved.workspace.string());
    for (const auto& w : resolved.writable) places.push_back(w.string());
    return places;
}

}  // namespace confine::detail
