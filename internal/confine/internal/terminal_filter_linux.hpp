// The terminal filter: the seccomp program that keeps a confined command from typing
// into the terminal it was started from. One rule, used by every path that starts a
// command: the Landlock runner applies it with its ruleset, and the host applies it to
// every other runner it starts (design.md §11: no terminal injection on any runner or
// path). Linux only; allocates nothing, so it may run between fork and exec.
//
// A portable build (CONFINE_PORTABLE_POSIX, and every system but Linux) has no seccomp,
// so no host filter: install_injection_filter() fails with ENOSYS there, so that a
// caller that needs it fails closed (the Landlock runner), and host_filter_available
// says so. What keeps a command from its terminal there is the runner's own job: a new
// session without a controlling terminal (bubblewrap's --new-session, setsid), where
// TIOCSTI is refused. A runner that does not start one leaves the terminal open, and
// the host says so (without_host_filter) instead of claiming the filter.
#pragma once

#include <cerrno>
#include <string_view>

#if !defined(__linux__) || defined(CONFINE_PORTABLE_POSIX)

namespace confine::terminal {

inline constexpr bool host_filter_available = false;
inline constexpr std::string_view without_host_filter =
    "no terminal filter in this build: only a runner that starts a new session (bubblewrap's --new-session) keeps the "
    "command from pushing input into this terminal (TIOCSTI)";

// Always -ENOSYS: there is no filter to install; the caller must fail closed.
inline int install_injection_filter() noexcept { return -ENOSYS; }

}  // namespace confine::terminal

#else

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

#include <cstddef>
#include <cstdint>

namespace confine::terminal {

inline constexpr bool host_filter_available = true;

namespace detail {

// The architectures a process may make system calls through, with their ioctl number.
#if defined(__x86_64__)
inline constexpr std::uint32_t native_arch = AUDIT_ARCH_X86_64, native_ioctl = 16;
inline constexpr std::uint32_t compat_arch = AUDIT_ARCH_I386, compat_ioctl = 54;
inline constexpr std::uint32_t x32_bit = 0x40000000, x32_ioctl = 514;
#elif defined(__aarch64__)
inline constexpr std::uint32_t native_arch = AUDIT_ARCH_AARCH64, native_ioctl = 29;
inline constexpr std::uint32_t compat_arch = AUDIT_ARCH_ARM, compat_ioctl = 54;
#elif defined(__i386__)
inline constexpr std::uint32_t native_arch = AUDIT_ARCH_I386, native_ioctl = 54;
#elif defined(__arm__) && defined(__ARMEL__)
inline constexpr std::uint32_t native_arch = AUDIT_ARCH_ARM, native_ioctl = 54;
#elif defined(__riscv) && __riscv_xlen == 64
inline constexpr std::uint32_t native_arch = AUDIT_ARCH_RISCV64, native_ioctl = 29;
#else
#define CONFINE_NO_TERMINAL_FILTER 1
#endif

}  // namespace detail

#ifndef CONFINE_NO_TERMINAL_FILTER
namespace detail {

// The program install_injection_filter() installs. The kernel reads the request as an
// unsigned int: its lower 32 bits are compared only.
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
inline constexpr std::uint32_t injection_request = offsetof(seccomp_data, args) + sizeof(std::uint64_t);
#else
inline constexpr std::uint32_t injection_request = offsetof(seccomp_data, args) + sizeof(std::uint64_t) + sizeof(std::uint32_t);
#endif
inline constexpr std::uint32_t injection_allow = SECCOMP_RET_ALLOW, injection_deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
// Jump offsets count the instructions skipped; the labels say where they land.
inline constexpr sock_filter injection_program[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
#ifdef __x86_64__
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::native_arch, 2, 0),  // -> native
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::compat_arch, 6, 0),  // -> compat
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    // native: x86-64 and x32 (its numbers carry detail::x32_bit; its ioctl is 514)
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~detail::x32_bit),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::native_ioctl, 5, 0),  // -> request
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::x32_ioctl, 4, 0),     // -> request
    BPF_STMT(BPF_RET | BPF_K, injection_allow),
    // compat:
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::compat_ioctl, 1, 0),  // -> request
    BPF_STMT(BPF_RET | BPF_K, injection_allow),
#elif defined(__aarch64__)
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::native_arch, 2, 0),  // -> native
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::compat_arch, 4, 0),  // -> compat
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    // native:
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::native_ioctl, 4, 0),  // -> request
    BPF_STMT(BPF_RET | BPF_K, injection_allow),
    // compat:
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::compat_ioctl, 1, 0),  // -> request
    BPF_STMT(BPF_RET | BPF_K, injection_allow),
#else
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::native_arch, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, detail::native_ioctl, 1, 0),  // -> request
    BPF_STMT(BPF_RET | BPF_K, injection_allow),
#endif
    // request:
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, injection_request),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 1, 0),  // -> refuse
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 0, 1),  // -> refuse, else allow
    // refuse:
    BPF_STMT(BPF_RET | BPF_K, injection_deny),
    BPF_STMT(BPF_RET | BPF_K, injection_allow),
};

}  // namespace detail
#endif

// Refuses, with EPERM, the two ioctl requests that act on a terminal's other side:
// TIOCSTI pushes bytes into its input (a line the caller's shell runs once the command
// has ended, unconfined) and TIOCLINUX, on a virtual console, pastes the selection into
// it. Everything else is allowed. A system call through an architecture this filter
// does not know kills the process: that is how a filter is bypassed. Needs
// no_new_privs (or CAP_SYS_ADMIN). Inherited by every process this one executes, and
// by everything they start. 0 or -errno (ENOSYS: no filter is known for this
// architecture, and the caller must fail closed).
inline int install_injection_filter() noexcept {
#ifdef CONFINE_NO_TERMINAL_FILTER
    return -ENOSYS;  // fail closed: no filter known for this architecture
#else
    sock_fprog fprog{static_cast<unsigned short>(sizeof detail::injection_program / sizeof detail::injection_program[0]),
                     const_cast<sock_filter*>(detail::injection_program)};
    return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) == 0 ? 0 : -errno;
#endif
}
}  // namespace confine::terminal

#endif
