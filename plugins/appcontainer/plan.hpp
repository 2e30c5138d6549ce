// The portable half of the AppContainer runner: which roots get which access, the
// container's name, the launcher's grammar. No Windows API here, so that it is tested
// on any OS; appcontainer_run.cpp and the plugin do the Windows half.
#pragma once

#include <algorithm>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace confine::appcontainer {

enum class Access { read_only, read_write };

struct Grant {
    std::string path;
    Access access;
    friend bool operator==(const Grant&, const Grant&) = default;
};

// A Windows path in one spelling: backslashes, no trailing separator (but "C:\"),
// compared without regard to ASCII case, as the file system does.
inline std::string normalized(std::string_view path) {
    std::string p(path);
    std::replace(p.begin(), p.end(), '/', '\\');
    while (p.size() > 3 && p.back() == '\\') p.pop_back();
    return p;
}

inline std::string folded(std::string_view path) {
    std::string p = normalized(path);
    for (char& c : p)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return p;
}

// Absolute Windows paths only: a drive ("C:\...") or a UNC share ("\\server\share...").
inline bool is_absolute(std::string_view path) {
    const std::string p = normalized(path);
    const bool drive = p.size() >= 3 && ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' && p[2] == '\\';
    const bool unc = p.size() > 2 && p[0] == '\\' && p[1] == '\\' && p[2] != '\\' && p[2] != '?';
    return drive || unc;
}

// The grants a policy needs: read-only mode lets the container read its workspace;
// workspace-write lets it write the workspace, the temporary directory and every extra
// root. Each path once (read-write wins), in a stable order.
inline std::expected<std::vector<Grant>, std::string> plan_grants(bool workspace_write, std::string_view workspace,
                                                                  std::string_view temp_dir,
                                                                  const std::vector<std::string>& writable) {
    std::vector<Grant> wanted;
    if (!workspace.empty()) wanted.push_back({std::string(workspace), workspace_write ? Access::read_write : Access::read_only});
    if (workspace_write) {
        if (!temp_dir.empty()) wanted.push_back({std::string(temp_dir), Access::read_write});
        for (const auto& w : writable) wanted.push_back({w, Access::read_write});
    } else if (!writable.empty()) {
        return std::unexpected(std::string("read-only mode cannot have writable roots"));
    }
    std::vector<Grant> out;
    for (auto& g : wanted) {
        if (!is_absolute(g.path)) return std::unexpected("not an absolute Windows path: " + g.path);
        g.path = normalized(g.path);
        auto same = std::find_if(out.begin(), out.end(), [&](const Grant& o) { return folded(o.path) == folded(g.path); });
        if (same == out.end()) out.push_back(g);
        else if (g.access == Access::read_write) same->access = Access::read_write;
    }
    std::sort(out.begin(), out.end(), [](const Grant& a, const Grant& b) { return folded(a.path) < folded(b.path); });
    return out;
}

// What the launcher denies the container on one path, with an access-denied entry for
// its SID in the path's access list (explicit entries come before inherited ones, so it
// wins over the grant the path inherits from its root):
// - read: reading data, extended attributes, listing, executing; inherited by everything
//   beneath (a deny_read path);
// - write: writing data, appending, creating beneath, deleting (itself, a child), renaming,
//   attributes, extended attributes, the access list and the owner; inherited by everything
//   beneath (a protect path);
// - remove: deleting or renaming the path itself, and its access list and owner; not
//   inherited (a directory above a protect path inside a writable root: renamed away, a
//   fresh directory would take the protected path's place without its entries).
enum class Denial { read, write, remove };

struct Deny {
    std::string path;
    Denial denial;
    friend bool operator==(const Deny&, const Deny&) = default;
};

// Whether `path` is `root` or lies beneath it, as the file system compares (both normalized).
inline bool within(std::string_view path, std::string_view root) {
    const std::string p = folded(path), r = folded(root);
    if (p == r) return true;
    const std::string prefix = r.ends_with('\\') ? r : r + '\\';
    return p.size() > prefix.size() && p.starts_with(prefix);
}

// The denials a policy needs: `read` on each deny_read path, `write` on each protect
// path, `remove` on each directory above a protect path that lies strictly inside a
// read-write grant. A deny_read path needs no `remove` around it: a renamed file or
// directory keeps its access list, and with it the denial (Seatbelt, which matches paths,
// needs one). Each path once per denial, in a stable order: the `remove` entries, then
// `write`, then `read`, each sorted — the order the launcher applies them in, and takes
// them back in the reverse of.
inline std::expected<std::vector<Deny>, std::string> plan_denials(const std::vector<Grant>& grants, const std::vector<std::string>& deny_read,
                                                                  const std::vector<std::string>& protect) {
    std::vector<Deny> out;
    auto add = [&](std::string path, Denial d) {
        if (std::none_of(out.begin(), out.end(), [&](const Deny& o) { return o.denial == d && folded(o.path) == folded(path); }))
            out.push_back({std::move(path), d});
    };
    for (const auto& d : deny_read) {
        if (!is_absolute(d)) return std::unexpected("deny_read path is not an absolute Windows path: " + d);
        add(normalized(d), Denial::read);
    }
    for (const auto& k : protect) {
        if (!is_absolute(k)) return std::unexpected("protect path is not an absolute Windows path: " + k);
        const std::string path = normalized(k);
        add(path, Denial::write);
        for (auto slash = path.find_last_of('\\'); slash != std::string::npos && slash > 2; slash = path.find_last_of('\\', slash - 1)) {
            const std::string above = path.substr(0, slash);
            if (std::any_of(grants.begin(), grants.end(), [&](const Grant& g) {
                    return g.access == Access::read_write && folded(above) != folded(g.path) && within(above, g.path);
                }))
                add(above, Denial::remove);
        }
    }
    auto rank = [](Denial d) { return d == Denial::remove ? 0 : d == Denial::write ? 1 : 2; };
    std::sort(out.begin(), out.end(), [&](const Deny& a, const Deny& b) {
        return rank(a.denial) != rank(b.denial) ? rank(a.denial) < rank(b.denial) : folded(a.path) < folded(b.path);
    });
    return out;
}

// What the denials leave open, for the read and protect dimensions.
inline constexpr std::string_view left_open =
    "a file or directory beneath a denied one keeps the access that an entry of its own (not inherited) gives the container or "
    "ALL APPLICATION PACKAGES, and a run that ends while another runs restores access lists it saw, the other's entries lost";

// The container's name, derived from the grants: the same policy finds the same
// profile again, a different one never shares it. At most 64 characters, as Windows
// requires.
inline std::string profile_name(const std::vector<Grant>& grants, const std::vector<Deny>& denials = {}) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
    auto mix = [&](std::string_view s) {
        for (unsigned char c : s) {
            h ^= c;
            h *= 1099511628211ull;
        }
        h ^= 0xff;
        h *= 1099511628211ull;
    };
    for (const auto& g : grants) {
        mix(folded(g.path));
        mix(g.access == Access::read_write ? "rw" : "ro");
    }
    // With denials, a container of its own: two runs that share one share its entries.
    for (const auto& d : denials) {
        mix(folded(d.path));
        mix(d.denial == Denial::read ? "deny-read" : d.denial == Denial::write ? "deny-write" : "deny-remove");
    }
    static const char digits[] = "0123456789abcdef";
    std::string name = "confine.";
    for (int shift = 60; shift >= 0; shift -= 4) name.push_back(digits[(h >> shift) & 0xf]);
    return name;
}

// appcontainer-run [--ro PATH]... [--rw PATH]... [--deny-read PATH]... [--deny-write PATH]...
//                  [--deny-remove PATH]... [--network] [--] COMMAND [ARG...]   |   --probe
// --network: the container gets the internetClient capability (outbound connections);
// without it, it holds no capability and has no network at all.
struct LaunchRequest {
    bool probe = false;
    bool network = false;
    std::vector<Grant> grants;
    std::vector<Deny> denials;
    std::vector<std::string> command;
};

inline std::expected<LaunchRequest, std::string> parse_launcher_args(const std::vector<std::string>& args) {
    LaunchRequest r;
    if (args.size() == 1 && args[0] == "--probe") {
        r.probe = true;
        return r;
    }
    std::size_t i = 0;
    for (; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--network") {
            r.network = true;
            continue;
        }
        if (a == "--ro" || a == "--rw") {
            if (i + 1 >= args.size() || args[i + 1].empty()) return std::unexpected(a + " requires a path");
            if (!is_absolute(args[i + 1])) return std::unexpected(a + " needs an absolute path, got " + args[i + 1]);
            r.grants.push_back({normalized(args[++i]), a == "--rw" ? Access::read_write : Access::read_only});
            continue;
        }
        if (a == "--deny-read" || a == "--deny-write" || a == "--deny-remove") {
            if (i + 1 >= args.size() || args[i + 1].empty()) return std::unexpected(a + " requires a path");
            if (!is_absolute(args[i + 1])) return std::unexpected(a + " needs an absolute path, got " + args[i + 1]);
            const Denial d = a == "--deny-read" ? Denial::read : a == "--deny-write" ? Denial::write : Denial::remove;
            r.denials.push_back({normalized(args[++i]), d});
            continue;
        }
        if (a.starts_with("-")) return std::unexpected("unknown argument: " + a);
        break;
    }
    r.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    if (r.command.empty()) return std::unexpected(std::string("no command given"));
    return r;
}

// The launcher's argv for a plan: grants, denials in their order, --network when the
// network is allowed, then "--" and the command verbatim.
inline std::vector<std::string> launcher_argv(const std::string& launcher, const std::vector<Grant>& grants,
                                              const std::vector<std::string>& command, bool network = false,
                                              const std::vector<Deny>& denials = {}) {
    std::vector<std::string> argv{launcher};
    for (const auto& g : grants) argv.insert(argv.end(), {g.access == Access::read_write ? "--rw" : "--ro", g.path});
    for (const auto& d : denials)
        argv.insert(argv.end(), {d.denial == Denial::read ? "--deny-read" : d.denial == Denial::write ? "--deny-write" : "--deny-remove", d.path});
    if (network) argv.push_back("--network");
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

}  // namespace confine::appcontainer
