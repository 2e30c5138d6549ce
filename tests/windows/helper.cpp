// A command for the Windows tests to run: `win-helper exit N`, `win-helper out TEXT`,
// `win-helper err TEXT`, `win-helper sleep MS`, `win-helper touch FILE`, and
// `win-helper await-finish FILE`: a runner with something to undo — it makes the finish
// event (internal/windows_finish.hpp), waits up to a minute for the host to set it, then
// writes FILE and exits 3 (status 4 when nobody asked).
#include <confine/internal/windows_finish.hpp>

#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const char* what = argv[i];
        const char* arg = argv[i + 1];
        if (!std::strcmp(what, "exit")) return std::atoi(arg);
        if (!std::strcmp(what, "out")) std::printf("%s\n", arg);
        if (!std::strcmp(what, "err")) std::fprintf(stderr, "%s\n", arg);
        if (!std::strcmp(what, "sleep")) ::Sleep(static_cast<DWORD>(std::atoi(arg)));
        if (!std::strcmp(what, "await-finish")) {
            HANDLE finish = ::CreateEventW(nullptr, TRUE, FALSE, confine::windows::finish_event_name(::GetCurrentProcessId()).c_str());
            if (!finish || ::WaitForSingleObject(finish, 60000) != WAIT_OBJECT_0) return 4;
            if (FILE* f = std::fopen(arg, "w")) std::fclose(f);
            return 3;
        }
        if (!std::strcmp(what, "touch")) {
            if (FILE* f = std::fopen(arg, "w")) std::fclose(f);
        }
        std::fflush(stdout);
        std::fflush(stderr);
    }
    return 0;
}
