// The bubblewrap profile: how confine confines a command with bubblewrap
// (design.md §4, §8, §11). One function, used by the bwrap runner and by the host
// for an operator's asserted runner_command, which is bubblewrap-shaped (§3); a
// third-party runner built on bubblewrap gets the same profile from it.
//
//   std::uint32_t status = 0;
//   std::vector<std::string> argv = confine::sdk::bwrap_profile(std::vector<std::string>{"/usr/bin/bwrap"}, policy, &status);
//   argv.push_back("--");
//   argv.insert(argv.end(), command.begin(), command.end());
//   result.attestation = confine::sdk::bwrap_attestation(status);
//
// What makes it hold, argument by argument:
// - the whole file system read-only (--ro-bind / /), a /dev and a /proc of its own;
//   for root, the device nodes in that /dev confine's own (--dev-bind of each,
//   bwrap_devices.hpp): bubblewrap binds the host's, which root owns and could chmod;
// - a user namespace of its own, and no capabilities (--unshare-user, --cap-drop ALL):
//   as root, bubblewrap would otherwise leave the command able to remount / read-write,
//   and --cap-drop alone leaves root's bounding set as it was; in its own user namespace
//   the command holds nothing over the host's namespaces, and no set at all (bounding
//   included);
// - a PID namespace of its own (--unshare-pid): without it the command shares the
//   host's, and (as root) reaches the host's files through /proc/<bubblewrap's pid>/root,
//   another sandbox's through /proc/<its pid>/root, and may signal or trace confinectl.
//   The /proc mounted is then that namespace's, showing only the sandbox's processes;
// - an IPC namespace of its own (--unshare-ipc): no System V shared memory, semaphore
//   or message queue of the host's processes;
// - with the network confined (Network::none), a network namespace of its own
//   (--unshare-net): a loopback of its own and nothing else, so no TCP or UDP reaches
//   any address outside (the host's loopback included) and no abstract unix socket of
//   the host (those belong to the network namespace). The command may use that loopback
//   (a test's server on 127.0.0.1 or ::1 listens and is reached). A unix socket of a host
//   service by path would stay reachable wherever its file is visible (a read-only bind
//   does not stop a connect), so bubblewrap also loads the network filter's loopback
//   program (--seccomp {loopback-filter-fd}, which the host fills in; after its own
//   set-up), which refuses every socket but TCP and UDP over IPv4 and IPv6, and unix
//   stream or sequenced-packet pairs (design.md §12);
// - with the network through the run's proxy (Network::proxy), the same namespace and the
//   filter's proxy program (TCP sockets only, no unix socket but a pair): the command
//   starts behind the loopback program (bwrap_proxy_arguments), which binds the proxy's
//   port on the namespace's loopback and hands that listener to the host's proxy; TCP to
//   127.0.0.1 there reaches the proxy, and nothing else leaves the namespace;
// - --die-with-parent: the command does not outlive the run;
// - a new session (--new-session): no terminal injection through TIOCSTI; with a
//   pseudo-terminal of the run's own (Policy::own_terminal), the loopback program gives
//   the command that terminal in a session of its own (bwrap_proxy_arguments), and it is
//   bound under its own name ({terminal-path}, /dev/pts/N) over an empty /dev/pts (a
//   tmpfs), so that tty(1) finds it there — bubblewrap's own devpts, and with it new
//   pseudo-terminals inside, is gone;
// - in workspace-write mode a private /tmp (a tmpfs of the run's own) unless the policy
//   asks for the host's (then bound read-write); in read-only mode the host's, read-only,
//   unless the policy asks for a private one (see bwrap_tmp);
// - in workspace-write mode each writable root bound from a descriptor the host opens
//   without following a link ({dir-fd:PATH}; bubblewrap closes it before the command
//   runs): what is granted is the directory that was checked, not what a link swapped in
//   since leads to, as a bind by name would follow;
// - each protected path bound read-only onto itself after the writable roots: nothing
//   beneath it can be written, and the mount point itself cannot be renamed, removed or
//   replaced (EBUSY), so no `mv` goes around it; the git directory a protected path lies
//   in bound onto itself before (from a descriptor, as the roots), writable for git's own
//   work but a mount point that no `mv .git` moves, with an empty read-only hooks/,
//   worktrees/ or modules/ where the repository has none (see bwrap_protect_mounts);
// - each denied path masked last: a directory by an empty tmpfs of mode 0000, remounted
//   read-only (without capabilities, no user of the sandbox may list it or change its
//   mode), anything else (a file, a socket) by /dev/null, read-only: what it held cannot
//   be read, and a socket there cannot be connected to.
#pragma once

#include <confine/sdk/bwrap_devices.hpp>
#include <confine/sdk/placeholders.hpp>
#include <confine/sdk/vocabulary.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace confine::sdk {

// Which /tmp the profile gives for `policy`: what it asks for, else a private one in
// workspace-write mode (nothing a run leaves there outlives it) and the host's, read-only,
// in read-only mode (nothing is written anywhere).
inline Tmp bwrap_tmp(const Policy& policy) {
    if (policy.tmp != Tmp::unsaid) return policy.tmp;
    return policy.mode == Mode::workspace_write ? Tmp::private_ : Tmp::host;
}

// Whether `dir` is a git directory: a HEAD, and an objects directory or a commondir file.
inline bool is_git_directory(const std::filesystem::path& dir) {
    std::error_code ec;
    const auto head = std::filesystem::symlink_status(dir / "HEAD", ec).type();
    if (head != std::filesystem::file_type::regular && head != std::filesystem::file_type::symlink) return false;
    return std::filesystem::symlink_status(dir / "objects", ec).type() == std::filesystem::file_type::directory ||
           std::filesystem::symlink_status(dir / "commondir", ec).type() == std::filesystem::file_type::regular;
}

// How the profile keeps one path of the protected set (see bwrap_protect_mounts).
enum class ProtectMount {
    held,       // a git directory bound onto itself, writable: a mount point, never renamed
    empty,      // an empty read-only tmpfs where a git directory lacks hooks/, worktrees/, modules/
    read_only,  // a protected path bound read-only onto itself
};

// The mounts that keep `policy.protect` (resolved) in a writable root, in the order they
// are made (a directory before what lies beneath it): each protected path read-only; the
// git directory a protected path lies in (the host's resolution puts a repository's
// config, hooks, commondir, worktrees, modules, ... there) bound onto itself first, left
// writable for git's own work (objects, refs, the index, logs, lock files) but a mount
// point that cannot be renamed, removed or replaced; and in such a directory that is a
// repository's common one, an empty read-only directory where hooks/, worktrees/ or
// modules/ is missing, so that nothing can be planted there (the empty directory stays
// behind after the run: git finds nothing in it).
inline std::vector<std::pair<std::filesystem::path, ProtectMount>> bwrap_protect_mounts(const Policy& policy) {
    namespace fs = std::filesystem;
    std::vector<std::pair<fs::path, ProtectMount>> m;
    if (policy.mode != Mode::workspace_write) return m;
    std::vector<fs::path> roots{policy.workspace};
    roots.insert(roots.end(), policy.writable.begin(), policy.writable.end());
    auto in_a_root = [&roots](const fs::path& p) {  // strictly beneath a root
        return std::any_of(roots.begin(), roots.end(), [&p](const fs::path& r) { return p != r && is_within(p, r); });
    };
    auto add = [&m](const fs::path& p, ProtectMount how) {
        for (const auto& [q, _] : m)
            if (q == p) return;
        m.emplace_back(p, how);
    };
    for (const auto& p : policy.protect) add(p, ProtectMount::read_only);
    for (const auto& p : policy.protect) {
        const fs::path dir = p.parent_path();
        if (!in_a_root(dir) || !is_git_directory(dir)) continue;
        add(dir, ProtectMount::held);
        std::error_code ec;
        if (fs::symlink_status(dir / "commondir", ec).type() == fs::file_type::regular) continue;
        for (const char* name : {"hooks", "worktrees", "modules"})
            if (fs::symlink_status(dir / name, ec).type() == fs::file_type::not_found) add(dir / name, ProtectMount::empty);
    }
    std::sort(m.begin(), m.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    return m;
}

// Scoped reads (Policy::read_scope): instead of the host's whole root, only what the scope
// names, each bound read-only onto itself (/dev and /proc are the sandbox's own, the
// writable roots and /tmp bound after), and the links at the top of the host's root
// (/bin -> usr/bin) made again, so that the paths a program names still lead where they
// do on the host. Nothing else exists in the sandbox: not hidden, absent — and what the
// host creates during the run outside the scope never appears.
inline void bwrap_scoped_root(const Policy& policy, std::vector<std::string>& a) {
    namespace fs = std::filesystem;
    std::vector<fs::path> roots;
    if (policy.mode == Mode::workspace_write) {
        roots.push_back(policy.workspace);
        roots.insert(roots.end(), policy.writable.begin(), policy.writable.end());
    }
    for (const auto& r : policy.read_scope) {
        if (is_within(r, "/dev") || is_within(r, "/proc")) continue;
        if (std::any_of(roots.begin(), roots.end(), [&r](const fs::path& root) { return is_within(r, root); })) continue;  // bound after
        a.insert(a.end(), {"--ro-bind", r.string(), r.string()});
    }
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/", ec)) {
        if (!entry.is_symlink(ec)) continue;
        const fs::path target = fs::read_symlink(entry.path(), ec);
        if (!ec) a.insert(a.end(), {"--symlink", target.string(), entry.path().string()});
    }
}

// `prefix` (the bubblewrap program and any arguments of its own, such as an operator's
// runner_command), then bubblewrap's options that confine a command to `policy` (given
// resolved, as a host gives it). The caller appends "--" and the command. With
// `status_argument`: --json-status-fd and its placeholder, whose index is stored there.
inline std::vector<std::string> bwrap_profile(std::span<const std::string> prefix, const Policy& policy,
                                              std::uint32_t* status_argument = nullptr) {
    std::vector<std::string> a(prefix.begin(), prefix.end());
    if (policy.read_scope.empty()) a.insert(a.end(), {"--ro-bind", "/", "/"});
    else bwrap_scoped_root(policy, a);
    a.insert(a.end(), {"--dev", "/dev", "--proc", "/proc", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop",
                       "ALL", "--new-session"});
#if defined(__linux__)
    // For root, the device nodes of --dev are confine's own, which it cannot change
    // (bwrap_devices.hpp); where they cannot be had, the host's (bwrap_dimensions says so).
    if (::geteuid() == 0 && private_devices_ready())
        for (const DeviceNode& n : bwrap_device_nodes)
            a.insert(a.end(), {"--dev-bind", std::string(private_devices_dir) + "/" + n.name, std::string("/dev/") + n.name});
#endif
    // The run's own terminal is the command's stdin (the host's relay gives no other).
    if (policy.own_terminal) a.insert(a.end(), {"--tmpfs", "/dev/pts", "--dev-bind", "/proc/self/fd/0", terminal_path_placeholder()});
    if (policy.network == Network::none) a.insert(a.end(), {"--unshare-net", "--seccomp", loopback_filter_fd_placeholder()});
    if (policy.network == Network::proxy) a.insert(a.end(), {"--unshare-net", "--seccomp", network_filter_fd_placeholder()});
    if (status_argument) {
        a.push_back("--json-status-fd");
        *status_argument = static_cast<std::uint32_t>(a.size());
        a.push_back(status_fd_placeholder());
    }
    // Before the writable roots, so that a workspace under /tmp is bound on top of it.
    const Tmp tmp = bwrap_tmp(policy);
    if (tmp == Tmp::private_) a.insert(a.end(), {"--tmpfs", "/tmp"});
    else if (policy.mode == Mode::workspace_write) a.insert(a.end(), {"--bind", "/tmp", "/tmp"});
    if (policy.mode == Mode::workspace_write) {
        auto bind = [&a](const std::string& root) { a.insert(a.end(), {"--bind-fd", dir_fd_placeholder(root), root}); };
        bind(policy.workspace.string());
        for (const auto& w : policy.writable) bind(w.string());
    }
    for (const auto& [path, how] : bwrap_protect_mounts(policy)) {
        const std::string p = path.string();
        switch (how) {
        case ProtectMount::held: a.insert(a.end(), {"--bind-fd", dir_fd_placeholder(p), p}); break;
        case ProtectMount::empty: a.insert(a.end(), {"--perms", "0755", "--tmpfs", p, "--remount-ro", p}); break;
        case ProtectMount::read_only: a.insert(a.end(), {"--ro-bind", p, p}); break;
        }
    }
    for (const auto& d : policy.deny_read) {
        // With scoped reads, one outside the scope is not in the sandbox at all.
        if (!policy.read_scope.empty() &&
            std::none_of(policy.read_scope.begin(), policy.read_scope.end(), [&d](const std::filesystem::path& r) { return is_within(d, r); }))
            continue;
        std::error_code ec;
        if (std::filesystem::is_directory(d, ec))
            a.insert(a.end(), {"--perms", "0000", "--tmpfs", d.string(), "--remount-ro", d.string()});
        else
            a.insert(a.end(), {"--ro-bind", "/dev/null", d.string()});
    }
    return a;
}

// With Network::proxy, what starts the command inside the sandbox, after the profile and
// before the "--" in front of the command: `loopback_program` (confine-loopback, installed
// beside the bwrap runner; trusted as a runner program is), which binds the proxy's port
// on the sandbox's loopback, hands the listener to the host over {proxy-fd} and executes
// the command. With a terminal of the run's own (Policy::own_terminal), the same program
// (--terminal) makes that terminal the command's controlling one in a session of its
// own. Nothing for any other run.
inline std::vector<std::string> bwrap_proxy_arguments(const std::string& loopback_program, const Policy& policy) {
    std::vector<std::string> a;
    if (policy.network == Network::proxy) a = {loopback_program, "--port", std::to_string(policy.proxy_port), "--fd", proxy_fd_placeholder()};
    if (policy.own_terminal) {
        if (a.empty()) a.push_back(loopback_program);
        a.push_back("--terminal");
    }
    return a;
}

// What bubblewrap writes on its status descriptor (--json-status-fd): first the key
// "child-pid" and the process ID, as the host sees it, of its child in the sandbox — with
// --unshare-pid the reaper that is PID 1 there, whose own child is the command (the host
// finds the command below it and forwards signals to it) — then "exit-code" once the
// command has run and exited, never when its set-up (mounts, namespaces, the command's
// execvp) failed.
inline constexpr const char* bwrap_status_marker = "\"exit-code\"";
inline constexpr const char* bwrap_status_pid_key = "\"child-pid\"";

// The attestation of a wrap whose argv bwrap_profile made with `status_argument`: the
// command ran if and only if bubblewrap said so on the descriptor the host reads.
// With the network none, the command's loopback: its network namespace's own where
// `profile` (the arguments bwrap_profile gave for this run) makes one; unsaid otherwise.
inline Loopback bwrap_loopback(const Policy& policy, std::span<const std::string> profile) {
    if (policy.network != Network::none) return Loopback::unsaid;
    return std::find(profile.begin(), profile.end(), "--unshare-net") != profile.end() ? Loopback::own : Loopback::none;
}

inline Attestation bwrap_attestation(std::uint32_t status_argument) {
    return Attestation::status_fd(status_argument, bwrap_status_marker, bwrap_status_pid_key);
}

// What the profile enforces of each dimension of `policy`: every write outside the
// writable roots refused, metadata included (the read-only bind refuses chmod, utime and
// extended attributes); with Network::none, the network in full (a network namespace of
// its own, in which no abstract socket of the host exists, and the network filter, which
// leaves no unix datagram socket to send to a host one by path); the processes in full
// (a PID namespace of its own: no other process visible, none to signal or trace); the
// paths to deny and to protect in full. For root, write is full only where `profile` (the
// arguments bwrap_profile gave for this run) binds confine's own device nodes
// (bwrap_devices.hpp); without them the host's nodes are root's to change: partial.
inline Dimensions bwrap_dimensions(const Policy& policy, std::span<const std::string> profile) {
    Dimensions d;
    d.write = Level::full;
    d.processes = Level::full;
    d.read = Level::full;
    d.protect = Level::full;
    if (!policy.read_scope.empty()) d.read_scope = Level::full;
    // Its PID namespace ends with its init, which ends with the command, and the whole of
    // it with the host (--die-with-parent): no process of the run outlives it.
    d.lifetime = Level::full;
    // Through the proxy: the namespace's loopback, where only the proxy listens, is all the
    // command reaches, and the proxy reaches only the hosts listed.
    const bool unshared = std::find(profile.begin(), profile.end(), "--unshare-net") != profile.end();
    // The loopback program lets sockets connect: only in a namespace of its own is that none.
    if (policy.network == Network::none) d.network = unshared ? Level::full : Level::none;
    if (policy.network == Network::proxy) {
        const std::string handed[] = {"--fd", proxy_fd_placeholder()};
        const bool behind = std::search(profile.begin(), profile.end(), std::begin(handed), std::end(handed)) != profile.end();
        d.network = unshared && behind ? Level::full : Level::none;
    }
#if defined(__linux__)
    // The bind itself (a path of the policy could be named like the node).
    const std::string bind[] = {"--dev-bind", std::string(private_devices_dir) + "/null", "/dev/null"};
    if (::geteuid() == 0 && std::search(profile.begin(), profile.end(), std::begin(bind), std::end(bind)) == profile.end()) {
        d.write = Level::partial;
        d.open = host_devices_left_open;
    }
#else
    (void)profile;
#endif
    return d;
}

// The same for a runner that does not keep the profile's arguments at hand: judged by
// the nodes as they are now (bwrap_profile judges them again when it is called).
inline Dimensions bwrap_dimensions(const Policy& policy) {
#if defined(__linux__)
    if (::geteuid() == 0 && private_devices_ready()) {
        const std::string bind[] = {"--dev-bind", std::string(private_devices_dir) + "/null", "/dev/null"};
        return bwrap_dimensions(policy, bind);
    }
#endif
    return bwrap_dimensions(policy, std::span<const std::string>());
}

}  // namespace confine::sdk
