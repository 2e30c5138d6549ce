// What a launch resolves and builds, checked against what it must give: the deny-list
// carve of the Landlock ruleset (each entry of a directory granted, a link granted
// nothing), the deny_read entries beneath the homes resolved as fs::canonical resolves
// them, and the one seccomp program the Landlock paths install, whose verdict on every
// system call is the terminal filter's and the network filter's together.
#if defined(__linux__)
#include "ruleset.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
namespace ll = confine::landlock;

namespace {

// What a process confined by a ruleset that grants `root` read-only around `denied` (and
// nothing else) can read of each of `paths`: true where an open for reading succeeds.
std::vector<bool> readable_after_carve(const fs::path& root, const std::vector<std::string>& denied, const std::vector<fs::path>& paths) {
    std::vector<const char*> d;
    for (const auto& p : denied) d.push_back(p.c_str());
    const int abi = ll::abi_version();
    const std::uint64_t handled = ll::handled_access(abi);
    const int ruleset = ll::create_ruleset(handled);
    REQUIRE(ruleset >= 0);
    REQUIRE(ll::add_rule_around(ruleset, root.c_str(), ll::Grant::read_only, handled, d.data(), d.size()) == 0);
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pipe_fds[0]);
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::syscall(__NR_landlock_restrict_self, ruleset, 0u) != 0) ::_exit(3);
        for (const auto& p : paths) {
            const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
            const char c = fd >= 0 ? '1' : '0';
            if (fd >= 0) ::close(fd);
            if (::write(pipe_fds[1], &c, 1) != 1) ::_exit(4);
        }
        ::_exit(0);
    }
    ::close(pipe_fds[1]);
    ::close(ruleset);
    std::vector<bool> out;
    char c;
    while (::read(pipe_fds[0], &c, 1) == 1) out.push_back(c == '1');
    ::close(pipe_fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return out;
}

}  // namespace

TEST_CASE("the deny-list carve grants each entry around a denied path, a link nothing, whatever it leads to", "[landlock][carve][linux-only]") {
    if (ll::abi_version() < 1) test::skip_test("the kernel does not enforce Landlock");
    test::TempDir tmp;
    const fs::path root = fs::canonical(tmp.path()) / "home", outside = fs::canonical(tmp.path()) / "outside";
    fs::create_directories(root / ".ssh");
    fs::create_directories(root / "project");
    fs::create_directories(outside);
    test::write_file(root / ".ssh" / "id", "key\n");
    test::write_file(root / "notes.txt", "notes\n");
    test::write_file(root / "project" / "a.txt", "a\n");
    test::write_file(outside / "secret.txt", "secret\n");
    fs::create_symlink(outside / "secret.txt", root / "link-to-file");
    fs::create_directory_symlink(outside, root / "link-to-dir");
    fs::create_symlink(root / "nothing-there", root / "dangling");
    const auto readable = readable_after_carve(root, {(root / ".ssh").string()},
                                               {root / "notes.txt", root / "project" / "a.txt", root / ".ssh" / "id", root / ".ssh",
                                                root / "link-to-file", root / "link-to-dir" / "secret.txt", outside / "secret.txt"});
    CHECK(readable == std::vector<bool>{true, true, false, false, false, false, false});
}

#endif
