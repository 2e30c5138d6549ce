// Running a wrapped command on Windows: CreateProcessW with a command line quoted by
// the CommandLineToArgvW rules, the runner and everything it starts in a kill-on-close
// job (a time limit or kill() terminates the job), output captured by reader threads.
// Windows has no exec: there is no in-process confinement and no exec attestation, so
// a runner that needs either fails closed here.
#include "executor.hpp"
#include "output_sinks.hpp"
#include "win.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

namespace confine::detail {

// The runner and every process it starts are in a job that allows no breakaway and is
// killed when its last handle closes: the host's, at the end of the run or when the host
// itself ends, however it ends.
Supervision run_supervision(const WrapResult&) { return {Level::full, {}}; }

void RunControl::attach_job(void* job) {
    std::lock_guard lock(mutex_);
    job_ = job;
}

void RunControl::exited() {
    std::lock_guard lock(mutex_);
    done_ = true;
    job_ = nullptr;
}

// Windows has no signals to pass on: any signal ends the whole job, once the runner has
// been asked to finish (win::ask_to_finish). The process ID cannot have been reused: the
// run has not been seen exiting.
void RunControl::signal(int sig) {
    std::lock_guard lock(mutex_);
    if (!job_ || done_) return;
    if (win::Handle runner(::OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid_))); runner)
        win::ask_to_finish(runner.get());
    ::TerminateJobObject(static_cast<HANDLE>(job_), static_cast<UINT>(128 + sig));
}

// Windows has no gentler way to end a job: the time limit's first step ends it.
void RunControl::terminate() { signal(15); }

namespace {

// The value of `name` in `environment` (names compared without regard to case, as
// Windows does), or in this process's own when there is none given.
std::string variable(const std::optional<std::vector<std::string>>& environment, std::string_view name) {
    if (!environment) {
        const std::wstring wname = win::widen(std::string(name));
        const DWORD n = ::GetEnvironmentVariableW(wname.c_str(), nullptr, 0);
        if (n == 0) return {};
        std::wstring value(n, L'\0');
        const DWORD got = ::GetEnvironmentVariableW(wname.c_str(), value.data(), n);
        value.resize(got < n ? got : 0);
        return win::narrow(value);
    }
    for (const auto& e : *environment)
        if (e.size() > name.size() && e[name.size()] == '=' && ::_strnicmp(e.c_str(), std::string(name).c_str(), name.size()) == 0)
            return e.substr(name.size() + 1);
    return {};
}

}  // namespace

std::expected<std::string, windows::ProgramRefusal> resolve_windows_program(const std::string& name,
                                                                           const std::optional<std::vector<std::string>>& environment,
                                                                           const std::filesystem::path& working_directory) {
    namespace fs = std::filesystem;
    auto kind = [](const std::string& candidate) {
        std::error_code ec;
        const auto status = fs::status(win::widen(candidate), ec);
        if (ec || !fs::exists(status)) return windows::FileKind::missing;
        return fs::is_directory(status) ? windows::FileKind::directory : windows::FileKind::file;
    };
    std::string cwd = working_directory.empty() ? std::string() : win::narrow(working_directory.wstring());
    if (cwd.empty() && name.find_first_of("\\/:") != std::string::npos) {
        std::error_code ec;
        cwd = win::narrow(fs::current_path(ec).wstring());
    }
    return windows::resolve_program(name, variable(environment, "PATH"), variable(environment, "PATHEXT"), cwd, kind);
}

std::optional<std::string> find_program(const std::string& name, const std::optional<std::vector<std::string>>& environment,
                                        const std::filesystem::path& working_directory, int& error) {
    auto found = resolve_windows_program(name, environment, working_directory);
    if (found) return *found;
    error = found.error().reason == windows::ProgramRefusal::Reason::not_found ? ENOENT : EACCES;
    return std::nullopt;
}

namespace {

// An inheritable duplicate of one of this process's standard handles (or NUL).
win::Handle inheritable_std(DWORD which) {
    HANDLE own = ::GetStdHandle(which);
    HANDLE dup = nullptr;
    if (own && own != INVALID_HANDLE_VALUE &&
        ::DuplicateHandle(::GetCurrentProcess(), own, ::GetCurrentProcess(), &dup, 0, TRUE, DUPLICATE_SAME_ACCESS))
        return win::Handle(dup);
    SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
    return win::Handle(::CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, nullptr));
}

// Reads a pipe to its end, one large read at a time, handing each read's bytes on.
template <class Take>
void read_all(HANDLE from, Take take) {
    constexpr DWORD read_size = 1 << 20;
    auto buf = std::make_unique_for_overwrite<char[]>(read_size);
    DWORD n = 0;
    while (::ReadFile(from, buf.get(), read_size, &n, nullptr) && n > 0) take(std::string_view(buf.get(), n));
}

}  // namespace

bool write_to_stderr(std::string_view bytes) {
    HANDLE err = ::GetStdHandle(STD_ERROR_HANDLE);
    if (!err || err == INVALID_HANDLE_VALUE) return false;
    while (!bytes.empty()) {
        DWORD written = 0;
        const DWORD size = static_cast<DWORD>(std::min<std::size_t>(bytes.size(), 1u << 30));
        if (!::WriteFile(err, bytes.data(), size, &written, nullptr) || written == 0) return false;
        bytes.remove_prefix(written);
    }
    return true;
}

void copy_to_stderr(std::string_view bytes) { write_to_stderr(bytes); }

// stdout is never merged into the stderr pipe here.
bool standard_outputs_shared() { return false; }

namespace {

// What `spec` asks that Windows has no way to give, or nullptr.
const char* not_on_windows(const ExecSpec& spec) {
    if (spec.in_process) return "in-process confinement is not available on Windows";
    if (spec.attestation.kind != Attestation::Kind::none) return "this runner's attestation is not available on Windows";
    // Nothing here opens what a placeholder stands for: left as it is, it would reach the runner.
    if (!spec.placeholders.empty()) return "this runner's placeholder arguments are not available on Windows";
    return nullptr;
}

}  // namespace

// No pseudo-terminal of the run's own on Windows (RunOptions::own_terminal): its console
// is the caller's, or none.
bool can_give_own_terminal() { return false; }

Executed execute(const ExecSpec& spec, RunControl& control) {
    Executed result;
    Observation& o = result.observed;
    o.stderr_seen = spec.background || spec.copy_stderr;
    auto refuse = [&](int err, std::string detail) {
        o.spawned = false;
        o.spawn_errno = err;
        o.attestation_detail = std::move(detail);
        return result;
    };
    if (spec.argv.empty()) return refuse(EINVAL, {});
    if (const char* why = not_on_windows(spec)) return refuse(ENOSYS, why);
    int resolve_error = 0;
    auto program = find_program(spec.argv.front(), std::nullopt, {}, resolve_error);
    if (!program) return refuse(resolve_error, {});
    std::vector<std::string> argv = spec.argv;
    argv.front() = *program;
    auto line = windows::command_line(argv);
    if (!line) return refuse(EINVAL, line.error());
    std::optional<std::wstring> environment;
    if (spec.environment) environment = win::environment_block(*spec.environment);

    win::Handle job = win::kill_on_close_job();
    if (!job) return refuse(win::errno_from(::GetLastError()), "cannot create a job object");
    win::Handle in, out, err, out_r, err_r;
    SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
    if (spec.background) {
        in = win::Handle(::CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, nullptr));
        if (!in || !win::make_pipe(out_r, out, true)) return refuse(win::errno_from(::GetLastError()), {});
    } else {
        in = inheritable_std(STD_INPUT_HANDLE);
        out = inheritable_std(STD_OUTPUT_HANDLE);
    }
    if (spec.background || spec.copy_stderr) {
        if (!win::make_pipe(err_r, err, true)) return refuse(win::errno_from(::GetLastError()), {});
    } else {
        err = inheritable_std(STD_ERROR_HANDLE);
    }

    win::Handle process;
    DWORD error = 0;
    if (!start_windows_process(*line, in.get(), out.get(), err.get(), environment ? &*environment : nullptr,
                               win::widen(spec.working_directory.string()), job.get(), process, error))
        return refuse(win::errno_from(error), error == ERROR_DIRECTORY ? "cannot enter the working directory " + spec.working_directory.string()
                                                                       : std::string());
    const int pid = static_cast<int>(::GetProcessId(process.get()));
    control.attach_job(job.get());
    control.started(pid, true);
    if (spec.on_started) spec.on_started(pid);
    in.reset();
    out.reset();
    err.reset();

    std::thread out_reader, err_reader;
    CapturedOutput captured_out(spec.capture);
    StderrSink err_sink(spec);
    if (out_r) out_reader = std::thread([&] { read_all(out_r.get(), [&](std::string_view b) { captured_out.take(b); }); });
    if (err_r) err_reader = std::thread([&] { read_all(err_r.get(), [&](std::string_view b) { err_sink.take(b); }); });
    DWORD limit = INFINITE;
    if (spec.timeout) limit = static_cast<DWORD>(std::clamp<long long>(spec.timeout->count(), 0, 0x7ffffffeLL));
    if (::WaitForSingleObject(process.get(), limit) == WAIT_TIMEOUT) {
        o.timed_out = true;
        win::ask_to_finish(process.get());
        ::TerminateJobObject(job.get(), 1);
        ::WaitForSingleObject(process.get(), INFINITE);
    }
    DWORD code = 1;
    ::GetExitCodeProcess(process.get(), &code);
    control.exited();
    // What the runner left running goes with the job, and the pipes end with it.
    job.reset();
    if (out_reader.joinable()) out_reader.join();
    if (err_reader.joinable()) err_reader.join();
    result.stdout_text = captured_out.finish();
    result.stdout_dropped = captured_out.dropped();
    err_sink.finish(result);
    o.exit_code = static_cast<int>(code);
    return result;
}

Observation exec_in_place(const ExecSpec&) {
    Observation o;
    o.spawned = false;
    o.spawn_errno = ENOSYS;
    o.attestation_detail = "replacing the process is not available on Windows";
    return o;
}

}  // namespace confine::detail

namespace confine {
bool relay_window_size() noexcept { return false; }
void release_terminal() noexcept {}
void retake_terminal() noexcept {}
}  // namespace confine
