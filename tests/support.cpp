#include "support.hpp"

#if defined(__linux__)
#include <confine/sdk/bwrap_devices.hpp>
#endif

#include "process.hpp"
#include "ruleset.hpp"
#include "skips.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>

#include <cerrno>
#include <cstddef>
#include <cstring>
#endif

#include <cstdio>
#include <stdexcept>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string_view>

namespace test {

namespace {
// Not the system temp directory: a confined command may write /tmp, so confine refuses
// to load plugins or read configuration from there, and the tests keep theirs in the
// build tree.
fs::path test_temp_root() {
    static const fs::path root = [] {
        fs::path dir = TEST_TMP_DIR;
        fs::create_directories(dir);
        fs::permissions(dir, fs::perms(0755));
        return dir;
    }();
    return root;
}
}  // namespace

TempDir::TempDir() : TempDir(test_temp_root()) {}

TempDir::TempDir(const fs::path& under) {
    std::string templ = (under / "confine-test-XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
    fs::permissions(path_, fs::perms(0755));
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

namespace {
// Replaced as an installer replaces a library, by a rename: a file written over in place
// would change under a mapping of it that a probe's thread may still be running in.
fs::path copy_plugin(const fs::path& from, const fs::path& dir) {
    fs::path to = dir / from.filename();
    const fs::path staged = dir / ("." + from.filename().string() + ".new");
    fs::copy_file(from, staged, fs::copy_options::overwrite_existing);
    fs::permissions(staged, fs::perms(0755));
    fs::rename(staged, to);
    return to;
}
}  // namespace

fs::path install_fake(const fs::path& dir, const std::string& name) {
    return copy_plugin(fs::path(FAKE_PLUGIN_DIR) / ("confine-runner-" + name + ".so"), dir);
}

fs::path install_builtin(const fs::path& dir, const std::string& runner, bool with_launcher) {
    if (runner == "landlock" && with_launcher) copy_plugin(fs::path(BUILTIN_PLUGIN_DIR) / "landlock-run", dir);
    // The network through the run's proxy: the proxy, and bubblewrap's loopback program.
    for (const char* program : {"confine-proxy", "confine-loopback"})
        if (fs::exists(fs::path(BUILTIN_PLUGIN_DIR) / program) && !fs::exists(dir / program)) copy_plugin(fs::path(BUILTIN_PLUGIN_DIR) / program, dir);
    return copy_plugin(fs::path(BUILTIN_PLUGIN_DIR) / ("confine-runner-" + runner + ".so"), dir);
}

std::unique_ptr<confine::PluginRunner> builtin_runner(const fs::path& dir, const std::string& runner) {
    auto plugin = confine::load_plugin(install_builtin(dir, runner), runner);
    REQUIRE(plugin);
    auto created = (*plugin)->create_runner(nullptr);
    REQUIRE(created);
    return std::move(*created);
}

bool landlock_enforced() { return landlock_abi() >= 1; }

#if defined(__linux__)
std::optional<int> probe_in_child(int (*probe)()) {
    const pid_t child = ::fork();
    if (child < 0) return std::nullopt;
    if (child == 0) ::_exit(probe() & 0xff);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0)
        if (errno != EINTR) return std::nullopt;
    if (!WIFEXITED(status)) return std::nullopt;
    return WEXITSTATUS(status);
}
#endif

int landlock_abi() {
#if defined(__linux__)
    // Asked once, in a child: a filter of the machine's that kills the call takes the
    // child, and this kernel then "does not enforce Landlock".
    static const int abi = probe_in_child([] { return confine::landlock::abi_version(); }).value_or(0);
    return abi;
#else
    return confine::landlock::abi_version();
#endif
}

void require_landlock() {
    if (!landlock_enforced()) skip_test("this kernel does not enforce Landlock");
}

void write_file(const fs::path& file, const std::string& text, fs::perms mode) {
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << text;
    }
    fs::permissions(file, mode);
}

#if defined(__linux__)
int bound_unix_socket(const std::string& name, bool abstract, int type) {
    const int fd = ::socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    REQUIRE(name.size() + 1 < sizeof a.sun_path);
    std::memcpy(a.sun_path + (abstract ? 1 : 0), name.data(), name.size());
    const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (abstract ? 1 : 0));
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), size) == 0);
    return fd;
}
#endif

std::string unique_text(const std::string& prefix) {
    std::random_device rd;
    return prefix + std::to_string(rd()) + "-" + std::to_string(rd());
}

std::string read_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

FakeLog::FakeLog() : file_(dir_ / "fake.log") {
    write_file(file_, "");
    ::setenv("CONFINE_FAKE_LOG", file_.c_str(), 1);
}

FakeLog::~FakeLog() { ::unsetenv("CONFINE_FAKE_LOG"); }

std::vector<std::string> FakeLog::lines() const {
    std::vector<std::string> out;
    std::istringstream in(read_file(file_));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::size_t FakeLog::count(const std::string& line) const {
    std::size_t n = 0;
    for (const auto& l : lines()) n += l == line;
    return n;
}

confine::Config config_from(const std::string& text) {
    auto cfg = confine::parse_config(text, "test.toml");
    if (!cfg) FAIL("test configuration does not parse: " << cfg.error().message);
    return *cfg;
}

std::string chain(std::initializer_list<const char*> runners) {
    std::string s = "[platform.linux]\nchain = [";
    for (auto r : runners) s += std::string(s.back() == '[' ? "" : ", ") + "\"" + r + "\"";
    return s + "]\n";
}

std::unique_ptr<confine::Provider> cached_provider(const TempDir& dir, const std::string& config_text, const fs::path& cache_file,
                                                   std::chrono::seconds max_age, bool refresh) {
    auto p = confine::Provider::create(config_from(config_text),
                                       {.platform = "linux",
                                        .builtin_plugin_dirs = std::vector<fs::path>{dir.path()},
                                        .verdict_cache = confine::VerdictCacheOptions{cache_file, max_age, refresh}});
    REQUIRE(p);
    return std::move(*p);
}

Result run(const std::vector<std::string>& argv) {
    auto r = confine::detail::run_bounded(argv, std::chrono::seconds(60), 16 << 20);
    if (!r.spawned) FAIL("cannot start " << argv.front() << ": errno " << r.spawn_errno);
    if (r.timed_out) FAIL(argv.front() << " did not finish within 60 s");
    return Result{r.exited ? r.exit_code : -1, r.signal, r.stdout_text, r.stderr_text};
}

Installed::Installed() {
    const fs::path built(CONFINECTL);
    const fs::path relative = fs::path(BUILTIN_PLUGIN_DIR).lexically_relative(built.parent_path());
    fs::create_directories(root_ / "bin");
    plugin_dir_ = (root_.path() / "bin" / relative).lexically_normal();
    fs::create_directories(plugin_dir_);
    for (fs::path p = plugin_dir_; p != root_.path(); p = p.parent_path()) fs::permissions(p, fs::perms(0755));
    fs::permissions(root_ / "bin", fs::perms(0755));
    fs::copy_file(built, confinectl());
    for (auto n : {"landlock", "bwrap", "seatbelt", "appcontainer"}) install_builtin(plugin_dir_, n);
    fs::create_directory(root_ / "here");
    fs::permissions(root_ / "here", fs::perms(0755));
}

void Installed::remove_launcher() const { fs::remove(plugin_dir_ / "landlock-run"); }

void Installed::use_abi_capped_landlock() const {
    for (const char* file : {"landlock-run", "confine-runner-landlock.so"}) copy_plugin(fs::path(LANDLOCK_ABI_CAP_DIR) / file, plugin_dir_);
}

fs::path Installed::config_without_bwrap() const {
    const fs::path cfg = scratch("no-bwrap.toml");
    write_file(cfg, "[platform.linux]\nchain = [\"bwrap\", \"landlock\"]\n" + absent_bwrap_setting(root_.path()));
    return cfg;
}

std::string Installed::absent_bwrap_reason() const {
    return "bubblewrap cannot be used: " + (root_ / "absent" / "bwrap").string() + ": No such file or directory";
}

std::string absent_bwrap_setting(const fs::path& dir) {
    return "[runner.bwrap]\nprogram = \"" + (dir / "absent" / "bwrap").string() + "\"\n";
}

Tree::Tree(bool for_nobody) {
    for (const auto& d : {ws, sibling, home, outside_dir}) fs::create_directories(d);
    write_file(outside_file, "original");
    fs::create_directory_symlink(outside_dir, ws / "link");
    if (!for_nobody) return;
    for (const auto& entry : fs::recursive_directory_iterator(root.path()))
        if (::lchown(entry.path().c_str(), nobody, nobody) != 0) throw std::runtime_error("lchown " + entry.path().string());
    if (::chown(root.path().c_str(), nobody, nobody) != 0) throw std::runtime_error("chown " + root.path().string());
}

void give_to_nobody(const fs::path& root) {
    for (const auto& entry : fs::recursive_directory_iterator(root))
        if (::lchown(entry.path().c_str(), nobody, nobody) != 0) throw std::runtime_error("lchown " + entry.path().string());
}

std::vector<std::string> as_user(bool unprivileged) {
    if (!unprivileged) return {};
    return {"/usr/bin/setpriv", "--reuid=" + std::to_string(nobody), "--regid=" + std::to_string(nobody), "--clear-groups", "--"};
}

void require_user_switch() {
    if (::geteuid() != 0) skip_test("needs root to switch to an unprivileged user");
    if (!fs::exists("/usr/bin/setpriv")) skip_test("needs setpriv from util-linux");
}

void require_bwrap() {
    auto r = run({"/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--cap-drop", "ALL", "--", "true"});
    if (r.exit_code != 0) skip_test("bubblewrap does not confine here: " + r.err);
}

Result Installed::run(std::vector<std::string> args, std::vector<std::string> env, std::vector<std::string> prefix) const {
    // Started in a directory of its own, as a user starts it in a project: not one above
    // this tree's plugins (the test's), where every run and probe would refuse; a prefix
    // may go elsewhere.
    std::vector<std::string> argv{"/usr/bin/env", "-C", here().string()};
    argv.insert(argv.end(), prefix.begin(), prefix.end());
    // Verdicts this tree's confinectl keeps stay in this tree.
    argv.insert(argv.end(), {"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + scratch("cache").string()});
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(confinectl().string());
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run(argv);
}

void skip_test(const std::string& reason) {
    const char* strict = std::getenv("CONFINE_TEST_NO_SKIP");
    if (strict && *strict && std::string(strict) != "0") FAIL("would skip, but CONFINE_TEST_NO_SKIP is set: " << reason);
    end_as_skipped(reason);
}

void skip_not_here(const std::string& reason) { end_as_skipped("not on this machine: " + reason); }

void skip_on_other_platforms(const std::string& reason) { end_as_skipped("another platform's test: " + reason); }

#if defined(__linux__)
namespace {
// The whole of a small /proc file, or "" when it cannot be read (the process is gone).
std::string proc_file(const std::string& path) {
    std::string text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return text;
}

// The process IDs in /proc, or nullopt when the listing was cut short.
std::optional<std::vector<pid_t>> listed_pids() {
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return std::nullopt;
    std::vector<pid_t> pids;
    errno = 0;
    while (const dirent* entry = ::readdir(proc)) {
        const std::string_view name = entry->d_name;
        if (!name.empty() && name.find_first_not_of("0123456789") == std::string_view::npos) pids.push_back(std::atoi(entry->d_name));
        errno = 0;
    }
    const bool whole = errno == 0;
    ::closedir(proc);
    if (!whole) return std::nullopt;
    return pids;
}
}  // namespace

char process_state(pid_t pid) {
    const std::string stat = proc_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

std::vector<ProcessSeen> processes_with(const std::string& text) {
    std::optional<std::vector<pid_t>> pids;
    for (int attempt = 0; attempt < 20 && !pids; ++attempt) pids = listed_pids();
    if (!pids) FAIL("/proc cannot be listed: " << std::strerror(errno));
    std::vector<ProcessSeen> seen;
    for (const pid_t pid : *pids) {
        if (pid == ::getpid()) continue;
        const std::string dir = "/proc/" + std::to_string(pid);
        const std::string cmdline = proc_file(dir + "/cmdline");
        if (cmdline.find(text) == std::string::npos) continue;
        const std::string stat = proc_file(dir + "/stat");
        const auto close = stat.rfind(')');
        if (close == std::string::npos || close + 2 >= stat.size()) continue;  // gone
        const char state = stat[close + 2];
        if (state == 'Z' || state == 'X') continue;
        std::string argv = cmdline;
        while (!argv.empty() && argv.back() == '\0') argv.pop_back();
        std::replace(argv.begin(), argv.end(), '\0', ' ');
        const pid_t parent = static_cast<pid_t>(std::atoi(stat.c_str() + close + 3));
        seen.push_back({pid, cmdline.substr(0, cmdline.find('\0')), argv, state, parent});
    }
    return seen;
}
#endif

std::vector<std::string> device_binds() {
    std::vector<std::string> out;
#if defined(__linux__)
    if (::geteuid() == 0 && confine::sdk::private_devices_ready())
        for (const auto& n : confine::sdk::bwrap_device_nodes)
            out.insert(out.end(), {"--dev-bind", std::string(confine::sdk::private_devices_dir) + "/" + n.name, std::string("/dev/") + n.name});
#endif
    return out;
}

std::size_t line_count(const std::string& text) {
    std::size_t n = 0;
    for (char c : text) n += c == '\n';
    if (!text.empty() && text.back() != '\n') ++n;
    return n;
}

}  // namespace test
