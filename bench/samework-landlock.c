/* The same-work floor of confinectl's default Landlock path (chain ["landlock"],
 * supervised, confined in the child): its protective steps, nothing else (no
 * configuration, no plugin, no trust walk). bench/README.md lists each step with the
 * code of confine's it mirrors.
 *
 *   samework-landlock <workspace> <command> [args...]
 *
 * Policy: read everything but the default deny list (beneath $HOME and the passwd home),
 * write the workspace, /tmp, /dev/shm and /dev/null, network none. Exits with the
 * command's status (128 + signal), 125 when it cannot confine.
 */
#define _GNU_SOURCE
#include "samework-filter.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct ruleset_attr { uint64_t fs, net, scoped; };
struct __attribute__((packed)) path_beneath { uint64_t allowed; int32_t fd; };
#define READ_RIGHTS (1ull | 4 | 8)
#define FILE_RIGHTS (1ull | 2 | 4 | (1ull << 14) | (1ull << 15))

static const char* const deny_list[] = {".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".oci",
    ".config/doctl", ".netrc", ".git-credentials", ".config/git/credentials", ".config/gh/hosts.yml", ".config/hub",
    ".config/glab-cli", ".pypirc", ".npmrc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".composer/auth.json", ".config/composer/auth.json", ".m2/settings-security.xml", ".config/containers/auth.json",
    ".terraform.d/credentials.tfrc.json", ".vault-token", ".config/rclone", ".s3cfg", ".boto", ".pgpass", ".my.cnf",
    ".mylogin.cnf", ".password-store", ".local/share/keyrings", ".cache/huggingface/token", ".claude/.credentials.json",
    ".codex/auth.json"};
#define DENY_COUNT (sizeof deny_list / sizeof deny_list[0])
static const char* const protect_list[] = {".git", ".gitmodules", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
    ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".envrc", ".gitconfig", ".ripgreprc", ".npmrc", ".yarnrc",
    ".yarnrc.yml", ".aws", ".mcp.json", ".vscode", ".idea", ".claude", ".codex", ".agents", ".cursor", ".continue"};
#define PROTECT_COUNT (sizeof protect_list / sizeof protect_list[0])

static char* denied[2 * DENY_COUNT];
static size_t denied_count;
static int ruleset, abi, as_root, report_w, status_w, lifeline_r, lifeline_w;
static uint64_t handled;
static pid_t supervisor, runner;
static char** command;
static sigset_t old_mask;
static const int forwarded[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP};
#define FORWARDED_COUNT (sizeof forwarded / sizeof forwarded[0])

static void die(const char* what) { fprintf(stderr, "samework-landlock: %s: %s\n", what, strerror(errno)); exit(125); }

/* The denied paths that exist, beneath each home (policy/: "~" is $HOME and the passwd home). */
static void resolve_denied(void) {
    const char* homes[2] = {getenv("HOME"), NULL};
    struct passwd* pw = getpwuid(getuid());
    if (pw && (!homes[0] || strcmp(pw->pw_dir, homes[0]) != 0)) homes[1] = pw->pw_dir;
    for (int h = 0; h < 2; ++h)
        for (size_t i = 0; homes[h] && homes[h][0] == '/' && i < DENY_COUNT; ++i) {
            char path[4096];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", strcmp(homes[h], "/") == 0 ? "" : homes[h], deny_list[i]);
            if (lstat(path, &st) == 0) denied[denied_count++] = strdup(path);
        }
}

/* 1: path is denied; 2: a denied path lies beneath it (ruleset.hpp's denial_of). */
static int denial_of(const char* path, size_t len) {
    int found = 0;
    for (size_t i = 0; i < denied_count; ++i) {
        if (strcmp(denied[i], path) == 0) return 1;
        if (len == 1 ? denied[i][1] != '\0' : strncmp(denied[i], path, len) == 0 && denied[i][len] == '/') found = 2;
    }
    return found;
}

static void add_rule(int fd, uint64_t allowed, int is_dir) {
    struct path_beneath rule = {(is_dir ? allowed : allowed & FILE_RIGHTS) & handled, fd};
    if (rule.allowed && syscall(SYS_landlock_add_rule, ruleset, 1, &rule, 0) != 0) die("landlock_add_rule");
}

/* Read-only on each entry of dir, around the denied paths (ruleset.hpp's grant_entries_around). */
static void grant_around(int dir, char* path, size_t len) {
    char buf[2048] __attribute__((aligned(8)));
    long n;
    while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0)
        for (long at = 0; at < n;) {
            struct dirent64* e = (struct dirent64*)(buf + at);
            at += e->d_reclen;
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            size_t child_len = snprintf(path + len, 4096 - len, "%s%s", len == 1 ? "" : "/", e->d_name) + len;
            int denial = denial_of(path, child_len);
            if (denial == 2) {
                int child = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (child >= 0) grant_around(child, path, child_len), close(child);
            } else if (denial == 0 && e->d_type != DT_LNK) {
                int child = openat(dir, e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;
                if (child >= 0 && e->d_type != DT_UNKNOWN) add_rule(child, READ_RIGHTS, e->d_type == DT_DIR);
                else if (child >= 0 && fstat(child, &st) == 0 && !S_ISLNK(st.st_mode)) add_rule(child, READ_RIGHTS, S_ISDIR(st.st_mode));
                if (child >= 0) close(child);
            }
            path[len] = '\0';
        }
    if (n < 0) die("getdents64");
}

/* A root granted whole, opened without following a link (trust::open_without_links). */
static void grant_root(const char* path, uint64_t allowed) {
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
    struct stat st;
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0 || fstat(fd, &st) != 0) die(path);
    add_rule(fd, allowed, S_ISDIR(st.st_mode));
    close(fd);
}

/* landlock_plugin.cpp's prepare(): every right of the ABI, TCP handled (without a
 * network namespace of the run's own), the scopes, the carve of / , the writable roots. */
static void build_ruleset(const char* workspace) {
    abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, 1u);
    if (abi < 1) die("landlock");
    handled = (1ull << 13) - 1;
    if (abi >= 2) handled |= 1ull << 13;
    if (abi >= 3) handled |= 1ull << 14;
    if (abi >= 5) handled |= 1ull << 15;
    struct ruleset_attr attr = {handled, abi >= 4 && !as_root ? 3 : 0, abi >= 6 ? 3 : 0};
    size_t size = attr.scoped ? sizeof attr : attr.net ? 16 : 8;
    if ((ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0)) < 0) die("landlock_create_ruleset");
    if (denial_of("/", 1) == 2) {
        char path[4096] = "/";
        int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) die("/");
        grant_around(root, path, 1);
        close(root);
    } else {
        grant_root("/", READ_RIGHTS);
    }
    grant_root("/dev/null", handled);
    if (access("/dev/shm", F_OK) == 0) grant_root("/dev/shm", handled);
    grant_root("/tmp", handled);
    grant_root(workspace, handled);
}

/* Which protected names the workspace holds (protect_watch.cpp: what is missing at the
 * start and made by the command is set aside after the run). */
static unsigned protected_present(const char* workspace) {
    unsigned mask = 0;
    DIR* d = opendir(workspace);
    if (!d) die(workspace);
    for (struct dirent* e; (e = readdir(d));)
        for (size_t i = 0; i < PROTECT_COUNT; ++i)
            if (strcmp(e->d_name, protect_list[i]) == 0) mask |= 1u << i;
    closedir(d);
    return mask;
}

static void set_aside(const char* workspace, unsigned before) {
    unsigned made = protected_present(workspace) & ~before;
    for (size_t i = 0; i < PROTECT_COUNT; ++i)
        if (made & (1u << i)) {
            char from[4096], to[4200];
            snprintf(from, sizeof from, "%s/%s", workspace, protect_list[i]);
            snprintf(to, sizeof to, "%s.confine-set-aside", from);
            if (rename(from, to) == 0) fprintf(stderr, "samework-landlock: set aside %s\n", from);
        }
}

static void report_and_exit(void) {
    int e = errno;
    if (write(report_w, &e, sizeof e) < 0) {}
    _exit(125);
}

/* ruleset.hpp's own_loopback(): a network namespace of the run's own, its loopback up. */
static void own_loopback(void) {
    struct ifreq req = {0};
    int fd;
    if (unshare(CLONE_NEWNET) != 0 || (fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) report_and_exit();
    memcpy(req.ifr_name, "lo", 3);
    if (ioctl(fd, SIOCGIFFLAGS, &req) != 0) report_and_exit();
    req.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(fd, SIOCSIFFLAGS, &req) != 0) report_and_exit();
    close(fd);
}

/* ruleset.hpp's drop_capabilities(): securebits locked, bounding set emptied, then
 * ambient, inheritable, permitted and effective. */
static void drop_capabilities(void) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct caps[2] = {{0}}, none[2] = {{0}};
    if (syscall(SYS_capget, &header, caps) != 0) report_and_exit();
    if (caps[0].effective | caps[0].permitted | caps[1].effective | caps[1].permitted) {
        caps[0].effective = caps[0].permitted, caps[1].effective = caps[1].permitted;
        if (syscall(SYS_capset, &header, caps) != 0) report_and_exit();
        int bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
        if (bits < 0 || prctl(PR_SET_SECUREBITS, (unsigned long)bits | SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                              SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                              SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) != 0)
            report_and_exit();
        for (unsigned long cap = 0; cap < 64; ++cap)
            if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
                if (errno == EINVAL && cap > 0) break;
                report_and_exit();
            }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 || syscall(SYS_capset, &header, none) != 0) report_and_exit();
}

/* The runner (spawn.cpp's run_child, landlock_plugin.cpp's apply_prepared, ruleset.hpp's
 * confine_self): descriptors closed at the exec, then the irreversible steps, then exec. */
static void run_child(void) {
    close(lifeline_r);
    close(status_w);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (size_t i = 0; i < FORWARDED_COUNT; ++i) sigaction(forwarded[i], &dfl, NULL);  /* the host's handlers */
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) != 0) report_and_exit();
    if (as_root) own_loopback();
    drop_capabilities();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) report_and_exit();
    struct sw_program program;
    sw_build(&program, 1, as_root ? SW_LOOPBACK : SW_CLOSED);
    struct sock_fprog fprog = {(unsigned short)program.size, program.code};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) report_and_exit();
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) report_and_exit();
    execvp(command[0], command);
    report_and_exit();
}

/* Kills the subreaper's children until none is left (reaper.cpp's end_run): every orphan
 * of the run is a child of this process. */
static void end_run(void) {
    for (;;) {
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
        char path[64], text[4096];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", getpid(), getpid());
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
        if (fd >= 0) close(fd);
        if (n <= 0) return;
        text[n] = '\0';
        for (char* p = text; *p;) {
            long pid = strtol(p, &p, 10);
            if (pid > 0) kill((pid_t)pid, SIGKILL);
            while (*p == ' ' || *p == '\n') ++p;
        }
        if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD) return;
    }
}

/* The supervisor (reaper.cpp's supervise and supervise_loop): every signal blocked and
 * taken in turn; ends with the runner, and the whole run with it. */
static void supervise(void) {
    int host_gone = SIGRTMIN + 3;
    prctl(PR_SET_PDEATHSIG, as_root ? SIGKILL : host_gone);
    close(lifeline_w);
    struct pollfd lifeline = {lifeline_r, POLLIN, 0};
    if (poll(&lifeline, 1, 0) != 0) _exit(125);
    if (!as_root && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) report_and_exit();
    signal(SIGCHLD, SIG_DFL);
    if ((runner = vfork()) == 0) run_child();
    if (runner < 0) report_and_exit();
    syscall(SYS_close_range, 3u, (unsigned)(lifeline_r < status_w ? lifeline_r : status_w) - 1, 0);
    syscall(SYS_close_range, (unsigned)(lifeline_r < status_w ? lifeline_r : status_w) + 1,
            (unsigned)(lifeline_r < status_w ? status_w : lifeline_r) - 1, 0);
    syscall(SYS_close_range, (unsigned)(lifeline_r < status_w ? status_w : lifeline_r) + 1, ~0u, 0);
    sigset_t all;
    sigfillset(&all);
    for (;;) {
        siginfo_t info;
        int sig = sigwaitinfo(&all, &info), status;
        if (sig == SIGCHLD) {
            pid_t pid;
            while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
                if (pid == runner) {
                    if (!as_root) end_run();
                    if (write(status_w, &status, sizeof status) < 0) {}
                    _exit(0);
                }
        } else if (sig == host_gone && !as_root) {
            end_run();
            _exit(125);
        } else if (sig > 0 && (info.si_code == SI_USER || info.si_code == SI_QUEUE || info.si_code == SI_TKILL)) {
            kill(runner, sig);
        }
    }
}

static void pass_on(int sig) { kill(supervisor, sig); }

int main(int argc, char** argv) {
    if (argc < 3) return 125;
    command = argv + 2;
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct caps[2] = {{0}};
    /* As root (CAP_SYS_ADMIN and CAP_NET_ADMIN): a PID namespace and a loopback of its own. */
    as_root = syscall(SYS_capget, &header, caps) == 0 && (caps[0].effective & (1u << CAP_SYS_ADMIN)) &&
              (caps[0].effective & (1u << CAP_NET_ADMIN));
    resolve_denied();
    build_ruleset(argv[1]);
    unsigned before = protected_present(argv[1]);
    int report[2], status[2], lifeline[2];
    if (pipe2(report, O_CLOEXEC) || pipe2(status, O_CLOEXEC) || pipe2(lifeline, O_CLOEXEC)) die("pipe2");
    report_w = report[1], status_w = status[1], lifeline_r = lifeline[0], lifeline_w = lifeline[1];
    struct sigaction sa = {.sa_handler = pass_on, .sa_flags = SA_RESTART};
    for (size_t i = 0; i < FORWARDED_COUNT; ++i) sigaction(forwarded[i], &sa, NULL);
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old_mask);
    supervisor = (pid_t)syscall(SYS_clone, SIGCHLD | (as_root ? CLONE_NEWPID : 0), NULL, NULL, NULL, NULL);
    if (supervisor == 0) supervise();
    if (supervisor < 0) die("clone");
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    close(report[1]), close(status[1]), close(lifeline[0]);
    int error = 0, st = 0;
    if (read(report[0], &error, sizeof error) > 0) {
        errno = error;
        die("the runner");
    }
    int pidfd = (int)syscall(SYS_pidfd_open, supervisor, 0);
    struct pollfd ended = {pidfd, POLLIN, 0};
    while (poll(&ended, 1, -1) < 0 && errno == EINTR) {}
    while (waitpid(supervisor, NULL, 0) < 0 && errno == EINTR) {}
    if (read(status[0], &st, sizeof st) != sizeof st) return 125;
    set_aside(argv[1], before);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
