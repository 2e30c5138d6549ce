// tiocsti: tries to push bytes into the input of the terminal on stdin (TIOCSTI), the
// way a confined command would try to have the caller's shell run a line after it.
//
//   tiocsti [--tty] [--high-bits | --i386 | --x32] <text>
//   tiocsti [--tty] --linux
//
// --tty: on the terminal opened again through /dev/tty (read and write), not stdin.
// Each byte of <text> is pushed with ioctl(0, TIOCSTI, &byte), through the native
// system call, or with the request's upper 32 bits set (the kernel reads only the
// lower 32), or through the i386 compat entry (int $0x80, x86-64 only), or through
// the x32 entry. --linux makes one harmless TIOCLINUX request (TIOCL_GETFGCONSOLE).
// Prints one line: `injected <n>` (exit 0), `refused: <strerror>` (exit 1), or
// `unavailable` when the i386 entry does not exist on this kernel (exit 3).
//
// Whether the i386 entry exists is asked in a child of its own: on a kernel without
// it (ia32_emulation=0), int $0x80 is a general protection fault, which kills the
// process that tries. A child that dies means "unavailable". CONFINE_TEST_I386_FAULTS=1
// makes that child die as it would there, so the suite can be run as on such a machine.
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

enum class Entry { native, high_bits, i386, x32 };

#if defined(__x86_64__)
long int80(long nr, long a, long b, long c) {
    long rc = nr;
    asm volatile("int $0x80" : "+a"(rc) : "b"(a), "c"(b), "d"(c) : "memory", "r8", "r9", "r10", "r11");
    return rc;
}
#endif

// 0 or an errno value.
int push(Entry entry, char* byte) {
    long rc = -1;
    switch (entry) {
    case Entry::native:
        rc = ::ioctl(0, TIOCSTI, byte);
        break;
    case Entry::high_bits:
        rc = ::syscall(SYS_ioctl, 0, 0x100000000ul | TIOCSTI, byte);
        break;
#if defined(__x86_64__)
    case Entry::i386:
        rc = int80(54, 0, TIOCSTI, reinterpret_cast<long>(byte));
        if (rc < 0 && rc > -4096) {
            errno = static_cast<int>(-rc);
            rc = -1;
        }
        break;
    case Entry::x32:
        rc = ::syscall(0x40000000l | 514, 0, TIOCSTI, byte);
        break;
#else
    default:
        errno = ENOSYS;
        break;
#endif
    }
    return rc == 0 ? 0 : errno;
}

#if defined(__x86_64__)
// Whether the i386 entry answers getpid as the native one does, asked in a child: a
// fault there ends the child, not this process.
bool i386_entry_available() {
    const pid_t child = ::fork();
    if (child < 0) return false;
    if (child == 0) {
        const char* faults = std::getenv("CONFINE_TEST_I386_FAULTS");
        if (faults && std::strcmp(faults, "1") == 0) ::raise(SIGSEGV);
        ::_exit(int80(20, 0, 0, 0) == ::getpid() ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0)
        if (errno != EINTR) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "--tty") == 0) {
        const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY);
        if (tty < 0 || ::dup2(tty, 0) < 0) {
            std::printf("refused: /dev/tty: %s\n", std::strerror(errno));
            return 1;
        }
        ::close(tty);
        --argc;
        ++argv;
    }
    if (argc == 2 && std::strcmp(argv[1], "--linux") == 0) {
        char subcode = 12;  // TIOCL_GETFGCONSOLE: reads, changes nothing
        if (::ioctl(0, TIOCLINUX, &subcode) != 0) {
            std::printf("refused: %s\n", std::strerror(errno));
            return 1;
        }
        std::printf("accepted\n");
        return 0;
    }
    Entry entry = Entry::native;
    int text = 1;
    if (argc == 3) {
        text = 2;
        if (std::strcmp(argv[1], "--high-bits") == 0) entry = Entry::high_bits;
        else if (std::strcmp(argv[1], "--i386") == 0) entry = Entry::i386;
        else if (std::strcmp(argv[1], "--x32") == 0) entry = Entry::x32;
        else text = 0;
    }
    if (text == 0 || argc != text + 1) {
        std::fprintf(stderr, "usage: tiocsti [--high-bits | --i386 | --x32] <text> | tiocsti --linux\n");
        return 2;
    }
    // The compat entries take 32-bit pointers.
    void* low = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS
#if defined(__x86_64__)
                                                                 | MAP_32BIT
#endif
                       ,
                       -1, 0);
    if (low == MAP_FAILED) {
        std::printf("refused: mmap: %s\n", std::strerror(errno));
        return 2;
    }
    char* byte = static_cast<char*>(low);
#if defined(__x86_64__)
    if (entry == Entry::i386 && !i386_entry_available()) {
        std::printf("unavailable\n");
        return 3;
    }
#endif
    int n = 0;
    for (const char* p = argv[text]; *p; ++p, ++n) {
        *byte = *p;
        if (int err = push(entry, byte); err != 0) {
            std::printf("refused: %s\n", std::strerror(err));
            return 1;
        }
    }
    std::printf("injected %d\n", n);
    return 0;
}
