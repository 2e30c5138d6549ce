// appcontainer-run: starts a command in a Windows AppContainer.
//
//   appcontainer-run [--ro PATH]... [--rw PATH]... [--deny-read PATH]... [--deny-write PATH]...
//                    [--deny-remove PATH]... [--] COMMAND [ARG...]
//   appcontainer-run --probe
//
// Creates (or finds again) the AppContainer profile named after the grants and denials,
// gives the container's SID the asked access to each path, denies it what the denials
// say (plan.hpp), starts the command suspended with
// PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES and no capabilities (no network), in a
// job that kills it with the launcher, waits, takes back the access it gave, and exits
// with the command's status. The command is exactly the file its argv[0] names
// (command.hpp: confinectl passes the absolute path it resolved; batch files refused),
// started as lpApplicationName; it inherits the three standard handles alone
// (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), a pipe in place of each console handle, in a
// console of its own (std_handles.hpp). Any failure of its own: one `appcontainer-run: ` line on
// stderr and exit status 125, the command not run. The AppContainer functions are
// looked up at run time, so a Windows (or Wine) without them is such a failure, never
// a crash.
#include "plan.hpp"
#include "std_handles.hpp"

#include <confine/sdk/windows_command_line.hpp>

#include <windows.h>
#include <aclapi.h>
#include <sddl.h>

#include <cstdio>
#include <string>
#include <vector>

namespace ac = confine::appcontainer;

namespace {

constexpr int exit_failure = 125;

std::wstring widen(const std::string& s) {
    if (s.empty()) return {};
    int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    std::wstring w(static_cast<std::size_t>(n), L'\0');
    ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

std::string narrow(const wchar_t* w) {
    int n = ::WideCharToMultiByte(CP_UTF8, 0, w, -1, nullptr, 0, nullptr, nullptr);
    if (n <= 1) return {};
    std::string s(static_cast<std::size_t>(n - 1), '\0');
    ::WideCharToMultiByte(CP_UTF8, 0, w, -1, s.data(), n, nullptr, nullptr);
    return s;
}

std::string hresult_text(long hr) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%08lx", static_cast<unsigned long>(hr));
    return buf;
}

int fail(const std::string& what) {
    std::string line = "appcontainer-run: " + what;
    for (char& c : line)
        if (c == '\n' || c == '\r') c = ' ';
    line += '\n';
    DWORD written = 0;
    ::WriteFile(::GetStdHandle(STD_ERROR_HANDLE), line.data(), static_cast<DWORD>(line.size()), &written, nullptr);
    return exit_failure;
}

// The AppContainer functions of userenv.dll, if this Windows has them.
struct Api {
    using Create = HRESULT(WINAPI*)(PCWSTR, PCWSTR, PCWSTR, PSID_AND_ATTRIBUTES, DWORD, PSID*);
    using Derive = HRESULT(WINAPI*)(PCWSTR, PSID*);
    Create create = nullptr;
    Derive derive = nullptr;

    std::string load() {
        HMODULE userenv = ::LoadLibraryExW(L"userenv.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
        if (!userenv) return "AppContainer is not available: userenv.dll cannot be loaded";
        create = reinterpret_cast<Create>(reinterpret_cast<void*>(::GetProcAddress(userenv, "CreateAppContainerProfile")));
        derive = reinterpret_cast<Derive>(reinterpret_cast<void*>(::GetProcAddress(userenv, "DeriveAppContainerSidFromAppContainerName")));
        if (!create || !derive) return "AppContainer is not available: this Windows lacks CreateAppContainerProfile";
        return {};
    }
};

// The container's SID: its profile created, or found again when it already exists.
std::string container_sid(const Api& api, const std::string& name, PSID& sid) {
    const std::wstring wname = widen(name);
    HRESULT hr = api.create(wname.c_str(), wname.c_str(), L"confine", nullptr, 0, &sid);
    if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)) hr = api.derive(wname.c_str(), &sid);
    if (FAILED(hr)) return "AppContainer is not available: cannot create the profile " + name + " (" + hresult_text(hr) + ")";
    return {};
}

// Access given to the container on one path, and taken back when this ends.
class GrantedAccess {
public:
    GrantedAccess() = default;
    GrantedAccess(const GrantedAccess&) = delete;
    GrantedAccess& operator=(const GrantedAccess&) = delete;
    ~GrantedAccess() { revoke(); }

    std::string grant(const ac::Grant& g, PSID sid) {
        const DWORD rights = g.access == ac::Access::read_write ? (FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE | DELETE)
                                                                : (FILE_GENERIC_READ | FILE_GENERIC_EXECUTE);
        return add(g.path, sid, GRANT_ACCESS, rights, SUB_CONTAINERS_AND_OBJECTS_INHERIT, "grant the container access to");
    }

    // An access-denied entry for the container (plan.hpp, Denial): explicit, so that it
    // comes before, and wins over, the grant the path inherits.
    std::string deny(const ac::Deny& d, PSID sid) {
        constexpr DWORD read = FILE_READ_DATA | FILE_READ_EA | FILE_EXECUTE;  // FILE_LIST_DIRECTORY, FILE_TRAVERSE
        constexpr DWORD write = FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA | FILE_WRITE_ATTRIBUTES | FILE_DELETE_CHILD | DELETE | WRITE_DAC |
                                WRITE_OWNER;  // FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY
        constexpr DWORD remove = DELETE | WRITE_DAC | WRITE_OWNER;
        switch (d.denial) {
        case ac::Denial::read: return add(d.path, sid, DENY_ACCESS, read, SUB_CONTAINERS_AND_OBJECTS_INHERIT, "deny the container reading");
        case ac::Denial::write: return add(d.path, sid, DENY_ACCESS, write, SUB_CONTAINERS_AND_OBJECTS_INHERIT, "deny the container writing");
        case ac::Denial::remove: return add(d.path, sid, DENY_ACCESS, remove, NO_INHERITANCE, "deny the container removing");
        }
        return "unknown denial for " + d.path;
    }

    void revoke() {
        if (granted_) ::SetNamedSecurityInfoW(path_.data(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, old_, nullptr);
        granted_ = false;
        if (descriptor_) ::LocalFree(descriptor_);
        descriptor_ = nullptr;
    }

private:
    std::string add(const std::string& path, PSID sid, ACCESS_MODE mode, DWORD rights, DWORD inheritance, const char* what) {
        path_ = widen(path);
        PACL old = nullptr;
        DWORD rc = ::GetNamedSecurityInfoW(path_.c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, &old, nullptr, &descriptor_);
        if (rc != ERROR_SUCCESS) return "cannot read the access list of " + path + " (error " + std::to_string(rc) + ")";
        old_ = old;
        EXPLICIT_ACCESS_W ea{};
        ea.grfAccessPermissions = rights;
        ea.grfAccessMode = mode;
        ea.grfInheritance = inheritance;
        ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
        ea.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
        ea.Trustee.ptstrName = static_cast<LPWSTR>(sid);
        PACL updated = nullptr;
        rc = ::SetEntriesInAclW(1, &ea, old, &updated);
        if (rc != ERROR_SUCCESS) return "cannot extend the access list of " + path + " (error " + std::to_string(rc) + ")";
        rc = ::SetNamedSecurityInfoW(path_.data(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, updated, nullptr);
        ::LocalFree(updated);
        if (rc != ERROR_SUCCESS) return std::string("cannot ") + what + " " + path + " (error " + std::to_string(rc) + ")";
        granted_ = true;
        return {};
    }

    std::wstring path_;
    PSECURITY_DESCRIPTOR descriptor_ = nullptr;
    PACL old_ = nullptr;
    bool granted_ = false;
};

// The file to start for the command's argv[0] (command.hpp): PATH and PATHEXT of this
// process's environment, which is the command's; a relative path from the working
// directory.
std::wstring variable(const wchar_t* name) {
    const DWORD n = ::GetEnvironmentVariableW(name, nullptr, 0);
    if (n == 0) return {};
    std::wstring value(n, L'\0');
    const DWORD got = ::GetEnvironmentVariableW(name, value.data(), n);
    value.resize(got < n ? got : 0);
    return value;
}

std::expected<std::string, std::string> command_file_here(const std::string& argv0) {
    auto kind = [](const std::string& candidate) {
        const DWORD attributes = ::GetFileAttributesW(widen(candidate).c_str());
        if (attributes == INVALID_FILE_ATTRIBUTES) return confine::windows::FileKind::missing;
        return attributes & FILE_ATTRIBUTE_DIRECTORY ? confine::windows::FileKind::directory : confine::windows::FileKind::file;
    };
    wchar_t cwd[MAX_PATH + 1];
    const DWORD n = ::GetCurrentDirectoryW(MAX_PATH + 1, cwd);
    const std::string here = n > 0 && n <= MAX_PATH ? narrow(cwd) : std::string();
    return ac::command_file(argv0, narrow(variable(L"PATH").c_str()), narrow(variable(L"PATHEXT").c_str()), here, kind);
}

// Runs `command` in the container; its exit status, or a failure of ours.
int run_contained(PSID sid, const std::vector<std::string>& command, bool network, std::string& error) {
    auto line = confine::windows::command_line(command);
    if (!line) {
        error = line.error();
        return exit_failure;
    }
    std::wstring wline = widen(*line);
    auto file = command_file_here(command.front());
    if (!file) {
        error = file.error();
        return exit_failure;
    }
    const std::wstring application = widen(*file);
    SECURITY_CAPABILITIES capabilities{};
    capabilities.AppContainerSid = sid;  // no capability (no network, nothing else), or internetClient alone
    PSID internet_client = nullptr;
    SID_AND_ATTRIBUTES granted{};
    if (network) {
        // S-1-15-3-1: the internetClient capability (outbound connections).
        if (!::ConvertStringSidToSidW(L"S-1-15-3-1", &internet_client)) {
            error = "cannot make the internetClient capability (error " + std::to_string(::GetLastError()) + ")";
            return exit_failure;
        }
        granted = {internet_client, SE_GROUP_ENABLED};
        capabilities.Capabilities = &granted;
        capabilities.CapabilityCount = 1;
    }
    struct Freed {
        PSID sid;
        ~Freed() {
            if (sid) ::LocalFree(sid);
        }
    } freed{internet_client};
    ac::StandardHandles handles;
    if (auto why = handles.prepare(); !why.empty()) {
        error = why;
        return exit_failure;
    }
    // The container, and the three standard handles as the only ones inherited: nothing
    // else the launcher holds, inheritable or not, reaches the command.
    std::vector<HANDLE> inherited = handles.list();
    SIZE_T size = 0;
    ::InitializeProcThreadAttributeList(nullptr, 2, 0, &size);
    std::vector<unsigned char> storage(size);
    auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
    if (!::InitializeProcThreadAttributeList(attributes, 2, 0, &size)) {
        error = "cannot make the process attribute list (error " + std::to_string(::GetLastError()) + ")";
        return exit_failure;
    }
    if (!::UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, &capabilities, sizeof capabilities, nullptr,
                                     nullptr)) {
        error = "AppContainer is not available: cannot set the security capabilities (error " + std::to_string(::GetLastError()) + ")";
        ::DeleteProcThreadAttributeList(attributes);
        return exit_failure;
    }
    if (!::UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited.data(), inherited.size() * sizeof(HANDLE),
                                     nullptr, nullptr)) {
        error = "cannot limit the handles the command inherits (error " + std::to_string(::GetLastError()) + ")";
        ::DeleteProcThreadAttributeList(attributes);
        return exit_failure;
    }
    HANDLE job = ::CreateJobObjectW(nullptr, nullptr);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (!job || !::SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits)) {
        ::DeleteProcThreadAttributeList(attributes);
        error = "cannot create a job object (error " + std::to_string(::GetLastError()) + ")";
        return exit_failure;
    }
    STARTUPINFOEXW si{};
    si.StartupInfo.cb = sizeof si;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.StartupInfo.hStdInput = handles.input();
    si.StartupInfo.hStdOutput = handles.output();
    si.StartupInfo.hStdError = handles.error();
    si.lpAttributeList = attributes;
    PROCESS_INFORMATION pi{};
    // Exactly the file resolved (never searched for again), in a console of its own
    // (command.hpp, passed_as: it gets no handle to the caller's console).
    const DWORD flags = EXTENDED_STARTUPINFO_PRESENT | CREATE_SUSPENDED | CREATE_NO_WINDOW;
    const BOOL started = ::CreateProcessW(application.c_str(), wline.data(), nullptr, nullptr, TRUE, flags, nullptr, nullptr, &si.StartupInfo, &pi);
    const DWORD start_error = ::GetLastError();
    ::DeleteProcThreadAttributeList(attributes);
    handles.started();
    if (!started) {
        ::CloseHandle(job);
        error = "cannot start " + command.front() + " in the container (error " + std::to_string(start_error) + ")";
        return exit_failure;
    }
    if (!::AssignProcessToJobObject(job, pi.hProcess)) {
        ::TerminateProcess(pi.hProcess, exit_failure);
        ::CloseHandle(pi.hThread);
        ::CloseHandle(pi.hProcess);
        ::CloseHandle(job);
        error = "cannot put the command in a job (error " + std::to_string(::GetLastError()) + ")";
        return exit_failure;
    }
    ::ResumeThread(pi.hThread);
    ::CloseHandle(pi.hThread);
    ::WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = exit_failure;
    ::GetExitCodeProcess(pi.hProcess, &code);
    ::CloseHandle(pi.hProcess);
    ::CloseHandle(job);  // whatever the command left running goes with it
    handles.finish();    // and with it the last writer of its output pipes
    return static_cast<int>(code);
}

// A console control event (Ctrl+C, Ctrl+Break) does not end the launcher before it
// takes back the access it gave. The command has a console of its own, so such an
// event sent to the launcher's does not reach it.
BOOL WINAPI keep_running(DWORD) { return TRUE; }

}  // namespace

int wmain(int argc, wchar_t** argv) {
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) args.push_back(narrow(argv[i]));
    auto request = ac::parse_launcher_args(args);
    if (!request) return fail("usage error: " + request.error());

    Api api;
    if (auto missing = api.load(); !missing.empty()) return fail(missing);
    ::SetConsoleCtrlHandler(&keep_running, TRUE);

    PSID sid = nullptr;
    const std::string name = request->probe ? std::string("confine.probe") : ac::profile_name(request->grants, request->denials);
    if (auto why = container_sid(api, name, sid); !why.empty()) return fail(why);
    int status = exit_failure;
    std::string error;
    {
        // Grants first, then denials, each taken back in the reverse order: every access
        // list is restored to what it was when its own entry was added.
        const std::size_t n = request->grants.size() + request->denials.size();
        std::vector<GrantedAccess> access(n);
        struct Reversed {
            std::vector<GrantedAccess>& access;
            ~Reversed() {
                for (auto it = access.rbegin(); it != access.rend(); ++it) it->revoke();
            }
        } reversed{access};
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t g = request->grants.size();
            auto why = i < g ? access[i].grant(request->grants[i], sid) : access[i].deny(request->denials[i - g], sid);
            if (!why.empty()) {
                ::FreeSid(sid);
                return fail(why);  // what was granted or denied so far is taken back on the way out
            }
        }
        if (request->probe) {
            // Functional: a process must start in the container and end well.
            wchar_t system[MAX_PATH];
            const UINT n = ::GetSystemDirectoryW(system, MAX_PATH);
            const std::string cmd = (n > 0 && n < MAX_PATH ? narrow(system) : std::string("C:\\Windows\\System32")) + "\\cmd.exe";
            status = run_contained(sid, {cmd, "/c", "exit", "0"}, false, error);
            if (error.empty() && status != 0) error = "a command in the container ended with status " + std::to_string(status);
        } else {
            status = run_contained(sid, request->command, request->network, error);
        }
    }
    ::FreeSid(sid);
    if (!error.empty()) return fail(error);
    if (request->probe) std::fputs("appcontainer: available\n", stdout);
    return status;
}
