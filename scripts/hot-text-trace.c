/* The instructions a program executes in given files, in the order it first executes
 * them: scripts/hot-text's tracer.
 *
 *   hot-text-trace OUT NAME[,NAME...] -- PROGRAM [ARG...]
 *
 * Starts PROGRAM under ptrace and single-steps its first thread (through every exec it
 * makes; the processes it starts run untraced) until it ends. Each instruction address
 * that lies in an executable mapping of a file whose path ends in one of the NAMEs is
 * written to OUT once, the first time it runs, as "NAME OFFSET" (OFFSET: hexadecimal,
 * into the file). Slow by design (a system call a step): a run of confinectl takes a
 * few minutes. Linux, x86-64 and arm64.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_NAMES 8
#define MAX_MAPS 256
#define SEEN_BYTES (64u << 20) /* offsets below 64 MiB, one bit each */

struct mapping {
    uint64_t lo, hi, offset;
    int name;
};

static const char* names[MAX_NAMES];
static int name_count;
static struct mapping maps[MAX_MAPS];
static int map_count;
static unsigned char* seen[MAX_NAMES];

static int name_of(const char* path) {
    const size_t n = strlen(path);
    for (int i = 0; i < name_count; ++i) {
        const size_t k = strlen(names[i]);
        if (n >= k && strcmp(path + n - k, names[i]) == 0 && (n == k || path[n - k - 1] == '/')) return i;
    }
    return -1;
}

static void read_maps(pid_t pid) {
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE* f = fopen(path, "r");
    map_count = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f) && map_count < MAX_MAPS) {
        unsigned long lo, hi, offset;
        char perms[8], file[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perms, &offset, file) < 4 || perms[2] != 'x') continue;
        maps[map_count++] = (struct mapping){lo, hi, offset, name_of(file)};
    }
    fclose(f);
}

static uint64_t instruction_pointer(pid_t pid) {
#if defined(__x86_64__)
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, pid, 0, &regs) != 0) return 0;
    return regs.rip;
#elif defined(__aarch64__)
    struct user_pt_regs regs;
    struct iovec io = {&regs, sizeof regs};
    if (ptrace(PTRACE_GETREGSET, pid, (void*)NT_PRSTATUS, &io) != 0) return 0;
    return regs.pc;
#else
#error "hot-text-trace: x86-64 and arm64 only"
#endif
}

/* Records `ip` if it lies in a file asked for; false if it lies in no executable
 * mapping known (one made since the mappings were read). */
static int record(FILE* out, uint64_t ip) {
    for (int i = 0; i < map_count; ++i) {
        if (ip < maps[i].lo || ip >= maps[i].hi) continue;
        if (maps[i].name < 0) return 1;
        const uint64_t at = ip - maps[i].lo + maps[i].offset;
        unsigned char* bits = seen[maps[i].name];
        if (at / 8 >= SEEN_BYTES || (bits[at / 8] & (1u << (at % 8)))) return 1;
        bits[at / 8] |= (unsigned char)(1u << (at % 8));
        fprintf(out, "%s %llx\n", names[maps[i].name], (unsigned long long)at);
        return 1;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: hot-text-trace OUT NAME[,NAME...] -- PROGRAM [ARG...]\n");
        return 2;
    }
    for (char* name = strtok(argv[2], ","); name && name_count < MAX_NAMES; name = strtok(NULL, ",")) {
        names[name_count] = name;
        seen[name_count] = calloc(SEEN_BYTES, 1);
        if (!seen[name_count++]) return perror("calloc"), 1;
    }
    FILE* out = fopen(argv[1], "w");
    if (!out) return perror(argv[1]), 1;
    const pid_t pid = fork();
    if (pid < 0) return perror("fork"), 1;
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        execvp(argv[4], argv + 4);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) return fprintf(stderr, "hot-text-trace: %s did not start\n", argv[4]), 1;
    /* An exec is told apart from a step: it replaces every mapping. */
    ptrace(PTRACE_SETOPTIONS, pid, 0, (void*)(long)PTRACE_O_TRACEEXEC);
    long steps = 0;
    int pending = 0;
    for (;;) {
        /* The mappings change with an exec or a dlopen: read again whenever the address
         * is in none of them. */
        const uint64_t ip = instruction_pointer(pid);
        if (!record(out, ip)) {
            read_maps(pid);
            record(out, ip);
        }
        if (ptrace(PTRACE_SINGLESTEP, pid, 0, (void*)(long)pending) != 0) break;
        pending = 0;
        if (waitpid(pid, &status, __WALL) != pid) break;
        ++steps;
        if (WIFEXITED(status) || WIFSIGNALED(status)) break;
        if ((status >> 16) == PTRACE_EVENT_EXEC) map_count = 0;
        /* A signal other than the step's own trap goes on to the program. */
        else if (WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP) pending = WSTOPSIG(status);
    }
    fclose(out);
    if (!WIFEXITED(status) && !WIFSIGNALED(status)) {
        fprintf(stderr, "hot-text-trace: %ld steps; lost the program before it ended\n", steps);
        return 1;
    }
    fprintf(stderr, "hot-text-trace: %ld steps; the program ended with status %d\n", steps,
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
