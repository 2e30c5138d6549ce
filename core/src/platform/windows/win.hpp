// Small helpers shared by the Windows platform layer. Internal to libconfine.
#pragma once

#include <confine/internal/windows_command_line.hpp>
#include <confine/internal/windows_finish.hpp>

#include <windows.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

namespace confine::detail::win {

// Owns a HANDLE; INVALID_HANDLE_VALUE and null both mean none.
class Handle {
public:
    Handle() = default;
    explicit Handle(HANDLE h) : h_(h == INVALID_HANDLE_VALUE ? nullptr : h) {}
    Handle(Handle&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
    Handle& operator=(Handle&& o) noexcept {
        if (this != &o) {
            reset();
            h_ = o.h_;
            o.h_ = nullptr;
        }
        return *this;
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { reset(); }
    HANDLE get() const { return h_; }
    explicit operator bool() const { return h_ != nullptr; }
    void reset() {
        if (h_) ::CloseHandle(h_);
        h_ = nullptr;
    }

private:
    HANDLE h_ = nullptr;
};

inline std::wstring widen(const std::string& s) {
    if (s.empty()) return {};
    int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    std::wstring w(static_cast<std::size_t>(n), L'\0');
    ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

inline std::string narrow(const std::wstring& w) {
    if (w.empty()) return {};
    int n = ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
    std::string s(static_cast<std::size_t>(n), '\0');
    ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr, nullptr);
    return s;
}

// A Windows error as the closest errno, for the portable spawn-error channel.
inline int errno_from(DWORD error) {
    switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_DIRECTORY: return ENOENT;
    case ERROR_ACCESS_DENIED: return EACCES;
    case ERROR_BAD_EXE_FORMAT:
    case ERROR_EXE_MACHINE_TYPE_MISMATCH: return ENOEXEC;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY: return ENOMEM;
    default: return EINVAL;
    }
}

// A job that kills every process in it when its last handle closes.
inline Handle kill_on_close_job() {
    Handle job(::CreateJobObjectW(nullptr, nullptr));
    if (!job) return job;
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    ::SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits);
    return job;
}

// An anonymous pipe whose one end (`child_end`) is inheritable.
inline bool make_pipe(Handle& read_end, Handle& write_end, bool child_writes) {
    SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
    HANDLE r = nullptr, w = nullptr;
    if (!::CreatePipe(&r, &w, &sa, 0)) return false;
    read_end = Handle(r);
    write_end = Handle(w);
    ::SetHandleInformation(child_writes ? read_end.get() : write_end.get(), HANDLE_FLAG_INHERIT, 0);
    return true;
}

// The environment block for CreateProcessW from "K=V" entries, sorted by name without
// regard to case, as Windows keeps a block (entries set by the host come last in them).
inline std::wstring environment_block(const std::vector<std::string>& entries) {
    std::vector<std::wstring> wide;
    for (const auto& e : entries) wide.push_back(widen(e));
    auto name = [](const std::wstring& e) { return e.substr(0, e.find(L'=', 1)); };
    std::stable_sort(wide.begin(), wide.end(), [&name](const std::wstring& a, const std::wstring& b) {
        return ::CompareStringOrdinal(name(a).c_str(), -1, name(b).c_str(), -1, TRUE) == CSTR_LESS_THAN;
    });
    std::wstring block;
    for (const auto& e : wide) {
        block += e;
        block.push_back(L'\0');
    }
    block.push_back(L'\0');
    return block;
}

// Before the host ends a run's job: asks the runner to finish (internal/windows_finish.hpp) and
// gives it a bounded time to, so that a runner with something to undo (the AppContainer
// launcher's access-list entries) undoes it rather than being killed with it. Nothing
// when the runner made no such event.
inline void ask_to_finish(HANDLE runner) {
    const DWORD pid = ::GetProcessId(runner);
    if (pid == 0) return;
    Handle event(::OpenEventW(EVENT_MODIFY_STATE, FALSE, confine::windows::finish_event_name(pid).c_str()));
    if (event && ::SetEvent(event.get())) ::WaitForSingleObject(runner, confine::windows::finish_wait_ms);
}

}  // namespace confine::detail::win

namespace confine::detail {

// Starts `command_line` suspended with exactly the three standard handles inherited,
// puts it in `job` (if any) and lets it run. On failure, `error` is GetLastError's.
bool start_windows_process(const std::string& command_line, HANDLE in, HANDLE out, HANDLE err, const std::wstring* environment,
                           const std::wstring& cwd, HANDLE job, win::Handle& process, DWORD& error);

}  // namespace confine::detail
