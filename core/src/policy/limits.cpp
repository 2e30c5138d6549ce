#include <confine/limits.hpp>
#include <confine/config.hpp>

#include "run_limits.hpp"

#include <csignal>
#include <limits>

namespace confine {
namespace {

template <class L>
auto slot(L& limits, std::string_view name) -> decltype(&limits.memory) {
    if (name == "memory") return &limits.memory;
    if (name == "processes") return &limits.processes;
    if (name == "cpu") return &limits.cpu;
    if (name == "file-size") return &limits.file_size;
    if (name == "open-files") return &limits.open_files;
    return nullptr;
}

// A positive whole number, with a binary K, M or G where `sized`; nullopt if not one.
std::optional<std::uint64_t> amount(std::string_view text, bool sized) {
    std::uint64_t unit = 1;
    if (sized && !text.empty()) {
        const char last = text.back();
        unit = last == 'K' || last == 'k' ? 1ull << 10 : last == 'M' || last == 'm' ? 1ull << 20 : last == 'G' || last == 'g' ? 1ull << 30 : 1;
        if (unit != 1) text.remove_suffix(1);
    }
    if (text.empty() || text.size() > 19) return std::nullopt;
    std::uint64_t n = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (n == 0 || n > std::numeric_limits<std::uint64_t>::max() / unit) return std::nullopt;
    return n * unit;
}

}  // namespace

Limits Limits::over(const Limits& under) const {
    Limits out = *this;
    for (const std::string_view name : {"memory", "processes", "cpu", "file-size", "open-files"}) {
        auto& mine = *slot(out, name);
        if (!mine) mine = *slot(under, name);
    }
    return out;
}

std::optional<std::string> set_limit(Limits& limits, std::string_view name, std::string_view value, std::string_view subject) {
    auto* into = slot(limits, name);
    if (!into) return "unknown limit '" + std::string(name) + "' (known: " + std::string(limit_names) + ")";
    const std::string who(subject.empty() ? name : subject);
    const bool sized = name == "memory" || name == "file-size";
    const auto n = amount(value, sized);
    if (!n)
        return who + " must be a positive whole number" +
               (sized ? " of bytes (K, M, G: KiB, MiB, GiB)" : name == "cpu" ? " of seconds" : "") + ", not '" + std::string(value) + "'";
    if (*into) return who + " is limited twice";
    *into = *n;
    return std::nullopt;
}

std::string describe(const Limits& limits) {
    std::string out;
    for (const std::string_view name : {"memory", "processes", "cpu", "file-size", "open-files"})
        if (const auto& v = *slot(limits, name)) {
            if (!out.empty()) out += ' ';
            out.append(name).append("=").append(std::to_string(*v));
        }
    return out;
}

namespace detail {
namespace {

// A signal's name ("SIGKILL"), or "signal N".
std::string signal_name(int sig) {
    static const std::pair<int, const char*> names[] = {
        {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"}, {SIGABRT, "SIGABRT"}, {SIGSEGV, "SIGSEGV"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"},
#if !defined(_WIN32)
        {SIGKILL, "SIGKILL"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGHUP, "SIGHUP"}, {SIGQUIT, "SIGQUIT"}, {SIGBUS, "SIGBUS"},
        {SIGPIPE, "SIGPIPE"}, {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}, {SIGALRM, "SIGALRM"}, {SIGSYS, "SIGSYS"}, {SIGTRAP, "SIGTRAP"},
#endif
    };
    for (const auto& [n, name] : names)
        if (n == sig) return name;
    return "signal " + std::to_string(sig);
}

// A limit's value as --limit takes it: 50M, 1G, 64K, a number of bytes; 2s of CPU time.
std::string value_of(std::string_view name, std::uint64_t v) {
    if (name == "cpu") return std::to_string(v) + "s";
    if (name != "memory" && name != "file-size") return std::to_string(v);
    for (const auto& [shift, unit] : {std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}})
        if (v % (1ull << shift) == 0) return std::to_string(v >> shift) + unit;
    return std::to_string(v) + " bytes";
}

std::optional<std::uint64_t> value_in(const Limits& limits, std::string_view name) {
    if (name == "memory") return limits.memory;
    if (name == "processes") return limits.processes;
    if (name == "cpu") return limits.cpu;
    if (name == "file-size") return limits.file_size;
    if (name == "open-files") return limits.open_files;
    return std::nullopt;
}

// How the command ended: "sleep ended by SIGKILL", "sh exited 137 (128 + SIGKILL)".
std::string how_ended(const Outcome& outcome, std::string_view command) {
    std::string out(command);
    if (outcome.signal) return out += " ended by " + signal_name(*outcome.signal);
    if (!outcome.exit_code) return out += " ended";
    out += " exited " + std::to_string(*outcome.exit_code);
    if (*outcome.exit_code > 128 && *outcome.exit_code <= 128 + 64) out += " (128 + " + signal_name(*outcome.exit_code - 128) + ")";
    return out;
}

// The resource limit behind a limit that cannot be told.
const char* held_by(std::string_view name) {
    if (name == "memory") return " (RLIMIT_AS, each process's address space)";
    if (name == "processes") return " (RLIMIT_NPROC, the user's processes)";
    return " (RLIMIT_NOFILE, each process's descriptors)";
}

}  // namespace

std::string limit_note(const Outcome& outcome, const Observation& o, const Limits& limits, std::optional<std::chrono::milliseconds> timeout,
                       std::chrono::milliseconds kill_after, std::string_view command) {
    if (outcome.kind == OutcomeKind::sandbox_unavailable) return {};
    const std::string ended = how_ended(outcome, command);
    if (outcome.timed_out && timeout) {
        std::string line = "time limit " + format_duration(*timeout) + " reached: ";
#if defined(_WIN32)
        (void)kill_after;
        line += "the run was ended";
#else
        if (!o.timeout_killed) line += "the run got SIGTERM";
        else if (kill_after.count() > 0) line += "the run got SIGTERM, then SIGKILL " + format_duration(kill_after) + " later";
        else line += "the run got SIGKILL";
#endif
        return line + "; " + ended;
    }
    if (outcome.limit) {
        const auto v = value_in(limits, *outcome.limit);
        std::string line = *outcome.limit;
        line += " limit ";
        line += v ? value_of(*outcome.limit, *v) : std::string("?");
        line += " reached: ";
        line += o.limit_how;
        line += "; ";
        return line += ended;
    }
    if (outcome.limit_possible.empty()) return {};
    std::string line = ended + " under ", refused;
    for (std::size_t i = 0; i < outcome.limit_possible.size(); ++i) {
        const std::string& name = outcome.limit_possible[i];
        const auto v = value_in(limits, name);
        const char* between = i == 0 ? "" : i + 1 == outcome.limit_possible.size() ? " and " : ", ";
        line += between;
        line += name;
        line += " limit ";
        line += v ? value_of(name, *v) : std::string("?");
        line += held_by(name);
        refused += i == 0 ? "" : i + 1 == outcome.limit_possible.size() ? " or " : ", ";
        refused += name == "memory" ? "an allocation" : name == "processes" ? "a fork" : "an open";
    }
    line += outcome.limit_possible.size() == 1 ? ", which may have ended it: " : ", which may each have ended it: ";
    line += refused;
    line += " refused at a limit is an error the command sees, not a kill, so confinectl cannot tell";
    return line;
}

}  // namespace detail
}  // namespace confine
