// The lock of one folder's access list (plan.hpp, acl_lock_file), held while alive.
// LockFileEx waits for another launcher of the user's, in any session, to let go; a
// launcher that is killed lets go with its handle: the list was either written or not,
// and the journal covers both. A lock that cannot be taken is said (held() false): a
// list is then not changed rather than changed unserialised.
#pragma once

#include "plan.hpp"

#include <windows.h>

#include <string>

namespace confine::appcontainer {

class AclLock {
public:
    enum class Wait { until_free, not_at_all };

    // `dir`: the user's journal folder; `path`: the folder whose list is to change.
    AclLock(const std::string& dir, const std::string& path, Wait wait = Wait::until_free) {
        if (dir.empty()) return;
        const std::string name = dir + "\\" + acl_lock_file(path);
        const int n = ::MultiByteToWideChar(CP_UTF8, 0, name.c_str(), -1, nullptr, 0);
        std::wstring wname(n > 0 ? n : 0, L'\0');
        if (n <= 0 || !::MultiByteToWideChar(CP_UTF8, 0, name.c_str(), -1, wname.data(), n)) return;
        file_ = ::CreateFileW(wname.c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                              nullptr, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
        if (file_ == INVALID_HANDLE_VALUE) return;
        OVERLAPPED at{};
        const DWORD flags = LOCKFILE_EXCLUSIVE_LOCK | (wait == Wait::not_at_all ? LOCKFILE_FAIL_IMMEDIATELY : 0);
        held_ = ::LockFileEx(file_, flags, 0, 1, 0, &at) != FALSE;
    }
    AclLock(const AclLock&) = delete;
    AclLock& operator=(const AclLock&) = delete;
    ~AclLock() {
        if (held_) {
            OVERLAPPED at{};
            ::UnlockFileEx(file_, 0, 1, 0, &at);
        }
        if (file_ != INVALID_HANDLE_VALUE) ::CloseHandle(file_);
    }
    bool held() const { return held_; }

private:
    HANDLE file_ = INVALID_HANDLE_VALUE;
    bool held_ = false;
};

}  // namespace confine::appcontainer
