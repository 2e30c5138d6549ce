/* The floor for a supervising host in front of bubblewrap: spawn it (posix_spawn) with
 * a status descriptor, read the status, wait, pass the exit status on. No
 * configuration, no plugin, no classification.
 *
 *   minimal-bwrap-host <bwrap argv...>   (one argument must be the literal STATUS_FD)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

int main(int argc, char** argv) {
    if (argc < 2) return 125;
    int status_pipe[2];
    if (pipe2(status_pipe, O_CLOEXEC) != 0) return 125;
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", status_pipe[1]);
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "STATUS_FD") == 0) argv[i] = fd_text;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, status_pipe[1], status_pipe[1]);
    pid_t pid;
    if (posix_spawn(&pid, argv[1], &actions, NULL, argv + 1, environ) != 0) return 125;
    close(status_pipe[1]);
    char buf[512];
    while (read(status_pipe[0], buf, sizeof buf) > 0) {}
    int st = 0;
    if (waitpid(pid, &st, 0) < 0) return 125;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
