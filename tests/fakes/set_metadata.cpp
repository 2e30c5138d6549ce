// set-metadata FILE: changes what a write of FILE's contents would not — its mode (0777),
// its times (2001-01-01), an extended attribute (user.confine-escape) and a file flag
// (FS_NODUMP_FL, through a descriptor opened for reading) — and prints one line,
// "chmod=R utime=R xattr=R flags=R", where R is "ok" or the errno's name. Run inside a
// sandbox by the escape tests, which look at the file afterwards.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {

const char* outcome(bool ok) {
    if (ok) return "ok";
    const char* name = ::strerrorname_np(errno);
    return name ? name : "error";
}

bool set_flag(const char* file) {
    const int fd = ::open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    int flags = 0;
    const bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags |= FS_NODUMP_FL, ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0);
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: set-metadata FILE\n");
        return 2;
    }
    const char* file = argv[1];
    std::printf("chmod=%s", outcome(::chmod(file, 0777) == 0));
    const timespec times[2] = {{978307200, 0}, {978307200, 0}};  // 2001-01-01
    std::printf(" utime=%s", outcome(::utimensat(AT_FDCWD, file, times, 0) == 0));
    std::printf(" xattr=%s", outcome(::setxattr(file, "user.confine-escape", "1", 1, 0) == 0));
    std::printf(" flags=%s\n", outcome(set_flag(file)));
    return 0;
}
