// Helpers shared by the tests.
#pragma once

#include <confine/config.hpp>
#include <confine/plugins.hpp>
#include <confine/provider.hpp>

#include <sys/types.h>

#include <chrono>
#include <initializer_list>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace test {

namespace fs = std::filesystem;

// A private directory under the tests' own temp directory in the build tree (never
// /tmp, where a confined command may write), removed afterwards.
class TempDir {
public:
    TempDir();
    explicit TempDir(const fs::path& under);  // a directory other than the system temp one
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }
    fs::path operator/(const std::string& name) const { return path_ / name; }

private:
    fs::path path_;
};

// Copies a fake plugin (tests/fake_plugins) or a built-in one into `dir`, mode 0755.
fs::path install_fake(const fs::path& dir, const std::string& file_runner_name);
// The landlock plugin comes with its launcher unless `with_launcher` is false.
fs::path install_builtin(const fs::path& dir, const std::string& runner, bool with_launcher = true);
// A built-in runner installed in `dir`, loaded and created without settings (a runner
// keeps its plugin loaded).
std::unique_ptr<confine::PluginRunner> builtin_runner(const fs::path& dir, const std::string& runner);

#if defined(__linux__)
// Runs `probe` in a child process and gives its result (0-255), or nullopt when the
// child did not exit (a fault, a filter's kill): what a machine has is asked where a
// crash cannot take the test with it, and a crash means "not here".
std::optional<int> probe_in_child(int (*probe)());
#endif

// Whether this kernel enforces Landlock; require_landlock() skips the test otherwise.
bool landlock_enforced();
// The kernel's Landlock ABI version; below 1 when it does not enforce Landlock.
int landlock_abi();
void require_landlock();

void write_file(const fs::path& file, const std::string& text, fs::perms mode = fs::perms(0644));
std::string read_file(const fs::path& file);
#if defined(__linux__)
// A unix socket of `type`, close-on-exec and non-blocking, bound to `name`: an abstract
// name, or a path. The test fails if it cannot be had.
int bound_unix_socket(const std::string& name, bool abstract, int type);

// A live process in /proc (zombies aside): its argv (the first, and all of it with spaces
// between), its state (R, S, T for stopped, ...) and its parent.
struct ProcessSeen {
    pid_t pid;
    std::string argv0, argv;
    char state;
    pid_t parent;
};
// The live processes, other than this one, whose argv holds `text` (all of them when it is
// empty). Processes end while /proc is listed: one gone is left out, and a listing cut
// short by an error is read again.
std::vector<ProcessSeen> processes_with(const std::string& text);
// /proc/PID/stat's state of `pid`, or 0 when it is gone.
char process_state(pid_t pid);
#endif
// `prefix` and a random number: a value no run can guess, to look for in what came out.
std::string unique_text(const std::string& prefix);

// Points CONFINE_FAKE_LOG at a fresh file for as long as it lives.
class FakeLog {
public:
    FakeLog();
    ~FakeLog();
    std::vector<std::string> lines() const;
    std::size_t count(const std::string& line) const;

private:
    TempDir dir_;
    fs::path file_;
};

struct Result {
    int exit_code = -1;  // -1 when killed by a signal
    int signal = 0;
    std::string out;
    std::string err;
};

// Parses configuration text that the test knows to be valid.
confine::Config config_from(const std::string& text);

// "[platform.linux]\nchain = [...]" naming `runners`.
std::string chain(std::initializer_list<const char*> runners);

// A provider over the plugins in `dir`, configured by `config_text`, whose verdict cache is
// `cache_file` (verdicts kept `max_age`; `refresh` probes again whatever is kept).
std::unique_ptr<confine::Provider> cached_provider(const TempDir& dir, const std::string& config_text, const fs::path& cache_file,
                                                   std::chrono::seconds max_age = std::chrono::seconds(3600), bool refresh = false);

// Runs a program and waits for it (60 s at most).
Result run(const std::vector<std::string>& argv);

// confinectl and the built-in plugins (with landlock-run) copied into a private tree
// laid out like the build tree and the install, so that the tests depend neither on
// where the sources live nor on who may write there.
class Installed {
public:
    Installed();
    void remove_launcher() const;
    // Replaces the Landlock plugin and its launcher with the test-only build that
    // negotiates no newer ABI than CONFINE_TEST_LANDLOCK_ABI_CAP in its environment.
    void use_abi_capped_landlock() const;
    fs::path confinectl() const { return root_ / "bin" / "confinectl"; }
    // Runs confinectl with `args`, CONFINE_CONFIG unset and `env` ("K=V") added, in the
    // tree's own empty directory `here()` (the workspace of a run or probe that names
    // none). `prefix` goes in front (e.g. setpriv to drop privileges, or a shell that
    // changes directory).
    Result run(std::vector<std::string> args, std::vector<std::string> env = {}, std::vector<std::string> prefix = {}) const;
    const fs::path& plugin_dir() const { return plugin_dir_; }
    fs::path scratch(const std::string& name) const { return root_ / name; }
    fs::path here() const { return root_ / "here"; }
    // The default chain (bwrap, then landlock) with bubblewrap's program pointing at
    // nothing, so that bubblewrap is unusable; and the reason it gives.
    fs::path config_without_bwrap() const;
    std::string absent_bwrap_reason() const;

private:
    TempDir root_;
    fs::path plugin_dir_;
};

// Ends the current test case as skipped (test::end_as_skipped, skips.hpp: the binary
// goes on to the next case, and exits 77, which CTest reports as a skip, when every case
// it ran skipped), or fails it when CONFINE_TEST_NO_SKIP is set: CI's way to refuse a
// silent skip.
[[noreturn]] void skip_test(const std::string& reason);
// Ends the current test case as skipped for something this kind of machine does not
// promise (the i386 system call entry), always, even with
// CONFINE_TEST_NO_SKIP: what the kind promises (Landlock, bubblewrap, root, `nobody`,
// what scripts/install-deps installs) goes through skip_test instead. Called after the
// checks that could run, it names what could not.
[[noreturn]] void skip_not_here(const std::string& reason);
// Ends a test case that belongs to another operating system as skipped, always: no
// configuration of this machine could make it run.
[[noreturn]] void skip_on_other_platforms(const std::string& reason);

// The unprivileged user the end-to-end tests switch to (through setpriv, as root).
constexpr int nobody = 65534;

// A tree to confine in: a workspace, and around it what must stay untouched. Not under
// /tmp, which workspace-write grants. For `for_nobody`, everything in it belongs to
// that user, so that only the sandbox, not file permissions, can say no.
struct Tree {
    TempDir root{"/var/tmp"};
    fs::path ws = root / "ws", sibling = root / "sibling", home = root / "home", outside_dir = root / "outside-dir",
             outside_file = root / "outside.txt";
    explicit Tree(bool for_nobody);
    // The environment's entry that makes `home` the command's home.
    std::string home_entry() const { return "HOME=" + home.string(); }
};

// Everything beneath `root` handed to `nobody` (not `root` itself), for a test run as nobody.
void give_to_nobody(const fs::path& root);

// The argv prefix that runs a command as `nobody` (empty when privileged).
std::vector<std::string> as_user(bool unprivileged);
// Skips unless the test can switch to an unprivileged user.
void require_user_switch();

// Skips (see skip_test) unless bubblewrap confines here.
void require_bwrap();
// The line that makes bwrap's program absent, for configurations built in tests.
std::string absent_bwrap_setting(const fs::path& dir);

// The arguments bubblewrap's profile adds after --new-session for root: confine's own
// device nodes over those of --dev (confine/sdk/bwrap_devices.hpp); none for anyone else.
std::vector<std::string> device_binds();

// Number of lines in `text` (a final line without newline counts).
std::size_t line_count(const std::string& text);

}  // namespace test
