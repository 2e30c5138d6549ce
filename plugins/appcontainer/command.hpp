// The portable half of how appcontainer-run starts its command: which file it starts
// and what each standard handle becomes. No Windows API here, so that it is tested on
// any OS; appcontainer_run.cpp and std_handles.hpp do the Windows half.
#pragma once

#include <confine/internal/windows_program.hpp>

#include <algorithm>
#include <expected>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace confine::appcontainer {

// The file the launcher starts as lpApplicationName, never searched for by
// CreateProcessW (which would look in the launcher's own directory and in the working
// directory — the workspace — first). confinectl passes the file it resolved, an
// absolute path, as the command's argv[0]: found again here, it is that same file. A
// bare name from a host that wrote the launcher's argv itself is looked up by the same
// rule (confine/internal/windows_program.hpp), batch files refused the same way.
inline std::expected<std::string, std::string> command_file(const std::string& argv0, std::string_view path, std::string_view pathext,
                                                            std::string_view working_directory,
                                                            const std::function<windows::FileKind(const std::string&)>& kind) {
    auto file = windows::resolve_program(argv0, path, pathext, working_directory, kind);
    if (!file) return std::unexpected(file.error().message);
    return *file;
}

// What one of the launcher's standard handles is, and what the command gets for it.
// none: absent, invalid or of no known type; console: a character device (a console,
// or NUL); other: a disk file or a pipe.
enum class GivenHandle { none, console, other };
enum class PassedHandle {
    null_device,  // the NUL device, opened for the command
    pipe,         // a pipe the launcher copies through, to or from the console
    same,         // the launcher's own handle, duplicated with the access it has
};

// A console handle is never passed on. With one, the command could write the caller's
// console input (WriteConsoleInput: keystrokes the caller's shell then reads, the
// Windows form of TIOCSTI), read its screen buffer, or change its modes; a console
// input handle reduced to read access still lets it change modes. So the command gets
// a pipe for each console handle (Codex's Windows sandbox captures through pipes too),
// and runs in a console of its own (CREATE_NO_WINDOW): a console it opens by name
// (CONIN$) is that one, which no one else reads.
constexpr PassedHandle passed_as(GivenHandle given) {
    switch (given) {
    case GivenHandle::none: return PassedHandle::null_device;
    case GivenHandle::console: return PassedHandle::pipe;
    case GivenHandle::other: return PassedHandle::same;
    }
    return PassedHandle::null_device;
}

// The handles for PROC_THREAD_ATTRIBUTE_HANDLE_LIST: each once (the list refuses
// duplicates; stdout and stderr are often one handle), none empty, in their order.
template <class Handle>
std::vector<Handle> handle_list(std::initializer_list<Handle> handles, Handle empty) {
    std::vector<Handle> out;
    for (Handle h : handles)
        if (h != empty && std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
    return out;
}

}  // namespace confine::appcontainer
