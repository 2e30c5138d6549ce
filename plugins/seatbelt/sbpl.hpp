// Seatbelt profiles (SBPL) for confine's policies: the rules of docs/design.md §4, every path a
// single string literal that reads back as exactly its bytes, or a refusal.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace confine::seatbelt {

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates, ≤ U+10FFFF).
inline bool valid_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || i + n > text.size()) return false;
        std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
        for (std::size_t k = 1; k < n; ++k) {
            const auto cc = static_cast<unsigned char>(text[i + k]);
            if ((cc >> 6) != 0x2) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n;
    }
    return true;
}

// `path` as one SBPL string literal: `"` and `\` escaped, everything else as is.
// Refused (with the reason): NUL and other control characters (a newline included —
// no real root needs one, and a profile reader must never see a line break inside a
// rule), and text that is not UTF-8.
inline std::expected<std::string, std::string> string_literal(std::string_view path) {
    if (path.find('\0') != std::string_view::npos) return std::unexpected(std::string("contains a NUL byte"));
    for (char ch : path) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7F) return std::unexpected(std::string("contains a control character (such as a newline or a tab)"));
    }
    if (!valid_utf8(path)) return std::unexpected(std::string("is not valid UTF-8"));
    std::string out;
    out.reserve(path.size() + 2);
    out.push_back('"');
    for (char ch : path) {
        if (ch == '"' || ch == '\\') out.push_back('\\');
        out.push_back(ch);
    }
    out.push_back('"');
    return out;
}

// Whether `path` is `root` or lies beneath it (both canonical, no trailing '/').
inline bool within(std::string_view path, std::string_view root) {
    if (root == "/") return path.starts_with('/');
    return path == root || (path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/');
}

// The directories above `path` that lie strictly inside a writable root: the ones a
// command could rename or remove to put a fresh directory in `path`'s place. The roots
// themselves are not among them, unless one lies inside another (the workspace in /tmp).
inline std::vector<std::string> movable_ancestors(std::string_view path, const std::vector<std::string>& roots) {
    std::vector<std::string> out;
    std::string_view a = path;
    for (;;) {
        const auto slash = a.find_last_of('/');
        if (slash == std::string_view::npos || slash == 0) break;
        a = a.substr(0, slash);
        if (std::any_of(roots.begin(), roots.end(), [&](const std::string& r) { return a != r && within(a, r); })) out.emplace_back(a);
    }
    return out;
}

// What a profile is made of. All paths absolute and canonical (Seatbelt matches
// resolved paths: one that is not would silently match nothing).
struct Request {
    std::vector<std::string> roots;      // writable, beneath and including each
    bool network_none = true;            // deny every network operation
    std::vector<std::string> deny_read;  // neither read nor listed, nor linked, cloned or connected to
    std::vector<std::string> protect;    // not written, beneath and including each
};

// Rules every profile carries, whatever the policy (constants: no path of the policy
// is ever part of them, and no regex is ever built from one).
//
// Operations that have a host service or the kernel act for the command outside every
// path rule, each a way to write where the profile forbids it:
// - file-mount, file-unmount: mount(2)/unmount(2) by the command itself (a file system
//   mounted over a path changes what the path rules mean);
// - user-preference-write: cfprefsd writes a preference domain's plist for the command
//   (`defaults write`), wherever that plist lives;
// - job-creation: launchd starts a job for it (`launchctl submit`), unconfined;
// - lsopen: LaunchServices opens a document or an application for it (`open x.command`
//   has Terminal run the script), unconfined;
// - appleevent-send: another application acts on its Apple Events (`osascript -e 'tell
//   application "Terminal" to do script …'`).
inline constexpr std::string_view denied_services =
    "(deny file-mount file-unmount)\n"
    "(deny user-preference-write)\n"
    "(deny job-creation lsopen appleevent-send)\n";

// The devices a command writes to as a matter of course: the data of /dev/null, of its
// standard output and error (/dev/stdout and /dev/stderr lead to /dev/fd/N, which
// duplicates a descriptor it already holds, with no more access than that one has), of
// its terminal (/dev/tty) and of pseudo-terminals (/dev/ptmx to make one, /dev/ttysNNN).
// Only file-write-data: no device node is created, removed, renamed or changed in mode,
// owner, times or attributes (with file-write*, a command run as root could replace
// /dev/null). The rest of /dev (disks such as /dev/disk0, /dev/mem, BSD-style ptys
// /dev/ptyXX and /dev/ttyXX) stays unwritable.
inline constexpr std::string_view writable_devices =
    "(allow file-write-data (literal \"/dev/null\") (literal \"/dev/ptmx\") (literal \"/dev/stderr\") (literal \"/dev/stdout\") (literal \"/dev/tty\"))\n"
    "(allow file-write-data (regex #\"^/dev/fd/[0-9]+$\") (regex #\"^/dev/ttys[0-9]+$\"))\n";

// The profile: allow by default; with the network confined, deny every network
// operation (outbound, inbound and bind, unix-domain sockets of host services included;
// a socketpair is not one); deny the operations that have a host service write for the
// command (`denied_services`); deny every file write, then allow writing data to the
// usual devices (`writable_devices`) and every write beneath each writable root.
// Hard links: `file-link` is denied, then allowed beneath each writable root. Seatbelt
// checks link(2) as file-link against both names, the existing file's and the new one,
// so a link is made only when both lie in writable roots: a file from outside cannot
// be given a name in the workspace to be written through it, and nothing can be linked
// out. (A link that exists before the run is a path like any other: what it names is
// written through it. Seatbelt matches paths, not files.)
// Then, after every allow so that they win (in SBPL the last rule that matches an
// operation decides it):
// - each deny_read path: no read of it or beneath it (data, metadata, extended
//   attributes, a directory's listing), no hard link or clone of what is there (a new
//   name elsewhere would be read by that name), no connection to a socket there;
// - each protect path: no write of any kind beneath it or to it (data, creation,
//   removal, rename, mode, owner, flags, extended attributes, ACLs), no hard link of
//   what is there;
// - against a rename that would put another directory in their place: no removal or
//   rename (file-write-unlink) of a deny_read path that lies in a writable root, nor of
//   any directory above a deny_read or protect path that lies strictly inside one.
// No rule without a filter follows one with a filter for the same operation, so the
// profile means the same whether Seatbelt lets the last matching rule decide or lets
// any filtered rule outrank an unfiltered one (the independent reader checks both).
// Each list is sorted and de-duplicated, so equal policies give equal profiles.
inline std::expected<std::string, std::string> profile(Request r) {
    auto tidy = [](std::vector<std::string>& v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    tidy(r.roots);
    tidy(r.deny_read);
    tidy(r.protect);
    auto quoted = [](std::string_view what, const std::string& path) -> std::expected<std::string, std::string> {
        if (path.empty() || path.front() != '/') return std::unexpected(std::string(what) + " " + path + " is not an absolute path");
        auto literal = string_literal(path);
        if (!literal) return std::unexpected(std::string(what) + " " + path + " " + literal.error());
        return literal;
    };
    std::vector<std::string> roots;  // as string literals
    for (const auto& root : r.roots) {
        auto literal = string_literal(root);
        if (!literal) return std::unexpected("writable root " + root + " " + literal.error());
        roots.push_back(std::move(*literal));
    }
    std::string p = "(version 1)\n(allow default)\n";
    if (r.network_none) p += "(deny network*)\n";
    p += denied_services;
    p += "(deny file-write*)\n";
    p += writable_devices;
    for (const auto& root : roots) p += "(allow file-write* (subpath " + root + "))\n";
    p += "(deny file-link)\n";
    for (const auto& root : roots) p += "(allow file-link (subpath " + root + "))\n";
    std::vector<std::string> unlinkable;  // deny_read paths in a writable root
    std::vector<std::string> ancestors;
    for (const auto& d : r.deny_read) {
        auto literal = quoted("deny_read path", d);
        if (!literal) return std::unexpected(literal.error());
        p += "(deny file-read* file-link file-clone network-outbound (subpath " + *literal + "))\n";
        if (std::any_of(r.roots.begin(), r.roots.end(), [&](const std::string& root) { return within(d, root); })) unlinkable.push_back(*literal);
        for (auto& a : movable_ancestors(d, r.roots)) ancestors.push_back(std::move(a));
    }
    for (const auto& k : r.protect) {
        auto literal = quoted("protect path", k);
        if (!literal) return std::unexpected(literal.error());
        p += "(deny file-write* file-link (subpath " + *literal + "))\n";
        for (auto& a : movable_ancestors(k, r.roots)) ancestors.push_back(std::move(a));
    }
    for (const auto& literal : unlinkable) p += "(deny file-write-unlink (subpath " + literal + "))\n";
    tidy(ancestors);
    for (const auto& a : ancestors) {
        auto literal = string_literal(a);  // a prefix of a path already accepted
        if (!literal) return std::unexpected("directory " + a + " " + literal.error());
        p += "(deny file-write-unlink (literal " + *literal + "))\n";
    }
    return p;
}

// The profile for writable roots alone (see above).
inline std::expected<std::string, std::string> profile(std::vector<std::string> roots, bool network_none = true) {
    return profile(Request{std::move(roots), network_none, {}, {}});
}

// Attestation (a status descriptor, docs/design.md §5). sandbox-exec applies the profile
// and only then executes what follows it; that is this shell, confined already, which
// says so on the descriptor the host passes as its $0, closes it, and executes the
// command after "--" in its own place (same process). The marker is on the descriptor iff the
// profile was applied and the command is about to run: a `sandbox-exec: ` line at any
// status is then the command's own (a nested sandbox-exec that failed), and a failure of
// sandbox-exec's own is proven by the marker's absence, not guessed from its status.
// The command's arguments reach it as "$@", never through eval; eval sees only $0, a
// number the host wrote (anything else ends the shell, 125, before the command).
inline constexpr std::string_view attestation_shell = "/bin/sh";
inline constexpr std::string_view status_marker = "seatbelt: profile applied, executing the command";
inline constexpr std::string_view attestation_script =
    "case $0 in ''|*[!0-9]*) exit 125;; esac\n"
    "[ \"$1\" = -- ] || exit 125\n"
    "shift\n"
    "printf '%s\\n' 'seatbelt: profile applied, executing the command' >&\"$0\" || exit 125\n"
    "eval \"exec $0>&-\"\n"
    "exec \"$@\"\n";

}  // namespace confine::seatbelt
