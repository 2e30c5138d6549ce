/* The same-work floor of confinectl's bubblewrap path: what confinectl does around
 * bubblewrap that protects, nothing else. bench/README.md lists each step with the code
 * of confine's it mirrors.
 *
 *   samework-bwrap <bwrap argv...>
 *       where `confinectl wrap --json` has placeholders: STATUS_FD for {status-fd},
 *       DIR_FD:PATH for {dir-fd:PATH}, FILTER_FD:closed or FILTER_FD:loopback for
 *       {network-filter-fd} and {loopback-filter-fd}
 *   samework-bwrap --print-filter closed|loopback     the filter program's bytes
 *
 * Exits with bubblewrap's status (128 + signal), 125 when it cannot start it.
 */
#define _GNU_SOURCE
#include "samework-filter.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const int forwarded[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP};
#define FORWARDED_COUNT (sizeof forwarded / sizeof forwarded[0])
static int kept[64], kept_count, report_w;
static volatile pid_t target;
static sigset_t old_mask;

static void die(const char* what) { fprintf(stderr, "samework-bwrap: %s: %s\n", what, strerror(errno)); exit(125); }

static int number_of(int fd, char** slot) {
    char text[16];
    snprintf(text, sizeof text, "%d", fd);
    *slot = strdup(text);
    kept[kept_count++] = fd;
    return fd;
}

/* terminal_filter.cpp's network_filter_descriptor(): the program in a memfd, at offset 0. */
static int filter_descriptor(const char* kind) {
    struct sw_program p;
    sw_build(&p, 0, strcmp(kind, "loopback") == 0 ? SW_LOOPBACK : SW_CLOSED);
    int fd = memfd_create("confine-network-filter", MFD_CLOEXEC);
    size_t size = (size_t)p.size * sizeof p.code[0];
    if (fd < 0 || write(fd, p.code, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) die("the network filter");
    return fd;
}

/* spawn.cpp's open_status_descriptor, open_directories, open_network_filter. */
static int fill_placeholders(char** argv) {
    int status_w = -1, filter = -1;
    for (char** a = argv; *a; ++a) {
        if (strcmp(*a, "STATUS_FD") == 0) {
            int status[2];
            if (pipe2(status, O_CLOEXEC) != 0) die("pipe2");
            number_of(status_w = status[1], a);
            status_w = status[0];  /* the read end, returned */
        } else if (strncmp(*a, "DIR_FD:", 7) == 0) {
            struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
            int fd = (int)syscall(SYS_openat2, AT_FDCWD, *a + 7, &how, sizeof how);
            if (fd < 0) die(*a + 7);
            number_of(fd, a);
        } else if (strncmp(*a, "FILTER_FD:", 10) == 0) {
            if (filter < 0) filter = filter_descriptor(*a + 10);
            number_of(filter, a);
        }
    }
    return status_w;
}

/* spawn.cpp's run_child for a runner that confines itself: its own process group, the
 * host's handlers reset, descriptors closed at the exec but those handed over, the
 * terminal filter (no_new_privs first where the kernel asks for it), exec. */
static void run_child(char** argv) {
    int e;
    setpgid(0, 0);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (size_t i = 0; i < FORWARDED_COUNT; ++i) sigaction(forwarded[i], &dfl, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) != 0) goto failed;
    for (int i = 0; i < kept_count; ++i)
        if (fcntl(kept[i], F_SETFD, 0) != 0) goto failed;
    struct sw_program p;
    sw_build_terminal(&p);
    struct sock_fprog fprog = {(unsigned short)p.size, p.code};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0 &&
        (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0))
        goto failed;
    execv(argv[0], argv);
failed:
    e = errno;
    if (write(report_w, &e, sizeof e) < 0) {}
    _exit(125);
}

static void pass_on(int sig) {
    if (target > 0) kill(target, sig);
}

/* The sandbox's first process, from bubblewrap's status ("child-pid": N): where a signal
 * sent to this host goes. */
static void note_child(const char* text) {
    const char* at = strstr(text, "\"child-pid\":");
    if (at) target = (pid_t)strtol(at + 12, NULL, 10);
}

int main(int argc, char** argv) {
    if (argc == 3 && strcmp(argv[1], "--print-filter") == 0) {
        struct sw_program p;
        sw_build(&p, 0, strcmp(argv[2], "loopback") == 0 ? SW_LOOPBACK : SW_CLOSED);
        return fwrite(p.code, sizeof p.code[0], (size_t)p.size, stdout) == (size_t)p.size ? 0 : 1;
    }
    if (argc < 2) return 125;
    char** bwrap = argv + 1;
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) die("pipe2");
    report_w = report[1];
    int status_r = fill_placeholders(bwrap);
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old_mask);
    pid_t pid = vfork();
    if (pid == 0) run_child(bwrap);
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (pid < 0) {
        errno = fork_errno;
        die("vfork");
    }
    target = pid;
    struct sigaction sa = {.sa_handler = pass_on, .sa_flags = SA_RESTART};
    for (size_t i = 0; i < FORWARDED_COUNT; ++i) sigaction(forwarded[i], &sa, NULL);
    for (int i = 0; i < kept_count; ++i) close(kept[i]);
    close(report[1]);
    int error = 0, st = 0;
    if (read(report[0], &error, sizeof error) > 0) {
        errno = error;
        die(bwrap[0]);
    }
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    struct pollfd fds[2] = {{status_r, POLLIN, 0}, {pidfd, POLLIN, 0}};
    char text[4096];
    for (;;) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR) die("poll");
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            ssize_t n = read(status_r, text, sizeof text - 1);
            if (n > 0) text[n] = '\0', note_child(text);
            else fds[0].fd = -1;
        }
        if (fds[1].revents & POLLIN) break;
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
