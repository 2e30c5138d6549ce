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

// A Windows path in one spelling: backslashes, no repeated or trailing separator (but
// `C:\`), no `.` component, `..` taken with the component before it (never above the
// drive), and a `\\?\` or `\\.\` prefix before a drive letter dropped. Lexical only: the
// launcher resolves each path to its final one (resolve_paths) before it grants.
inline std::string normalized(std::string_view path) {
    std::string p(path);
    std::replace(p.begin(), p.end(), '/', '\\');
    const auto drive_at = [&](std::size_t i) {
        return p.size() >= i + 3 && ((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z')) && p[i + 1] == ':' && p[i + 2] == '\\';
    };
    if ((p.starts_with("\\\\?\\") || p.starts_with("\\\\.\\")) && drive_at(4)) p.erase(0, 4);
    if (!drive_at(0)) {
        while (p.size() > 3 && p.back() == '\\') p.pop_back();
        return p;  // not a drive path: refused by path_refusal, shown as given
    }
    std::vector<std::string> parts;
    for (std::size_t i = 3; i <= p.size();) {
        const std::size_t end = std::min(p.find('\\', i), p.size());
        const std::string part = p.substr(i, end - i);
        if (part == "..") {
            if (!parts.empty()) parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        i = end + 1;
    }
    std::string out = p.substr(0, 3);
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "\\" : "") + parts[i];
    return out;
}

inline std::string folded(std::string_view path) {
    std::string p = normalized(path);
    for (char& c : p)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return p;
}

// Why a path cannot be granted or denied, or "" when it can: only a drive path (`C:\...`,
// or the same behind `\\?\` or `\\.\`). A network share (`\\server\share`, `\\?\UNC\`)
// is refused: its access lists are the server's, another machine's, and what a grant
// there does, and whether revocation reaches it, is not this machine's to promise.
// Device paths (`\\.\pipe`, `\\?\Volume{...}`, `\\?\GLOBALROOT`) name objects that
// are not folders of a drive. A ':' after the drive names an alternate data stream.
inline std::string path_refusal(std::string_view given) {
    const std::string p = normalized(given);
    const std::string shown(given);
    const bool drive = p.size() >= 3 && ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' && p[2] == '\\';
    if (drive) return p.find(':', 2) == std::string::npos ? "" : "a path with a ':' after its drive (an alternate data stream) is not supported: " + shown;
    std::string head = p.substr(0, 8);
    for (char& c : head)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (head.starts_with("\\\\?\\UNC\\") || (p.starts_with("\\\\") && p.size() > 2 && p[2] != '?' && p[2] != '.' && p[2] != '\\'))
        return "a network path (\\\\server\\share) is not supported: " + shown;
    if (p.starts_with("\\\\?\\") || p.starts_with("\\\\.\\") || p.starts_with("\\??\\"))
        return "a device path (\\\\.\\ or \\\\?\\ other than a drive path) is not supported: " + shown;
    return "not an absolute Windows path: " + shown;
}

inline bool is_absolute(std::string_view path) { return path_refusal(path).empty(); }

// Whether `path` is `root` or lies beneath it, as the file system compares (both normalized).
inline bool within(std::string_view path, std::string_view root) {
    const std::string p = folded(path), r = folded(root);
    if (p == r) return true;
    const std::string prefix = r.ends_with('\\') ? r : r + '\\';
    return p.size() > prefix.size() && p.starts_with(prefix);
}

// Each path once, compared as the file system does (read-write wins), in a stable order.
inline std::vector<Grant> merged(std::vector<Grant> wanted) {
    std::vector<Grant> out;
    for (auto& g : wanted) {
        g.path = normalized(g.path);
        auto same = std::find_if(out.begin(), out.end(), [&](const Grant& o) { return folded(o.path) == folded(g.path); });
        if (same == out.end()) out.push_back(g);
        else if (g.access == Access::read_write) same->access = Access::read_write;
    }
    std::sort(out.begin(), out.end(), [](const Grant& a, const Grant& b) { return folded(a.path) < folded(b.path); });
    return out;
}

// Why a grant would reach too far, or "": a drive's root, or the user's profile folder
// (`home`, when known) or a folder above it. An inheritable entry there would be written
// onto every file beneath (hours, on a drive) and let the container read the user's
// credential stores wherever a denial does not reach.
inline std::string grant_refusal(const Grant& g, std::string_view home) {
    const std::string p = normalized(g.path);
    if (p.size() == 3) return "refusing to grant the container a whole drive: " + p;
    if (!home.empty() && is_absolute(home) && within(home, p))
        return "refusing to grant the container " + p + ": it is, or holds, the user's profile folder " + normalized(home);
    return {};
}

// The grants a policy needs: read-only mode lets the container read the directory the
// command runs in (the workspace, when there is one; otherwise `working_directory`);
// workspace-write lets it write the workspace and every extra root. The run's own
// temporary directory is not planned here: the launcher makes it (--private-temp).
inline std::expected<std::vector<Grant>, std::string> plan_grants(bool workspace_write, std::string_view workspace,
                                                                  std::string_view working_directory,
                                                                  const std::vector<std::string>& writable, std::string_view home = {}) {
    std::vector<Grant> wanted;
    if (workspace_write) {
        if (!workspace.empty()) wanted.push_back({std::string(workspace), Access::read_write});
        for (const auto& w : writable) wanted.push_back({w, Access::read_write});
    } else if (!writable.empty()) {
        return std::unexpected(std::string("read-only mode cannot have writable roots"));
    } else if (!workspace.empty() || !working_directory.empty()) {
        wanted.push_back({std::string(workspace.empty() ? working_directory : workspace), Access::read_only});
    }
    for (const auto& g : wanted)
        if (auto why = path_refusal(g.path); !why.empty()) return std::unexpected(why);
    auto out = merged(std::move(wanted));
    for (const auto& g : out)
        if (auto why = grant_refusal(g, home); !why.empty()) return std::unexpected(why);
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

// Each path once per denial, in the order the launcher applies them: the `remove`
// entries, then `write`, then `read`, each sorted.
inline std::vector<Deny> ordered(std::vector<Deny> denials) {
    std::vector<Deny> out;
    for (auto& d : denials) {
        d.path = normalized(d.path);
        if (std::none_of(out.begin(), out.end(), [&](const Deny& o) { return o.denial == d.denial && folded(o.path) == folded(d.path); }))
            out.push_back(std::move(d));
    }
    auto rank = [](Denial d) { return d == Denial::remove ? 0 : d == Denial::write ? 1 : 2; };
    std::sort(out.begin(), out.end(), [&](const Deny& a, const Deny& b) {
        return rank(a.denial) != rank(b.denial) ? rank(a.denial) < rank(b.denial) : folded(a.path) < folded(b.path);
    });
    return out;
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
        if (auto why = path_refusal(d); !why.empty()) return std::unexpected("deny_read: " + why);
        add(normalized(d), Denial::read);
    }
    for (const auto& k : protect) {
        if (auto why = path_refusal(k); !why.empty()) return std::unexpected("protect: " + why);
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
    return ordered(std::move(out));
}

// What the denials leave open, for the read and protect dimensions.
inline constexpr std::string_view left_open =
    "a file or directory beneath a denied one keeps the access that an entry of its own (not inherited) gives the container or "
    "ALL APPLICATION PACKAGES";

// 16 lowercase hexadecimal digits of `value`.
inline std::string hex16(std::uint64_t value) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (int shift = 60; shift >= 0; shift -= 4) out.push_back(digits[(value >> shift) & 0xf]);
    return out;
}

inline std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    h ^= 0xff;  // a separator, so that ("ab", "c") and ("a", "bc") differ
    h *= 1099511628211ull;
    return h;
}

// A run's nonce: 16 hex digits, different for every run on the machine (the launcher mixes
// its process ID with the performance counter). It names the run's container, its
// temporary directory and its journal, so that nothing of one run is another's.
inline std::string run_nonce(std::uint64_t process_id, std::uint64_t counter) {
    return hex16(fnv1a(hex16(counter), fnv1a(hex16(process_id))));
}

inline bool is_nonce(std::string_view s) {
    return s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The container's name, derived from the grants, the denials and the run's nonce: a
// container of the run's own (`confine.` + 16 hex digits, within Windows' 64), so that
// removing its entries, or its profile, never touches another run's. The profile is
// deleted when the run ends.
inline std::string profile_name(const std::vector<Grant>& grants, const std::vector<Deny>& denials = {}, std::string_view nonce = {}) {
    std::uint64_t h = fnv1a("");
    for (const auto& g : grants) h = fnv1a(g.access == Access::read_write ? "rw" : "ro", fnv1a(folded(g.path), h));
    for (const auto& d : denials)
        h = fnv1a(d.denial == Denial::read ? "deny-read" : d.denial == Denial::write ? "deny-write" : "deny-remove", fnv1a(folded(d.path), h));
    if (!nonce.empty()) h = fnv1a(nonce, fnv1a("run", h));
    return "confine." + hex16(h);
}

// The run's temporary directory, made by the launcher in `parent` (its %TEMP%, or the
// plugin's temp_dir) and removed when the run ends: `confine-` + the nonce.
inline std::string private_temp_name(std::string_view nonce) { return "confine-" + std::string(nonce); }

inline bool is_private_temp(std::string_view path) {
    const std::string p = normalized(path);
    const auto slash = p.find_last_of('\\');
    const std::string_view last = slash == std::string::npos ? std::string_view(p) : std::string_view(p).substr(slash + 1);
    return is_absolute(p) && last.starts_with("confine-") && is_nonce(last.substr(8));
}

// The lock file that serialises changes to one folder's access list: every launcher
// reads, changes and writes a list holding an exclusive lock on it, so that two runs on
// a shared folder never write back a list without the other's entry. It lives in the
// user's journal folder (journal_dir), which no container is granted and no other user
// can write: it serialises every launcher of the user, in any session, and nobody else
// can take it first. The lock ends with the handle, however its holder ended.
inline std::string acl_lock_file(std::string_view path) { return "acl." + hex16(fnv1a(folded(path))) + ".lock"; }

// appcontainer-run [--ro PATH]... [--rw PATH]... [--deny-read PATH]... [--deny-write PATH]...
//                  [--deny-remove PATH]... [--private-temp [--temp-parent DIR]] [--network]
//                  [--] COMMAND [ARG...]   |   --probe
// --network: the container gets the internetClient capability (outbound connections);
// without it, it holds no capability and has no network at all. --private-temp: the
// launcher makes the run's own temporary directory in DIR (default: its %TEMP%), grants
// it read-write, sets TEMP and TMP to it for the command and removes it afterwards.
struct LaunchRequest {
    bool probe = false;
    bool network = false;
    bool private_temp = false;
    std::string temp_parent;  // empty: the launcher's %TEMP%
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
    auto path_after = [&](std::size_t i) -> std::expected<std::string, std::string> {
        if (i + 1 >= args.size() || args[i + 1].empty()) return std::unexpected(args[i] + " requires a path");
        if (auto why = path_refusal(args[i + 1]); !why.empty()) return std::unexpected(args[i] + ": " + why);
        return normalized(args[i + 1]);
    };
    std::size_t i = 0;
    for (; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--network" || a == "--private-temp") {
            (a == "--network" ? r.network : r.private_temp) = true;
            continue;
        }
        if (a == "--ro" || a == "--rw" || a == "--temp-parent" || a == "--deny-read" || a == "--deny-write" || a == "--deny-remove") {
            auto path = path_after(i++);
            if (!path) return std::unexpected(path.error());
            if (a == "--ro" || a == "--rw") r.grants.push_back({*path, a == "--rw" ? Access::read_write : Access::read_only});
            else if (a == "--temp-parent") r.temp_parent = *path;
            else r.denials.push_back({*path, a == "--deny-read" ? Denial::read : a == "--deny-write" ? Denial::write : Denial::remove});
            continue;
        }
        if (a.starts_with("-")) return std::unexpected("unknown argument: " + a);
        break;
    }
    if (!r.temp_parent.empty() && !r.private_temp) return std::unexpected(std::string("--temp-parent needs --private-temp"));
    r.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    if (r.command.empty()) return std::unexpected(std::string("no command given"));
    return r;
}

// The run's own temporary directory, as the plugin asks for it.
struct PrivateTemp {
    bool wanted = false;
    std::string parent;  // empty: the launcher's %TEMP%
};

// The launcher's argv for a plan: grants, denials in their order, the private temporary
// directory, --network when the network is allowed, then "--" and the command verbatim.
inline std::vector<std::string> launcher_argv(const std::string& launcher, const std::vector<Grant>& grants,
                                              const std::vector<std::string>& command, bool network = false,
                                              const std::vector<Deny>& denials = {}, const PrivateTemp& temp = {}) {
    std::vector<std::string> argv{launcher};
    for (const auto& g : grants) argv.insert(argv.end(), {g.access == Access::read_write ? "--rw" : "--ro", g.path});
    for (const auto& d : denials)
        argv.insert(argv.end(), {d.denial == Denial::read ? "--deny-read" : d.denial == Denial::write ? "--deny-write" : "--deny-remove", d.path});
    if (temp.wanted) argv.push_back("--private-temp");
    if (temp.wanted && !temp.parent.empty()) argv.insert(argv.end(), {"--temp-parent", temp.parent});
    if (network) argv.push_back("--network");
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

// Every path of a request resolved to its final one (the launcher: GetFinalPathNameByHandleW,
// which follows links and junctions and spells 8.3 names, case and `..` as the file system
// stores them), refused when that is not a drive path (a mapped drive that leads to a
// share), then each path once again: two spellings of one folder get one entry, the
// read-write one. `final_path(path)` gives the path or why it cannot.
template <class FinalPath>
std::expected<void, std::string> resolve_paths(LaunchRequest& r, FinalPath&& final_path) {
    auto resolve = [&](std::string& path) -> std::expected<void, std::string> {
        std::expected<std::string, std::string> real = final_path(path);
        if (!real) return std::unexpected("cannot resolve " + path + ": " + real.error());
        if (auto why = path_refusal(*real); !why.empty()) return std::unexpected(path + " resolves to " + *real + ": " + why);
        path = normalized(*real);
        return {};
    };
    for (auto& g : r.grants)
        if (auto ok = resolve(g.path); !ok) return ok;
    for (auto& d : r.denials)
        if (auto ok = resolve(d.path); !ok) return ok;
    if (!r.temp_parent.empty())
        if (auto ok = resolve(r.temp_parent); !ok) return ok;
    r.grants = merged(std::move(r.grants));
    r.denials = ordered(std::move(r.denials));
    return {};
}

// The journal: what a run is about to change, written and flushed before each change, so
// that a launcher killed at any point leaves enough for the next one to undo it. One
// file per run, `<nonce>.journal`, in a folder of the user's that no container can write
// (%LOCALAPPDATA%\confine\appcontainer; refused when a read-write grant holds it).
// Lines of `key value`, each ended by a newline (a torn last line was never acted on):
//
//   confine appcontainer journal 1
//   profile confine.0123456789abcdef        -- written before the profile is created
//   sid S-1-15-2-...                        -- the container's SID, once it has one
//   temp C:\Users\me\AppData\Local\Temp\confine-<nonce>   -- before it is made
//   acl C:\Work\ws                           -- before an entry for the SID is added there
//
// Undoing it, whether at the end of the run or at a later start: every explicit entry for
// the SID removed from each `acl` path's current list (only that container's, so the
// user's changes and other runs' entries stay), the temporary directory removed, the
// profile deleted, then the journal. Each step is idempotent, so a crash while undoing is
// undone again. What is recorded is trusted only within these bounds: a SID of an
// AppContainer (S-1-15-2-), a profile named as this launcher names them, a temporary
// directory named as it names them.
inline constexpr std::string_view journal_header = "confine appcontainer journal 1";

struct Journal {
    std::string profile;
    std::string sid;
    std::string temp;
    std::vector<std::string> acl;  // in the order the entries were added, each once
    friend bool operator==(const Journal&, const Journal&) = default;
};

inline std::string journal_line(std::string_view key, std::string_view value) { return std::string(key) + " " + std::string(value) + "\n"; }

inline std::string journal_file_name(std::string_view nonce) { return std::string(nonce) + ".journal"; }

inline std::expected<Journal, std::string> parse_journal(std::string_view text) {
    Journal j;
    bool first = true;
    while (!text.empty()) {
        const auto end = text.find('\n');
        if (end == std::string_view::npos) break;  // torn: never acted on
        const std::string_view line = text.substr(0, end);
        text.remove_prefix(end + 1);
        if (first) {
            if (line != journal_header) return std::unexpected(std::string("not a journal of this launcher"));
            first = false;
            continue;
        }
        const auto space = line.find(' ');
        if (space == std::string_view::npos) return std::unexpected("malformed journal line: " + std::string(line));
        const std::string_view key = line.substr(0, space), value = line.substr(space + 1);
        if (key == "profile") {
            if (!value.starts_with("confine.") || !is_nonce(value.substr(8))) return std::unexpected("not a profile of this launcher: " + std::string(value));
            j.profile = value;
        } else if (key == "sid") {
            if (!value.starts_with("S-1-15-2-") || value.find_first_not_of("S0123456789-") != std::string_view::npos)
                return std::unexpected("not an AppContainer SID: " + std::string(value));
            j.sid = value;
        } else if (key == "temp") {
            if (!is_private_temp(value)) return std::unexpected("not a temporary directory of this launcher: " + std::string(value));
            j.temp = normalized(value);
        } else if (key == "acl") {
            if (!is_absolute(value)) return std::unexpected("not a drive path: " + std::string(value));
            const std::string path = normalized(value);
            if (std::none_of(j.acl.begin(), j.acl.end(), [&](const std::string& p) { return folded(p) == folded(path); })) j.acl.push_back(path);
        } else {
            return std::unexpected("unknown journal line: " + std::string(line));
        }
    }
    if (first) return std::unexpected(std::string("an empty journal"));
    if (!j.acl.empty() && j.sid.empty()) return std::unexpected(std::string("access-list entries without the SID they were for"));
    return j;
}

// Why the journal cannot be kept in `dir`, or "": a read-write grant holds it, and the
// container could rewrite what the next start undoes.
inline std::string journal_refusal(std::string_view dir, const std::vector<Grant>& grants) {
    for (const auto& g : grants)
        if (g.access == Access::read_write && within(dir, g.path))
            return "the journal folder " + normalized(dir) + " lies inside the read-write root " + g.path + ", where the container could change it";
    return {};
}

}  // namespace confine::appcontainer
