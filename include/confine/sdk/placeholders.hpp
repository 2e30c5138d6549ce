// Placeholders: runner arguments a plugin writes and the host fills in just before it
// runs the argv (confine-plugin(7), PLACEHOLDERS). A runner that needs something only
// the running host can make — a descriptor it reads, a directory opened without following
// a link, the network filter's program — names it in its own arguments with one of these:
//
//   r.argv = {"/usr/bin/bwrap", "--bind-fd", sdk::dir_fd_placeholder(root), root, "--json-status-fd"};
//   r.attestation = sdk::Attestation::status_fd(static_cast<std::uint32_t>(r.argv.size()), "\"exit-code\"");
//   r.argv.push_back(sdk::status_fd_placeholder());
//
// The grammar, one whole argument each:
//   {status-fd}           the number of a descriptor the host reads (the status descriptor);
//                         only at the index the status_fd attestation names
//   {network-filter-fd}   the number of a descriptor of a file holding the network filter's
//                         program, at offset 0 (the proxy program with Network::proxy)
//   {loopback-filter-fd}  (ABI 1.13, with Network::none) the same, holding the loopback
//                         program: for a runner whose command is in a network namespace of
//                         its own holding only a loopback, which the command may then use
//   {proxy-fd}            (ABI 1.11, with Network::proxy) the number of a unix stream socket
//                         on which the sandbox hands the host's proxy, by SCM_RIGHTS, a
//                         TCP socket listening on its loopback at Policy::proxy_port
//   {dir-fd:PATH}         the number of a descriptor of the directory PATH (absolute), opened
//                         by the host without following a symbolic link in any part of it
//   {dir-path:PATH}       the same descriptor as the path /proc/self/fd/N
//   {terminal-path}       (with Policy::own_terminal) the path of the run's own terminal,
//                         the command's stdin, as the host names it (/dev/pts/N): where a
//                         runner that makes a /dev of its own binds it, so that the
//                         command's tty(1) finds it there. The host refuses to start the
//                         runner when it has no such terminal to give
// PATH is everything between the first ':' and the final '}', and may itself hold either.
// Only the runner's own arguments (after its program, before the "--" in front of the
// command) are read; the command's are never touched. An argument that begins with '{'
// and a kind's name followed by '}', ':' or nothing is meant as a placeholder: if it is
// not a well-formed one the host refuses the wrap result. Anything else ("{status}",
// "{dir-fdx:/a}", " {status-fd}") is no placeholder and reaches the runner as it is.
#pragma once

#include <array>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace confine::sdk {

enum class PlaceholderKind { status_fd, dir_fd, dir_path, network_filter_fd, proxy_fd, loopback_filter_fd, terminal_path };

// One placeholder: its kind, for dir_fd and dir_path the directory (empty for the
// others), and — among a runner's own arguments (runner_placeholders,
// confine/sdk/wrap_check.hpp) — its index in the argv (0 as parse_placeholder reads one
// argument alone).
struct Placeholder {
    using Kind = PlaceholderKind;
    PlaceholderKind kind;
    std::string path;
    std::size_t argument = 0;
    bool operator==(const Placeholder&) const = default;
};

// The kind's name as it is written between the braces: "status-fd", "dir-fd", "dir-path",
// "network-filter-fd", "proxy-fd", "loopback-filter-fd".
constexpr std::string_view placeholder_name(PlaceholderKind kind) noexcept {
    switch (kind) {
    case PlaceholderKind::status_fd: return "status-fd";
    case PlaceholderKind::dir_fd: return "dir-fd";
    case PlaceholderKind::dir_path: return "dir-path";
    case PlaceholderKind::network_filter_fd: return "network-filter-fd";
    case PlaceholderKind::proxy_fd: return "proxy-fd";
    case PlaceholderKind::loopback_filter_fd: return "loopback-filter-fd";
    case PlaceholderKind::terminal_path: return "terminal-path";
    }
    return "?";
}

// Whether a kind names a directory (written {KIND:PATH}) or nothing more ({KIND}).
constexpr bool placeholder_has_path(PlaceholderKind kind) noexcept {
    return kind == PlaceholderKind::dir_fd || kind == PlaceholderKind::dir_path;
}

// The constructors: the text of each kind. `path` absolute, as a host gives the policy's
// paths (resolved); the host refuses a wrap result with any other.
inline std::string status_fd_placeholder() { return "{status-fd}"; }
inline std::string network_filter_fd_placeholder() { return "{network-filter-fd}"; }
inline std::string proxy_fd_placeholder() { return "{proxy-fd}"; }
inline std::string loopback_filter_fd_placeholder() { return "{loopback-filter-fd}"; }
inline std::string terminal_path_placeholder() { return "{terminal-path}"; }
inline std::string dir_fd_placeholder(std::string_view path) { return "{dir-fd:" + std::string(path) + "}"; }
inline std::string dir_path_placeholder(std::string_view path) { return "{dir-path:" + std::string(path) + "}"; }

// The text of `p`, as its kind's constructor makes it.
inline std::string placeholder_text(const Placeholder& p) {
    std::string text("{");
    text.append(placeholder_name(p.kind));
    if (placeholder_has_path(p.kind)) text.append(":").append(p.path);
    return text.append("}");
}

namespace detail {

// `text` for a one-line message: a control character shows as '?'.
inline std::string one_line_text(std::string_view text) {
    std::string shown(text);
    for (char& c : shown)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return shown;
}

}  // namespace detail

// What the runner argument `text` is: a placeholder; nullopt when it is none (it does not
// begin with '{' and a kind's name followed by '}', ':' or its end); or, when it is meant
// as one but malformed, why, in one line.
inline std::expected<std::optional<Placeholder>, std::string> parse_placeholder(std::string_view text) {
    constexpr std::array kinds{PlaceholderKind::status_fd, PlaceholderKind::dir_fd, PlaceholderKind::dir_path,
                               PlaceholderKind::network_filter_fd, PlaceholderKind::proxy_fd, PlaceholderKind::loopback_filter_fd,
                               PlaceholderKind::terminal_path};
    if (!text.starts_with('{')) return std::nullopt;
    for (const PlaceholderKind kind : kinds) {
        const std::string_view name = placeholder_name(kind);
        const std::string_view rest = text.substr(1);
        if (!rest.starts_with(name) || (rest.size() > name.size() && rest[name.size()] != '}' && rest[name.size()] != ':'))
            continue;
        auto malformed = [&text](std::string_view why) {
            return std::unexpected("malformed placeholder '" + detail::one_line_text(text) + "': " + std::string(why));
        };
        if (!text.ends_with('}') || text.size() < name.size() + 2) return malformed("it does not end with '}'");
        const std::string_view inner = text.substr(1 + name.size(), text.size() - name.size() - 2);  // ":PATH" or ""
        if (!placeholder_has_path(kind)) {
            if (!inner.empty()) return malformed(std::string("{").append(name).append("} takes nothing after its name"));
            return Placeholder{kind, {}};
        }
        if (inner.size() < 2 || inner.front() != ':')
            return malformed(std::string("{").append(name).append(":PATH} needs the directory's path after the ':'"));
        const std::string_view path = inner.substr(1);
        if (path.front() != '/') return malformed("the directory's path must be absolute");
        if (path.find('\0') != std::string_view::npos) return malformed("the directory's path holds a NUL byte");
        return Placeholder{kind, std::string(path)};
    }
    return std::nullopt;
}

}  // namespace confine::sdk
