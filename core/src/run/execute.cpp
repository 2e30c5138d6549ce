#include <confine/execute.hpp>
#include <confine/managed.hpp>
#include <confine/loader_environment.hpp>
#include <confine/provider.hpp>

#include "classify.hpp"
#include "completed_wrap.hpp"
#include "git_guard.hpp"
#include "protect_watch.hpp"
#include "log.hpp"
#include "executor.hpp"
#include "packages.hpp"
#include "proxy_run.hpp"
#include "run_limits.hpp"

#if defined(_WIN32)
#include <io.h>
#define isatty _isatty
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string_view>

#ifndef SIGKILL
#define SIGKILL 9  // Windows: any signal ends the run's job
#endif
#include <thread>

namespace confine {
namespace {

// What a run returns when nothing could be wrapped: the command never ran.
Outcome unavailable(const Provider& provider, const Error& error) {
    Outcome out;
    out.kind = OutcomeKind::sandbox_unavailable;
    out.basis = Basis::selection;
    out.evidence = error.message;
    if (const auto& s = provider.selection(); s.runner) out.runner = *s.runner;
    return out;
}

// The run's limits: the call's over the configuration's, how this machine holds them
// (decided once, before anything runs), said in the wrap's dimensions; an error when
// that is below the configuration's minimum. nullptr when the run has none.
std::expected<std::shared_ptr<const detail::RunLimits>, Error> run_limits(const Provider& provider, const RunOptions& options, WrapResult& wrapped) {
    auto limits = detail::prepare_run_limits(options.limits.over(provider.config().limits));
    if (!limits) return nullptr;
    wrapped.limits_asked = true;
    wrapped.dimensions.limits = limits->level;
    if (!limits->open.empty()) wrapped.dimensions.open += (wrapped.dimensions.open.empty() ? "" : "; ") + limits->open;
    if (limits->level != Level::full) wrapped.enforcement = Enforcement::partial;
    const Minimum minimum = provider.config().minimums.limits;
    const bool meets = minimum == Minimum::best_effort || limits->level == Level::full || (minimum == Minimum::partial && limits->level == Level::partial);
    if (!meets)
        return std::unexpected(Error{ErrorCode::sandbox_unavailable,
                                     "limits are held at level " + std::string(to_string(limits->level)) + ", below the minimum " +
                                         (minimum == Minimum::full ? "full" : "partial") + " ([policy.enforcement] limits): " +
                                         (limits->open.starts_with("limits: ") ? limits->open.substr(8) : limits->open)});
    return limits;
}

detail::ExecSpec spec_for(const WrapResult& wrapped, const RunOptions& options, bool background, std::filesystem::path command_file) {
    detail::ExecSpec spec;
    spec.command_file = std::move(command_file);
    if (wrapped.in_process) {
        // The fast path: the child confines itself and executes the command directly.
        if (detail::log_enabled(spdlog::level::debug)) {
            const std::vector<std::string> runner(wrapped.argv.begin(), wrapped.argv.begin() + static_cast<std::ptrdiff_t>(wrapped.command_index));
            detail::log_debug("confined in process by {}, with what its runner would be given: {}", wrapped.runner, detail::shell_words(runner));
        }
        spec.argv.assign(wrapped.argv.begin() + static_cast<std::ptrdiff_t>(wrapped.command_index), wrapped.argv.end());
        spec.in_process = &wrapped.in_process;
    } else {
        spec.argv = wrapped.argv;
        spec.attestation = wrapped.attestation;
        spec.placeholders = wrapped.placeholders;  // the runner's own arguments: the command's pass verbatim
    }
    spec.environment = options.environment;
    spec.pass_fds = options.pass_fds;
    spec.working_directory = options.working_directory;
    spec.background = background;
    // The failure rule needs stderr when nothing attests. Where something attests, only
    // a denial hint would: a terminal stays a terminal, and without a hint wanted (or a
    // dialect to find one in) the command writes to stderr itself.
    const bool attests = wrapped.in_process || wrapped.attestation.kind != Attestation::Kind::none;
    const bool hint = options.denial_hint && (!wrapped.denial_signatures.empty() || !wrapped.denial_paths.empty());
    spec.copy_stderr = !background && (!attests || (hint && !::isatty(2)));
    // Where stdout and stderr go to one place, a command's two streams stay in the order
    // it wrote them only if they travel together: one pipe, read here whole. Only where
    // the runner attests, so that what the command prints never decides the outcome; where
    // the rule decides it, a fatal signature must come from stderr alone.
    spec.merge_output = spec.copy_stderr && attests && detail::standard_outputs_shared();
    spec.timeout = options.timeout;
    spec.kill_after = options.kill_after.value_or(std::chrono::seconds(5));
    spec.supervised = wrapped.host_supervised;
    spec.on_started = options.on_started;
    spec.on_command_awaited = options.on_command_awaited;
    spec.failure_rule = wrapped.failure_rule;
    spec.denial_signatures = wrapped.denial_signatures;
    // The host's supervisor, where it holds the run in a PID namespace, refuses a signal
    // out of it as a missing process: words of none of the runner's own (Landlock's is
    // EPERM), and only for a run under it (not for a host that runs the argv itself).
    if (wrapped.host_supervised && detail::run_supervision(wrapped).pid_namespace)
        for (const char* s : {"no such process", "esrch"})
            if (std::find(spec.denial_signatures.begin(), spec.denial_signatures.end(), s) == spec.denial_signatures.end())
                spec.denial_signatures.emplace_back(s);
#if defined(__linux__)
    // A confined command holds no capability on any Linux runner, root's included: apt,
    // as root, drops to its _apt user before each download (setgroups first), and that
    // refusal is the sandbox's (Outcome::denial_advice names the apt option).
    spec.denial_signatures.emplace_back("setgroups (1: operation not permitted)");
#endif
    spec.denial_paths = wrapped.denial_paths;
    spec.capture = options.capture;
    spec.network_proxy = wrapped.policy.network == Network::proxy;
    if (wrapped.proxy) spec.proxy_fd = wrapped.proxy->sandbox_end();
    return spec;
}

// What the run's proxy saw, in the outcome. A sandbox that was to hand the proxy its
// listener and never did stopped before its command (confine-loopback failed): whatever
// the runner attested, that run was the sandbox's failure, not the command's.
void settle_proxy(const WrapResult& wrapped, Outcome& outcome) {
    if (!wrapped.proxy) return;
    const detail::ProxyReport& report = wrapped.proxy->finish();
    outcome.network_proxied = true;
    outcome.network_requests = report.requests;
    outcome.network_over_limit = report.over_limit;
    if (!report.read) detail::log_warn("the run's proxy left no report: {}", report.problem);
    if (report.read && wrapped.proxy->receiving() && report.listeners == 0 && outcome.kind != OutcomeKind::sandbox_unavailable) {
        outcome.kind = OutcomeKind::sandbox_unavailable;
        outcome.evidence = "the sandbox never handed the run's proxy its loopback listener (confine-loopback did not reach the command)";
        outcome.denial_hint.reset();
    }
}

// The command as the runner will look it up, checked before anything runs.
#if !defined(_WIN32)
// A script's interpreter, checked as the kernel will look it up: a missing one is the
// command's own fault (127, as with env), not the sandbox's.
std::optional<Error> check_interpreter(const std::string& name, std::filesystem::path program, const RunOptions& options) {
    if (program.is_relative() && !options.working_directory.empty()) program = options.working_directory / program;
    char head[256];
    ssize_t n = -1;
    // Without blocking on, or becoming the terminal of, something that is not a file.
    if (const int fd = ::open(program.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); fd >= 0) {
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) n = ::read(fd, head, sizeof head);
        ::close(fd);
    }
    if (n < 3 || head[0] != '#' || head[1] != '!') return std::nullopt;  // not a script, or unreadable: the kernel says
    std::string_view line(head + 2, static_cast<std::size_t>(n - 2));
    line = line.substr(0, line.find('\n'));
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) return std::nullopt;
    const std::string interpreter(line.substr(start, line.find_first_of(" \t", start) - start));
    if (interpreter.empty() || interpreter.front() != '/') return std::nullopt;
    if (::access(interpreter.c_str(), F_OK) != 0)
        return Error{ErrorCode::command_not_found, name + ": bad interpreter " + interpreter + ": No such file or directory"};
    if (::access(interpreter.c_str(), X_OK) != 0)
        return Error{ErrorCode::command_not_executable, name + ": bad interpreter " + interpreter + ": Permission denied"};
    return std::nullopt;
}
#endif


}  // namespace

namespace {
// Whether one of this process's standard descriptors is a terminal.
bool has_terminal() {
#if defined(_WIN32)
    return ::_isatty(0) || ::_isatty(1) || ::_isatty(2);
#else
    return ::isatty(0) == 1 || ::isatty(1) == 1 || ::isatty(2) == 1;
#endif
}
}  // namespace

namespace {

// The command as resolve_command() gives it, and the file found for it (absolute; empty
// for an empty argv), which exec attestation checks the attested exec against.
struct ResolvedCommand {
    std::vector<std::string> argv;
    std::filesystem::path file;
};

std::expected<ResolvedCommand, Error> resolve(std::span<const std::string> argv, const RunOptions& options) {
    std::vector<std::string> resolved(argv.begin(), argv.end());
    if (argv.empty()) return ResolvedCommand{std::move(resolved), {}};  // the policy check names it
    const std::string& name = argv.front();
    if (name.empty()) return std::unexpected(Error{ErrorCode::command_not_found, "'': No such file or directory"});
#if defined(_WIN32)
    auto program = detail::resolve_windows_program(name, options.environment, options.working_directory);
    if (!program) {
        const bool missing = program.error().reason == windows::ProgramRefusal::Reason::not_found;
        return std::unexpected(Error{missing ? ErrorCode::command_not_found : ErrorCode::command_not_executable, program.error().message});
    }
    resolved.front() = *program;
    return ResolvedCommand{std::move(resolved), *program};
#else
    int error = 0;
    if (auto program = detail::find_program(name, options.environment, options.working_directory, error)) {
        if (auto bad = check_interpreter(name, *program, options)) return std::unexpected(*bad);
        std::filesystem::path file(*program);
        if (file.is_relative() && !options.working_directory.empty()) file = options.working_directory / file;
        std::error_code ec;
        if (file.is_relative()) file = std::filesystem::absolute(file, ec);
        return ResolvedCommand{std::move(resolved), std::move(file)};
    }
    if (error == EACCES) return std::unexpected(Error{ErrorCode::command_not_executable, name + ": Permission denied"});
    if (name.find('/') != std::string::npos) return std::unexpected(Error{ErrorCode::command_not_found, name + ": No such file or directory"});
    return std::unexpected(Error{ErrorCode::command_not_found, name + ": command not found"});
#endif
}

}  // namespace

std::expected<std::vector<std::string>, Error> resolve_command(std::span<const std::string> argv, const RunOptions& options) {
    auto resolved = resolve(argv, options);
    if (!resolved) return std::unexpected(resolved.error());
    return std::move(resolved->argv);
}

std::optional<Error> check_command(std::span<const std::string> argv, const RunOptions& options) {
    auto resolved = resolve_command(argv, options);
    if (!resolved) return resolved.error();
    return std::nullopt;
}


std::expected<FilteredEnvironment, Error> run_environment(const Provider& provider, const RunOptions& options) {
    if (options.environment) return filter_environment(provider.config().environment, *options.environment, options.environment_overrides);
    return filter_environment(provider.config().environment, current_environment(), options.environment_overrides);
}

void prepare_packages(const Provider& provider, const WrapResult& wrapped, std::span<const std::string> environment_overrides,
                      std::vector<std::string>& environment) {
    std::vector<std::string> named;
    for (const auto& o : environment_overrides) named.push_back(o.substr(0, o.find('=')));
    for (const auto& [name, value] : provider.config().environment.set) named.push_back(name);
    const std::span<const std::string> command(wrapped.argv);
    detail::apply_packages(provider.config().packages, wrapped.policy, command.subspan(std::min(wrapped.command_index, command.size())), named,
                           environment);
}

std::optional<Error> check_pass_fds(std::span<const int> pass_fds, bool open_here) {
    for (std::size_t i = 0; i < pass_fds.size(); ++i) {
        const int fd = pass_fds[i];
        const std::string named = "descriptor " + std::to_string(fd) + " to pass on";
#if defined(_WIN32)
        (void)open_here;
        return Error{ErrorCode::usage, named + ": passing descriptors on is not available on Windows"};
#else
        if (fd >= 0 && fd <= 2) return Error{ErrorCode::usage, named + ": 0, 1 and 2 are the command's already"};
        if (fd < 0 || (open_here && ::fcntl(fd, F_GETFD) < 0)) return Error{ErrorCode::usage, named + ": not an open descriptor"};
        if (std::find(pass_fds.begin(), pass_fds.begin() + static_cast<std::ptrdiff_t>(i), fd) != pass_fds.begin() + static_cast<std::ptrdiff_t>(i))
            return Error{ErrorCode::usage, named + ": named twice"};
#endif
    }
    return std::nullopt;
}

namespace {

// `options` with the environment the runner is to get in place of the one given, and the
// names that left it; the names are logged, never a value.
std::expected<RunOptions, Error> with_run_environment(const Provider& provider, const RunOptions& options, std::vector<std::string>& removed) {
    auto env = run_environment(provider, options);
    if (!env) return std::unexpected(env.error());
    if (detail::log_enabled(spdlog::level::debug))
        detail::log_debug("environment: inherit {}; removed {}; set {}", to_string(provider.config().environment.inherit),
                          env->removed.empty() ? std::string("(none)") : detail::shell_words(env->removed) + " (their values are not passed on)",
                          env->set.empty() ? std::string("(none)") : detail::shell_words(env->set));
    if (auto bad = check_pass_fds(options.pass_fds)) return std::unexpected(*bad);
    if (detail::log_enabled(spdlog::level::debug)) {
        std::string passed;
        for (const int fd : options.pass_fds) passed += (passed.empty() ? "" : " ") + std::to_string(fd);
        detail::log_debug("descriptors: the command gets 0, 1, 2{}; every other one of this process is closed at the exec",
                          passed.empty() ? std::string() : " and " + passed + " (passed on)");
    }
    RunOptions filtered = options;
    // The operator's time limit, where the call sets none.
    if (!filtered.timeout) filtered.timeout = provider.config().timeout;
    if (!filtered.kill_after) filtered.kill_after = provider.config().kill_after;
    filtered.environment = std::move(env->variables);
    filtered.environment_overrides.clear();
    removed = std::move(env->removed);
    return filtered;
}

}  // namespace

namespace {

// What run() and spawn() make ready, in this one step, before anything starts: the run's
// options (its environment filtered, the operator's time limit), the command looked up,
// the policy completed for the run and wrapped, and the run's limits. `wrapped` empty:
// nothing can run confined, and `unavailable` is the outcome that says why.
struct Prepared {
    RunOptions options;
    std::vector<std::string> removed;  // the names the environment filter left out
    std::filesystem::path command_file;
    std::optional<WrapResult> wrapped;
    std::shared_ptr<const detail::RunLimits> limits;
    Outcome unavailable;
    bool own_terminal = false;  // the command is to get a pseudo-terminal of its own

    // `outcome`, with what the preparation knows of the run: the names the environment
    // filter removed, the descriptors passed on.
    Outcome finished(Outcome outcome) {
        outcome.environment_removed = std::move(removed);
        outcome.passed_fds = options.pass_fds;
        return outcome;
    }
};

// `variables` (NAME=VALUE each) set in `environment`, each in place of one of its name.
void set_variables(std::vector<std::string>& environment, const std::vector<std::string>& variables) {
    for (const auto& v : variables) {
        const std::string name = v.substr(0, v.find('=') + 1);
        std::erase_if(environment, [&](const std::string& e) { return e.starts_with(name); });
        environment.push_back(v);
    }
}

// Whether the runner's own arguments hand the sandbox's listener to the proxy.
bool hands_listener(const WrapResult& wrapped) {
    const auto& found = wrapped.placeholders;
    return std::any_of(found.begin(), found.end(), [](const Placeholder& p) { return p.kind == Placeholder::Kind::proxy_fd; });
}

// With the network through the run's proxy, the proxy opened before the wrap and its
// port placed in the completed policy (Policy::proxy_port); null for any other network.
std::expected<std::shared_ptr<detail::ProxyRun>, Error> open_proxy(const Provider& provider, Policy& completed) {
    if (completed.network != Network::proxy || completed.allow_hosts.empty()) return nullptr;
    auto proxy = detail::ProxyRun::open(completed.allow_hosts, provider.plugin_dirs(), detail::log_enabled(spdlog::level::debug));
    if (proxy) completed.proxy_port = (*proxy)->port();
    return proxy;
}

// The proxy started as the runner reaches it, and the command's environment naming it.
std::optional<Error> start_proxy(WrapResult& wrapped, const std::shared_ptr<detail::ProxyRun>& proxy, bool judging_only,
                                 std::vector<std::string>& environment) {
    std::vector<std::filesystem::path> roots;
    if (wrapped.policy.mode == Mode::workspace_write) roots.push_back(wrapped.policy.workspace);
    roots.insert(roots.end(), wrapped.policy.writable.begin(), wrapped.policy.writable.end());
    if (auto bad = proxy->judge(roots)) return bad;
    if (!judging_only)
        if (auto bad = proxy->start(hands_listener(wrapped))) return bad;
    wrapped.proxy = proxy;
    set_variables(environment, detail::proxy_environment(proxy->port(), wrapped.policy.allow_hosts));
    return std::nullopt;
}

// The caller's errors (an environment, a descriptor, a command, a policy or a
// configuration that is wrong) are returned as they are: nothing runs.
std::expected<Prepared, Error> prepare(const Provider& provider, const PolicyRequest& request, std::span<const std::string> argv,
                                       const RunOptions& given, bool background, bool judging_only = false) {
    Prepared p;
    // What the call asks beyond its policy, within the managed layer (its policy is the
    // wrap's to judge).
    ManagedAsk ask;
    ask.timeout = given.timeout;
    ask.limits = given.limits;
    ask.env = given.environment_overrides;
    if (auto why = managed_crossing(provider.config(), ask, {{"timeout", "RunOptions::timeout"}, {"limits", "RunOptions::limits"}, {"env", "the override"}}))
        return std::unexpected(Error{ErrorCode::config_managed, *why});
    // The command is looked up, and its runner started, with the environment it gets.
    auto filtered = with_run_environment(provider, given, p.removed);
    if (!filtered) return std::unexpected(filtered.error());
    p.options = std::move(*filtered);
    auto command = resolve(argv, p.options);
    if (!command) return std::unexpected(command.error());
    p.command_file = std::move(command->file);
    // A foreground run gets this process's standard descriptors: its terminal, if any. A
    // background run has none (a session of its own, stdin on /dev/null). Where the
    // command runs is what a runner grants in read-only mode (ABI 1.8).
    if (background && request.terminal.value_or(false))
        return std::unexpected(Error{ErrorCode::invalid_policy, "a background run has no terminal to give the command (PolicyRequest::terminal)"});
    RunContext context{!background && has_terminal(), p.options.working_directory};
    // A terminal of the run's own (RunOptions::own_terminal): the caller's is none of the
    // command's then, and a runner grants that one alone.
    context.own_terminal = p.own_terminal = context.terminal && p.options.own_terminal && detail::can_give_own_terminal();
    // The run's policy, completed once: every later step reads this one.
    Policy completed = provider.complete(request, context);
    auto proxy = open_proxy(provider, completed);
    if (!proxy) {
        p.unavailable = unavailable(provider, proxy.error());
        return p;
    }
    // Nothing started before the sandbox may load a library the command could rewrite.
    if (sets_loader_variable(*p.options.environment))
        if (auto bad = loader_environment_problem(*p.options.environment, completed, p.options.working_directory)) return std::unexpected(*bad);
    auto wrapped = detail::CompletedWrap::wrap(provider, request, completed, command->argv);
    if (wrapped) {
        auto limits = run_limits(provider, p.options, *wrapped);
        if (limits) p.limits = std::move(*limits);
        else wrapped = std::unexpected(limits.error());
    }
    if (wrapped && *proxy)
        if (auto bad = start_proxy(*wrapped, *proxy, judging_only, *p.options.environment)) wrapped = std::unexpected(*bad);
    if (!wrapped) {
        // A bad policy, or a configuration that is wrong: the caller's to fix, said as it is.
        if (wrapped.error().code == ErrorCode::invalid_policy || is_configuration_error(wrapped.error().code)) return std::unexpected(wrapped.error());
        p.unavailable = unavailable(provider, wrapped.error());
        return p;
    }
    p.wrapped = std::move(*wrapped);
    // The package caches are made in the workspace: for a run, not for a judgement of one
    // (check_run, probe), which leaves nothing behind.
    if (!judging_only) prepare_packages(provider, *p.wrapped, given.environment_overrides, *p.options.environment);
    return p;
}

// The name the command's end is told by: its program's last component.
std::string command_name(std::span<const std::string> argv) {
    if (argv.empty()) return "the command";
    const std::string& program = argv.front();
    const std::size_t slash = program.find_last_of('/');
    return slash == std::string::npos || slash + 1 == program.size() ? program : program.substr(slash + 1);
}

}  // namespace

std::expected<Outcome, Error> run(const Provider& provider, const PolicyRequest& policy, std::span<const std::string> argv,
                                  const RunOptions& given) {
    auto prepared = prepare(provider, policy, argv, given, false);
    if (!prepared) return std::unexpected(prepared.error());
    Prepared& p = *prepared;
    if (!p.wrapped) return p.finished(std::move(p.unavailable));
    WrapResult& wrapped = *p.wrapped;
    const RunOptions& options = p.options;
    if (options.on_wrapped) options.on_wrapped(wrapped);
    // In place nothing is left to end what the command starts: only where the operator
    // accepts that, and no time limit is set. Nor limits (a run's own, with their cgroup).
    const bool lifetime_waived = !wrapped.host_supervised || provider.config().minimums.lifetime == Minimum::best_effort;
    // Nor the run's proxy, which lives as long as the run and reports at its end.
    // Nor a check after the run (git's, the protected paths'): nothing is left to make it.
    const bool checked_after = wrapped.git_watch || wrapped.protect_watch;
    // Nor a terminal of the run's own, which this process relays.
    const bool own_terminal = p.own_terminal;
    const bool in_place = options.exec_in_place && wrapped.in_process && lifetime_waived && !options.timeout && !p.limits && !wrapped.proxy &&
                          !own_terminal;
    if (in_place && checked_after) detail::log_debug("not executed in place: the run-end check of the protected paths is made after the run");
    if (in_place && !checked_after) {
        wrapped.dimensions.lifetime = Level::none;
        detail::log_debug("lifetime none: the command is executed in place of this process, and nothing is left to end what it starts");
        detail::ExecSpec spec = spec_for(wrapped, options, false, p.command_file);
        return p.finished(classify(wrapped, detail::exec_in_place(spec)));  // only if it failed
    }
    detail::RunControl control;
    detail::ExecSpec spec = spec_for(wrapped, options, false, p.command_file);
    spec.limits = std::move(p.limits);
    spec.own_terminal = own_terminal;
    detail::Executed executed = detail::execute(spec, control);
    const Limits limits = spec.limits ? spec.limits->limits : Limits{};
    spec.limits.reset();  // the run's cgroup, if any: what is left in it killed, and removed
    Outcome outcome = classify(wrapped, executed.observed);
    outcome.limit_note = detail::limit_note(outcome, executed.observed, limits, spec.timeout, spec.kill_after, command_name(argv));
    outcome.own_terminal = executed.own_terminal;
    settle_proxy(wrapped, outcome);
    outcome.denial_advice = denial_advice(wrapped, outcome);
    // Nothing of the run is left to plant anything once the runner is gone.
    outcome.set_aside = run_end_check(wrapped);
    // What the runner wrote before its command existed was held back: when it stopped
    // before the command, that is its own, and the outcome's evidence carries it.
    const bool runner_stopped = outcome.kind == OutcomeKind::sandbox_unavailable && outcome.basis == Basis::attestation;
    if (!runner_stopped) detail::copy_to_stderr(executed.held_stderr);
    return p.finished(std::move(outcome));
}

std::optional<Error> check_run(const Provider& provider, const PolicyRequest& policy, std::span<const std::string> argv,
                               const RunOptions& given) {
    auto prepared = prepare(provider, policy, argv, given, false, true);
    if (!prepared) return prepared.error();
    if (!prepared->wrapped) return Error{ErrorCode::sandbox_unavailable, prepared->unavailable.evidence};
    return std::nullopt;
}

struct Process::Impl {
    detail::RunControl control;
    std::thread thread;
    std::mutex mutex;
    bool joined = false;
    Finished result;
};

Process::Process(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Process::Process(Process&&) noexcept = default;
Process& Process::operator=(Process&&) noexcept = default;

Process::~Process() {
    if (!impl_) return;
    std::lock_guard lock(impl_->mutex);
    if (!impl_->joined && impl_->thread.joinable()) {
        impl_->control.signal(SIGKILL);
        impl_->thread.join();
        impl_->joined = true;
    }
}

void Process::kill(int signal) { impl_->control.signal(signal); }

const Finished& Process::wait() {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->joined && impl_->thread.joinable()) impl_->thread.join();
    impl_->joined = true;
    return impl_->result;
}

bool Process::finished() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->joined || !impl_->thread.joinable();
}

std::vector<SetAside> run_end_check(const WrapResult& wrapped) {
    std::vector<SetAside> out;
    if (wrapped.git_watch) out = detail::settle_git(*wrapped.git_watch);
    if (wrapped.protect_watch)
        for (auto& s : detail::settle_protected(*wrapped.protect_watch))
            if (std::none_of(out.begin(), out.end(), [&](const SetAside& o) { return o.path == s.path; })) out.push_back(std::move(s));
    return out;
}

std::expected<Process, Error> spawn(const Provider& provider, const PolicyRequest& policy, std::span<const std::string> argv,
                                    const RunOptions& given) {
    auto prepared = prepare(provider, policy, argv, given, true);
    if (!prepared) return std::unexpected(prepared.error());
    auto impl = std::make_shared<Process::Impl>();
    if (!prepared->wrapped) {
        impl->result.outcome = prepared->finished(std::move(prepared->unavailable));
        impl->joined = true;
        return Process(std::move(impl));
    }
    if (prepared->options.on_wrapped) prepared->options.on_wrapped(*prepared->wrapped);
    impl->thread = std::thread([impl_ptr = impl.get(), p = std::move(*prepared), name = command_name(argv)]() mutable {
        const WrapResult& wrap = *p.wrapped;
        detail::ExecSpec spec = spec_for(wrap, p.options, true, std::move(p.command_file));
        spec.limits = std::move(p.limits);
        detail::Executed executed = detail::execute(spec, impl_ptr->control);
        const Limits limits = spec.limits ? spec.limits->limits : Limits{};
        spec.limits.reset();  // the run's cgroup, if any: what is left in it killed, and removed
        impl_ptr->control.settle();
        Outcome outcome = classify(wrap, executed.observed);
        outcome.limit_note = detail::limit_note(outcome, executed.observed, limits, spec.timeout, spec.kill_after, name);
        settle_proxy(wrap, outcome);
        outcome.denial_advice = denial_advice(wrap, outcome);
        outcome.set_aside = run_end_check(wrap);
        impl_ptr->result.outcome = p.finished(std::move(outcome));
        impl_ptr->result.stdout_text = std::move(executed.stdout_text);
        impl_ptr->result.stderr_text = std::move(executed.stderr_text);
        impl_ptr->result.stdout_dropped = executed.stdout_dropped;
        impl_ptr->result.stderr_dropped = executed.stderr_dropped;
    });
    // Once spawn returns, kill() reaches the process.
    impl->control.wait_settled();
    return Process(std::move(impl));
}

}  // namespace confine
