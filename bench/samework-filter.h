/* The seccomp programs of the same-work floors (samework-landlock.c, samework-bwrap.c):
 * the same instructions as confine's network filter and terminal filter
 * (internal/confine/internal/network_filter_linux.hpp, terminal_filter_linux.hpp),
 * assembled here with a label table. x86-64 and aarch64.
 *
 * network filter, closed: socket()/socketpair() of AF_UNIX stream or seqpacket only,
 * connect() refused, sendto() with an address refused, io_uring_setup() refused;
 * loopback: socket() of TCP or UDP over IPv4/IPv6 only, connect() and sendto() allowed;
 * with_terminal: ioctl TIOCSTI and TIOCLINUX refused too (EPERM). An unknown
 * architecture kills the process.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

struct sw_calls { uint32_t arch, socket, socketpair, connect, sendto, io_uring, socketcall, ioctl; };
#if defined(__x86_64__)
static const struct sw_calls sw_native = {AUDIT_ARCH_X86_64, 41, 53, 42, 44, 425, 0, 16};
static const struct sw_calls sw_compat = {AUDIT_ARCH_I386, 359, 360, 362, 369, 425, 102, 54};
#define SW_X32_BIT 0x40000000u
#elif defined(__aarch64__)
static const struct sw_calls sw_native = {AUDIT_ARCH_AARCH64, 198, 199, 203, 206, 425, 0, 29};
static const struct sw_calls sw_compat = {AUDIT_ARCH_ARM, 281, 288, 283, 290, 425, 0, 54};
#else
#error "samework-filter.h: x86-64 and aarch64 only"
#endif

enum { SW_NATIVE, SW_COMPAT, SW_SOCKET, SW_SENDTO, SW_LOOP_SOCKET, SW_LOOP_TYPE, SW_LOOP_PROTO, SW_REQUEST,
       SW_REFUSE_TERMINAL, SW_REFUSE, SW_REFUSE_RING, SW_ALLOW, SW_LABELS };
enum sw_kind { SW_CLOSED, SW_LOOPBACK };

struct sw_program {
    struct sock_filter code[96];
    int size, label_at[SW_LABELS], jump_count;
    struct { int at, if_true, if_false; } jumps[64];
};

static void sw_stmt(struct sw_program* p, uint16_t op, uint32_t k) { p->code[p->size++] = (struct sock_filter){op, 0, 0, k}; }
static void sw_jeq(struct sw_program* p, uint32_t k, int if_true, int if_false) {
    p->jumps[p->jump_count].at = p->size;
    p->jumps[p->jump_count].if_true = if_true;
    p->jumps[p->jump_count++].if_false = if_false;
    sw_stmt(p, BPF_JMP | BPF_JEQ | BPF_K, k);
}
static void sw_label(struct sw_program* p, int name) { p->label_at[name] = p->size; }
static uint32_t sw_arg_low(int i) { return offsetof(struct seccomp_data, args) + 8 * i; }
static uint32_t sw_arg_high(int i) { return offsetof(struct seccomp_data, args) + 8 * i + 4; }

static void sw_dispatch(struct sw_program* p, const struct sw_calls* c, int terminal, int x32, enum sw_kind kind) {
    if (terminal) {
        sw_jeq(p, c->ioctl, SW_REQUEST, -1);
#if defined(__x86_64__)
        if (x32) sw_jeq(p, 514, SW_REQUEST, -1);
#endif
    }
    (void)x32;
    if (c->socketcall) sw_jeq(p, c->socketcall, SW_REFUSE, -1);
    sw_jeq(p, c->socket, kind == SW_LOOPBACK ? SW_LOOP_SOCKET : SW_SOCKET, -1);
    sw_jeq(p, c->socketpair, SW_SOCKET, -1);
    if (kind == SW_CLOSED) sw_jeq(p, c->connect, SW_REFUSE, -1);
    if (kind != SW_LOOPBACK) sw_jeq(p, c->sendto, SW_SENDTO, -1);
    sw_jeq(p, c->io_uring, SW_REFUSE_RING, -1);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

__attribute__((unused)) static void sw_build(struct sw_program* p, int terminal, enum sw_kind kind) {
    *p = (struct sw_program){0};
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    sw_jeq(p, sw_native.arch, SW_NATIVE, -1);
    sw_jeq(p, sw_compat.arch, SW_COMPAT, -1);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    sw_label(p, SW_NATIVE);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
    sw_stmt(p, BPF_ALU | BPF_AND | BPF_K, ~SW_X32_BIT);
#endif
    sw_dispatch(p, &sw_native, terminal, 1, kind);
    sw_label(p, SW_COMPAT);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    sw_dispatch(p, &sw_compat, terminal, 0, kind);
    sw_label(p, SW_SOCKET);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_low(0));
    sw_jeq(p, AF_UNIX, -1, SW_REFUSE);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_low(1));
    sw_stmt(p, BPF_ALU | BPF_AND | BPF_K, 0xF);
    sw_jeq(p, SOCK_STREAM, SW_ALLOW, -1);
    sw_jeq(p, SOCK_SEQPACKET, SW_ALLOW, SW_REFUSE);
    sw_label(p, SW_SENDTO);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_low(4));
    sw_jeq(p, 0, -1, SW_REFUSE);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_high(4));
    sw_jeq(p, 0, SW_ALLOW, SW_REFUSE);
    if (kind == SW_LOOPBACK) {
        sw_label(p, SW_LOOP_SOCKET);
        sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_low(0));
        sw_jeq(p, AF_INET, SW_LOOP_TYPE, -1);
        sw_jeq(p, AF_INET6, SW_LOOP_TYPE, SW_REFUSE);
        sw_label(p, SW_LOOP_TYPE);
        sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_low(1));
        sw_stmt(p, BPF_ALU | BPF_AND | BPF_K, 0xF);
        sw_jeq(p, SOCK_STREAM, SW_LOOP_PROTO, -1);
        sw_jeq(p, SOCK_DGRAM, SW_LOOP_PROTO, SW_REFUSE);
        sw_label(p, SW_LOOP_PROTO);
        sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_low(2));
        sw_jeq(p, 0, SW_ALLOW, -1);
        sw_jeq(p, IPPROTO_TCP, SW_ALLOW, -1);
        sw_jeq(p, IPPROTO_UDP, SW_ALLOW, SW_REFUSE);
    }
    if (terminal) {
        sw_label(p, SW_REQUEST);
        sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_low(1));
        sw_jeq(p, TIOCSTI, SW_REFUSE_TERMINAL, -1);
        sw_jeq(p, TIOCLINUX, SW_REFUSE_TERMINAL, SW_ALLOW);
        sw_label(p, SW_REFUSE_TERMINAL);
        sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    }
    sw_label(p, SW_REFUSE);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA));
    sw_label(p, SW_REFUSE_RING);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    sw_label(p, SW_ALLOW);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    for (int j = 0; j < p->jump_count; ++j) {
        int at = p->jumps[j].at, t = p->jumps[j].if_true, f = p->jumps[j].if_false;
        p->code[at].jt = t < 0 ? 0 : (uint8_t)(p->label_at[t] - at - 1);
        p->code[at].jf = f < 0 ? 0 : (uint8_t)(p->label_at[f] - at - 1);
    }
}

/* The terminal filter alone (terminal_filter_linux.hpp's injection_program): what the
 * host installs on a runner it does not confine itself (bubblewrap). */
__attribute__((unused)) static void sw_build_terminal(struct sw_program* p) {
    *p = (struct sw_program){0};
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    sw_jeq(p, sw_native.arch, SW_NATIVE, -1);
    sw_jeq(p, sw_compat.arch, SW_COMPAT, -1);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    sw_label(p, SW_NATIVE);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
    sw_stmt(p, BPF_ALU | BPF_AND | BPF_K, ~SW_X32_BIT);
    sw_jeq(p, sw_native.ioctl, SW_REQUEST, -1);
    sw_jeq(p, 514, SW_REQUEST, -1);
#else
    sw_jeq(p, sw_native.ioctl, SW_REQUEST, -1);
#endif
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sw_label(p, SW_COMPAT);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    sw_jeq(p, sw_compat.ioctl, SW_REQUEST, -1);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sw_label(p, SW_REQUEST);
    sw_stmt(p, BPF_LD | BPF_W | BPF_ABS, sw_arg_low(1));
    sw_jeq(p, TIOCSTI, SW_REFUSE_TERMINAL, -1);
    sw_jeq(p, TIOCLINUX, SW_REFUSE_TERMINAL, SW_ALLOW);
    sw_label(p, SW_REFUSE_TERMINAL);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    sw_label(p, SW_ALLOW);
    sw_stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    for (int j = 0; j < p->jump_count; ++j) {
        int at = p->jumps[j].at, t = p->jumps[j].if_true, f = p->jumps[j].if_false;
        p->code[at].jt = t < 0 ? 0 : (uint8_t)(p->label_at[t] - at - 1);
        p->code[at].jf = f < 0 ? 0 : (uint8_t)(p->label_at[f] - at - 1);
    }
}
