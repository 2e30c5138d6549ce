// The least a plugin-based launcher does, for bench/landlock to compare against:
// read and parse a TOML configuration with toml++, dlopen one plugin (built with a
// static libstdc++, as confine's are) and call into it, build one Landlock ruleset,
// then exec in place. No trust checks, no validation, no ABI checks, no error reports:
// a floor for `confinectl run` on Landlock, not something to use.
//
//   prototype-run <config.toml> <plugin.so> <workspace> -- <command> [args...]
#include <toml++/toml.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

struct RulesetAttr { std::uint64_t handled; };
struct __attribute__((packed)) PathBeneath { std::uint64_t allowed; std::int32_t fd; };

void grant(int ruleset, const char* path, std::uint64_t allowed) {
    const int fd = ::open(path, O_PATH | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) _exit(125);
    if (!S_ISDIR(st.st_mode)) allowed &= 1 | 2 | 4 | (1 << 14) | (1 << 15);
    PathBeneath rule{allowed, fd};
    if (::syscall(SYS_landlock_add_rule, ruleset, 1, &rule, 0) != 0) _exit(125);
    ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 6) return 125;
    std::FILE* f = std::fopen(argv[1], "r");
    if (!f) return 125;
    std::string text;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
    auto config = toml::parse(text);
    if (!config["platform"]["linux"]["chain"].as_array()) return 125;
    void* plugin = ::dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) return 125;
    auto workspace = reinterpret_cast<const char* (*)(const char*)>(::dlsym(plugin, "prototype_workspace"));
    if (!workspace) return 125;
    RulesetAttr attr{0xFFFF};
    const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
    if (ruleset < 0) return 125;
    grant(ruleset, "/", 1 | 4 | 8);
    grant(ruleset, "/dev/null", 0xFFFF);
    grant(ruleset, "/tmp", 0xFFFF);
    grant(ruleset, workspace(argv[3]), 0xFFFF);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) return 125;
    ::close(ruleset);
    ::execv(argv[5], argv + 5);
    return 125;
}
