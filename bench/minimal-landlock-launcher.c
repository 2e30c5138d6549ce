/* The floor to measure confinectl against: one Landlock ruleset, then exec.
 * Grants what confinectl's workspace-write policy grants: read / , write /dev/null,
 * /tmp and the workspace.
 *
 *   minimal-landlock-launcher <workspace> <command> [args...]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct ruleset_attr { uint64_t handled; };
struct __attribute__((packed)) path_beneath { uint64_t allowed; int32_t fd; };

static void grant(int ruleset, const char* path, uint64_t allowed) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) _exit(125);
    if (!S_ISDIR(st.st_mode)) allowed &= 1 | 2 | 4 | (1 << 14) | (1 << 15);
    struct path_beneath rule = {allowed, fd};
    if (syscall(445, ruleset, 1, &rule, 0) != 0) _exit(125);
    close(fd);
}

int main(int argc, char** argv) {
    if (argc < 3) return 125;
    struct ruleset_attr attr = {0xFFFF};
    int ruleset = (int)syscall(444, &attr, sizeof attr, 0);
    if (ruleset < 0) return 125;
    grant(ruleset, "/", 1 | 4 | 8);
    grant(ruleset, "/dev/null", 0xFFFF);
    grant(ruleset, "/tmp", 0xFFFF);
    grant(ruleset, argv[1], 0xFFFF);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(446, ruleset, 0) != 0) return 125;
    close(ruleset);
    execv(argv[2], argv + 2);
    return 125;
}
