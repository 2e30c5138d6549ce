// appcontainer-run: starts a command in a Windows AppContainer.
//
//   appcontainer-run [--ro PATH]... [--rw PATH]... [--deny-read PATH]... [--deny-write PATH]...
//                    [--deny-remove PATH]... [--private-temp [--temp-parent DIR]] [--network]
//                    [--] COMMAND [ARG...]
//   appcontainer-run --probe
//
// First undoes what killed launchers left (their journals). Then resolves every path to
// its final one, creates a profile of the run's own, records each change in the run's
// journal before making it, gives the container's SID the asked access to each path and
// denies it what the denials say (plan.hpp), makes the run's temporary directory, and
// starts the command suspended with PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES and no
// capabilities (no network), in a job that kills it with the launcher. The command is
// exactly the file its argv[0] names (command.hpp: confinectl passes the absolute path it
// resolved; batch files refused), started as lpApplicationName; it inherits the three
// standard handles alone (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), a pipe in place of each
// console handle, in a console of its own (std_handles.hpp), and the launcher's
// environment with TEMP and TMP naming the run's temporary directory. The launcher waits
// (for the command, or for the host to ask it to finish), removes the container's
// entries, the directory and the profile, and exits with the command's status. Any
// failure of its own: one `appcontainer-run: ` line on stderr and exit status 125, the
// command not run. The AppContainer functions are looked up at run time, so a Windows
// (or Wine) without them is such a failure, never a crash.
#include "acl_lock.hpp"
#include "plan.hpp"
#include "std_handles.hpp"

#include <confine/internal/windows_command_line.hpp>
#include <confine/internal/windows_finish.hpp>

#include <windows.h>
#include <aclapi.h>
#include <sddl.h>
#include <shlobj.h>

#include <algorithm>
#include <cstdint>
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
    using Delete = HRESULT(WINAPI*)(PCWSTR);
    Create create = nullptr;
    Derive derive = nullptr;
    Delete remove = nullptr;

    std::string load() {
        HMODULE userenv = ::LoadLibraryExW(L"userenv.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
        if (!userenv) return "AppContainer is not available: userenv.dll cannot be loaded";
        create = reinterpret_cast<Create>(reinterpret_cast<void*>(::GetProcAddress(userenv, "CreateAppContainerProfile")));
        derive = reinterpret_cast<Derive>(reinterpret_cast<void*>(::GetProcAddress(userenv, "DeriveAppContainerSidFromAppContainerName")));
        remove = reinterpret_cast<Delete>(reinterpret_cast<void*>(::GetProcAddress(userenv, "DeleteAppContainerProfile")));
        if (!create || !derive || !remove) return "AppContainer is not available: this Windows lacks CreateAppContainerProfile";
        return {};
    }
};

// The folder the locks of access lists live in: the journal folder, set once it is known.
std::string lock_dir;

// The security information to write a changed access list back with, keeping whether it
// inherits from its parent as it was.
SECURITY_INFORMATION dacl_information(PSECURITY_DESCRIPTOR descriptor) {
    SECURITY_DESCRIPTOR_CONTROL control = 0;
    DWORD revision = 0;
    ::GetSecurityDescriptorControl(descriptor, &control, &revision);
    return DACL_SECURITY_INFORMATION | ((control & SE_DACL_PROTECTED) ? PROTECTED_DACL_SECURITY_INFORMATION : UNPROTECTED_DACL_SECURITY_INFORMATION);
}

// Adds one entry for the container to a path's current access list, under the folder's
// lock: read, extend, write back. Writing propagates an inheritable entry onto everything
// beneath that inherits (the cost README.md weighs).
std::string add_entry(const std::string& path, PSID sid, ACCESS_MODE mode, DWORD rights, DWORD inheritance, const char* what) {
    ac::AclLock lock(lock_dir, path);
    if (!lock.held()) return "cannot lock the access list of " + path + " against other runs (" + lock_dir + ")";
    const std::wstring wpath = widen(path);
    PACL old = nullptr;
    PSECURITY_DESCRIPTOR descriptor = nullptr;
    DWORD rc = ::GetNamedSecurityInfoW(wpath.c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, &old, nullptr, &descriptor);
    if (rc != ERROR_SUCCESS) return "cannot read the access list of " + path + " (error " + std::to_string(rc) + ")";
    EXPLICIT_ACCESS_W ea{};
    ea.grfAccessPermissions = rights;
    ea.grfAccessMode = mode;
    ea.grfInheritance = inheritance;
    ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
    ea.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
    ea.Trustee.ptstrName = static_cast<LPWSTR>(sid);
    PACL updated = nullptr;
    rc = ::SetEntriesInAclW(1, &ea, old, &updated);
    if (rc != ERROR_SUCCESS) {
        ::LocalFree(descriptor);
        return "cannot extend the access list of " + path + " (error " + std::to_string(rc) + ")";
    }
    rc = ::SetNamedSecurityInfoW(const_cast<LPWSTR>(wpath.c_str()), SE_FILE_OBJECT, dacl_information(descriptor), nullptr, nullptr, updated, nullptr);
    ::LocalFree(updated);
    ::LocalFree(descriptor);
    if (rc != ERROR_SUCCESS) return std::string("cannot ") + what + " " + path + " (error " + std::to_string(rc) + ")";
    return {};
}

// Removes every explicit entry for `sid` from the path's current access list, and nothing
// else: entries the user or another run added meanwhile stay, and so does everything the
// list inherits. Not restoring a saved list is what makes two runs on one folder, and a
// folder named twice, come out right. A path that is gone has nothing left to remove.
bool remove_entries(const std::string& path, PSID sid) {
    ac::AclLock lock(lock_dir, path);
    if (!lock.held()) return false;  // stays in the journal, for the next start
    const std::wstring wpath = widen(path);
    PACL dacl = nullptr;
    PSECURITY_DESCRIPTOR descriptor = nullptr;
    DWORD rc = ::GetNamedSecurityInfoW(wpath.c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, &dacl, nullptr, &descriptor);
    if (rc == ERROR_FILE_NOT_FOUND || rc == ERROR_PATH_NOT_FOUND) return true;
    if (rc != ERROR_SUCCESS) return false;
    struct Freed {
        PSECURITY_DESCRIPTOR d;
        ~Freed() { ::LocalFree(d); }
    } freed{descriptor};
    ACL_SIZE_INFORMATION size{};
    if (!dacl || !::GetAclInformation(dacl, &size, sizeof size, AclSizeInformation)) return true;
    std::vector<unsigned char> storage(size.AclBytesInUse + sizeof(ACL));
    auto* kept = reinterpret_cast<PACL>(storage.data());
    if (!::InitializeAcl(kept, static_cast<DWORD>(storage.size()), dacl->AclRevision)) return false;
    bool found = false;
    for (DWORD i = 0; i < size.AceCount; ++i) {
        void* ace = nullptr;
        if (!::GetAce(dacl, i, &ace)) return false;
        auto* header = static_cast<ACE_HEADER*>(ace);
        // ACCESS_ALLOWED_ACE and ACCESS_DENIED_ACE lay the SID out alike.
        const bool ours = !(header->AceFlags & INHERITED_ACE) &&
                          (header->AceType == ACCESS_ALLOWED_ACE_TYPE || header->AceType == ACCESS_DENIED_ACE_TYPE) &&
                          ::EqualSid(&static_cast<ACCESS_ALLOWED_ACE*>(ace)->SidStart, sid);
        if (ours) found = true;
        else if (!::AddAce(kept, dacl->AclRevision, MAXDWORD, ace, header->AceSize)) return false;
    }
    if (!found) return true;
    rc = ::SetNamedSecurityInfoW(const_cast<LPWSTR>(wpath.c_str()), SE_FILE_OBJECT, dacl_information(descriptor), nullptr, nullptr, kept, nullptr);
    return rc == ERROR_SUCCESS || rc == ERROR_FILE_NOT_FOUND || rc == ERROR_PATH_NOT_FOUND;
}

std::string grant(const ac::Grant& g, PSID sid) {
    // No FILE_DELETE_CHILD and no WRITE_DAC: README.md, deny_read and protect.
    const DWORD rights = g.access == ac::Access::read_write ? (FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE | DELETE)
                                                            : (FILE_GENERIC_READ | FILE_GENERIC_EXECUTE);
    return add_entry(g.path, sid, GRANT_ACCESS, rights, SUB_CONTAINERS_AND_OBJECTS_INHERIT, "grant the container access to");
}

// An access-denied entry for the container (plan.hpp, Denial): explicit, so that it
// comes before, and wins over, the grant the path inherits.
std::string deny(const ac::Deny& d, PSID sid) {
    constexpr DWORD read = FILE_READ_DATA | FILE_READ_EA | FILE_EXECUTE;  // FILE_LIST_DIRECTORY, FILE_TRAVERSE
    constexpr DWORD write = FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA | FILE_WRITE_ATTRIBUTES | FILE_DELETE_CHILD | DELETE | WRITE_DAC |
                            WRITE_OWNER;  // FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY
    constexpr DWORD remove = DELETE | WRITE_DAC | WRITE_OWNER;
    switch (d.denial) {
    case ac::Denial::read: return add_entry(d.path, sid, DENY_ACCESS, read, SUB_CONTAINERS_AND_OBJECTS_INHERIT, "deny the container reading");
    case ac::Denial::write: return add_entry(d.path, sid, DENY_ACCESS, write, SUB_CONTAINERS_AND_OBJECTS_INHERIT, "deny the container writing");
    case ac::Denial::remove: return add_entry(d.path, sid, DENY_ACCESS, remove, NO_INHERITANCE, "deny the container removing");
    }
    return "unknown denial for " + d.path;
}

// Removes a directory the container could write, and everything in it, without following
// a link or junction out of it (the container may have made one pointing at the user's
// files): a reparse point is removed itself, never entered. True when it is gone.
bool remove_tree(const std::wstring& dir) {
    WIN32_FIND_DATAW found;
    HANDLE find = ::FindFirstFileExW((dir + L"\\*").c_str(), FindExInfoBasic, &found, FindExSearchNameMatch, nullptr, 0);
    if (find != INVALID_HANDLE_VALUE) {
        do {
            const std::wstring name = found.cFileName;
            if (name == L"." || name == L"..") continue;
            const std::wstring path = dir + L"\\" + name;
            if (found.dwFileAttributes & FILE_ATTRIBUTE_READONLY) ::SetFileAttributesW(path.c_str(), found.dwFileAttributes & ~FILE_ATTRIBUTE_READONLY);
            const bool is_dir = found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY;
            if (is_dir && !(found.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) remove_tree(path);
            else if (is_dir) ::RemoveDirectoryW(path.c_str());
            else ::DeleteFileW(path.c_str());
        } while (::FindNextFileW(find, &found));
        ::FindClose(find);
    }
    return ::RemoveDirectoryW(dir.c_str()) || ::GetLastError() == ERROR_FILE_NOT_FOUND || ::GetLastError() == ERROR_PATH_NOT_FOUND;
}

// Undoes what a journal records (plan.hpp, Journal): the container's entries, the run's
// temporary directory, its profile. True when all of it is gone.
bool undo(const Api& api, const ac::Journal& journal) {
    bool done = true;
    if (!journal.acl.empty()) {
        PSID sid = nullptr;
        if (!::ConvertStringSidToSidW(widen(journal.sid).c_str(), &sid)) return false;
        for (auto it = journal.acl.rbegin(); it != journal.acl.rend(); ++it) done = remove_entries(*it, sid) && done;
        ::LocalFree(sid);
    }
    if (!journal.temp.empty()) done = remove_tree(widen(journal.temp)) && done;
    if (!journal.profile.empty()) {
        const HRESULT hr = api.remove(widen(journal.profile).c_str());
        done = (SUCCEEDED(hr) || hr == HRESULT_FROM_WIN32(ERROR_NOT_FOUND) || hr == HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)) && done;
    }
    return done;
}

// The folder of the journals: %LOCALAPPDATA%\confine\appcontainer, made when missing.
std::string journal_dir(std::string& error) {
    PWSTR local = nullptr;
    if (FAILED(::SHGetKnownFolderPath(FOLDERID_LocalAppData, KF_FLAG_CREATE, nullptr, &local))) {
        error = "cannot find the user's local application data folder for the journal";
        return {};
    }
    std::wstring dir = local;
    ::CoTaskMemFree(local);
    for (const wchar_t* part : {L"\\confine", L"\\appcontainer"}) {
        dir += part;
        if (!::CreateDirectoryW(dir.c_str(), nullptr) && ::GetLastError() != ERROR_ALREADY_EXISTS) {
            error = "cannot make the journal folder " + narrow(dir.c_str()) + " (error " + std::to_string(::GetLastError()) + ")";
            return {};
        }
    }
    return narrow(dir.c_str());
}

// Undoes the runs whose launcher is gone. A live launcher holds its journal open without
// sharing, so opening one exclusively succeeds only once its owner has ended, however it
// ended; what cannot be undone now stays for the next start.
void recover(const Api& api, const std::string& dir) {
    WIN32_FIND_DATAW found;
    HANDLE find = ::FindFirstFileExW(widen(dir + "\\*.journal").c_str(), FindExInfoBasic, &found, FindExSearchNameMatch, nullptr, 0);
    if (find == INVALID_HANDLE_VALUE) return;
    do {
        const std::wstring path = widen(dir) + L"\\" + found.cFileName;
        HANDLE file = ::CreateFileW(path.c_str(), GENERIC_READ | DELETE, 0, nullptr, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
        if (file == INVALID_HANDLE_VALUE) continue;  // its launcher still runs
        std::string text;
        char buf[4096];
        DWORD n = 0;
        while (text.size() < (1u << 20) && ::ReadFile(file, buf, sizeof buf, &n, nullptr) && n > 0) text.append(buf, n);
        auto journal = ac::parse_journal(text);
        if (journal && undo(api, *journal)) {
            FILE_DISPOSITION_INFO gone{TRUE};
            ::SetFileInformationByHandle(file, FileDispositionInfo, &gone, sizeof gone);
        }
        ::CloseHandle(file);
    } while (::FindNextFileW(find, &found));
    ::FindClose(find);
}

// The run's journal: open, unshared, from creation to the end of the run; each line on the
// disk before the change it announces.
class RunJournal {
public:
    RunJournal() = default;
    RunJournal(const RunJournal&) = delete;
    RunJournal& operator=(const RunJournal&) = delete;
    ~RunJournal() {
        if (file_ != INVALID_HANDLE_VALUE) ::CloseHandle(file_);
    }

    std::string open(const std::string& path) {
        file_ = ::CreateFileW(widen(path).c_str(), GENERIC_WRITE | DELETE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
        if (file_ == INVALID_HANDLE_VALUE) return "cannot create the journal " + path + " (error " + std::to_string(::GetLastError()) + ")";
        path_ = path;
        return write(std::string(ac::journal_header) + "\n");
    }

    std::string record(std::string_view key, const std::string& value) {
        if (key == "acl") {
            if (std::any_of(journal_.acl.begin(), journal_.acl.end(), [&](const std::string& p) { return ac::folded(p) == ac::folded(value); })) return {};
            journal_.acl.push_back(value);
        } else if (key == "sid") journal_.sid = value;
        else if (key == "temp") journal_.temp = value;
        else if (key == "profile") journal_.profile = value;
        return write(ac::journal_line(key, value));
    }

    const ac::Journal& journal() const { return journal_; }

    // Everything undone: the journal goes. Otherwise it stays for the next start.
    void finish(bool undone) {
        if (undone && file_ != INVALID_HANDLE_VALUE) {
            FILE_DISPOSITION_INFO gone{TRUE};
            ::SetFileInformationByHandle(file_, FileDispositionInfo, &gone, sizeof gone);
        }
    }

private:
    std::string write(const std::string& line) {
        DWORD written = 0;
        if (!::WriteFile(file_, line.data(), static_cast<DWORD>(line.size()), &written, nullptr) || written != line.size() ||
            !::FlushFileBuffers(file_))
            return "cannot write the journal " + path_ + " (error " + std::to_string(::GetLastError()) + ")";
        return {};
    }

    HANDLE file_ = INVALID_HANDLE_VALUE;
    std::string path_;
    ac::Journal journal_;
};

// The final path of an existing file or folder (links, junctions, 8.3 names, case), as a
// drive path when it is on one, otherwise as Windows spells it (plan.hpp refuses those).
std::expected<std::string, std::string> final_path(const std::string& path) {
    HANDLE h = ::CreateFileW(widen(path).c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                             FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) return std::unexpected("error " + std::to_string(::GetLastError()));
    std::wstring buf(1024, L'\0');
    DWORD n = ::GetFinalPathNameByHandleW(h, buf.data(), static_cast<DWORD>(buf.size()), FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (n >= buf.size()) {
        buf.resize(n + 1);
        n = ::GetFinalPathNameByHandleW(h, buf.data(), static_cast<DWORD>(buf.size()), FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    }
    const DWORD error = ::GetLastError();
    ::CloseHandle(h);
    if (n == 0 || n >= buf.size()) return std::unexpected("error " + std::to_string(error));
    buf.resize(n);
    return narrow(buf.c_str());  // "\\?\C:\..." (a drive path) or "\\?\UNC\..." (refused)
}

// Set by the host (the name is internal/windows_finish.hpp's) to ask this launcher to end the
// command and clean up before the host ends the job.
HANDLE finish_event = nullptr;

// Waits for the command, or for the host's request to finish: then ends the command's
// job, so that the launcher can take back what it gave while it still may.
void wait_for(HANDLE process, HANDLE job) {
    HANDLE handles[] = {process, finish_event};
    const DWORD n = finish_event ? 2 : 1;
    if (::WaitForMultipleObjects(n, handles, FALSE, INFINITE) == WAIT_OBJECT_0 + 1) {
        ::TerminateJobObject(job, 1);
        ::WaitForSingleObject(process, INFINITE);
    }
}

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

// What the container is started with: its SID and no capability (no network, nothing
// else), or the internetClient capability alone. Not to be moved: the capabilities point
// into it.
class ContainerCapabilities {
public:
    ContainerCapabilities() = default;
    ContainerCapabilities(const ContainerCapabilities&) = delete;
    ContainerCapabilities& operator=(const ContainerCapabilities&) = delete;
    ~ContainerCapabilities() {
        if (internet_client_) ::LocalFree(internet_client_);
    }

    // Empty, or why they cannot be had.
    std::string make(PSID sid, bool network) {
        capabilities_.AppContainerSid = sid;
        if (!network) return {};
        // S-1-15-3-1: the internetClient capability (outbound connections).
        if (!::ConvertStringSidToSidW(L"S-1-15-3-1", &internet_client_))
            return "cannot make the internetClient capability (error " + std::to_string(::GetLastError()) + ")";
        granted_ = {internet_client_, SE_GROUP_ENABLED};
        capabilities_.Capabilities = &granted_;
        capabilities_.CapabilityCount = 1;
        return {};
    }

    SECURITY_CAPABILITIES& get() { return capabilities_; }

private:
    SECURITY_CAPABILITIES capabilities_{};
    PSID internet_client_ = nullptr;
    SID_AND_ATTRIBUTES granted_{};
};

// The process attributes in `storage`: the container, and the handles in `inherited` as
// the only ones inherited. Null, with `error` set, when they cannot be made; otherwise for
// the caller to delete (DeleteProcThreadAttributeList).
LPPROC_THREAD_ATTRIBUTE_LIST container_attributes(std::vector<unsigned char>& storage, SECURITY_CAPABILITIES& capabilities,
                                                  std::vector<HANDLE>& inherited, std::string& error) {
    SIZE_T size = 0;
    ::InitializeProcThreadAttributeList(nullptr, 2, 0, &size);
    storage.resize(size);
    auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
    if (!::InitializeProcThreadAttributeList(attributes, 2, 0, &size)) {
        error = "cannot make the process attribute list (error " + std::to_string(::GetLastError()) + ")";
        return nullptr;
    }
    if (!::UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, &capabilities, sizeof capabilities, nullptr,
                                     nullptr)) {
        error = "AppContainer is not available: cannot set the security capabilities (error " + std::to_string(::GetLastError()) + ")";
        ::DeleteProcThreadAttributeList(attributes);
        return nullptr;
    }
    if (!::UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited.data(), inherited.size() * sizeof(HANDLE),
                                     nullptr, nullptr)) {
        error = "cannot limit the handles the command inherits (error " + std::to_string(::GetLastError()) + ")";
        ::DeleteProcThreadAttributeList(attributes);
        return nullptr;
    }
    return attributes;
}

// Starts the command suspended in the container, with a job that kills it when closed
// (`job`, for the caller to close). False, with `error` set, when either cannot be had.
bool start_suspended(const std::string& argv0, const std::wstring& application, std::wstring& line, SECURITY_CAPABILITIES& capabilities,
                     ac::StandardHandles& handles, HANDLE& job, PROCESS_INFORMATION& pi, std::string& error) {
    // The container, and the three standard handles as the only ones inherited: nothing
    // else the launcher holds, inheritable or not, reaches the command.
    std::vector<HANDLE> inherited = handles.list();
    std::vector<unsigned char> storage;
    LPPROC_THREAD_ATTRIBUTE_LIST attributes = container_attributes(storage, capabilities, inherited, error);
    if (!attributes) return false;
    job = ::CreateJobObjectW(nullptr, nullptr);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (!job || !::SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits)) {
        ::DeleteProcThreadAttributeList(attributes);
        error = "cannot create a job object (error " + std::to_string(::GetLastError()) + ")";
        return false;
    }
    STARTUPINFOEXW si{};
    si.StartupInfo.cb = sizeof si;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.StartupInfo.hStdInput = handles.input();
    si.StartupInfo.hStdOutput = handles.output();
    si.StartupInfo.hStdError = handles.error();
    si.lpAttributeList = attributes;
    // Exactly the file resolved (never searched for again), in a console of its own
    // (command.hpp, passed_as: it gets no handle to the caller's console).
    const DWORD flags = EXTENDED_STARTUPINFO_PRESENT | CREATE_SUSPENDED | CREATE_NO_WINDOW;
    const BOOL started = ::CreateProcessW(application.c_str(), line.data(), nullptr, nullptr, TRUE, flags, nullptr, nullptr, &si.StartupInfo, &pi);
    const DWORD start_error = ::GetLastError();
    ::DeleteProcThreadAttributeList(attributes);
    handles.started();
    if (!started) {
        ::CloseHandle(job);
        error = "cannot start " + argv0 + " in the container (error " + std::to_string(start_error) + ")";
        return false;
    }
    return true;
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
    ContainerCapabilities capabilities;
    if (auto why = capabilities.make(sid, network); !why.empty()) {
        error = why;
        return exit_failure;
    }
    ac::StandardHandles handles;
    if (auto why = handles.prepare(); !why.empty()) {
        error = why;
        return exit_failure;
    }
    HANDLE job = nullptr;
    PROCESS_INFORMATION pi{};
    if (!start_suspended(command.front(), application, wline, capabilities.get(), handles, job, pi, error)) return exit_failure;
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
    wait_for(pi.hProcess, job);
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

// This run's nonce (plan.hpp, run_nonce).
std::string this_run_nonce() {
    LARGE_INTEGER counter{};
    ::QueryPerformanceCounter(&counter);
    return ac::run_nonce(::GetCurrentProcessId(), static_cast<std::uint64_t>(counter.QuadPart) ^ ::GetTickCount64());
}

// The launcher's %TEMP%, where the run's own temporary directory is made by default.
std::string launcher_temp_dir() {
    wchar_t buf[MAX_PATH + 1];
    const DWORD n = ::GetTempPathW(MAX_PATH + 1, buf);
    return n > 0 && n <= MAX_PATH ? narrow(std::wstring(buf, n).c_str()) : std::string();
}

// One run, set up step by step (each journaled before it is made) and undone when this
// ends, however setting up ended.
class Run {
public:
    explicit Run(const Api& api) : api_(api) {}
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;
    ~Run() {
        // The command has ended (or never started): undo in full; if something could not be
        // undone, the journal stays and the next start tries again.
        journal_.finish(undo(api_, journal_.journal()));
        if (sid_) ::FreeSid(sid_);
    }

    std::string set_up(ac::LaunchRequest& request, const std::string& journals) {
        const std::string nonce = this_run_nonce();
        if (auto why = ac::journal_refusal(journals, request.grants); !why.empty()) return why;
        if (auto why = journal_.open(journals + "\\" + ac::journal_file_name(nonce)); !why.empty()) return why;
        const std::string name = ac::profile_name(request.grants, request.denials, nonce);
        if (auto why = journal_.record("profile", name); !why.empty()) return why;
        if (auto why = create_profile(name); !why.empty()) return why;
        LPWSTR text = nullptr;
        if (!::ConvertSidToStringSidW(sid_, &text)) return "cannot spell the container's SID (error " + std::to_string(::GetLastError()) + ")";
        const std::string sid_text = narrow(text);
        ::LocalFree(text);
        if (auto why = journal_.record("sid", sid_text); !why.empty()) return why;
        if (request.private_temp)
            if (auto why = make_private_temp(request, nonce); !why.empty()) return why;
        // Grants first, then denials in their order. Each change is recorded before it is
        // made; undoing removes only this container's entries, so the order of undoing
        // does not matter and another run's entries, or the user's, are never touched.
        for (const auto& g : request.grants) {
            if (auto why = journal_.record("acl", g.path); !why.empty()) return why;
            if (auto why = grant(g, sid_); !why.empty()) return why;
        }
        for (const auto& d : request.denials) {
            if (auto why = journal_.record("acl", d.path); !why.empty()) return why;
            if (auto why = deny(d, sid_); !why.empty()) return why;
        }
        return {};
    }

    PSID sid() const { return sid_; }

private:
    std::string create_profile(const std::string& name) {
        const std::wstring wname = widen(name);
        HRESULT hr = api_.create(wname.c_str(), wname.c_str(), L"confine", nullptr, 0, &sid_);
        if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)) hr = api_.derive(wname.c_str(), &sid_);
        if (FAILED(hr)) return "AppContainer is not available: cannot create the profile " + name + " (" + hresult_text(hr) + ")";
        return {};
    }

    // The run's temporary directory: new (never one that exists), granted read-write, and
    // named by TEMP and TMP in the environment the command inherits from the launcher.
    std::string make_private_temp(ac::LaunchRequest& request, const std::string& nonce) {
        std::string parent = request.temp_parent.empty() ? launcher_temp_dir() : request.temp_parent;
        if (parent.empty()) return "cannot find the temporary directory to make the run's own in";
        auto real = final_path(parent);
        if (!real) return "cannot resolve the temporary directory " + parent + ": " + real.error();
        if (auto why = ac::path_refusal(*real); !why.empty()) return "the temporary directory " + parent + ": " + why;
        const std::string dir = ac::normalized(*real) + "\\" + ac::private_temp_name(nonce);
        if (auto why = journal_.record("temp", dir); !why.empty()) return why;
        if (!::CreateDirectoryW(widen(dir).c_str(), nullptr))
            return "cannot make the run's temporary directory " + dir + " (error " + std::to_string(::GetLastError()) + ")";
        if (!::SetEnvironmentVariableW(L"TEMP", widen(dir).c_str()) || !::SetEnvironmentVariableW(L"TMP", widen(dir).c_str()))
            return "cannot set TEMP and TMP (error " + std::to_string(::GetLastError()) + ")";
        request.grants.insert(request.grants.begin(), {dir, ac::Access::read_write});
        return {};
    }

    const Api& api_;
    RunJournal journal_;
    PSID sid_ = nullptr;
};

}  // namespace

int wmain(int argc, wchar_t** argv) {
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) args.push_back(narrow(argv[i]));
    auto request = ac::parse_launcher_args(args);
    if (!request) return fail("usage error: " + request.error());

    Api api;
    if (auto missing = api.load(); !missing.empty()) return fail(missing);
    ::SetConsoleCtrlHandler(&keep_running, TRUE);
    // Created before anything is changed: from here on the host can ask for a clean end.
    finish_event = ::CreateEventW(nullptr, TRUE, FALSE, confine::windows::finish_event_name(::GetCurrentProcessId()).c_str());

    std::string error;
    const std::string journals = journal_dir(error);
    if (journals.empty()) return fail(error);
    lock_dir = journals;
    recover(api, journals);
    if (auto resolved = ac::resolve_paths(*request, final_path); !resolved) return fail(resolved.error());

    int status = exit_failure;
    {
        Run run(api);
        if (auto why = run.set_up(*request, journals); !why.empty()) {
            error = why;  // what was set up so far is undone on the way out
        } else if (request->probe) {
            // Functional: a process must start in the container and end well.
            wchar_t system[MAX_PATH];
            const UINT n = ::GetSystemDirectoryW(system, MAX_PATH);
            const std::string cmd = (n > 0 && n < MAX_PATH ? narrow(system) : std::string("C:\\Windows\\System32")) + "\\cmd.exe";
            status = run_contained(run.sid(), {cmd, "/c", "exit", "0"}, false, error);
            if (error.empty() && status != 0) error = "a command in the container ended with status " + std::to_string(status);
        } else {
            status = run_contained(run.sid(), request->command, request->network, error);
        }
    }
    if (!error.empty()) return fail(error);
    if (request->probe) std::fputs("appcontainer: available\n", stdout);
    return status;
}
