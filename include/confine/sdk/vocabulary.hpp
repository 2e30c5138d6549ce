// The words the host and a runner plugin share, declared once: the policy of one call,
// a probe's verdict and run, and the parts of a wrap result (design.md §1, §4).
//
// The host's API (confine/wrap_result.hpp) and the plugin SDK (confine/sdk/plugin.hpp)
// both use these types; the C ABI (confine/sdk/abi.h) carries them across the boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace confine::sdk {

enum class Mode { read_only, workspace_write };

// Whether the command may reach anything outside the sandbox through a socket
// (design.md §12). none: no TCP or UDP to any address, the host's loopback included,
// and no unix socket of a host service; sockets between the sandbox's own processes
// (socketpair) keep working. proxy (ABI 1.11): as none, but for TCP to the host's proxy
// for the run, at Policy::proxy_port on the loopback the command sees, which reaches the
// hosts the run's allow_hosts list and nothing else (design.md §12, "network through the
// proxy"). A runner that cannot give that refuses the policy (Runner::handles_proxy).
enum class Network { none, allow, proxy };

// Which /tmp the command gets: its own (private: empty at the start of the run, gone
// after it) or the host's. In a policy, unsaid accepts either; in a wrap result, unsaid
// is a runner that does not say (ABI older than 1.6).
enum class Tmp { unsaid, private_, host };

// With the network none, whether the command has a loopback of its own (ABI 1.13): none
// (every TCP and UDP socket refused, the loopback's too), own (a network namespace's
// loopback, which only the run's processes reach), or unsaid (the network is not none,
// or the runner does not say).
enum class Loopback { unsaid, none, own };

// How much of the policy a wrap enforces. A runner's WrapResult::enforcement is its own
// word: partial for a shortfall its dimensions do not say (or, when it says nothing of
// its dimensions, for a partial write). It never changes a level the runner says. The
// host reports a run's enforcement as full only when the runner says full and every
// dimension the policy asks is full.
enum class Enforcement { full, partial };

// How much of one dimension of the policy a runner enforces (design.md §12).
enum class Level { none, partial, full };

// What a runner enforces of each dimension: `write` (file contents and directory entries
// only in the writable roots), `network` (with Network::none: no socket reaches outside
// the sandbox), `processes` (no signal, trace or view of processes outside it), `read`
// (no path of the policy's deny_read can be read or listed, nor a socket there reached)
// `protect` (no path of the policy's protect can be written, renamed, removed or have
// its mode changed), `lifetime` (no process of the run outlives it: the command's end, a
// time limit, or the host killed) and `limits` (the run's memory, processes, CPU time,
// file size and open files held where the policy sets them). `open` says, for each
// dimension below full, what is left open.
// A runner reports `lifetime` for what its own mechanism ends (a PID namespace of its
// own); the host raises it with its own supervision of the run, and sets `limits`, which
// the host alone enforces. A runner that leaves them as constructed says nothing of them:
// the host then takes its enforcement as its write level, and none of the others (as for
// a plugin older than ABI 1.5).
struct Dimensions {
    Level write = Level::full;
    Level network = Level::none;
    Level processes = Level::none;
    std::string open;
    Level read = Level::none;      // ABI 1.7
    Level protect = Level::none;   // ABI 1.7
    Level lifetime = Level::none;  // ABI 1.10
    Level limits = Level::none;    // the host's; never a runner's
    // ABI 1.12: how much of Policy::read_scope the runner enforces; none (as constructed)
    // where it did not apply it, and the host then gives it again as deny_read entries.
    Level read_scope = Level::none;
};

// Whether `path` is `root` or lies beneath it, component by component (both absolute and
// resolved): the one containment rule of confine, for the host and for runners.
inline bool is_within(const std::filesystem::path& path, const std::filesystem::path& root) {
    auto p = path.begin();
    for (auto r = root.begin(); r != root.end(); ++r, ++p) {
        if (r->empty()) continue;  // a trailing separator
        if (p == path.end() || *p != *r) return false;
    }
    return true;
}

// The places every sandbox confine creates may write, whatever its policy (POSIX): the
// host's /tmp (unless a run gets its own) and /dev/shm. A run adds its workspace and
// writable roots. Nothing confine executes, loads or reads as configuration may lie in
// one (trust_posix.hpp), and protecting a path outside all of them changes nothing.
inline const std::vector<std::filesystem::path>& always_writable_places() {
    static const std::vector<std::filesystem::path> places{"/tmp", "/dev/shm"};
    return places;
}

// What one call may do. Passed with every call; never stored by a provider or a runner.
// Paths are absolute; a runner receives them canonical (every link resolved).
struct Policy {
    Mode mode = Mode::workspace_write;
    std::filesystem::path workspace;               // required for workspace-write; empty in read-only
    std::vector<std::filesystem::path> writable;   // extra writable roots (workspace-write only)
    Network network = Network::none;
    Tmp tmp = Tmp::unsaid;  // which /tmp is asked for (ABI 1.6); unsaid: either
    // Whether the command's standard descriptors include the caller's terminal (ABI 1.6):
    // set by the host for a foreground run at a terminal, never for a background one. A
    // runner may then grant access to that terminal, and only then.
    bool terminal = false;
    // With `terminal`: that terminal is a pseudo-terminal of the run's own, not the
    // caller's (the host relays between the two, docs/design.md §7). The command's
    // standard descriptors are its slave, which is also its controlling terminal (/dev/tty);
    // a runner grants /dev/tty and nothing of the caller's. A runner that starts the
    // command in a session of its own hands it that terminal in the new session.
    bool own_terminal = false;
    // What the command may neither read nor list, and what stays read-only inside the
    // writable roots (ABI 1.7, docs/design.md §12). A runner receives both canonical and
    // existing, and no denied path is a writable root or above one. A host program may
    // leave them empty: the provider adds the configuration's ([policy] deny_read, protect).
    std::vector<std::filesystem::path> deny_read;
    std::vector<std::filesystem::path> protect;
    // Where the command will run (ABI 1.8): a host program leaves it empty for the current
    // directory, which the provider then names, canonical; one that runs the command
    // elsewhere (RunOptions::working_directory) names the same directory here. In
    // read-only mode a runner that must grant reads (AppContainer) grants it.
    std::filesystem::path working_directory;
    // With Network::proxy (ABI 1.11): the TCP port of the run's proxy on the loopback the
    // command sees (127.0.0.1). A runner that keeps the host's network (Landlock) lets the
    // command connect to that port and no other; one that gives the command a network
    // namespace of its own binds that port on the namespace's loopback and hands the
    // listening socket to the host over the {proxy-fd} placeholder's descriptor.
    std::uint16_t proxy_port = 0;
    // With Network::proxy: the hosts the proxy lets the command reach, canonical
    // (confine/allow_hosts.hpp). The host's: not carried to a runner, which has nothing to
    // do with them.
    std::vector<std::string> allow_hosts;
    // Scoped reads (ABI 1.12): empty, the command reads everything but deny_read; else
    // the only places it may read, canonical and existing, none beneath another — the
    // system's directories, the writable roots, where it runs, the read roots — with
    // deny_read still applied within them. A runner that applies it says so in
    // Dimensions::read_scope (bwrap_profile() binds only these; Landlock grants only these).
    std::vector<std::filesystem::path> read_scope;
};

// A probe's answer: whether the runner works on this machine, and how completely.
struct Verdict {
    enum class Kind { unusable, full, partial };
    Kind kind = Kind::unusable;
    std::string reason;  // why unusable; for usable verdicts an optional note

    bool usable() const noexcept { return kind != Kind::unusable; }

    static Verdict full(std::string note = {}) { return {Kind::full, std::move(note)}; }
    static Verdict partial(std::string note = {}) { return {Kind::partial, std::move(note)}; }
    static Verdict unusable(std::string reason) { return {Kind::unusable, std::move(reason)}; }
};

// What a short command run with a time limit did: what the host's run_probe service
// tells a runner of its probe command (Host::run_probe), and what the host's own probes
// observe. Output is captured up to a limit (64 KiB for run_probe).
struct ProbeRun {
    bool spawned = false;  // false: it could not be started, spawn_errno says why
    int spawn_errno = 0;
    bool exited = false;   // it exited normally: exit_code is valid
    int exit_code = -1;
    int signal = 0;        // the signal that ended it when it did not exit normally
    bool timed_out = false;  // the time limit killed its whole process group
    std::string stdout_text;
    std::string stderr_text;
};

// How the classifier tells a sandbox failure from the command's own failure when no
// attestation says whether the command ran (design.md §5).
struct FailureRule {
    // The exit statuses at which a fatal line is evidence of a sandbox failure; empty:
    // a fatal line is evidence at any status. Not "statuses that are fine": at a status
    // outside them no line is evidence.
    std::vector<std::int32_t> evidence_exit_codes;
    std::vector<std::string> fatal_signatures;     // case-insensitive substrings, per stderr line
    std::vector<std::string> informational_lines;  // exact whole lines, never evidence

    // The older name of evidence_exit_codes.
    [[deprecated("use evidence_exit_codes")]] std::vector<std::int32_t>& allowed_exit_codes() { return evidence_exit_codes; }
    [[deprecated("use evidence_exit_codes")]] const std::vector<std::int32_t>& allowed_exit_codes() const { return evidence_exit_codes; }
};

// How the host learns, out of band, that the runner reached the command (§6).
struct Attestation {
    enum class Kind { none, exec, status_fd };
    Kind kind = Kind::none;
    // exec: the command is the runner process's Nth execve, counting the runner's own as
    // 1; the host checks that this exec runs the command's own file and fails closed if not.
    std::uint32_t exec_index = 0;
    // status_fd: argv[status_argument] becomes the number of a descriptor the runner
    // reports on; the command ran iff a line written there contains status_marker.
    std::uint32_t status_argument = 0;
    std::string status_marker;
    // status_fd, optional: the key after which the runner writes the command's process
    // ID there; forwarded signals then go to the command.
    std::string status_pid_key;

    static Attestation none() { return {}; }
    static Attestation exec(std::uint32_t index) { return {Kind::exec, index, 0, {}, {}}; }
    static Attestation status_fd(std::uint32_t argument, std::string marker, std::string pid_key = {}) {
        return {Kind::status_fd, 0, argument, std::move(marker), std::move(pid_key)};
    }
};

// Confinement the host can apply to a process of its own (the child between fork and
// exec, or the caller itself) instead of running the runner's argv. `apply` is
// async-signal-safe and allocates nothing; 0 means the calling process is confined,
// otherwise `error` holds one line saying why (see confine_wrap_result.in_process_apply).
struct InProcess {
    std::int32_t (*apply)(void* state, char* error, std::size_t error_size) = nullptr;
    void* state = nullptr;
    void (*release)(void* state) = nullptr;  // the plugin's: called when its result is freed

    explicit operator bool() const noexcept { return apply != nullptr; }
};

// What common tools print when the network they reach for is not there: a name that
// does not resolve in curl's, git's and cargo's words ("Could not resolve host: H"),
// glibc's (pip's "[Errno -3] Temporary failure in name resolution", "Name or service not
// known"), node's (npm's "getaddrinfo EAI_AGAIN H", "getaddrinfo ENOTFOUND H") and apt's
// ("Temporary failure resolving 'H'"); a connection refused, Windows' socket refusal;
// curl's, git's, pip's and npm's words for the run's proxy refusing a host
// (Network::proxy), and apt's (its 403 from the proxy on 127.0.0.1); pip's for an index it
// could not reach at all. For the denial dialect of a runner that confines the network (none or proxy), where
// such a line is the sandbox's doing; a runner that leaves the network open adds none of
// them. Each is one more search through the command's stderr: as few as cover the words.
inline std::vector<std::string> network_denial_signatures() {
    return {"could not resolve host", "temporary failure in name resolution", "name or service not known", "getaddrinfo e",
            "temporary failure resolving", "network is unreachable", "couldn't connect to server", "no such host is known",
            "forbidden by its access permissions", "403 from proxy", "tunnel failed, response 403", "tunnel connection failed: 403",
            "403 403 forbidden", "403  forbidden [ip: 127.0.0.1", "(from versions: none)"};
}

// What a runner answers to wrap(): how to run the command confined, and how to judge
// the run afterwards.
struct WrapResult {
    std::vector<std::string> argv;  // the runner's argv + "--" + the command's argv
    Enforcement enforcement = Enforcement::full;  // partial lowers the run's (see Enforcement)
    // The runner's denial dialect: a failed command's first stderr line that carries one
    // of these (case-insensitive) is the run's denial hint. The errors the mechanism gives
    // wherever it refuses (Landlock's EACCES, a read-only bind's EROFS); errors that are a
    // refusal only for a path the policy denies or protects (ENOENT, EBUSY) the host
    // adds itself, for a line that names such a path (confine-plugin(7), DENIAL DIALECT).
    std::vector<std::string> denial_signatures;
    FailureRule failure_rule;
    Attestation attestation;
    InProcess in_process;
    Dimensions dimensions;  // what this wrap enforces of each dimension (ABI 1.5)
    Tmp tmp = Tmp::unsaid;  // which /tmp the command gets (ABI 1.6)
    Loopback loopback = Loopback::unsaid;  // with the network none, the command's loopback (ABI 1.13)
};

}  // namespace confine::sdk
