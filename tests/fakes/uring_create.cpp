// uring-create PATH: creates PATH through io_uring (IORING_OP_OPENAT with O_CREAT, then
// a write), not through the open(2) system call, and says what happened: "created" and
// exit 0, or the error's name and exit 1 ("setup: <errno>" when io_uring itself is not
// available). Run inside a sandbox by the escape tests: a path outside the policy's
// writable roots must not come into being.
#include <liburing.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {

const char* name_of(int error) {
    const char* name = ::strerrorname_np(error);
    return name ? name : "error";
}

// One operation submitted and waited for; its result (a descriptor, a count, or -errno).
template <class Prepare>
int submit_one(io_uring& ring, Prepare prepare) {
    io_uring_sqe* sqe = ::io_uring_get_sqe(&ring);
    if (!sqe) return -EBUSY;
    prepare(sqe);
    if (int rc = ::io_uring_submit(&ring); rc < 0) return rc;
    io_uring_cqe* cqe = nullptr;
    if (int rc = ::io_uring_wait_cqe(&ring, &cqe); rc < 0) return rc;
    const int result = cqe->res;
    ::io_uring_cqe_seen(&ring, cqe);
    return result;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: uring-create PATH\n");
        return 2;
    }
    io_uring ring;
    if (int rc = ::io_uring_queue_init(4, &ring, 0); rc < 0) {
        std::printf("setup: %s\n", name_of(-rc));
        return 1;
    }
    const int fd = submit_one(ring, [&](io_uring_sqe* sqe) { ::io_uring_prep_openat(sqe, AT_FDCWD, argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644); });
    if (fd < 0) {
        std::printf("%s\n", name_of(-fd));
        return 1;
    }
    static const char bytes[] = "written through io_uring\n";
    const int written = submit_one(ring, [&](io_uring_sqe* sqe) { ::io_uring_prep_write(sqe, fd, bytes, sizeof bytes - 1, 0); });
    std::printf(written < 0 ? "created, write %s\n" : "created\n", written < 0 ? name_of(-written) : "");
    return 0;
}
