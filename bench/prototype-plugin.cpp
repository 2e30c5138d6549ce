// The plugin bench/prototype-run loads: one C entry point over a little C++.
#include <string>

extern "C" const char* prototype_workspace(const char* given) {
    static std::string workspace;
    workspace = given;
    return workspace.c_str();
}
