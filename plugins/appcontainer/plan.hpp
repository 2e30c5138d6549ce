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

// The container's name, derived from the grants: the same policy finds the same
// profile again, a different one never shares it. At most 64 characters, as Windows
// requires.
inline std::string profile_name(const std::vector<Grant>& grants) {
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
    static const char digits[] = "0123456789abcdef";
    std::string name = "confine.";
    for (int shift = 60; shift >= 0; shift -= 4) name.push_back(digits[(h >> shift) & 0xf]);
    return name;
}

// appcontainer-run [--ro PATH]... [--rw PATH]... [--network] [--] COMMAND [ARG...]   |   --probe
// --network: the container gets the internetClient capability (outbound connections);
// without it, it holds no capability and has no network at all.
struct LaunchRequest {
    bool probe = false;
    bool network = false;
    std::vector<Grant> grants;
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
        if (a.starts_with("-")) return std::unexpected("unknown argument: " + a);
        break;
    }
    r.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    if (r.command.empty()) return std::unexpected(std::string("no command given"));
    return r;
}

// The launcher's argv for a plan: grants, --network when the network is allowed, then
// "--" and the command verbatim.
inline std::vector<std::string> launcher_argv(const std::string& launcher, const std::vector<Grant>& grants,
                                              const std::vector<std::string>& command, bool network = false) {
    std::vector<std::string> argv{launcher};
    for (const auto& g : grants) argv.insert(argv.end(), {g.access == Access::read_write ? "--rw" : "--ro", g.path});
    if (network) argv.push_back("--network");
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

}  // namespace confine::appcontainer
