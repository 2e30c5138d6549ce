// System calls that leave errno alone, for code that runs in a process sharing the
// host's memory (the run's supervisor, reaper.cpp): such a process has the host thread's
// thread pointer, so glibc's wrappers would write their errors into that thread's errno
// while it runs. Each call returns what the kernel returned: a value, or -errno.
// Internal to libconfine.
#pragma once

#include <sys/syscall.h>

namespace confine::detail::raw {

#if defined(__x86_64__)
inline constexpr bool available = true;
inline long call(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) noexcept {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
inline constexpr bool available = true;
inline long call(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) noexcept {
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
    return x0;
}
#else
// Elsewhere the supervisor is a copy of the host (fork), whose errno is its own.
inline constexpr bool available = false;
long call(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) noexcept;
#endif

}  // namespace confine::detail::raw
