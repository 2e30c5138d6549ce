#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include "executor.hpp"

#if defined(_WIN32)
#include <io.h>
#define isatty _isatty
#else
#include <unistd.h>
#endif

#include <cerrno>
#include <csignal>

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

detail::ExecSpec spec_for(const WrapResult& wrapped, const RunOptions& options, bool background) {
    detail::ExecSpec spec;
    if (wrapped.in_process) {
        // The fast path: the child confines itself and executes the command directly.
        spec.argv.assign(wrapped.argv.begin() + static_cast<std::ptrdiff_t>(wrapped.command_index), wrapped.argv.end());
        spec.in_process = &*wrapped.in_process;
    } else {
        spec.argv = wrapped.argv;
        spec.attestation = wrapped.attestation;
    }
    spec.environment = options.environment;
    spec.working_directory = options.working_directory;
    spec.background = background;
    // The failure rule needs stderr when nothing attests; a terminal stays a terminal
    // where attestation makes that possible.
    const bool attests = wrapped.in_process || wrapped.attestation.kind != Attestation::Kind::none;
    spec.copy_stderr = !background && (!attests || !::isatty(2));
    spec.timeout = options.timeout;
    spec.on_started = options.on_started;
    return spec;
}

// The command as the runner will look it up, checked before anything runs.
std::optional<Error> check_command(std::span<const std::string> argv, const RunOptions& options) {
    if (argv.empty() || argv.front().empty()) return std::nullopt;  // the policy check names it
    const std::string& name = argv.front();
    int error = 0;
    if (detail::find_program(name, options.environment, options.working_directory, error)) return std::nullopt;
    if (error == EACCES) return Error{ErrorCode::command_not_executable, name + ": Permission denied"};
    if (name.find('/') != std::string::npos) return Error{ErrorCode::command_not_found, name + ": No such file or directory"};
    return Error{ErrorCode::command_not_found, name + ": command not found"};
}

}  // namespace

std::expected<Outcome, Error> run(const Provider& provider, const Policy& policy, std::span<const std::string> argv,
                                  const RunOptions& options) {
    if (auto bad = check_command(argv, options)) return std::unexpected(*bad);
    auto wrapped = provider.wrap(policy, argv);
    if (!wrapped) {
        if (wrapped.error().code == ErrorCode::invalid_policy) return std::unexpected(wrapped.error());
        return unavailable(provider, wrapped.error());
    }
    if (options.exec_in_place && wrapped->in_process) {
        detail::ExecSpec spec = spec_for(*wrapped, options, false);
        return classify(*wrapped, detail::exec_in_place(spec));  // only if it failed
    }
    detail::RunControl control;
    detail::Executed executed = detail::execute(spec_for(*wrapped, options, false), control);
    return classify(*wrapped, executed.observed);
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

std::expected<Process, Error> spawn(const Provider& provider, const Policy& policy, std::span<const std::string> argv,
                                    const RunOptions& options) {
    if (auto bad = check_command(argv, options)) return std::unexpected(*bad);
    auto wrapped = provider.wrap(policy, argv);
    auto impl = std::make_shared<Process::Impl>();
    if (!wrapped) {
        if (wrapped.error().code == ErrorCode::invalid_policy) return std::unexpected(wrapped.error());
        impl->result.outcome = unavailable(provider, wrapped.error());
        impl->joined = true;
        return Process(std::move(impl));
    }
    impl->thread = std::thread([impl_ptr = impl.get(), wrap = std::move(*wrapped), options] {
        detail::Executed executed = detail::execute(spec_for(wrap, options, true), impl_ptr->control);
        impl_ptr->control.settle();
        impl_ptr->result.outcome = classify(wrap, executed.observed);
        impl_ptr->result.stdout_text = std::move(executed.stdout_text);
        impl_ptr->result.stderr_text = std::move(executed.observed.stderr_text);
    });
    // Once spawn returns, kill() reaches the process.
    impl->control.wait_settled();
    return Process(std::move(impl));
}

}  // namespace confine
