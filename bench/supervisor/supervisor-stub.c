/* The smallest supervisor program for bench/supervisor/supervisor-start: it exits 0.
 * Built static, as a supervisor program of confine's own would be, so that its start
 * costs an execve and no dynamic loading. */
#include <unistd.h>

int main(void) { _exit(0); }
