/* What starting the run's supervisor costs, three ways, each launch timed alone:
 *
 *   shared    clone(CLONE_VM) onto a stack of the host's, as the supervisor starts today
 *             (core/src/platform/linux/reaper.cpp): no copy of the host at all;
 *   exec      clone(CLONE_VM | CLONE_VFORK) and an execve of a small supervisor program
 *             (PROGRAM, this directory's supervisor-stub, static): an ordinary process
 *             with nothing of the host's after its start;
 *   fork      fork() of this process, for scale.
 *
 * Each child ends at once (the program exits 0); the host waits for it. Printed: the
 * median and the 10th and 90th percentile per launch, in microseconds, and the median
 * difference of exec to shared, which is what each run would pay for a supervisor with
 * no shared memory. The host's size matters for fork (page tables copied), not for the
 * two clones: --ballast MIB maps and touches that much memory first, as a host holds.
 *
 *   supervisor-start PROGRAM [--runs N] [--ballast MIB]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char* program;
static char* const child_argv[] = {"supervisor-stub", NULL};
static char* const child_env[] = {NULL};

static int shared_entry(void* arg) {
    (void)arg;
    _exit(0);
}

static int exec_entry(void* arg) {
    (void)arg;
    execve(program, child_argv, child_env);
    _exit(127);
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

enum way { SHARED, EXEC, FORK };

static double launch(enum way way, char* stack_top) {
    const double began = now_us();
    pid_t pid;
    if (way == SHARED) pid = clone(shared_entry, stack_top, CLONE_VM | SIGCHLD, NULL);
    else if (way == EXEC) pid = clone(exec_entry, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
    else {
        pid = fork();
        if (pid == 0) _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "supervisor-start: a launch failed (is %s a program that exits 0?)\n", program);
        exit(1);
    }
    return now_us() - began;
}

int main(int argc, char** argv) {
    int runs = 2000;
    long ballast = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: supervisor-start PROGRAM [--runs N] [--ballast MIB]\n");
        return 2;
    }
    program = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--runs") == 0) runs = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--ballast") == 0) ballast = atol(argv[i + 1]);
        else {
            fprintf(stderr, "supervisor-start: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (runs < 10) runs = 10;
    if (ballast > 0) {
        const size_t size = (size_t)ballast << 20;
        char* memory = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) return 1;
        for (size_t at = 0; at < size; at += 4096) memory[at] = 1;
    }
    const size_t stack_size = 256 * 1024;
    char* stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return 1;
    double* times[3];
    for (int w = 0; w < 3; ++w) times[w] = calloc((size_t)runs, sizeof(double));
    double* differences = calloc((size_t)runs, sizeof(double));
    for (int r = 0; r < runs; ++r) {
        /* Interleaved, the first way rotating: a moment's noise falls on all three. */
        for (int k = 0; k < 3; ++k) {
            const enum way w = (enum way)((r + k) % 3);
            times[w][r] = launch(w, stack + stack_size);
        }
        differences[r] = times[EXEC][r] - times[SHARED][r];
    }
    static const char* names[] = {"shared (clone CLONE_VM)", "exec (CLONE_VM|CLONE_VFORK + execve)", "fork"};
    printf("%d launches each, ballast %ld MiB, microseconds per launch\n", runs, ballast);
    printf("%-40s %8s %8s %8s\n", "way", "p10", "median", "p90");
    for (int w = 0; w < 3; ++w) {
        qsort(times[w], (size_t)runs, sizeof(double), compare);
        printf("%-40s %8.1f %8.1f %8.1f\n", names[w], times[w][runs / 10], times[w][runs / 2], times[w][runs * 9 / 10]);
    }
    qsort(differences, (size_t)runs, sizeof(double), compare);
    printf("exec - shared, median of the per-round differences: %.1f us\n", differences[runs / 2]);
    return 0;
}
