#include "own_terminal.hpp"
#include "log.hpp"

#include <confine/execute.hpp>

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace confine::detail {
namespace {

// What a signal handler may reach (relay_window_size, release_terminal,
// retake_terminal): the master being relayed, the caller's settings and raw ones.
std::atomic<int> g_master{-1};
std::atomic<bool> g_raw{false};
termios g_saved{}, g_raw_settings{};

// One read takes up to this much: a terminal's buffer holds a few KiB, a paste more.
constexpr std::size_t relay_size = 1 << 16;
// After the command's end, what its terminal still holds is read until it says the
// command's last descriptor is closed, or is quiet this long (something the command
// left behind may hold it open), within at most the bound.
constexpr int drain_quiet_ms = 25;
constexpr auto drain_bound = std::chrono::milliseconds(250);

bool window_size_to(int master) noexcept {
    winsize size{};
    if (::ioctl(1, TIOCGWINSZ, &size) != 0 && ::ioctl(0, TIOCGWINSZ, &size) != 0) return false;
    return ::ioctl(master, TIOCSWINSZ, &size) == 0;
}

// Writes to the master (non-blocking) whole, waiting for room, unless told to stop;
// false when the terminal is gone or the relay is to stop.
bool write_to_terminal(int master, int stop, const char* p, std::size_t size) {
    while (size) {
        const ssize_t n = ::write(master, p, size);
        if (n > 0) {
            p += n;
            size -= static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || errno != EAGAIN) return false;
        pollfd wait[2] = {{master, POLLOUT, 0}, {stop, POLLIN, 0}};
        if (::poll(wait, 2, -1) < 0 && errno != EINTR) return false;
        if (wait[1].revents) return false;
    }
    return true;
}

// The input thread: this process's stdin to the command's terminal, until either ends
// or the relay is told to stop.
void relay_input(int master, int stop) {
    auto buffer = std::make_unique_for_overwrite<char[]>(relay_size);
    for (;;) {
        pollfd ready[2] = {{0, POLLIN, 0}, {stop, POLLIN, 0}};
        if (::poll(ready, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (ready[1].revents) return;
        const ssize_t n = ::read(0, buffer.get(), relay_size);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return;  // the caller's terminal hung up
        if (!write_to_terminal(master, stop, buffer.get(), static_cast<std::size_t>(n))) return;
    }
}

}  // namespace

bool write_to_raw_terminal(int fd, std::string_view bytes) {
    if (!g_raw.load() || ::isatty(fd) != 1) return false;
    for (std::size_t line = bytes.find('\n'); !bytes.empty(); line = bytes.find('\n')) {
        const std::size_t end = line == std::string_view::npos ? bytes.size() : line;
        if (!write_all(fd, bytes.data(), end)) return true;
        if (line != std::string_view::npos && !write_all(fd, "\r\n", 2)) return true;
        bytes.remove_prefix(line == std::string_view::npos ? end : end + 1);
    }
    return true;
}

bool at_own_terminal() {
    if (::isatty(0) != 1 || ::isatty(1) != 1) return false;
    const pid_t foreground = ::tcgetpgrp(0);
    return foreground > 0 && foreground == ::getpgrp();
}

std::optional<OwnTerminal> OwnTerminal::open() {
    OwnTerminal t;
    t.master_ = Fd(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    char name[128] = {};
    if (t.master_.get() < 0 || ::grantpt(t.master_.get()) != 0 || ::unlockpt(t.master_.get()) != 0 ||
        ::ptsname_r(t.master_.get(), name, sizeof name) != 0) {
        log_warn("no pseudo-terminal of the run's own ({}): the command gets this terminal", std::strerror(errno));
        return std::nullopt;
    }
    t.path_ = name;
    // Opened through the master where the kernel allows: no path that could name another.
#if defined(TIOCGPTPEER)
    t.slave_ = Fd(::ioctl(t.master_.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
#endif
    if (t.slave_.get() < 0) t.slave_ = Fd(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (t.slave_.get() < 0) {
        log_warn("no pseudo-terminal of the run's own ({}): the command gets this terminal", std::strerror(errno));
        return std::nullopt;
    }
    // The command's terminal starts as the caller's is set (its keys, its modes), at its size.
    termios settings{};
    if (::tcgetattr(0, &settings) == 0) (void)::tcsetattr(t.slave_.get(), TCSANOW, &settings);
    (void)window_size_to(t.master_.get());
    (void)::fcntl(t.master_.get(), F_SETFL, ::fcntl(t.master_.get(), F_GETFL) | O_NONBLOCK);
    return t;
}

OwnTerminal::OwnTerminal(OwnTerminal&& other) noexcept
    : master_(std::move(other.master_)), slave_(std::move(other.slave_)), stop_read_(std::move(other.stop_read_)),
      stop_write_(std::move(other.stop_write_)), path_(std::move(other.path_)), input_(std::move(other.input_)),
      relaying_(std::exchange(other.relaying_, false)) {}

OwnTerminal& OwnTerminal::operator=(OwnTerminal&& other) noexcept {
    if (this != &other) {
        finish();
        master_ = std::move(other.master_);
        slave_ = std::move(other.slave_);
        stop_read_ = std::move(other.stop_read_);
        stop_write_ = std::move(other.stop_write_);
        path_ = std::move(other.path_);
        input_ = std::move(other.input_);
        relaying_ = std::exchange(other.relaying_, false);
    }
    return *this;
}

OwnTerminal::~OwnTerminal() { finish(); }

void OwnTerminal::start_relay() {
    if (relaying_ || master_.get() < 0) return;
    // Made only now, so that the runner's own descriptors keep their low numbers (a shell
    // takes only 0-9 in a redirection).
    if (!make_pipe(stop_read_, stop_write_)) {
        log_warn("the run's own terminal cannot be relayed: {}", std::strerror(errno));
        return;
    }
    relaying_ = true;
    if (::tcgetattr(0, &g_saved) == 0) {
        g_raw_settings = g_saved;
        ::cfmakeraw(&g_raw_settings);
        g_raw_settings.c_cc[VMIN] = 1;
        g_raw_settings.c_cc[VTIME] = 0;
        g_raw = ::tcsetattr(0, TCSADRAIN, &g_raw_settings) == 0;
    }
    g_master = master_.get();
    input_ = std::thread(relay_input, master_.get(), stop_read_.get());
}

PumpStream OwnTerminal::output() {
    return {.fd = master_.get(), .take = [](std::string_view bytes) { (void)write_all(1, bytes.data(), bytes.size()); }};
}

void OwnTerminal::finish() {
    if (!relaying_) return;
    relaying_ = false;
    // What the command wrote last may still be on its way through the terminal.
    auto buffer = std::make_unique_for_overwrite<char[]>(relay_size);
    const auto bound = std::chrono::steady_clock::now() + drain_bound;
    while (std::chrono::steady_clock::now() < bound) {
        pollfd ready{master_.get(), POLLIN, 0};
        if (::poll(&ready, 1, drain_quiet_ms) <= 0) break;
        const ssize_t n = ::read(master_.get(), buffer.get(), relay_size);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) break;  // EIO: the command's last descriptor of it is closed
        (void)write_all(1, buffer.get(), static_cast<std::size_t>(n));
    }
    const char stop = 's';
    (void)write_all(stop_write_.get(), &stop, 1);
    if (input_.joinable()) input_.join();
    g_master = -1;
    release_terminal();
}

}  // namespace confine::detail

namespace confine {

bool relay_window_size() noexcept {
    const int master = detail::g_master.load();
    if (master < 0) return false;
    (void)detail::window_size_to(master);
    return true;
}

void release_terminal() noexcept {
    if (detail::g_raw.exchange(false)) (void)::tcsetattr(0, TCSADRAIN, &detail::g_saved);
}

void retake_terminal() noexcept {
    const int master = detail::g_master.load();
    if (master < 0 || detail::g_raw.load()) return;
    detail::g_raw = ::tcsetattr(0, TCSADRAIN, &detail::g_raw_settings) == 0;
    (void)detail::window_size_to(master);  // it may have changed meanwhile
}

}  // namespace confine
