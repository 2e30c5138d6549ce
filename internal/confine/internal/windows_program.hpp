// Which file a Windows command name starts: one lookup, used by confinectl before the
// runner is chosen and by a launcher that must start exactly that file. Portable (the
// file system is a function the caller gives), so that it is tested on any OS.
//
//   auto file = confine::windows::resolve_program("git", path, pathext, cwd, kind_of);
//   if (!file) fail(file.error().message);   // one line, naming the command
//   CreateProcessW(widen(*file).c_str(), command_line, ...);
//
// The rule is cmd.exe's, less the current directory:
// - a name with a separator or a drive (`.\tool.exe`, `C:\bin\tool`) names its file,
//   relative to the working directory when it is relative;
// - a bare name is looked up in each absolute PATH directory in order, never in the
//   working directory (CreateProcess and cmd.exe look there first: a `git.exe` the
//   command could write into the workspace would shadow git). Relative PATH entries
//   (`.`, `bin`) are skipped for the same reason;
// - a name with an extension is tried as it is; unless that extension is one of PATHEXT
//   (`python3.11`, `tool`), it is then tried with each PATHEXT extension in turn, in each
//   directory before the next (PATHEXT unset or empty: `.COM;.EXE;.BAT;.CMD`).
// What is found must be a file Windows starts directly, a `.exe` or a `.com`: a `.bat`
// or `.cmd` is refused (CreateProcess hands it to cmd.exe, whose parsing no argument
// quoting makes safe: CVE-2024-24576), and so is anything else (a `.ps1`, `.py`, a file
// without an extension), each with a line saying what to run instead.
#pragma once

#include <expected>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace confine::windows {

enum class FileKind { missing, file, directory };

struct ProgramRefusal {
    enum class Reason {
        not_found,       // nothing by that name (127)
        not_executable,  // only a directory by that name (126)
        batch_file,      // a .bat or .cmd: refused, cmd.exe's quoting is unsafe (126)
        not_startable,   // a file Windows does not start directly (126)
    };
    Reason reason;
    std::string message;  // one line, starting with the name as given
};

namespace program_detail {

inline std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

inline std::vector<std::string> split(std::string_view list) {
    std::vector<std::string> out;
    for (std::size_t start = 0; start <= list.size();) {
        std::size_t end = list.find(';', start);
        if (end == std::string_view::npos) end = list.size();
        std::string_view item = list.substr(start, end - start);
        // cmd.exe accepts "C:\Program Files\x" quoted in PATH.
        if (item.size() >= 2 && item.front() == '"' && item.back() == '"') item = item.substr(1, item.size() - 2);
        if (!item.empty()) out.emplace_back(item);
        start = end + 1;
    }
    return out;
}

// The extension of the last component, dot included, or "".
inline std::string_view extension(std::string_view path) {
    const std::size_t name = path.find_last_of("\\/:");
    const std::string_view last = name == std::string_view::npos ? path : path.substr(name + 1);
    const std::size_t dot = last.find_last_of('.');
    return dot == std::string_view::npos || dot == 0 ? std::string_view() : last.substr(dot);
}

inline std::string joined(std::string_view dir, std::string_view name) {
    std::string out(dir);
    if (!out.empty() && out.back() != '\\' && out.back() != '/') out += '\\';
    out += name;
    return out;
}

}  // namespace program_detail

// Whether `path` is absolute for Windows: a drive and a separator (`C:\`), or a UNC or
// device path (`\\server\share`, `\\?\C:\`).
inline bool is_absolute_path(std::string_view path) {
    auto sep = [](char c) { return c == '\\' || c == '/'; };
    const bool drive = path.size() >= 3 && ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z')) && path[1] == ':' &&
                       sep(path[2]);
    return drive || (path.size() >= 2 && sep(path[0]) && sep(path[1]));
}

// A .bat or .cmd file: cmd.exe runs it, whatever starts it.
inline bool is_batch_file(std::string_view path) {
    const std::string ext = program_detail::lower(program_detail::extension(path));
    return ext == ".bat" || ext == ".cmd";
}

// The line that refuses a batch file, naming it, why and what to do instead.
inline std::string batch_refusal(std::string_view name, std::string_view file) {
    std::string line(name);
    if (program_detail::lower(name) != program_detail::lower(file)) line += " resolves to " + std::string(file) + ", which";
    line += " is a batch file and is not run: Windows starts it through cmd.exe, where no quoting of its arguments stops them "
            "from running other commands (CVE-2024-24576); to accept that, start cmd.exe /c explicitly";
    return line;
}

// The file a command name starts (see above). `path` and `pathext` are the values of
// PATH and PATHEXT in the environment the command gets; `working_directory` (absolute)
// anchors a relative explicit path; `kind` says what is at an absolute path.
inline std::expected<std::string, ProgramRefusal> resolve_program(std::string_view name, std::string_view path, std::string_view pathext,
                                                                  std::string_view working_directory,
                                                                  const std::function<FileKind(const std::string&)>& kind) {
    using Reason = ProgramRefusal::Reason;
    const std::string given(name);
    if (name.empty()) return std::unexpected(ProgramRefusal{Reason::not_found, "'': No such file or directory"});
    std::vector<std::string> extensions = program_detail::split(pathext);
    if (extensions.empty()) extensions = {".COM", ".EXE", ".BAT", ".CMD"};
    const std::string ext = program_detail::lower(program_detail::extension(name));
    bool known = false;
    for (const auto& e : extensions) known = known || (!ext.empty() && program_detail::lower(e) == ext);
    // As it is when it has an extension; with each PATHEXT extension (in lower case, as
    // files are usually named) unless that extension is one of them.
    std::vector<std::string> suffixes;
    if (!ext.empty()) suffixes.push_back("");
    if (!known)
        for (const auto& e : extensions) suffixes.push_back(program_detail::lower(e));

    bool directory_seen = false;
    auto first_file = [&](const std::string& base) -> std::string {
        for (const auto& s : suffixes) {
            const std::string candidate = base + s;
            switch (kind(candidate)) {
            case FileKind::file: return candidate;
            case FileKind::directory: directory_seen = true; break;
            case FileKind::missing: break;
            }
        }
        return {};
    };
    const bool explicit_path = name.find_first_of("\\/:") != std::string_view::npos;
    std::string found;
    if (explicit_path) {
        found = first_file(is_absolute_path(name) || working_directory.empty() ? given : program_detail::joined(working_directory, name));
    } else {
        for (const auto& dir : program_detail::split(path)) {
            if (!is_absolute_path(dir)) continue;  // `.` or `bin`: the working directory by another name
            found = first_file(program_detail::joined(dir, name));
            if (!found.empty()) break;
        }
    }
    if (found.empty()) {
        if (directory_seen) return std::unexpected(ProgramRefusal{Reason::not_executable, given + ": Permission denied"});
        return std::unexpected(
            ProgramRefusal{Reason::not_found, given + (explicit_path ? ": No such file or directory" : ": command not found")});
    }
    if (is_batch_file(found)) return std::unexpected(ProgramRefusal{Reason::batch_file, batch_refusal(given, found)});
    const std::string found_ext = program_detail::lower(program_detail::extension(found));
    if (found_ext != ".exe" && found_ext != ".com")
        return std::unexpected(ProgramRefusal{Reason::not_startable, given + (found == given ? "" : " resolves to " + found + ", which") +
                                                                         " is not a program Windows starts directly (a .exe or .com); "
                                                                         "start the program that runs it explicitly"});
    return found;
}

}  // namespace confine::windows
