// no-landlock: runs a command in a process where the Landlock system calls fail with
// ENOSYS, as on a kernel built without Landlock. A seccomp filter does it, so the
// imitation holds for the command and everything it starts. With --no-user-namespaces,
// creating a user namespace (clone or unshare with CLONE_NEWUSER) fails with EPERM too,
// and clone3 with ENOSYS (so that callers fall back to clone), as on a host that forbids
// them: bubblewrap then cannot set up.
//
//   no-landlock [--no-user-namespaces] <command> [args...]
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "no-landlock knows only x86_64 and aarch64"
#endif

int main(int argc, char** argv) {
    const bool no_userns = argc >= 2 && std::strcmp(argv[1], "--no-user-namespaces") == 0;
    if (no_userns) {
        --argc;
        ++argv;
    }
    if (argc < 2) {
        std::fprintf(stderr, "usage: no-landlock [--no-user-namespaces] <command> [args...]\n");
        return 2;
    }
    // landlock_create_ruleset, landlock_add_rule, landlock_restrict_self: 444..446;
    // clone3 435 on both architectures.
#if defined(__x86_64__)
    constexpr unsigned clone_nr = 56, unshare_nr = 272;
#else
    constexpr unsigned clone_nr = 220, unshare_nr = 97;
#endif
    constexpr unsigned newuser = 0x10000000;  // CLONE_NEWUSER
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 444, 0, 2),
        BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 446, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, no_userns ? 435u : 0xFFFFFFFFu, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, no_userns ? clone_nr : 0xFFFFFFFFu, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, no_userns ? unshare_nr : 0xFFFFFFFFu, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, newuser, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        std::fprintf(stderr, "no-landlock: cannot install the seccomp filter: %s\n", std::strerror(errno));
        return 2;
    }
    ::execvp(argv[1], argv + 1);
    std::fprintf(stderr, "no-landlock: cannot run %s: %s\n", argv[1], std::strerror(errno));
    return 127;
}
