// The network filter: the seccomp program that keeps a confined command's sockets inside
// the sandbox when the policy's network is `none` (design.md §12). One program, used by
// every Linux path: the Landlock runner installs it with its ruleset (in place, in a
// forked child and in landlock-run), and bubblewrap loads it from a descriptor the host
// fills (--seccomp), after it has set up the sandbox's own network namespace. Linux only;
// allocates nothing, so it may run between fork and exec.
//
// What it refuses, with EACCES:
// - socket() of any family but AF_UNIX, and of AF_UNIX any type but SOCK_STREAM and
//   SOCK_SEQPACKET (a datagram socket, SOCK_RAW included, which AF_UNIX makes a datagram
//   one): no TCP, UDP, raw, packet or netlink socket, so nothing reaches any address, the
//   host's loopback included; and no unix datagram socket, the one kind that sends to an
//   address given with each message — by sendmsg() or sendmmsg(), whose address lies in
//   a structure a filter cannot read;
// - socketpair() likewise: a datagram pair's ends send to any address too;
// - connect(), whatever the socket: no unix socket of a host service (the Docker
//   daemon's, D-Bus, systemd's, an ssh agent's), by path or abstract name;
// - sendto() with a destination address (on a socket handed in from outside);
// - on 32-bit x86, socketcall(), which multiplexes them all;
// and io_uring_setup(), with EPERM (its rings create and connect sockets without these
// calls). A stream or sequenced-packet socketpair, and what is done with its ends, keep
// working: a sequenced-packet pair keeps the boundaries of messages, as a datagram pair
// would. So does a socket passed in from outside: it is what the caller handed on. What
// this costs: syslog(3) and logger (which already could not connect to /dev/log) and
// sd_notify(3) (a datagram to $NOTIFY_SOCKET) reach nothing, and a program that makes a
// unix datagram socket or pair for itself gets EACCES. A system call through an
// architecture the filter does not know kills the process.
//
// The proxy program (Network::proxy: the run's proxy is the one way out) differs in what
// a socket may be and where it may connect:
// - socket() of AF_INET or AF_INET6 of type SOCK_STREAM and protocol TCP (0 or
//   IPPROTO_TCP) only: no UDP (no DNS of the command's own), no SCTP or MPTCP, which
//   Landlock's TCP rules would not govern; and socket() of AF_UNIX not at all, so no unix
//   socket of a host service can be reached by path or abstract name now that connect()
//   is allowed (socketpair() of AF_UNIX streams keeps working, as above);
// - connect() is allowed: where a TCP connection may go is the runner's to hold (Landlock's
//   connect rule for the proxy's port, or a network namespace with only a loopback);
// - a send with MSG_FASTOPEN is refused (sendto, sendmsg, sendmmsg): TCP Fast Open
//   connects from inside the send, where no connect hook (Landlock's) sees it.
//
// The loopback program (Network::none for a command in a network namespace of its own,
// which holds only a loopback: bubblewrap's, and Landlock's as root) lets the command use
// that loopback, so that a test's local server can listen and be reached, on 127.0.0.1
// and ::1 alike; the namespace, not the filter, keeps everything else out of reach:
// - socket() of AF_INET or AF_INET6 of type SOCK_STREAM or SOCK_DGRAM and protocol 0,
//   TCP or UDP only (no raw socket, no SCTP or MPTCP); of AF_UNIX not at all, as in the
//   proxy program (a host service's socket stays unreachable by path now that connect()
//   is allowed; abstract names belong to the network namespace, so none of the host's is
//   there), socketpair() as in the first program;
// - connect() and sendto() are allowed: whatever they reach is in the namespace.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string_view>

// The program exists wherever Linux's headers and a known architecture are (a runner on
// Linux loads it, bubblewrap included); installing it in this process needs the Linux
// build (not CONFINE_PORTABLE_POSIX).
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__) || defined(__i386__) || \
                           (defined(__arm__) && defined(__ARMEL__)) || (defined(__riscv) && __riscv_xlen == 64))
#define CONFINE_NETWORK_FILTER_PROGRAM 1
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#endif

namespace confine::network {

// Which program: the network closed (none, no namespace of the command's own), through
// the run's proxy, or a loopback of the command's own (none, in a network namespace).
enum class Filter { closed, proxy, loopback };

#if defined(CONFINE_NETWORK_FILTER_PROGRAM)

namespace detail {

// The numbers of the calls the filter looks at, for one architecture; 0: none there.
struct Calls {
    std::uint32_t arch;
    std::uint32_t socket, socketpair, connect, sendto, io_uring_setup, socketcall;
    std::uint32_t ioctl;  // for the terminal's refusals, in the program that has them too
    std::uint32_t sendmsg, sendmmsg;  // for the proxy program's MSG_FASTOPEN refusal
};

#if defined(__x86_64__)
inline constexpr Calls native{AUDIT_ARCH_X86_64, 41, 53, 42, 44, 425, 0, 16, 46, 307};
inline constexpr Calls compat{AUDIT_ARCH_I386, 359, 360, 362, 369, 425, 102, 54, 370, 345};
inline constexpr std::uint32_t x32_bit = 0x40000000;  // x32's calls: x86-64 numbers with this bit
inline constexpr std::uint32_t x32_ioctl = 514;       // x32's own ioctl (with the bit)
#elif defined(__aarch64__)
inline constexpr Calls native{AUDIT_ARCH_AARCH64, 198, 199, 203, 206, 425, 0, 29, 211, 269};
inline constexpr Calls compat{AUDIT_ARCH_ARM, 281, 288, 283, 290, 425, 0, 54, 296, 374};
#elif defined(__i386__)
inline constexpr Calls native{AUDIT_ARCH_I386, 359, 360, 362, 369, 425, 102, 54, 370, 345};
#elif defined(__arm__)
inline constexpr Calls native{AUDIT_ARCH_ARM, 281, 288, 283, 290, 425, 0, 54, 296, 374};
#else
inline constexpr Calls native{AUDIT_ARCH_RISCV64, 198, 199, 203, 206, 425, 0, 29, 211, 269};
#endif

// A tiny assembler: instructions with jumps to labels, resolved once all are placed.
struct Program {
    static constexpr std::size_t capacity = 96;
    sock_filter code[capacity]{};
    std::size_t size = 0;
    std::size_t label_at[24]{};
    struct Jump {
        std::size_t at;
        int if_true, if_false;  // labels; -1: the next instruction
    } jumps[56]{};
    std::size_t jump_count = 0;

    constexpr void statement(std::uint16_t op, std::uint32_t k) { code[size++] = sock_filter{op, 0, 0, k}; }
    constexpr void jump_if_equal(std::uint32_t k, int if_true, int if_false = -1) {
        jumps[jump_count++] = {size, if_true, if_false};
        code[size++] = sock_filter{BPF_JMP | BPF_JEQ | BPF_K, 0, 0, k};
    }
    constexpr void label(int name) { label_at[name] = size; }
    constexpr void resolve() {
        for (std::size_t j = 0; j < jump_count; ++j) {
            const Jump& jump = jumps[j];
            auto offset = [&](int name) { return name < 0 ? 0 : static_cast<std::uint8_t>(label_at[name] - jump.at - 1); };
            code[jump.at].jt = offset(jump.if_true);
            code[jump.at].jf = offset(jump.if_false);
        }
    }
};

// The low 32 bits of argument `i`, and its high 32 bits.
constexpr std::uint32_t argument_low(int i) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return offsetof(seccomp_data, args) + 8 * i;
#else
    return offsetof(seccomp_data, args) + 8 * i + 4;
#endif
}
constexpr std::uint32_t argument_high(int i) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return offsetof(seccomp_data, args) + 8 * i + 4;
#else
    return offsetof(seccomp_data, args) + 8 * i;
#endif
}

enum Label {
    native_calls, compat_calls, check_socket, check_sendto, check_request, refuse, refuse_ring, refuse_terminal, allow,
    check_tcp_socket, check_inet, check_sendto_flags, check_sendmsg_flags, check_sendmmsg_flags, check_flags,
    check_loopback_socket, check_loopback_type, check_loopback_protocol
};

// The calls of one architecture, number already loaded: each goes to its check (with
// `terminal`, ioctl too, and on x86-64 x32's own ioctl; through the proxy, socket() to the
// TCP check, connect() allowed, and the sends to their MSG_FASTOPEN checks; with a
// loopback, socket() to its check, connect() and sendto() allowed).
constexpr void dispatch(Program& p, const Calls& calls, bool terminal, bool x32, Filter kind) {
    const bool proxy = kind == Filter::proxy;
    const bool loopback = kind == Filter::loopback;
    if (terminal) {
        p.jump_if_equal(calls.ioctl, check_request);
#if defined(__x86_64__)
        if (x32) p.jump_if_equal(x32_ioctl, check_request);
#endif
    }
    (void)x32;
    if (calls.socketcall) p.jump_if_equal(calls.socketcall, refuse);
    p.jump_if_equal(calls.socket, proxy ? check_tcp_socket : loopback ? check_loopback_socket : check_socket);
    p.jump_if_equal(calls.socketpair, check_socket);
    if (kind == Filter::closed) p.jump_if_equal(calls.connect, refuse);
    if (!loopback) p.jump_if_equal(calls.sendto, check_sendto);
    if (proxy) {
        p.jump_if_equal(calls.sendmsg, check_sendmsg_flags);
        p.jump_if_equal(calls.sendmmsg, check_sendmmsg_flags);
    }
    p.jump_if_equal(calls.io_uring_setup, refuse_ring);
    p.statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

// The proxy program's own checks: socket() of TCP only, and no send with MSG_FASTOPEN
// (flags: sendto's 4th argument, sendmsg's 3rd, sendmmsg's 4th).
constexpr void proxy_checks(Program& p) {
    p.label(check_tcp_socket);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(0));
    p.jump_if_equal(AF_INET, check_inet);
    p.jump_if_equal(AF_INET6, check_inet, refuse);
    p.label(check_inet);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(1));
    p.statement(BPF_ALU | BPF_AND | BPF_K, 0xF);
    p.jump_if_equal(SOCK_STREAM, -1, refuse);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(2));
    p.jump_if_equal(0, allow);
    p.jump_if_equal(IPPROTO_TCP, allow, refuse);
    p.label(check_sendto_flags);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(3));
    p.jump_if_equal(0, allow, check_flags);
    p.label(check_sendmsg_flags);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(2));
    p.jump_if_equal(0, allow, check_flags);
    p.label(check_sendmmsg_flags);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(3));
    p.label(check_flags);
    p.statement(BPF_ALU | BPF_AND | BPF_K, MSG_FASTOPEN);
    p.jump_if_equal(0, allow, refuse);
}

// The loopback program's own check: socket() of TCP or UDP over IPv4 or IPv6 only.
constexpr void loopback_checks(Program& p) {
    p.label(check_loopback_socket);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(0));
    p.jump_if_equal(AF_INET, check_loopback_type);
    p.jump_if_equal(AF_INET6, check_loopback_type, refuse);
    p.label(check_loopback_type);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(1));
    p.statement(BPF_ALU | BPF_AND | BPF_K, 0xF);
    p.jump_if_equal(SOCK_STREAM, check_loopback_protocol);
    p.jump_if_equal(SOCK_DGRAM, check_loopback_protocol, refuse);
    p.label(check_loopback_protocol);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(2));
    p.jump_if_equal(0, allow);
    p.jump_if_equal(IPPROTO_TCP, allow);
    p.jump_if_equal(IPPROTO_UDP, allow, refuse);
}

// The network filter; with `terminal`, the terminal filter's refusals too
// (terminal_filter_linux.hpp: TIOCSTI and TIOCLINUX, EPERM), in one program whose verdict
// on every call is the one the two filters installed one after the other would give;
// `kind` says which program (above).
constexpr Program build(bool terminal, Filter kind = Filter::closed) {
    const bool proxy = kind == Filter::proxy;
    Program p;
    p.statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
#if defined(__x86_64__) || defined(__aarch64__)
    p.jump_if_equal(native.arch, native_calls);
    p.jump_if_equal(compat.arch, compat_calls);
#else
    p.jump_if_equal(native.arch, native_calls);
#endif
    p.statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    p.label(native_calls);
    p.statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
    p.statement(BPF_ALU | BPF_AND | BPF_K, ~x32_bit);
#endif
    dispatch(p, native, terminal, true, kind);
#if defined(__x86_64__) || defined(__aarch64__)
    p.label(compat_calls);
    p.statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
    dispatch(p, compat, terminal, false, kind);
#endif
    // socket(domain, type, ...) and socketpair(domain, type, ...): AF_UNIX only, and of
    // a type that sends to no address (the type's low four bits; its high ones are the
    // flags SOCK_NONBLOCK and SOCK_CLOEXEC).
    p.label(check_socket);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(0));
    p.jump_if_equal(AF_UNIX, -1, refuse);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(1));
    p.statement(BPF_ALU | BPF_AND | BPF_K, 0xF);
    p.jump_if_equal(SOCK_STREAM, allow);
    p.jump_if_equal(SOCK_SEQPACKET, allow, refuse);
    // sendto(fd, buf, len, flags, dest_addr, addrlen): no destination given (and in the
    // proxy program no MSG_FASTOPEN).
    p.label(check_sendto);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(4));
    p.jump_if_equal(0, -1, refuse);
    p.statement(BPF_LD | BPF_W | BPF_ABS, argument_high(4));
    p.jump_if_equal(0, proxy ? check_sendto_flags : allow, refuse);
    if (proxy) proxy_checks(p);
    if (kind == Filter::loopback) loopback_checks(p);
    // ioctl(fd, request, ...): the request, an unsigned int, neither TIOCSTI nor TIOCLINUX.
    if (terminal) {
        p.label(check_request);
        p.statement(BPF_LD | BPF_W | BPF_ABS, argument_low(1));
        p.jump_if_equal(TIOCSTI, refuse_terminal);
        p.jump_if_equal(TIOCLINUX, refuse_terminal, allow);
        p.label(refuse_terminal);
        p.statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    }
    p.label(refuse);
    p.statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA));
    p.label(refuse_ring);
    p.statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    p.label(allow);
    p.statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    p.resolve();
    return p;
}

inline constexpr Program program = build(false);
inline constexpr Program with_terminal = build(true);
inline constexpr Program proxy_program = build(false, Filter::proxy);
inline constexpr Program proxy_with_terminal = build(true, Filter::proxy);
inline constexpr Program loopback_program = build(false, Filter::loopback);
inline constexpr Program loopback_with_terminal = build(true, Filter::loopback);

constexpr const Program& program_of(Filter kind, bool terminal) noexcept {
    switch (kind) {
    case Filter::proxy: return terminal ? proxy_with_terminal : proxy_program;
    case Filter::loopback: return terminal ? loopback_with_terminal : loopback_program;
    case Filter::closed: break;
    }
    return terminal ? with_terminal : program;
}

}  // namespace detail

// The filter's instructions, as bubblewrap's --seccomp reads them from a descriptor.
inline const sock_filter* filter_code(Filter kind = Filter::closed) noexcept { return detail::program_of(kind, false).code; }
inline std::size_t filter_size(Filter kind = Filter::closed) noexcept { return detail::program_of(kind, false).size; }

#endif

#if defined(CONFINE_NETWORK_FILTER_PROGRAM) && !defined(CONFINE_PORTABLE_POSIX)

inline constexpr bool filter_available = true;

// Installs the filter on the calling thread, inherited by everything it executes and
// starts. Needs no_new_privs (or CAP_SYS_ADMIN). 0 or -errno.
inline int install_filter(Filter kind = Filter::closed) noexcept {
    const detail::Program& program = detail::program_of(kind, false);
    sock_fprog fprog{static_cast<unsigned short>(program.size), const_cast<sock_filter*>(program.code)};
    return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) == 0 ? 0 : -errno;
}

// Installs this filter and the terminal filter (terminal::install_injection_filter())
// as one program: one filter for the kernel to run on every system call instead of two,
// with the same verdicts. Same needs. 0 or -errno.
inline int install_filter_with_terminal(Filter kind = Filter::closed) noexcept {
    const detail::Program& program = detail::program_of(kind, true);
    sock_fprog fprog{static_cast<unsigned short>(program.size), const_cast<sock_filter*>(program.code)};
    return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) == 0 ? 0 : -errno;
}

#else

inline constexpr bool filter_available = false;

// No filter in this build or for this architecture: the caller must fail closed.
inline int install_filter(Filter = Filter::closed) noexcept { return -ENOSYS; }
inline int install_filter_with_terminal(Filter = Filter::closed) noexcept { return -ENOSYS; }

#endif

}  // namespace confine::network
