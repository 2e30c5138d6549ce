// The host's view of one call: the shared vocabulary (confine/sdk/vocabulary.hpp) and
// the wrap result as the host holds it — which runner wrapped, where the command starts,
// and what keeps the plugin's result alive.
#pragma once

#include <confine/sdk/placeholders.hpp>
#include <confine/sdk/vocabulary.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

namespace detail {
struct GitWatch;  // the run-end check of one run (libconfine's own)
struct ProtectWatch;
class ProxyRun;   // the run's proxy (libconfine's own)
}

using sdk::Attestation;
using sdk::Dimensions;
using sdk::Level;
using sdk::Loopback;
using sdk::Enforcement;
using sdk::FailureRule;
using sdk::InProcess;
using sdk::Mode;
using sdk::Network;
using sdk::Placeholder;
using sdk::Policy;
using sdk::Tmp;
using sdk::Verdict;

// Which dimensions a call's policy asked to be confined, beside the levels the runner
// reported for them (a dimension not asked has a level that means nothing): the wrap's
// claims the host adds, shared by the wrap result and the outcome of its run (Outcome).
struct Asked {
    // Whether the policy asked for the network to be confined (dimensions.network then
    // says how much it is); `enforcement` is full only when every dimension asked is.
    bool network_asked = true;
    // Whether the policy had paths to deny reading, and paths to protect (dimensions.read
    // and dimensions.protect then say how much of them is enforced).
    bool read_asked = false;
    bool protect_asked = false;
    // Whether the call's reads are scoped ([policy] read = "scoped"): what lies outside
    // the scope is in the policy's deny_read, so dimensions.read says how much of the
    // scope is enforced too.
    bool read_scoped = false;
    // Whether the run has limits ([policy.limits], RunOptions::limits): dimensions.limits
    // then says how much of them the host enforces.
    bool limits_asked = false;
};

struct WrapResult : sdk::WrapResult, Asked {
    std::string runner;             // the runner that wrapped, or "runner_command"
    std::size_t command_index = 0;  // where the caller's argv starts in `argv`
    // The runner arguments the host fills in just before it runs the argv, in argument
    // order, read once when the wrap was made (a result holding a malformed one is
    // refused): each one's kind, index in argv, and for dir_fd and dir_path the directory.
    // The grammar, what each kind becomes and where it may stand are confine-plugin(7),
    // PLACEHOLDERS, and confine/sdk/placeholders.hpp. A status_fd one stands at the
    // attestation's status_argument; only the runner's own arguments (before the "--" in
    // front of the command) hold placeholders.
    std::vector<Placeholder> placeholders;
    std::shared_ptr<void> keep_alive;  // the plugin's result and the plugin itself
    // The paths of the policy a stderr line may name when it says a denied or protected
    // path was refused (filled by the provider, from the resolved policy): each denied and
    // protected path, the git directory a protected path lies in, and each of them
    // relative to the command's working directory where it lies beneath it. A failed
    // command's line that names one of them and carries an error a refusal gives (ENOENT,
    // EACCES, EPERM, EROFS, EBUSY; confine-plugin(7), DENIAL DIALECT) is a denial hint
    // whatever the runner's dialect.
    std::vector<std::string> denial_paths;
    // Whether the host supervises the run (its supervisor gives dimensions.lifetime):
    // run() and spawn() then start the runner under it. `own_lifetime` is what the
    // runner's mechanism gives by itself, and `supervision_open` the part of
    // dimensions.open the host's supervision added: what a host that runs the argv
    // itself, without that supervisor, gets.
    bool host_supervised = false;
    Level own_lifetime = Level::none;
    std::string supervision_open;
    // What run() and spawn() check after the run: what was absent at the start where git
    // reads (and must still be absent), taken when the wrap was made; null when the
    // policy protects nothing under `.git`, or there is nothing to hold. A host that runs
    // the argv itself calls run_end_check() (confine/execute.hpp) once the runner ended.
    std::shared_ptr<const detail::GitWatch> git_watch;
    // What run() and spawn() check of the protected paths after the run: what a relative
    // protect entry names that was missing at the start, and, where the runner cannot keep
    // the protected paths read-only, each as it was, to be put back (`protect_restored`:
    // dimensions.protect was raised to partial for it; `own_protect` is the runner's own
    // level and `restore_open` the part of dimensions.open the host's restore said). Null
    // when there is nothing to check. run_end_check() makes the same check.
    std::shared_ptr<const detail::ProtectWatch> protect_watch;
    bool protect_restored = false;
    Level own_protect = Level::none;
    std::string own_protect_open, restore_open;
    // The run's proxy, with the network through it (run() and spawn() open and start it;
    // null for a wrap alone, which cannot have that network).
    std::shared_ptr<detail::ProxyRun> proxy;
    // The policy the runner was given: completed and resolved (roots, deny_read and
    // protect canonical). Empty for a wrap made by Provider::wrap_with().
    Policy policy;
};

std::string_view to_string(Placeholder::Kind kind) noexcept;  // "status-fd", "dir-fd", "dir-path", "network-filter-fd", "proxy-fd", "loopback-filter-fd"

// The part of a wrap's dimensions.open about `dimension` ("network: abstract unix sockets
// are not scoped ..."), up to the next dimension's part ("; write: ", "; processes: ", ...)
// or the cost part ("; cost: ", what a runner denies beyond the policy: Landlock's carve),
// or "" when it says nothing of it: what the runner says it leaves open of that dimension.
std::string open_about(const std::string& open, std::string_view dimension);

std::string_view to_string(Mode mode) noexcept;           // "read-only", "workspace-write"
std::string_view to_string(Enforcement e) noexcept;       // "full", "partial"
std::string_view to_string(Level l) noexcept;             // "full", "partial", "none"
std::string_view to_string(Verdict::Kind kind) noexcept;  // "full", "partial", "unusable"
std::string_view to_string(Tmp tmp) noexcept;             // "private", "host", "unsaid"
std::string_view to_string(Loopback loopback) noexcept;   // "own", "none", "unsaid"
std::string_view to_string(Network network) noexcept;     // "none", "allow", "proxy"

}  // namespace confine
