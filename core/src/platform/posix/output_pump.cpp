#include "output_pump.hpp"
#include "executor.hpp"
#include "linux_features.hpp"
#include "own_terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace confine::detail {
namespace {

// Without a pidfd, how often the child is asked whether it has ended.
constexpr int exit_poll_ms = 10;
constexpr short readable = POLLIN | POLLHUP | POLLERR;
// One read takes up to this much, however much the pipe holds (the executor's stderr
// pipe is given 1 MiB where the system allows, spawn.cpp, so that a writer seldom waits):
// a read holds the pipe's lock while it copies, and a writer meanwhile spins on that
// lock, so reads of 1 MiB made a gigabyte through --report cost about 1.5x what reads of
// 64 KiB do on two cores (bench/output).
constexpr std::size_t read_size = 64 * 1024;

// The shorter of two sleeps, -1 being none.
int shorter(int a, int b) { return a < 0 ? b : b < 0 ? a : std::min(a, b); }

}  // namespace

// What one poll() watches: the open streams, the pidfd while the child runs, and the
// companion's descriptor. Each index is -1 when that is not watched.
struct OutputPump::PollSet {
    pollfd fds[8];
    nfds_t n = 0;
    int stream_at[5] = {-1, -1, -1, -1, -1};
    int pidfd_at = -1, watched_at = -1;

    int add(int fd) {
        fds[n] = {fd, POLLIN, 0};
        return static_cast<int>(n++);
    }
    bool ready(int at, short events) const { return at >= 0 && (fds[at].revents & events) != 0; }
};

OutputPump::OutputPump(pid_t pid, bool running) : pid_(pid), running_(running) {}

void OutputPump::read(PumpStream stream) {
    if (stream.fd >= 0 && streams_.size() < 5) streams_.push_back(Stream{std::move(stream)});
}

bool OutputPump::reading() const {
    return std::any_of(streams_.begin(), streams_.end(), [](const Stream& s) { return s.open; });
}

OutputPump::Result OutputPump::run() {
    pidfd_ = Fd(running_ ? open_pidfd(pid_) : -1);
    while (running_ || reading()) {
        if (deadline && std::chrono::steady_clock::now() >= *deadline) {
            result_.deadline_passed = true;
            break;
        }
        PollSet set = poll_set();
        if (set.n == 0 && !deadline) {
            wait_for_end();  // nothing to read and no pidfd: a blocking wait is all that is left
            break;
        }
        const int ready = ::poll(set.fds, set.n, sleep_ms(set));
        if (ready < 0 && errno != EINTR) break;
        if (ready == 0 && !running_ && after_exit == AfterExit::take_what_is_ready) break;
        take(set);
    }
    return result_;
}

OutputPump::PollSet OutputPump::poll_set() const {
    PollSet set;
    for (std::size_t i = 0; i < streams_.size(); ++i)
        if (streams_[i].open) set.stream_at[i] = set.add(streams_[i].fd);
    if (running_ && pidfd_.get() >= 0) set.pidfd_at = set.add(pidfd_.get());
    if (running_ && companion && companion->watched_fd() >= 0) set.watched_at = set.add(companion->watched_fd());
    return set;
}

int OutputPump::sleep_ms(const PollSet& set) const {
    int ms = -1;
    if (!running_) ms = after_exit == AfterExit::take_what_is_ready ? 0 : -1;
    else if (set.pidfd_at < 0) ms = exit_poll_ms;
    if (running_ && companion) ms = shorter(ms, companion->wake_within_ms());
    if (deadline) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
        ms = shorter(ms, static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 0x7fffffff)));
    }
    return ms;
}

void OutputPump::take(const PollSet& set) {
    for (std::size_t i = 0; i < streams_.size(); ++i)
        if (set.ready(set.stream_at[i], readable)) read_some(streams_[i]);
    if (companion && set.ready(set.watched_at, readable)) companion->watched_ready();
    if (companion) companion->woke(running_);
    if (running_ && (set.pidfd_at < 0 || set.ready(set.pidfd_at, POLLIN))) check_end(set.pidfd_at >= 0);
}

void OutputPump::read_some(Stream& stream) {
    if (!buffer_) buffer_ = std::make_unique_for_overwrite<char[]>(read_size);
    const ssize_t r = ::read(stream.fd, buffer_.get(), read_size);
    if (r > 0) {
        if (stream.take) stream.take(std::string_view(buffer_.get(), static_cast<std::size_t>(r)));
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        stream.open = false;
    }
}

// `seen_ended`: the pidfd says the child has ended, so the wait does not block.
void OutputPump::check_end(bool seen_ended) {
    if (seen_ended && ended) ended(false);
    int st = 0;
    if (::waitpid(pid_, &st, seen_ended ? 0 : WNOHANG) != pid_) return;
    if (!seen_ended && ended) ended(true);
    result_.status = st;
    running_ = false;
}

void OutputPump::wait_for_end() {
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {}
    if (ended) ended(true);
    result_.status = st;
    running_ = false;
}

SigpipeBlocked::SigpipeBlocked() {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &before_);
}

SigpipeBlocked::~SigpipeBlocked() {
    discard_pending(SIGPIPE);
    ::pthread_sigmask(SIG_SETMASK, &before_, nullptr);
}

std::function<void(std::string_view)> keep_head(std::string& into, std::size_t limit, std::function<void()> grew) {
    return [&into, limit, grew = std::move(grew)](std::string_view bytes) {
        const std::size_t kept = std::min(limit - std::min(limit, into.size()), bytes.size());
        into.append(bytes.substr(0, kept));
        if (kept > 0 && grew) grew();
    };
}

bool standard_outputs_shared() {
    struct stat out {}, err {};
    if (::fstat(1, &out) != 0 || ::fstat(2, &err) != 0 || out.st_dev != err.st_dev || out.st_ino != err.st_ino) return false;
    // One pipe or socket is one stream, however each end was opened.
    if (S_ISFIFO(out.st_mode) || S_ISSOCK(out.st_mode)) return true;
    if (!S_ISREG(out.st_mode)) return false;
    const int out_flags = ::fcntl(1, F_GETFL), err_flags = ::fcntl(2, F_GETFL);
    if (out_flags < 0 || err_flags < 0) return false;
    if ((out_flags & O_APPEND) && (err_flags & O_APPEND)) return true;  // each write lands at the end, in turn
    // One file through one description (`> out 2>&1`): one offset. Two descriptions
    // overwrite each other, whatever confine does. Without kcmp, the same offset and flags
    // stand for the same description.
    if (const int same = same_open_file(1, 2); same >= 0) return same == 1;
    return out_flags == err_flags && ::lseek(1, 0, SEEK_CUR) == ::lseek(2, 0, SEEK_CUR);
}

bool write_to_stderr(std::string_view bytes) { return write_to_raw_terminal(2, bytes) || write_all(2, bytes.data(), bytes.size()); }

void copy_to_stderr(std::string_view bytes) {
    if (bytes.empty()) return;
    const SigpipeBlocked quiet;
    write_to_stderr(bytes);
}

}  // namespace confine::detail
