// The landlock runner: confines a command with the Landlock LSM through the
// landlock-run launcher (docs/landlock-run.md), which execs the command itself —
// so the host can attest, out of band, that the launcher reached it.
#include "protect_mounts.hpp"
#include "ruleset.hpp"

#include <confine/sdk/bwrap_profile.hpp>
#include <confine/sdk/placeholders.hpp>
#include <confine/sdk/plugin.hpp>
#include <confine/sdk/program_trust.hpp>

#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

namespace sdk = confine::sdk;
namespace ll = confine::landlock;

namespace {

// What Landlock leaves open of writes on every ABI, said wherever the runner reports what
// it enforces.
constexpr std::string_view metadata_left_open =
    "metadata outside the writable roots is not governed: the mode, group, times, extended attributes (ACLs included) and file "
    "flags of a file the caller owns can still be changed";

// What the deny list's carve costs, said in `open` as its own part (not a dimension: it
// denies more than asked, never less), before the directories it concerns.
constexpr std::string_view carve_cost =
    "cost: the deny list's carve (a Landlock rule grants a directory with everything beneath it) keeps these directories from being "
    "listed, and what is created in them after the start from being read: ";

// The in-process fast path: a ruleset built in the host, applied by the process that
// is about to exec the command (no launcher, one exec less). Same grants, same code.
struct Prepared {
    int ruleset_fd = -1;
    bool partial = false;
    bool network_none = false;  // the network confined: none, or through the proxy
    confine::network::Filter filter = confine::network::Filter::closed;  // which network filter
    // The protected paths' mounts (protect_mounts.hpp), made before anything else; the
    // paths' bytes are this process's, copied into the child with it.
    std::vector<std::pair<std::string, ll::ProtectKind>> mounts;
    // A terminal of the run's own (Policy::own_terminal): its slave, stdin of the process
    // that applies this, is granted as a file (by its descriptor: its path is made only
    // after the wrap), as the launcher grants it by {terminal-path}.
    bool own_terminal = false;
    std::uint64_t handled = 0;
};

// What the launcher's options for a protect mount are, by kind.
const char* protect_option(ll::ProtectKind kind) {
    switch (kind) {
    case ll::ProtectKind::held: return "--protect-held";
    case ll::ProtectKind::empty: return "--protect-empty";
    case ll::ProtectKind::read_only: break;
    }
    return "--protect";
}

void copy_line(char* out, std::size_t size, std::initializer_list<const char*> parts) {
    if (!out || size == 0) return;
    std::size_t n = 0;
    for (const char* p : parts)
        for (; p && *p && n + 1 < size; ++p) out[n++] = *p;
    out[n] = '\0';
}

// Runs between fork and exec, or just before an exec in place: system calls only.
std::int32_t apply_prepared(void* state, char* error, std::size_t error_size) {
    auto* prepared = static_cast<Prepared*>(state);
    if (!prepared->mounts.empty()) {
        if (int rc = ll::own_mount_namespace(); rc < 0) {
            copy_line(error, error_size, {"cannot make the run's mount namespace: ", ::strerrordesc_np(-rc)});
            return 1;
        }
        for (const auto& [path, kind] : prepared->mounts)
            if (int rc = ll::protect_mount(path.c_str(), kind); rc < 0) {
                copy_line(error, error_size, {"cannot keep a protected path read-only: ", path.c_str(), ": ", ::strerrordesc_np(-rc)});
                return 1;
            }
    }
    // Only the run's own: stdin the controlling terminal of the session this process leads
    // (the host made it so), never a terminal it inherited from the caller.
    const pid_t self = ::getpid();
    if (prepared->own_terminal && ::getsid(0) == self && ::tcgetsid(0) == self)
        if (int rc = ll::add_rule(prepared->ruleset_fd, 0, ll::Grant::read_write, prepared->handled); rc < 0) {
            copy_line(error, error_size, {"cannot grant the run's own terminal: ", ::strerrordesc_np(-rc)});
            return 1;
        }
    if (prepared->filter == confine::network::Filter::loopback)
        if (int rc = ll::own_loopback(); rc < 0) {
            copy_line(error, error_size, {"cannot make the run's network namespace: ", ::strerrordesc_np(-rc)});
            return 1;
        }
    if (auto failed = ll::confine_self(prepared->ruleset_fd, prepared->network_none, prepared->filter); failed.what) {
        copy_line(error, error_size, {failed.what, ::strerrordesc_np(failed.error)});
        return 1;
    }
    if (prepared->partial) ll::print_partial_notice();
    return 0;
}

void release_prepared(void* state) {
    auto* prepared = static_cast<Prepared*>(state);
    if (prepared->ruleset_fd >= 0) ::close(prepared->ruleset_fd);
    delete prepared;
}

class LandlockRunner final : public sdk::Runner {
public:
    explicit LandlockRunner(std::string launcher) : launcher_(std::move(launcher)) {}

    // The network through the run's proxy: the proxy program's filter, and one TCP connect
    // rule, for the proxy's port (ABI 4 and up; below, wrap() refuses it).
    bool handles_proxy() const override { return true; }

    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host host, const sdk::RunnerConfig& config) {
        if (auto bad = config.settings.reject_unknown({"launcher", "in_process"})) return std::unexpected(*bad);
        auto in_process = config.settings.bool_or("in_process", true);
        if (!in_process) return std::unexpected(in_process.error());
        auto launcher = config.settings.absolute_path_or("launcher", config.plugin_dir + "/landlock-run");
        if (!launcher) return std::unexpected(launcher.error());
        // The default launcher is judged when it is probed and on every wrap.
        if (config.settings.find("launcher"))
            if (auto bad = sdk::untrusted_named_program(*launcher))
                return std::unexpected(sdk::invalid_argument("setting 'launcher': refusing " + *launcher + ": " + *bad));
        auto runner = std::make_unique<LandlockRunner>(*launcher);
        runner->host_ = host;
        runner->in_process_ = *in_process;
        return runner;
    }

    sdk::Verdict probe(std::uint32_t timeout_ms) override {
        struct stat st {};
        // No launcher is the same answer as a kernel without Landlock: unusable. A
        // launcher that lost its execute bit is said to be exactly that.
        if (::stat(launcher_.c_str(), &st) != 0)
            return sdk::Verdict::unusable("landlock-run launcher not found at " + launcher_ + ": " + std::strerror(errno));
        if (!S_ISREG(st.st_mode) || ::access(launcher_.c_str(), X_OK) != 0)
            return sdk::Verdict::unusable("landlock-run launcher at " + launcher_ + " is not executable");
        if (auto bad = sdk::untrusted_program(launcher_))
            return sdk::Verdict::unusable("landlock-run launcher at " + launcher_ + " cannot be trusted: " + *bad);
        const std::vector<std::string> argv{launcher_, "--probe"};
        auto run = host_.run_probe(argv, timeout_ms);
        if (!run) return sdk::Verdict::unusable(run.error().message);
        if (run->timed_out) return sdk::Verdict::unusable("landlock-run --probe timed out");
        if (!run->spawned) return sdk::Verdict::unusable("cannot start " + launcher_ + ": " + std::strerror(run->spawn_errno));
        if (run->exited && run->exit_code == 0) {
            if (run->stdout_text == "landlock: fully enforced\n") return sdk::Verdict::full();
            if (run->stdout_text == "landlock: partially enforced (older ABI)\n") {
                partial_ = true;
                return sdk::Verdict::partial("older Landlock ABI");
            }
            return sdk::Verdict::unusable("unexpected landlock-run --probe report: " + first_line(run->stdout_text));
        }
        std::string why = first_line(run->stderr_text);
        if (why.empty()) why = run->exited ? "exit status " + std::to_string(run->exit_code) : "signal " + std::to_string(run->signal);
        return sdk::Verdict::unusable(why);
    }

    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy, std::span<const std::string> argv) override {
        // Asking the kernel is one system call: a kernel without Landlock fails here,
        // before anything is started.
        const int abi = ll::negotiated_abi();
        if (abi < 1) return std::unexpected(sdk::unsupported("landlock is not enforced by this kernel (ABI unsupported or disabled)"));
        const bool proxy = policy.network == sdk::Network::proxy;
        if (proxy && abi < ll::Abi::v4) return std::unexpected(no_port_rules(abi));
        const std::vector<std::pair<ll::Grant, std::string>> grants = grants_for(policy);
        // The launcher runs the command, or is handed to a host that will run it: one that
        // the command, a previous run or another user could have replaced confines nothing.
        // Checked on every wrap (a verdict may come from the cache). The in-process path
        // needs no launcher, only one that is there must be trustworthy (whether it is
        // there is asked only of one that fails the check).
        {
            std::vector<std::string> writable;
            for (const auto& [grant, path] : grants)
                if (grant == ll::Grant::read_write) writable.push_back(path);
            if (auto bad = sdk::untrusted_program(launcher_, writable); bad && (!in_process_ || ::access(launcher_.c_str(), F_OK) == 0))
                return std::unexpected(sdk::unsupported("landlock-run launcher at " + launcher_ + " cannot be trusted: " + *bad));
        }
        auto mounts = protect_mounts(policy);
        sdk::WrapResult r;
        r.argv = {launcher_};
        for (const auto& [grant, path] : grants) {
            // The policy's own roots reach the launcher as descriptors the host opens
            // without following links ({dir-path:...} becomes /proc/self/fd/N): it grants
            // the directory that was checked, not what a link swapped in since leads to.
            const bool policy_root = path == policy.workspace || std::find(policy.writable.begin(), policy.writable.end(), path) != policy.writable.end();
            r.argv.insert(r.argv.end(), {grant == ll::Grant::read_only ? "--ro" : "--rw", policy_root ? sdk::dir_path_placeholder(path) : path});
        }
        // The run's own terminal by the path the host fills in when it starts the launcher.
        if (policy.terminal && policy.own_terminal) r.argv.insert(r.argv.end(), {"--rw", sdk::terminal_path_placeholder()});
        for (const auto& d : policy.deny_read) r.argv.insert(r.argv.end(), {"--deny-read", d.string()});
        for (const auto& [path, kind] : mounts) r.argv.insert(r.argv.end(), {protect_option(kind), path});
        const bool network_none = policy.network != sdk::Network::allow;  // none, or through the proxy
        const auto filter = network_filter(policy);
        add_network(r, policy, filter);
        // Attested by the launcher's status descriptor: it says there that it is confined
        // and about to execute the command, on a descriptor the command never inherits.
        r.argv.push_back("--status-fd");
        const auto status_argument = static_cast<std::uint32_t>(r.argv.size());
        r.argv.push_back(sdk::status_fd_placeholder());
        r.argv.push_back("--");
        r.argv.insert(r.argv.end(), argv.begin(), argv.end());
        // Partial whatever the ABI: Landlock governs no metadata (dimensions below).
        r.enforcement = sdk::Enforcement::partial;
        r.denial_signatures = denial_signatures(abi, network_none, !mounts.empty());
        r.failure_rule.evidence_exit_codes = {125};
        r.failure_rule.fatal_signatures = {"landlock-run: "};
        r.failure_rule.informational_lines = {std::string(ll::partial_notice)};
        r.attestation = sdk::Attestation::status_fd(status_argument, std::string(ll::status_marker));
        r.dimensions = dimensions(abi, partial_ || !ll::fully_enforced(abi), network_none, proxy, filter == confine::network::Filter::loopback);
        secrets_dimensions(r.dimensions, policy, grants, network_none, !mounts.empty());
        if (!policy.read_scope.empty()) r.dimensions.read_scope = sdk::Level::full;
        r.tmp = sdk::Tmp::host;  // Landlock cannot give a /tmp of the run's own
        if (in_process_) {
            auto prepared = prepare(abi, grants, policy.deny_read, network_none, filter, proxy ? policy.proxy_port : 0);
            if (!prepared) return std::unexpected(prepared.error());
            (*prepared)->mounts = std::move(mounts);
            (*prepared)->own_terminal = policy.terminal && policy.own_terminal;
            (*prepared)->handled = ll::handled_access(abi);
            r.in_process = {&apply_prepared, prepared->release(), &release_prepared};
        }
        return r;
    }

private:
    static std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }
    // The network filter's program: through the proxy, the proxy program; the network none
    // as root, the loopback program, in a network namespace of the run's own whose loopback
    // the command may use (a test's local server); without CAP_SYS_ADMIN, no loopback at all.
    static confine::network::Filter network_filter(const sdk::Policy& policy) {
        if (policy.network == sdk::Network::proxy) return confine::network::Filter::proxy;
        if (policy.network == sdk::Network::none && holds(CAP_SYS_ADMIN) && holds(CAP_NET_ADMIN)) return confine::network::Filter::loopback;
        return confine::network::Filter::closed;
    }

    // The launcher's network: none (with a loopback of the run's own, or none at all, which
    // the result says), or only the run's proxy reachable (its port alone).
    static void add_network(sdk::WrapResult& r, const sdk::Policy& policy, confine::network::Filter filter) {
        const bool loopback = filter == confine::network::Filter::loopback;
        if (policy.network == sdk::Network::proxy) r.argv.insert(r.argv.end(), {"--proxy-port", std::to_string(policy.proxy_port)});
        if (policy.network == sdk::Network::none) {
            r.argv.push_back(loopback ? "--loopback" : "--no-network");
            r.loopback = loopback ? sdk::Loopback::own : sdk::Loopback::none;
        }
    }
    static sdk::Error no_port_rules(int abi) {
        return sdk::unsupported("this kernel's Landlock ABI " + std::to_string(abi) + " has no TCP rules (ABI 4 has): it cannot keep the network to the run's proxy");
    }
    // Its refusals, in its dialect (`mounted`: the protected paths' mounts are made):
    static std::vector<std::string> denial_signatures(int abi, bool network_none, bool mounted) {
        // EACCES for a file access and a TCP bind or connect it does not grant, and for the
        // network filter's sockets; EPERM for a signal out of the domain (scoped from ABI 6)
        // and for an abstract unix socket outside it; EROFS for a protected path's mount;
        // the tools' own words for a network that is not there.
        std::vector<std::string> out = {"permission denied", "eacces", "eperm"};
        if (ll::scopes(abi, network_none) & ll::scope::signal) out.push_back("operation not permitted");
        if (mounted) out.push_back("read-only file system");
        if (network_none)  // or through the proxy
            for (auto& s : sdk::network_denial_signatures()) out.push_back(std::move(s));
        return out;
    }

    // The protected paths in a writable root: kept read-only by a mount namespace of the
    // run's own where this process may make one (CAP_SYS_ADMIN: root), as bubblewrap keeps
    // them; otherwise none, and Landlock cannot (secrets_dimensions() says so).
    static std::vector<std::pair<std::string, ll::ProtectKind>> protect_mounts(const sdk::Policy& policy) {
        std::vector<std::pair<std::string, ll::ProtectKind>> mounts;
        if (policy.mode != sdk::Mode::workspace_write || policy.protect.empty() || !may_mount()) return mounts;
        for (const auto& [path, how] : sdk::bwrap_protect_mounts(policy))
            mounts.emplace_back(path.string(), how == sdk::ProtectMount::held    ? ll::ProtectKind::held
                                               : how == sdk::ProtectMount::empty ? ll::ProtectKind::empty
                                                                                 : ll::ProtectKind::read_only);
        return mounts;
    }

    // Whether this process holds `capability` in its effective set.
    static bool holds(int capability) {
        __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
        if (::syscall(SYS_capget, &header, data) != 0) return false;
        return (data[CAP_TO_INDEX(capability)].effective & CAP_TO_MASK(capability)) != 0;
    }
    // Whether this process may make mounts of its own: CAP_SYS_ADMIN.
    static bool may_mount() { return holds(CAP_SYS_ADMIN); }
    static bool exists(const char* path) {
        struct stat st {};
        return ::stat(path, &st) == 0;
    }

    // What the policy grants, path by path.
    static std::vector<std::pair<ll::Grant, std::string>> grants_for(const sdk::Policy& policy) {
        // Grants per mode (docs/design.md §4): /dev/null is the file alone; so are, when the
        // command gets the caller's terminal (policy.terminal: a foreground run at one),
        // /dev/tty and the terminal on this process's standard descriptors, so that a pager
        // or an editor can open it again and set it up (its ioctls, from ABI 5) — nothing
        // the inherited descriptors did not already give, and the terminal filter still
        // refuses input injection. In workspace-write mode, /dev/shm too, so that POSIX
        // shared memory and semaphores work (the host's, as /tmp is).
        // With scoped reads, only the places the scope names instead of the whole root.
        std::vector<std::pair<ll::Grant, std::string>> grants;
        if (policy.read_scope.empty()) grants.emplace_back(ll::Grant::read_only, "/");
        for (const auto& r : policy.read_scope) grants.emplace_back(ll::Grant::read_only, r.string());
        grants.emplace_back(ll::Grant::read_write, "/dev/null");
        // A terminal of the run's own (policy.own_terminal) is the command's controlling
        // terminal, /dev/tty: that alone, never the caller's device.
        if (policy.terminal)
            for (const std::string& terminal : terminals(policy.own_terminal)) grants.emplace_back(ll::Grant::read_write, terminal);
        if (policy.mode == sdk::Mode::workspace_write) {
            if (exists("/dev/shm")) grants.emplace_back(ll::Grant::read_write, "/dev/shm");
            grants.emplace_back(ll::Grant::read_write, "/tmp");
            grants.emplace_back(ll::Grant::read_write, policy.workspace.string());
            for (const auto& w : policy.writable) grants.emplace_back(ll::Grant::read_write, w.string());
        }
        return grants;
    }

    // /dev/tty, and unless the run's terminal is its own, the terminal devices on
    // descriptors 0 to 2, each once.
    static std::vector<std::string> terminals(bool own) {
        std::vector<std::string> found;
        if (exists("/dev/tty")) found.emplace_back("/dev/tty");
        for (int fd = 0; fd <= 2 && !own; ++fd) {
            char name[256];
            struct stat st {};
            if (::isatty(fd) != 1 || ::ttyname_r(fd, name, sizeof name) != 0 || ::stat(name, &st) != 0 || !S_ISCHR(st.st_mode)) continue;
            if (std::find(found.begin(), found.end(), name) == found.end()) found.emplace_back(name);
        }
        return found;
    }

    // What a Landlock path enforces of each dimension: writes partly — contents and
    // directory entries as the ABI governs them, but no metadata (Landlock has no right
    // for chmod, utime, extended attributes or file flags); the network in full where
    // abstract unix sockets are scoped (ABI 6), with the network filter; processes partly
    // — no trace out of the domain, no signal out of it from ABI 6, but the host's
    // processes stay visible in /proc (Landlock cannot hide them). Through the proxy, the
    // network partly: a connect rule names a port, not a host.
    // With a loopback of the run's own (a network namespace), the network none is full on
    // every ABI: no abstract socket of the host is in that namespace.
    static sdk::Dimensions dimensions(int abi, bool older_abi, bool network_none, bool proxy, bool loopback) {
        sdk::Dimensions d;
        d.write = sdk::Level::partial;
        std::string open = "write: ";
        if (older_abi) open += "this kernel's Landlock ABI governs some file accesses only (below ABI 5); ";
        open += std::string(metadata_left_open);
        if (proxy) {
            d.network = sdk::Level::partial;
            open += "; network: " + std::string(ll::proxy_port_left_open);
        } else if (network_none) {
            d.network = loopback || ll::network_fully_confined(abi) ? sdk::Level::full : sdk::Level::partial;
            if (d.network == sdk::Level::partial) open += "; network: " + std::string(ll::network_left_open);
        }
        d.processes = sdk::Level::partial;
        open += "; processes: the host's processes stay visible" +
                (ll::scopes(abi, network_none) & ll::scope::signal ? std::string() : std::string(", and can be signalled (Landlock ABI below 6)"));
        d.open = std::move(open);
        return d;
    }

    // What Landlock enforces of the paths to deny and to protect (docs/design.md §12). A
    // denied path is carved out of the read-only grants (each sibling along the way to it
    // granted instead), which holds wherever no read-write grant covers it: one that lies
    // in a writable root stays readable, and a socket stays reachable while the network is
    // allowed (Landlock governs no unix-socket connect). Nothing inside a read-write grant
    // can be kept read-only by Landlock: protect is none wherever a protected path lies in
    // one, unless the run's own mount namespace keeps them (`mounted`): then full.
    static void secrets_dimensions(sdk::Dimensions& d, const sdk::Policy& policy, const std::vector<std::pair<ll::Grant, std::string>>& grants,
                                   bool network_none, bool mounted) {
        auto writable_holding = [&](const std::filesystem::path& p) -> std::string {
            for (const auto& [grant, path] : grants)
                if (grant == ll::Grant::read_write && (p == path || ll::detail::is_prefix_dir(path.c_str(), path.size(), p.c_str()))) return path;
            return {};
        };
        std::string read_open, protect_open;
        for (const auto& denied : policy.deny_read) {
            if (const std::string root = writable_holding(denied); !root.empty())
                read_open += (read_open.empty() ? "" : ", ") + denied.string() + " (in " + root + ", which Landlock grants whole)";
            else if (struct stat st {}; !network_none && ::lstat(denied.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
                read_open += (read_open.empty() ? "" : ", ") + denied.string() + " (a socket: Landlock does not govern connecting to it)";
        }
        for (const auto& p : policy.protect)
            if (const std::string root = writable_holding(p); !root.empty() && !mounted)
                protect_open += (protect_open.empty() ? "" : ", ") + p.string();
        d.read = read_open.empty() ? sdk::Level::full : sdk::Level::partial;
        d.protect = protect_open.empty() ? sdk::Level::full : sdk::Level::none;
        if (!read_open.empty()) d.open += std::string(d.open.empty() ? "" : "; ") + "read: still readable: " + read_open;
        const bool git = std::any_of(policy.protect.begin(), policy.protect.end(), [](const std::filesystem::path& p) {
            return std::any_of(p.begin(), p.end(), [](const std::filesystem::path& part) { return part == ".git"; });
        });
        if (!protect_open.empty())
            d.open += std::string(d.open.empty() ? "" : "; ") + "protect: Landlock cannot keep a path inside a writable root read-only" +
                      (git ? " (git: the command can plant hooks, configuration, a commondir or a whole new .git, which git on the host then "
                             "runs after the run)"
                           : "") +
                      ": " + protect_open;
        if (const std::string carved = carved_directories(policy, grants); !carved.empty())
            d.open += std::string(d.open.empty() ? "" : "; ") + std::string(carve_cost) + carved;
    }

    // The directories the deny list's carve cannot grant whole: each read-only root that a
    // denied path lies beneath, and each directory on the way from it to the denied path,
    // unless a read-write grant holds it (granted whole there). A Landlock rule grants a
    // directory with everything beneath it, so the listing of one of these would be the
    // listing of the denied directory too. Sorted, ", "-separated; empty when nothing is
    // carved.
    static std::string carved_directories(const sdk::Policy& policy, const std::vector<std::pair<ll::Grant, std::string>>& grants) {
        std::vector<std::filesystem::path> read_write, carved;
        for (const auto& [grant, path] : grants)
            if (grant == ll::Grant::read_write) read_write.emplace_back(path);
        auto granted_whole = [&](const std::filesystem::path& p) {
            return std::any_of(read_write.begin(), read_write.end(), [&](const std::filesystem::path& w) { return sdk::is_within(p, w); });
        };
        for (const auto& denied : policy.deny_read) {
            if (granted_whole(denied)) continue;  // readable in a writable root: no carve (said under read)
            for (const auto& [grant, path] : grants) {
                const std::filesystem::path root(path);
                if (grant != ll::Grant::read_only || denied == root || !sdk::is_within(denied, root)) continue;
                for (std::filesystem::path up = denied.parent_path(); sdk::is_within(up, root); up = up.parent_path()) {
                    if (!granted_whole(up)) carved.push_back(up);
                    if (up == root || up == up.parent_path()) break;
                }
            }
        }
        std::sort(carved.begin(), carved.end());
        carved.erase(std::unique(carved.begin(), carved.end()), carved.end());
        std::string out;
        for (const auto& c : carved) out += (out.empty() ? "" : ", ") + c.string();
        return out;
    }

    // Builds the ruleset the launcher would build, here, ready to be applied.
    static std::expected<std::unique_ptr<Prepared>, sdk::Error> prepare(int abi, const std::vector<std::pair<ll::Grant, std::string>>& grants,
                                                                        const std::vector<std::filesystem::path>& deny_read, bool network_none,
                                                                        confine::network::Filter filter, std::uint16_t proxy_port) {
        std::vector<std::string> denied_paths;
        for (const auto& d : deny_read) denied_paths.push_back(d.string());
        std::vector<const char*> denied;
        for (const auto& d : denied_paths) denied.push_back(d.c_str());
        auto prepared = std::make_unique<Prepared>();
        prepared->partial = !ll::fully_enforced(abi);
        prepared->network_none = network_none;
        prepared->filter = filter;
        const std::uint64_t handled = ll::handled_access(abi);
        const bool loopback = filter == confine::network::Filter::loopback;  // TCP not governed: the namespace holds nothing else
        prepared->ruleset_fd = ll::create_ruleset(handled, ll::scopes(abi, network_none), ll::handled_network(abi, network_none && !loopback));
        if (prepared->ruleset_fd < 0) {
            int err = -prepared->ruleset_fd;
            prepared->ruleset_fd = -1;
            return std::unexpected(sdk::Error{std::string("landlock ruleset error: ") + std::strerror(err)});
        }
        if (proxy_port != 0)
            if (int rc = ll::add_connect_port_rule(prepared->ruleset_fd, proxy_port); rc < 0) {
                release_prepared(prepared.release());
                return std::unexpected(sdk::Error{std::string("cannot allow the proxy's port: ") + std::strerror(-rc)});
            }
        for (const auto& [grant, path] : grants) {
            if (grant == ll::Grant::read_only && ll::holds_denied(path.c_str(), denied.data(), denied.size())) {
                if (int rc = ll::add_rule_around(prepared->ruleset_fd, path.c_str(), grant, handled, denied.data(), denied.size()); rc < 0) {
                    release_prepared(prepared.release());
                    return std::unexpected(sdk::Error{"cannot grant around the denied paths beneath " + path + ": " + std::strerror(-rc)});
                }
                continue;
            }
            // The host gives each root resolved: a link found now was swapped in since it was
            // checked (a directory swapped for a link to /etc), and the grant fails.
            int fd = confine::trust::open_without_links(path, O_PATH);
            if (fd < 0) {
                int err = errno;
                release_prepared(prepared.release());
                return std::unexpected(sdk::Error{"cannot open rule path: " + path + ": " + std::strerror(err)});
            }
            int rc = ll::add_rule(prepared->ruleset_fd, fd, grant, handled);
            ::close(fd);
            if (rc < 0) {
                release_prepared(prepared.release());
                return std::unexpected(sdk::Error{std::string("landlock ruleset error: ") + std::strerror(-rc)});
            }
        }
        return prepared;
    }

    std::string launcher_;
    sdk::Host host_{nullptr};
    bool partial_ = false;
    bool in_process_ = true;
};

}  // namespace

CONFINE_RUNNER_PLUGIN(LandlockRunner, "landlock", CONFINE_PLUGIN_VERSION, "Landlock LSM through the landlock-run launcher")
