// The three standard handles appcontainer-run gives its command (command.hpp says
// which becomes what), and the threads that copy between a console and the command's
// pipes. Windows only; included by appcontainer_run.cpp alone.
#pragma once

#include "command.hpp"

#include <windows.h>

#include <memory>
#include <thread>
#include <vector>

namespace confine::appcontainer {

class StandardHandles {
public:
    StandardHandles() = default;
    StandardHandles(const StandardHandles&) = delete;
    StandardHandles& operator=(const StandardHandles&) = delete;
    ~StandardHandles() {
        started();  // if the command never got them, their pipes end here
        finish();
    }

    // Makes the command's three handles, all inheritable (and only they are inherited:
    // the handle list); an error text, or "".
    std::string prepare() {
        const DWORD which[3] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
        for (int i = 0; i < 3; ++i) {
            HANDLE own = ::GetStdHandle(which[i]);
            switch (passed_as(given(own))) {
            case PassedHandle::null_device: child_[i] = null_device(i == 0); break;
            case PassedHandle::same:
                if (!::DuplicateHandle(::GetCurrentProcess(), own, ::GetCurrentProcess(), &child_[i], 0, TRUE, DUPLICATE_SAME_ACCESS))
                    child_[i] = nullptr;
                break;
            case PassedHandle::pipe: child_[i] = pipe_to_console(own, i == 0); break;
            }
            if (!child_[i]) return "cannot make the command's standard handle " + std::to_string(i) + " (error " + std::to_string(::GetLastError()) + ")";
        }
        return {};
    }

    HANDLE input() const { return child_[0]; }
    HANDLE output() const { return child_[1]; }
    HANDLE error() const { return child_[2]; }
    std::vector<HANDLE> list() const { return handle_list<HANDLE>({child_[0], child_[1], child_[2]}, nullptr); }

    // The command has them: the launcher's copies go, so that a pipe ends when the
    // command and what it started are gone.
    void started() {
        for (HANDLE& h : child_) {
            if (h) ::CloseHandle(h);
            h = nullptr;
        }
    }

    // Copies what is left of the command's output to the console. The input thread is
    // left behind: it may wait for a line the caller never types, and ends with the
    // launcher.
    void finish() {
        for (auto& t : output_threads_)
            if (t.joinable()) t.join();
        output_threads_.clear();
        if (input_thread_.joinable()) input_thread_.detach();
    }

private:
    // Decided by the file type alone, so that nothing hangs on a console call working on
    // a console the launcher is not attached to: every character device (a console, and
    // also NUL or a serial port, harmless to copy) becomes a pipe; only files and pipes
    // are passed on; a handle of no known type is not passed at all.
    static GivenHandle given(HANDLE h) {
        if (!h || h == INVALID_HANDLE_VALUE) return GivenHandle::none;
        switch (::GetFileType(h)) {
        case FILE_TYPE_DISK:
        case FILE_TYPE_PIPE: return GivenHandle::other;
        case FILE_TYPE_CHAR: return GivenHandle::console;
        default: return GivenHandle::none;
        }
    }

    static HANDLE null_device(bool input) {
        SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
        HANDLE h = ::CreateFileW(L"NUL", input ? GENERIC_READ : GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, nullptr);
        return h == INVALID_HANDLE_VALUE ? nullptr : h;
    }

    // A pipe whose far end the command gets (inheritable) and whose near end a thread of
    // the launcher copies to or from the console handle.
    HANDLE pipe_to_console(HANDLE console, bool input) {
        SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, FALSE};
        HANDLE read_end = nullptr, write_end = nullptr;
        if (!::CreatePipe(&read_end, &write_end, &sa, 0)) return nullptr;
        HANDLE far_end = input ? read_end : write_end;
        HANDLE near_end = input ? write_end : read_end;
        if (!::SetHandleInformation(far_end, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT)) {
            ::CloseHandle(read_end);
            ::CloseHandle(write_end);
            return nullptr;
        }
        if (input) input_thread_ = std::thread(copy, console, near_end, near_end);
        else output_threads_.emplace_back(copy, near_end, console, near_end);
        return far_end;
    }

    // Copies until either side ends, then closes `pipe` (its own end), never the console's.
    static void copy(HANDLE from, HANDLE to, HANDLE pipe) {
        char buf[16384];
        DWORD n = 0, written = 0;
        while (::ReadFile(from, buf, sizeof buf, &n, nullptr) && n > 0) {
            DWORD at = 0;
            while (at < n && ::WriteFile(to, buf + at, n - at, &written, nullptr) && written > 0) at += written;
            if (at < n) break;
        }
        ::CloseHandle(pipe);
    }

    HANDLE child_[3] = {nullptr, nullptr, nullptr};
    std::thread input_thread_;
    std::vector<std::thread> output_threads_;
};

}  // namespace confine::appcontainer
