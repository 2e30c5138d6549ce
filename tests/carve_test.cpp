// What a launch resolves and builds, checked against what it must give: the deny-list
// carve of the Landlock ruleset (each entry of a directory granted, a link granted
// nothing), the deny_read entries beneath the homes resolved as fs::canonical resolves
// them, and the one seccomp program the Landlock paths install, whose verdict on every
// system call is the terminal filter's and the network filter's together.
#include "roots.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#if !defined(_WIN32)
#include <pwd.h>
#include <unistd.h>
#endif

namespace {

namespace fs = std::filesystem;

// $HOME set for a scope.
struct HomeFor {
    std::string before;
    bool had;
    explicit HomeFor(const fs::path& home) {
        const char* h = std::getenv("HOME");
        had = h != nullptr;
        if (had) before = h;
        ::setenv("HOME", home.c_str(), 1);
    }
    ~HomeFor() {
        if (had) ::setenv("HOME", before.c_str(), 1);
        else ::unsetenv("HOME");
    }
    HomeFor(const HomeFor&) = delete;
    HomeFor& operator=(const HomeFor&) = delete;
};

// A home whose entries are of every kind a deny_read entry can meet.
struct LinkedHome {
    test::TempDir tmp;
    fs::path home = fs::canonical(tmp.path()) / "home", elsewhere = fs::canonical(tmp.path()) / "elsewhere";
    LinkedHome() {
        fs::create_directories(home / ".ssh");
        fs::create_directories(home / ".config" / "gh");
        fs::create_directories(elsewhere / "aws");
        fs::create_directories(elsewhere / "config" / "gh");
        test::write_file(home / ".netrc", "machine x\n");
        test::write_file(home / ".config" / "gh" / "hosts.yml", "token\n");
        test::write_file(elsewhere / "pgpass", "x\n");
        test::write_file(elsewhere / "config" / "gh" / "hosts.yml", "token\n");
        fs::create_directory_symlink(elsewhere / "aws", home / ".aws");               // a link to a directory
        fs::create_symlink(elsewhere / "pgpass", home / ".pgpass");                   // a link to a file
        fs::create_symlink(home / "nothing-there", home / ".vault-token");            // a link to nothing
        fs::create_directory_symlink(elsewhere / "config", home / ".cfg");            // a directory above an entry
        fs::create_symlink("../home/.ssh", elsewhere / "ssh-again");                  // a relative link
        fs::create_directory_symlink(elsewhere, home / ".local");
    }
};

}  // namespace

TEST_CASE("deny_read paths resolve as fs::canonical resolves them: links where they lead, a link to nothing or a missing path skipped", "[roots][secrets][carve]") {
    LinkedHome h;
    const fs::path home = h.home;
    const std::vector<fs::path> paths{home / ".ssh", home / ".netrc", home / ".config/gh/hosts.yml", home / ".config/gh", home / ".aws",
                                      home / ".aws/missing", home / ".pgpass", home / ".vault-token", home / ".cfg/gh/hosts.yml",
                                      home / ".cfg/gh", home / ".local/ssh-again", home / ".local/pgpass", home / ".gnupg",
                                      home / ".gnupg/x", home / ".netrc/x", home / ".ssh/../.netrc", home / "./.ssh", home / ".ssh/",
                                      fs::path(home.string() + "//.netrc"), home, "/", home / ".config/missing/x", home / ".config/gh/hosts.yml/x"};
    // Twice through one resolver: what it remembers of the directories gives the same answers.
    confine::detail::PathResolver resolver;
    resolver.known_directory(home);
    for (int round = 0; round < 2; ++round)
        for (const auto& p : paths) {
            INFO(p << " (round " << round << ")");
            std::error_code ec;
            const fs::path expected = fs::canonical(p, ec);
            const auto got = resolver.canonical(p);
            CHECK(got.has_value() == !ec);
            if (got && !ec) CHECK(*got == expected);
        }
}

TEST_CASE("deny_read entries resolve the same whether their home is listed once or looked into entry by entry", "[roots][secrets][carve]") {
    LinkedHome h;
    const fs::path home = h.home;
    const std::vector<fs::path> entries{home / ".ssh",   home / ".netrc",  home / ".aws",        home / ".pgpass",     home / ".vault-token",
                                        home / ".gnupg", home / "nothing", home / ".config/gh/hosts.yml", home / ".cfg/gh/hosts.yml",
                                        // beneath a name the home's listing lacks, one it has, and a link to nothing
                                        home / ".gem/credentials", home / ".config/missing/x", home / ".vault-token/x", home / ".aws/x"};
    auto resolved = [&] {
        confine::Policy out{confine::Mode::read_only, {}, {}};
        REQUIRE_FALSE(confine::detail::resolve_denied(entries, home, out));
        return out.deny_read;
    };
    // As fs::canonical resolves each: what exists, where it leads, each once.
    std::vector<fs::path> expected;
    for (const auto& e : entries) {
        std::error_code ec;
        const fs::path real = fs::canonical(e, ec);
        if (!ec && std::find(expected.begin(), expected.end(), real) == expected.end()) expected.push_back(real);
    }
    REQUIRE(expected.size() == 6);
    CHECK(resolved() == expected);
    // A home of more names than a listing keeps: each entry looked at, the same answer.
    for (int i = 0; i < 600; ++i) test::write_file(home / ("file" + std::to_string(i)), "");
    CHECK(resolved() == expected);
}

TEST_CASE("a directory's listing calls missing only what lstat does not find, and says nothing of a directory too large to keep", "[roots][carve]") {
    LinkedHome h;
    const fs::path home = h.home;
    const std::vector<fs::path> paths{home / ".ssh", home / ".netrc", home / ".config/gh/hosts.yml", home / ".aws", home / ".aws/missing",
                                      home / ".pgpass", home / ".vault-token", home / ".cfg/gh/hosts.yml", home / ".local/pgpass",
                                      home / ".gnupg", home / ".gnupg/x", home / ".netrc/x", home / ".config/missing/x", home / "nothing-there"};
    confine::detail::DirectoryNames names;
    for (const auto& p : paths) {
        INFO(p);
        std::error_code ec;
        const bool there = fs::symlink_status(p, ec).type() != fs::file_type::not_found;
        if (names.surely_missing(p)) CHECK_FALSE(there);
    }
    CHECK(names.surely_missing(home / ".gnupg"));
    CHECK(names.surely_missing(home / ".gnupg" / "x"));         // beneath a directory that is not there
    CHECK(names.surely_missing(home / ".aws" / "missing"));     // listed through the link, as lstat looks through it
    CHECK_FALSE(names.surely_missing(home / ".vault-token"));   // a link to nothing is there
    CHECK(names.surely_missing(home / ".netrc" / "x"));         // beneath a file: nothing, as lstat finds nothing
#if !defined(_WIN32)
    // The same answers for a path given by its text.
    for (const auto& p : paths) {
        INFO(p);
        CHECK(names.surely_missing(std::string_view(p.native())) == names.surely_missing(p));
    }
#endif

    // "." and "..", which no listing holds, and a name with a separator at its end.
    CHECK_FALSE(names.surely_missing(home / "."));
    CHECK_FALSE(names.surely_missing(home / ".."));
    CHECK_FALSE(names.surely_missing(fs::path(home.string() + "/")));

    // 4096 names are kept; one more and the listing says nothing.
    const fs::path full = h.tmp.path() / "full", crowded = h.tmp.path() / "crowded";
    fs::create_directories(full);
    for (int i = 0; i < 4096; ++i) std::ofstream(full / ("f" + std::to_string(i)));
    fs::create_directories(crowded);
    for (int i = 0; i < 4097; ++i) std::ofstream(crowded / ("f" + std::to_string(i)));
    confine::detail::DirectoryNames more;
    CHECK(more.surely_missing(full / "absent"));
    CHECK_FALSE(more.surely_missing(full / "f4095"));
    CHECK_FALSE(more.surely_missing(crowded / "absent"));
}

TEST_CASE("a path joined by its text is the one operator/ makes, and a plain relative path is its own lexically_normal", "[roots]") {
    using confine::detail::joined;
    using confine::detail::plain_relative;
    for (const fs::path dir : {"/", "/a", "/a/", "/a//b", "a", "a/b/", "", "."})
        for (const std::string relative : {"b", "b/c", "b/", "./b", "b/../c", "/b", "", ".", "..", "b//c", "..b", "~"}) {
            INFO(dir << " / " << relative);
            CHECK(joined(dir, std::string_view(relative)).native() == (dir / relative).native());
            CHECK(joined(dir, fs::path(relative)) == dir / relative);
        }
#if !defined(_WIN32)
    for (const char* plain : {"a", "a/b", "..a/b.", ".git/hooks", "a b/c~"}) {
        INFO(plain);
        CHECK(plain_relative(plain));
        CHECK(fs::path(plain).lexically_normal().native() == plain);
    }
#endif
    for (const char* not_plain : {"", ".", "..", "a/", "/a", "a//b", "a/./b", "a/../b", "./a", "../a", "a/.", "a/..", "//a"}) {
        INFO(not_plain);
        CHECK_FALSE(plain_relative(not_plain));
    }
}

#if !defined(_WIN32)
TEST_CASE("a writable root is refused inside the system's directories and at the ones that hold others, by its text as by its path", "[roots]") {
    using confine::detail::refused_writable_root;
    const fs::path home = "/home/u";
    const std::vector<std::pair<std::string, std::optional<std::string>>> cases{
        {"/", "it is the root of the file system"},
        {"/etc", "it is the system directory /etc"},
        {"/etc/x", "it is inside the system directory /etc"},
        {"/usr/local/bin", "it is inside the system directory /usr"},
        {"/usrx", std::nullopt},
        {"/var/spool", "it is the system directory /var/spool"},
        {"/var/spool/cron", "it is inside the system directory /var/spool"},
        {"/var", "it is the system directory /var"},
        {"/var/lib", "it is the system directory /var/lib"},
        {"/var/libx", std::nullopt},
        {"/var/lib/x", std::nullopt},
        {"/dev", "it is the system directory /dev"},
        {"/dev/shm", std::nullopt},
        {"/dev/shm/x", std::nullopt},
        {"/devx", std::nullopt},
        {"/run/user/1000", "it is inside the system directory /run"},
        {"/tmp", std::nullopt},
        {"/srv", "it is the system directory /srv"},
        {"/srv/data", std::nullopt},
        {"/home", "it holds the home directory /home/u, whose start-up files would become writable"},
        {"/home/u", "it is the home directory itself, whose start-up files would become writable"},
        {"/home/u/project", std::nullopt},
    };
    for (const auto& [path, refused] : cases) {
        INFO(path);
        CHECK(refused_writable_root(path, home) == refused);
        // The same path in a form that is not plain (a '/' doubled) is judged as a path.
        if (path.size() > 1) CHECK(refused_writable_root("/" + path, home) == refused);
    }
}
#endif

TEST_CASE("deny_read's ~ entries that are links are denied where they lead, under a home from $HOME and from the user database", "[roots][secrets][carve]") {
    LinkedHome h;
    HomeFor at(h.home);
    confine::Policy policy{confine::Mode::read_only, {}, {}};
    policy.deny_read = {"~/.ssh", "~/.aws", "~/.pgpass", "~/.vault-token", "~/.cfg/gh/hosts.yml", "~/.netrc", "~/.gnupg"};
    auto resolved = confine::detail::resolve_policy(policy);
    REQUIRE(resolved);
    // The account's home from the user database is a home too: whatever of these it has.
    std::vector<fs::path> expected;
    const auto homes = confine::detail::caller_homes();
    REQUIRE_FALSE(homes.empty());
    CHECK(homes.front() == h.home);
    for (const auto& entry : policy.deny_read)
        for (const auto& home : homes) {
            std::error_code ec;
            const fs::path real = fs::canonical(home / entry.string().substr(2), ec);
            if (!ec && std::find(expected.begin(), expected.end(), real) == expected.end()) expected.push_back(real);
        }
    CHECK(resolved->deny_read == expected);
    CHECK(std::find(resolved->deny_read.begin(), resolved->deny_read.end(), h.elsewhere / "aws") != resolved->deny_read.end());
    CHECK(std::find(resolved->deny_read.begin(), resolved->deny_read.end(), h.elsewhere / "pgpass") != resolved->deny_read.end());
    CHECK(std::find(resolved->deny_read.begin(), resolved->deny_read.end(), h.elsewhere / "config/gh/hosts.yml") != resolved->deny_read.end());
}

#if defined(__linux__)
#include "ruleset.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

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

#if defined(__linux__) && defined(CONFINE_NETWORK_FILTER_PROGRAM) && !defined(CONFINE_NO_TERMINAL_FILTER) && !defined(CONFINE_PORTABLE_POSIX)
#include <confine/internal/network_filter_linux.hpp>
#include <confine/internal/terminal_filter_linux.hpp>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstring>

namespace {

// A classic BPF interpreter for what seccomp programs here use (loads of a word of the
// seccomp_data, AND with a constant, jumps on equality, returns), as the kernel runs it:
// anything else fails the test.
std::uint32_t run_bpf(const sock_filter* code, std::size_t size, const seccomp_data& data) {
    unsigned char bytes[sizeof data];
    std::memcpy(bytes, &data, sizeof data);
    std::uint32_t a = 0;
    for (std::size_t pc = 0; pc < size; ++pc) {
        const sock_filter& i = code[pc];
        switch (i.code) {
            case BPF_LD | BPF_W | BPF_ABS:
                if (i.k + 4 > sizeof bytes) FAIL("a load past the data: " << i.k);
                std::memcpy(&a, bytes + i.k, 4);
                break;
            case BPF_ALU | BPF_AND | BPF_K: a &= i.k; break;
            case BPF_JMP | BPF_JEQ | BPF_K: pc += a == i.k ? i.jt : i.jf; break;
            case BPF_RET | BPF_K: return i.k;
            default: FAIL("an instruction the interpreter does not know: " << i.code); return 0;
        }
    }
    FAIL("the program ran past its end");
    return 0;
}

// The kernel's verdict of filters installed one after the other (seccomp_run_filters): the
// action of highest precedence, and of those of equal precedence the latest filter's.
std::uint32_t stacked(std::uint32_t earlier, std::uint32_t later) {
    auto action = [](std::uint32_t r) { return static_cast<std::int32_t>(r & SECCOMP_RET_ACTION_FULL); };
    return action(earlier) < action(later) ? earlier : later;
}

}  // namespace

TEST_CASE("the Landlock paths' one seccomp program gives every call the verdict of the terminal and network filters installed in turn", "[landlock][network][terminal][carve][linux-only]") {
    namespace net = confine::network::detail;
    namespace term = confine::terminal::detail;
    // Each program with the terminal's refusals against the two installed in turn: the
    // closed one, the proxy program and the loopback program.
    for (const auto& [combined, alone] : {std::pair{&net::with_terminal, &net::program}, std::pair{&net::proxy_with_terminal, &net::proxy_program},
                                           std::pair{&net::loopback_with_terminal, &net::loopback_program}}) {
        std::vector<std::uint32_t> arches{net::native.arch, 0, AUDIT_ARCH_X86_64 ^ AUDIT_ARCH_I386 ^ net::native.arch, 0xC000003Eu + 1};
    #if defined(__x86_64__) || defined(__aarch64__)
        arches.push_back(net::compat.arch);
    #endif
        std::vector<std::uint64_t> families{AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_UNIX | (1ull << 32), 0};
        std::vector<std::uint64_t> types{SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                                         SOCK_DGRAM | SOCK_CLOEXEC, SOCK_STREAM | (1ull << 40), 0};
        std::vector<std::uint64_t> requests{TIOCSTI, TIOCLINUX, TIOCSTI | (1ull << 32), TIOCLINUX | (7ull << 40), TCGETS, TIOCSWINSZ, FIONREAD, 0};
        std::vector<std::uint64_t> addresses{0, 0x7fff0000, 1ull << 32, 0xffffffff00000000ull};
        std::size_t checked = 0, refused = 0;
        for (const std::uint32_t arch : arches)
            for (std::uint32_t base : {0u, 0x40000000u})
                for (std::uint32_t n = 0; n < 1100; ++n) {
                    seccomp_data d{};
                    d.nr = static_cast<int>(base | n);
                    d.arch = arch;
                    // Every combination of the arguments the filters look at (0: family,
                    // 1: type or request, 4: a destination), for each call number.
                    for (const std::uint64_t a0 : families)
                        for (std::size_t i = 0; i < types.size() + requests.size(); ++i)
                            for (const std::uint64_t a4 : addresses) {
                                d.args[0] = a0;
                                d.args[1] = i < types.size() ? types[i] : requests[i - types.size()];
                                d.args[4] = a4;
                                const std::uint32_t expected =
                                    stacked(run_bpf(term::injection_program, std::size(term::injection_program), d), run_bpf(alone->code, alone->size, d));
                                const std::uint32_t got = run_bpf(combined->code, combined->size, d);
                                if (got != expected) FAIL("arch " << std::hex << arch << " nr " << std::dec << d.nr << " args " << a0 << ", " << d.args[1] << ", " << a4 << ": " << std::hex << got << " instead of " << expected);
                                ++checked;
                                if (got != SECCOMP_RET_ALLOW) ++refused;
                            }
                }
        INFO(checked << " verdicts, " << refused << " not allow");
        CHECK(refused > 0);
        CHECK(combined->size <= 80);
    }
    const auto& combined = net::with_terminal;
    // The cases the escape suite tries, named.
    seccomp_data d{};
    d.arch = net::native.arch;
    d.nr = static_cast<int>(net::native.ioctl);
    d.args[1] = TIOCSTI;
    CHECK(run_bpf(combined.code, combined.size, d) == (SECCOMP_RET_ERRNO | EPERM));
    d.nr = static_cast<int>(net::native.socket);
    d.args[0] = AF_INET;
    d.args[1] = SOCK_STREAM;
    CHECK(run_bpf(combined.code, combined.size, d) == (SECCOMP_RET_ERRNO | EACCES));
    d.args[0] = AF_UNIX;
    CHECK(run_bpf(combined.code, combined.size, d) == SECCOMP_RET_ALLOW);
    d.args[1] = SOCK_DGRAM;
    CHECK(run_bpf(combined.code, combined.size, d) == (SECCOMP_RET_ERRNO | EACCES));
    d.nr = static_cast<int>(net::native.sendto);
    d.args[4] = 0x1000;
    CHECK(run_bpf(combined.code, combined.size, d) == (SECCOMP_RET_ERRNO | EACCES));
    d.args[4] = 0;
    CHECK(run_bpf(combined.code, combined.size, d) == SECCOMP_RET_ALLOW);
}
#endif

TEST_CASE("the account's home is read from /etc/passwd only where nsswitch.conf puts the files first for passwd", "[roots][secrets]") {
    using confine::detail::files_home;
    const std::string passwd = "root:x:0:0:root:/root:/bin/bash\n"
                               "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                               "dev:x:1000:1000:Dev,,,:/home/dev:/bin/bash\n"
                               "again:x:1000:1000::/home/again:/bin/sh\n"
                               "short:x:1001\n"
                               "nohome:x:1002:1002::";
    const std::string files = "# comment\npasswd:         files systemd\ngroup: files\n";
    CHECK(files_home(files, passwd, 0) == "/root");
    CHECK(files_home(files, passwd, 1000) == "/home/dev");  // the first line of the uid, as the files source gives it
    CHECK(files_home(files, passwd, 10) == std::nullopt);   // not in the files: the other sources are asked
    CHECK(files_home(files, passwd, 1001) == std::nullopt); // a line without a home field is no entry
    CHECK(files_home(files, passwd, 1002) == "");           // an entry with an empty home: the caller leaves it out
    CHECK(files_home("passwd:files\n", passwd, 1) == "/usr/sbin");
    CHECK(files_home("  passwd : files [NOTFOUND=return] ldap # x\n", passwd, 0) == "/root");
    // Another source first, none named, no passwd line, two of them, the files only in a comment: not for us to say.
    for (const char* nsswitch : {"passwd: sss files\n", "passwd: ldap\n", "passwd:\n", "group: files\n", "", "passwd: files\npasswd: ldap\n",
                                 "# passwd: files\npasswd: compat\n", "passwd: filesx\n", "passwdx: files\n"}) {
        INFO(nsswitch);
        CHECK(files_home(nsswitch, passwd, 0) == std::nullopt);
    }
    // The compat syntax ("+" and "-" lines) is NSS's to interpret.
    CHECK(files_home(files, "+@admins\nroot:x:0:0:root:/root:/bin/bash\n", 0) == std::nullopt);
    CHECK(files_home(files, "root:x:0:0:root:/root:/bin/bash\n-bad\n", 0) == "/root");  // found before any of it
#if !defined(_WIN32)
    // What this machine's own files say is what getpwuid says, where they apply.
    const auto read = [](const char* path) {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    if (const auto home = files_home(read("/etc/nsswitch.conf"), read("/etc/passwd"), ::geteuid())) {
        const struct passwd* pw = ::getpwuid(::geteuid());
        REQUIRE(pw != nullptr);
        CHECK(*home == pw->pw_dir);
    }
#endif
}
