// Fuzz target: what confine reads of a workspace's repositories to find the paths git
// would run code from (core/src/run/git_guard.hpp): a `.git` file's `gitdir:` line and a
// `commondir`, a git configuration's include and hooks paths, and an index's gitlinks.
// The first byte picks the reader. Properties: never a crash; a named path is absolute
// and normal; a path written into a configuration as git quotes it is read back whole;
// a gitlink read is a name the index bytes hold.
#include "fuzz.hpp"

#include "git_guard.hpp"

#include <algorithm>

using confine::fuzz::require;
namespace fs = std::filesystem;

namespace {

void named(std::string_view text, bool gitdir_line) {
    const fs::path dir = "/ws/repo/.git";
    const auto p = confine::detail::git_named_path(text, dir, gitdir_line);
    if (!p) return;
    require(p->is_absolute(), "a named path is absolute", p->string());
    require(*p == p->lexically_normal(), "a named path is normal", p->string());
    require(p->string().find('\0') == std::string::npos, "a named path holds no NUL");
}

// `value` as git writes a quoted one.
std::string git_quoted(std::string_view value) {
    std::string out = "\"";
    for (char c : value) {
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\b') out += "\\b";
        else if (c == '"' || c == '\\') out += std::string("\\") + c;
        else out += c;
    }
    return out + "\"";
}

void config(std::string_view text) {
    const auto found = confine::detail::git_config_paths(text);
    for (const auto* list : {&found.includes, &found.hooks_paths})
        for (const auto& v : *list) require(!v.empty(), "a path read is not empty");
    // The same bytes as a quoted value, in a file of git's own shape.
    if (text.empty() || text.find('\0') != std::string_view::npos) return;
    const std::string file = "[core]\n\tbare = false\n[include]\n\tpath = " + git_quoted(text) + " ; where\n[core]\n\thooksPath=" +
                             git_quoted(text) + "\n";
    const auto back = confine::detail::git_config_paths(file);
    require(back.includes == std::vector<std::string>{std::string(text)}, "an include path reads back whole", file);
    require(back.hooks_paths == std::vector<std::string>{std::string(text)}, "a hooks path reads back whole", file);
}

void index(std::string_view bytes) {
    std::vector<std::string> directories;
    const auto links = confine::detail::index_gitlinks(bytes, &directories);
    for (const auto& l : links) require(bytes.find(l) != std::string_view::npos || (bytes.size() > 12 && bytes[7] == 4), "a gitlink is a name the index holds", l);
    for (const auto& d : directories) require(!d.empty(), "a directory holding an entry has a name", d);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    confine::fuzz::Input in(data, size);
    switch (in.byte() % 4) {
    case 0: named(in.rest(), true); break;
    case 1: named(in.rest(), false); break;
    case 2: config(in.rest()); break;
    default: index(in.rest()); break;
    }
    return 0;
}
