/* Runs a program under ptrace, one instruction at a time, until it executes another
 * program or ends, and prints (in hex, once each, in the order first reached) every
 * instruction address it ran inside its own executable image. Used by
 * scripts/update-link-order; not part of confine.
 *
 *   trace-functions program [args...]
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static int image_range(pid_t pid, const char* exe, uintptr_t* lo, uintptr_t* hi, uintptr_t* base) {
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE* f = fopen(path, "r");
    if (!f) return -1;
    *lo = *hi = *base = 0;
    while (fgets(line, sizeof line, f)) {
        uintptr_t a, b, off;
        char perms[8];
        char name[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &a, &b, perms, &off, name) < 4) continue;
        if (strcmp(name, exe) != 0) continue;
        if (off == 0) *base = a;
        if (perms[2] == 'x') { *lo = a; *hi = b; }
    }
    fclose(f);
    return *lo ? 0 : -1;
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    char exe[4096];
    if (!realpath(argv[1], exe)) { perror(argv[1]); return 2; }
    pid_t pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        execv(argv[1], argv + 1);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0); /* stopped at its own exec */
    ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL);
    uintptr_t lo = 0, hi = 0, base = 0;
    size_t n = 0;
    uint8_t* seen = NULL;
    int pending = 0; /* a signal that stopped it, delivered with the next step */
    for (;;) {
        if (ptrace(PTRACE_SINGLESTEP, pid, 0, (void*)(intptr_t)pending) != 0) break;
        pending = 0;
        if (waitpid(pid, &st, 0) < 0 || WIFEXITED(st) || WIFSIGNALED(st)) break;
        if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_EXEC) break;
        if (WIFSTOPPED(st) && WSTOPSIG(st) != SIGTRAP) {
            pending = WSTOPSIG(st);
            continue;
        }
        if (!lo) {
            if (image_range(pid, exe, &lo, &hi, &base) != 0) continue;
            seen = calloc(hi - lo, 1);
            if (!seen) break;
        }
        struct user_regs_struct regs;
        if (ptrace(PTRACE_GETREGS, pid, 0, &regs) != 0) break;
        uintptr_t ip = regs.rip;
        if (ip >= lo && ip < hi && !seen[ip - lo]) {
            seen[ip - lo] = 1;
            printf("%lx\n", (unsigned long)(ip - base));
            ++n;
        }
    }
    kill(pid, SIGKILL);
    fprintf(stderr, "trace-functions: %zu addresses\n", n);
    return 0;
}
