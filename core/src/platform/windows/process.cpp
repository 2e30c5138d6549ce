// Bounded runs (probes) on Windows: the process in a kill-on-close job, stdin on NUL,
// stdout and stderr captured; at the time limit the whole job is terminated.
#include "process.hpp"
#include "win.hpp"

#include <algorithm>
#include <thread>

namespace confine::detail {

bool start_windows_process(const std::string& command_line, HANDLE in, HANDLE out, HANDLE err, const std::wstring* environment,
                           const std::wstring& cwd, HANDLE job, win::Handle& process, DWORD& error) {
    std::wstring line = win::widen(command_line);
    SIZE_T size = 0;
    ::InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
    std::vector<unsigned char> storage(size);
    auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
    // Each handle once: the list refuses duplicates (stdout and stderr are often one).
    HANDLE inherit[3];
    std::size_t count = 0;
    for (HANDLE h : {in, out, err})
        if (h && std::find(inherit, inherit + count, h) == inherit + count) inherit[count++] = h;
    if (!::InitializeProcThreadAttributeList(attributes, 1, 0, &size) ||
        !::UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit, count * sizeof(HANDLE), nullptr, nullptr)) {
        error = ::GetLastError();
        return false;
    }
    STARTUPINFOEXW si{};
    si.StartupInfo.cb = sizeof si;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.StartupInfo.hStdInput = in;
    si.StartupInfo.hStdOutput = out;
    si.StartupInfo.hStdError = err;
    si.lpAttributeList = attributes;
    PROCESS_INFORMATION pi{};
    const DWORD flags = CREATE_SUSPENDED | EXTENDED_STARTUPINFO_PRESENT | CREATE_UNICODE_ENVIRONMENT | CREATE_NO_WINDOW;
    const BOOL ok = ::CreateProcessW(nullptr, line.data(), nullptr, nullptr, TRUE, flags,
                                     environment ? const_cast<wchar_t*>(environment->c_str()) : nullptr,
                                     cwd.empty() ? nullptr : cwd.c_str(), &si.StartupInfo, &pi);
    error = ok ? 0 : ::GetLastError();
    ::DeleteProcThreadAttributeList(attributes);
    if (!ok) return false;
    process = win::Handle(pi.hProcess);
    win::Handle thread(pi.hThread);
    if (job && !::AssignProcessToJobObject(job, pi.hProcess)) {
        error = ::GetLastError();
        ::TerminateProcess(pi.hProcess, 1);
        return false;
    }
    ::ResumeThread(pi.hThread);
    return true;
}

sdk::ProbeRun run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, std::size_t capture_limit) {
    sdk::ProbeRun r;
    auto line = windows::command_line(argv);
    if (!line) {
        r.spawn_errno = EINVAL;
        return r;
    }
    win::Handle job = win::kill_on_close_job();
    win::Handle out_r, out_w, err_r, err_w;
    SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
    win::Handle null_in(::CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, nullptr));
    if (!job || !null_in || !win::make_pipe(out_r, out_w, true) || !win::make_pipe(err_r, err_w, true)) {
        r.spawn_errno = win::errno_from(::GetLastError());
        return r;
    }
    win::Handle process;
    DWORD error = 0;
    if (!start_windows_process(*line, null_in.get(), out_w.get(), err_w.get(), nullptr, {}, job.get(), process, error)) {
        r.spawn_errno = win::errno_from(error);
        return r;
    }
    r.spawned = true;
    out_w.reset();
    err_w.reset();
    auto drain = [capture_limit](HANDLE from, std::string& into) {
        char buf[4096];
        DWORD n = 0;
        while (::ReadFile(from, buf, sizeof buf, &n, nullptr) && n > 0)
            if (into.size() < capture_limit) into.append(buf, std::min<std::size_t>(n, capture_limit - into.size()));
    };
    std::thread out_reader(drain, out_r.get(), std::ref(r.stdout_text));
    std::thread err_reader(drain, err_r.get(), std::ref(r.stderr_text));
    const DWORD limit = static_cast<DWORD>(std::min<long long>(timeout.count(), 0x7fffffffLL));
    if (::WaitForSingleObject(process.get(), limit) == WAIT_TIMEOUT) {
        r.timed_out = true;
        win::ask_to_finish(process.get());
        ::TerminateJobObject(job.get(), 1);
        ::WaitForSingleObject(process.get(), INFINITE);
    }
    // Whatever the command left behind goes with the job, so the pipes reach their end.
    job.reset();
    out_reader.join();
    err_reader.join();
    DWORD code = 1;
    ::GetExitCodeProcess(process.get(), &code);
    r.exited = !r.timed_out;
    r.exit_code = static_cast<int>(code);
    return r;
}

}  // namespace confine::detail
