// The portable POSIX build (CONFINE_PORTABLE_POSIX): the calls it keeps behave as the
// Linux ones they replace, and what needs a Linux-only feature fails closed, with one
// line and exit status 125, the command never run. The cases marked "a portable build"
// exist only in that build; the others run in both, each on its own build's calls.
#include "support.hpp"
#include "rig.hpp"

#include <confine/sdk/program_trust.hpp>
#include "platform/posix/descriptor_paths.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>
#include <confine/internal/terminal_filter_linux.hpp>
#include <confine/sdk/trust_posix.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace {

// a/b/file, with links to each part: l -> a (a directory), a/b/lf -> file.
struct LinkTree {
    test::TempDir temp;
    fs::path dir = fs::canonical(temp.path());  // as the walk names it
    fs::path file = dir / "a" / "b" / "file";
    LinkTree() {
        fs::create_directories(dir / "a" / "b");
        test::write_file(file, "contents");
        fs::create_directory_symlink("a", dir / "l");
        fs::create_symlink("file", dir / "a" / "b" / "lf");
    }
};

// What open_without_links gives for `path`: 0 when it opened, else its errno.
int open_error(const fs::path& path, int flags) {
    const int fd = confine::trust::open_without_links(path.string(), flags);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
}

}  // namespace

TEST_CASE("a path opened without links opens when it has none, and fails with ELOOP for a link in any part", "[portable][trust]") {
    LinkTree t;
    CHECK(open_error(t.file, O_RDONLY) == 0);
    CHECK(open_error(t.dir / "a" / "b", confine::trust::directory_only) == 0);
    CHECK(open_error(t.dir / "a" / "." / "b" / ".." / "b" / "file", O_RDONLY) == 0);
    CHECK(open_error(t.dir / "l" / "b" / "file", O_RDONLY) == ELOOP);  // a directory part
    CHECK(open_error(t.dir / "a" / "b" / "lf", O_RDONLY) == ELOOP);    // the last part
    CHECK(open_error(t.dir / "a" / "missing", O_RDONLY) == ENOENT);
    // The directory handed on is the one named, whatever its flags allow.
    const int fd = confine::trust::open_without_links((t.dir / "a" / "b").string(), confine::trust::directory_only);
    REQUIRE(fd >= 0);
    struct stat by_fd {}, by_path {};
    CHECK(::fstat(fd, &by_fd) == 0);
    CHECK(::stat((t.dir / "a" / "b").c_str(), &by_path) == 0);
    CHECK((by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino));
    CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    ::close(fd);
}

TEST_CASE("the trust walk follows links from judged directories to where a file lives, for both of its opens", "[portable][trust]") {
    LinkTree t;
    const std::string real = fs::canonical(t.file).string();
    for (const int flags : {confine::trust::path_only, int(O_RDONLY)}) {
        INFO("flags " << flags);
        for (const fs::path& via : {t.file, t.dir / "l" / "b" / "file", t.dir / "a" / "b" / "lf", t.dir / "l" / ".." / "a" / "b" / "lf"}) {
            auto opened = confine::trust::open_trusted(via.string(), flags);
            INFO(via.string() << ": " << (opened ? "" : opened.error()));
            REQUIRE(opened);
            CHECK(opened->real_path == real);
            CHECK(S_ISREG(opened->status.st_mode));
            CHECK((::fcntl(opened->fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
        }
    }
    // What was opened to be read reads the file.
    auto readable = confine::trust::open_trusted(t.file.string(), O_RDONLY);
    REQUIRE(readable);
    char buf[16] = {};
    CHECK(::read(readable->fd.get(), buf, sizeof buf) == 8);
    CHECK(std::string(buf) == "contents");
}

TEST_CASE("the trust walk neither blocks on a FIFO nor takes it for a file", "[portable][trust]") {
    test::TempDir dir;
    const fs::path fifo = dir / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    const auto start = std::chrono::steady_clock::now();
    for (const int flags : {confine::trust::path_only, int(O_RDONLY)}) {
        auto opened = confine::trust::open_trusted(fifo.string(), flags);
        REQUIRE_FALSE(opened);
        CHECK(opened.error() == fifo.string() + " is not a regular file");
    }
    CHECK(confine::sdk::untrusted_program(fifo.string()) == fifo.string() + " is not a regular file");
    // A walk that opened the FIFO to read it would still be waiting for a writer.
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("the trust walk refuses a group-writable directory on the way and a file under /tmp's like", "[portable][trust]") {
    LinkTree t;
    fs::permissions(t.dir / "a", fs::perms(0775));
    auto opened = confine::trust::open_trusted(t.file.string(), confine::trust::path_only);
    REQUIRE_FALSE(opened);
    CHECK(opened.error() == (t.dir / "a").string() + " is writable by its group (mode 0775)");
    fs::permissions(t.dir / "a", fs::perms(0755));
    auto inside = confine::trust::open_trusted(t.file.string(), O_RDONLY, {(t.dir / "a").string()});
    REQUIRE_FALSE(inside);
    CHECK(inside.error() == (t.dir / "a" / "b").string() + " lies in " + (t.dir / "a").string() + ", which the confined command may write");
}

namespace {

// The descriptors open in this process, below 1024.
std::vector<int> open_descriptors() {
    std::vector<int> open;
    for (int fd = 0; fd < 1024; ++fd)
        if (::fcntl(fd, F_GETFD) != -1) open.push_back(fd);
    return open;
}

}  // namespace

TEST_CASE("the trust walk leaves none of its own descriptors open, whether it opens the file, refuses it or finds nothing",
          "[portable][trust]") {
    LinkTree t;
    // A gap among the low numbers, so that what the walk opens is not one run of them.
    const int held = ::open("/dev/null", O_RDONLY | O_CLOEXEC), gap = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(held >= 0);
    REQUIRE(gap >= 0);
    ::close(gap);
    const std::vector<int> before = open_descriptors();
    for (const int flags : {confine::trust::path_only, int(O_RDONLY)}) {
        INFO("flags " << flags);
        for (const fs::path& via : {t.file, t.dir / "l" / "b" / "file", t.dir / "l" / ".." / "a" / "b" / "lf"}) {
            INFO(via.string());
            {
                auto opened = confine::trust::open_trusted(via.string(), flags);
                REQUIRE(opened);
                std::vector<int> expected = before;
                expected.push_back(opened->fd.get());
                std::sort(expected.begin(), expected.end());
                CHECK(open_descriptors() == expected);
            }
            CHECK(open_descriptors() == before);
        }
        CHECK_FALSE(confine::trust::open_trusted((t.dir / "a" / "missing").string(), flags));
        CHECK(open_descriptors() == before);
        fs::permissions(t.dir / "a" / "b", fs::perms(0777));
        CHECK_FALSE(confine::trust::open_trusted(t.file.string(), flags));
        fs::permissions(t.dir / "a" / "b", fs::perms(0755));
        CHECK(open_descriptors() == before);
    }
    ::close(held);
}

TEST_CASE("the trust walk closes the descriptors it is given and no other, in runs of numbers and alone", "[portable][trust]") {
    std::vector<int> fds;
    for (int i = 0; i < 7; ++i) {
        fds.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        REQUIRE(fds.back() >= 0);
    }
    // Kept: the third and the sixth; closed: two runs around them and one alone, given
    // out of order.
    std::vector<int> given{fds[6], fds[0], fds[3], fds[1], fds[4]};
    confine::trust::detail::close_all(given);
    CHECK(given.empty());
    for (int i = 0; i < 7; ++i) {
        INFO("descriptor " << fds[i]);
        CHECK((::fcntl(fds[i], F_GETFD) != -1) == (i == 2 || i == 5));
    }
    ::close(fds[2]);
    ::close(fds[5]);
}

TEST_CASE("the trust walk's writable places answer as is_within does, by their texts", "[portable][trust]") {
    using confine::trust::detail::sandbox_places;
    using confine::trust::detail::sandbox_writable_place;
    // Directories as the walk builds them: absolute, no empty, "." or ".." component.
    const std::vector<std::string> dirs{"/", "/tmp", "/tmpx", "/tmp/a", "/dev", "/dev/shm", "/dev/shmx/a", "/work", "/work/a/b", "/workspace",
                                        "/a", "/a/b", "/ab", "/x/y/z"};
    // Places as callers give them: plain, with a separator at the end or doubled, the root,
    // with "." or "..", relative, empty.
    const std::vector<std::string> roots{"/work", "/work/", "/work/a/", "//work//a", "/", "/a/./b", "/a/../a", "a/b", "", "/x/y/z", "/x"};
    for (const auto& root : roots) {
        const auto places = sandbox_places({root});
        for (const auto& dir : dirs) {
            INFO("dir " << dir << ", root '" << root << "'");
            std::string expected;
            for (const auto& place : confine::sdk::always_writable_places())
                if (expected.empty() && confine::sdk::is_within(dir, place)) expected = place.string();
            if (expected.empty() && !root.empty() && root.front() == '/' && confine::sdk::is_within(dir, root)) expected = root;
            CHECK(sandbox_writable_place(dir, places) == expected);
        }
    }
}

#if defined(CONFINE_PORTABLE_POSIX)

namespace {

// confinectl with one runner, `runner`, and `settings` for it; the fake plugins where
// the fake runner is chosen.
struct OneRunner {
    test::Installed confine;
    test::TempDir plugins, workspace;
    fs::path config = confine.scratch("portable.toml");
    fs::path marker = workspace / "ran";

    OneRunner(const std::string& runner, const std::string& settings) {
        test::install_fake(plugins.path(), "usable");
        test::write_file(config, "plugin_dirs = [\"" + plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"" + runner +
                                     "\"]\n[runner." + runner + "]\n" + settings);
    }
    // `flags` before the command, which touches the marker and exits with `status`.
    test::Result run(const std::vector<std::string>& flags = {}, int status = 0) const {
        std::vector<std::string> args{"run", "--config", config.string(), "--workspace", workspace.path().string()};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--", "/bin/sh", "-c", "touch '" + marker.string() + "'; exit " + std::to_string(status)});
        return confine.run(args);
    }
};

void check_failed_closed(const test::Result& r, const OneRunner& s, const std::string& says) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 125);
    CHECK(test::line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("confinectl: sandbox unavailable: "));
    CHECK_THAT(r.err, Catch::Contains(says));
    CHECK_FALSE(fs::exists(s.marker));
}

}  // namespace

TEST_CASE("a portable build fails closed, in one line and 125, for a runner that needs exec attestation", "[portable][attestation]") {
    OneRunner s("usable", "launcher = \"" FAKE_LAUNCHER "\"\nattest = true\n");
    check_failed_closed(s.run(), s, "exec attestation");
    // The same with a report: the command is run by a forked child, not in place.
    check_failed_closed(s.run({"--report", s.confine.scratch("report.json").string()}), s, "exec attestation");
}

TEST_CASE("a portable build fails closed, in one line and 125, for the Landlock runner on each of its paths", "[portable][landlock]") {
    for (const char* in_process : {"false", "true"}) {
        OneRunner s("landlock", std::string("in_process = ") + in_process + "\n");
        INFO("in_process = " << in_process);
        for (const bool report : {false, true}) {
            auto r = report ? s.run({"--report", s.confine.scratch("report.json").string()}) : s.run();
            // The launcher (attested by its status descriptor, which needs nothing only
            // Linux has) stops at its terminal filter, saying so on stderr, and confinectl
            // says what its status descriptor showed: nothing ran.
            const std::string own = "landlock-run: cannot install the terminal filter: Function not implemented\n";
            if (std::string(in_process) == "false" && r.err.starts_with(own)) r.err.erase(0, own.size());
            check_failed_closed(r, s, "");
        }
    }
}

TEST_CASE("a portable build runs a runner that attests nothing, and passes its statuses through", "[portable][run]") {
    OneRunner s("usable", "launcher = \"" FAKE_LAUNCHER "\"\nattest = false\n");
    for (int status : {0, 1, 7, 125, 126, 127}) {
        auto r = s.run({}, status);
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == status);
        CHECK(fs::exists(s.marker));
        fs::remove(s.marker);
    }
    // The launcher's own failure is still told apart by its rule (docs/design.md §5).
    auto failed = s.confine.run({"run", "--config", s.config.string(), "--workspace", s.workspace.path().string(), "--", "/usr/bin/touch",
                                 s.marker.string()},
                                {"FAKE_LAUNCHER_FAIL=1"});
    CHECK(failed.exit_code == 125);
    CHECK_THAT(failed.err, Catch::EndsWith("confinectl: sandbox unavailable: landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)\n"));
    CHECK_FALSE(fs::exists(s.marker));
}

// The executor's own paths, through runners that need nothing only Linux has: the fake
// Landlock-shaped runner without attestation (the rule decides), and an operator's
// runner_command; the same cases the Linux build also runs with exec attestation.
namespace {

const std::string notice = "landlock-run: partial enforcement (older Landlock ABI)";

using test::Rig;

std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

}  // namespace

TEST_CASE("a portable build runs a plain runner's command in the foreground and the background alike", "[portable][execute]") {
    using confine::OutcomeKind;
    for (const bool runner_command : {false, true}) {
        Rig rig(runner_command ? Rig::Kind::runner_command : Rig::Kind::plugin);
        for (int code : {0, 1, 2, 125, 126, 127}) {
            INFO((runner_command ? "runner_command" : "plugin") << ", exit " << code);
            auto fg = confine::run(rig.provider(), rig.policy(), sh("exit " + std::to_string(code)), {});
            REQUIRE(fg);
            auto bg = confine::spawn(rig.provider(), rig.policy(), sh("exit " + std::to_string(code)), {});
            REQUIRE(bg);
            const auto& done = bg->wait();
            for (const confine::Outcome* o : {static_cast<const confine::Outcome*>(&*fg), &done.outcome}) {
                CHECK(o->kind == (code == 0 ? OutcomeKind::completed : OutcomeKind::task_failed));
                CHECK(o->exit_code == code);
                CHECK(o->basis == confine::Basis::rule);
            }
        }
        auto signalled = confine::spawn(rig.provider(), rig.policy(), sh("kill -TERM $$"), {});
        REQUIRE(signalled);
        CHECK(signalled->wait().outcome.signal == SIGTERM);
        // More than a pipe holds, on both streams at once.
        auto big = confine::spawn(rig.provider(), rig.policy(),
                                  sh("head -c 3000000 /dev/zero | tr '\\0' a & head -c 2000000 /dev/zero | tr '\\0' b >&2; wait"),
                                  {.capture = {.limit = 4 << 20}});
        REQUIRE(big);
        const auto& out = big->wait();
        CHECK(out.outcome.kind == OutcomeKind::completed);
        CHECK(out.stdout_text == std::string(3000000, 'a'));
        CHECK(out.stderr_text == notice + "\n" + std::string(2000000, 'b'));
        // The launcher's own failure, by its rule.
        confine::RunOptions failing;
        failing.environment = std::vector<std::string>{"PATH=/usr/bin:/bin", "FAKE_LAUNCHER_FAIL=1"};
        const std::vector<std::string> command{"/bin/true"};
        auto failed = confine::run(rig.provider(), rig.policy(), command, failing);
        REQUIRE(failed);
        CHECK(failed->kind == OutcomeKind::sandbox_unavailable);
        CHECK(failed->evidence == "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)");
    }
}

TEST_CASE("a portable build kills a background run's whole process group at its time limit", "[portable][execute]") {
    Rig rig(Rig::Kind::plugin);
    test::TempDir dir;
    const fs::path pids = dir / "pids";
    auto p = confine::spawn(rig.provider(), rig.policy(), sh("sleep 300 & echo $! > " + pids.string() + "; wait"),
                            {.timeout = std::chrono::milliseconds(300)});
    REQUIRE(p);
    const auto& done = p->wait();
    CHECK(done.outcome.timed_out);
    CHECK(done.outcome.kind == confine::OutcomeKind::task_failed);
    CHECK(done.outcome.signal == SIGTERM);  // its first step; SIGKILL comes kill_after later
    int sleeper = 0;
    std::istringstream(test::read_file(pids)) >> sleeper;
    REQUIRE(sleeper > 0);
    // Gone, or a zombie its new parent has yet to reap: ps says, where there is no /proc.
    bool gone = false;
    for (int i = 0; i < 300 && !gone; ++i) {
        const std::string state = test::run({"/bin/ps", "-o", "stat=", "-p", std::to_string(sleeper)}).out;
        gone = state.find_first_not_of(" \n") == std::string::npos || state.find('Z') != std::string::npos;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(gone);
}

TEST_CASE("a portable build hands the command the environment and working directory given", "[portable][execute]") {
    Rig rig(Rig::Kind::plugin);
    confine::RunOptions options;
    options.environment = std::vector<std::string>{"PATH=/usr/bin:/bin", "GIVEN=a b"};
    options.working_directory = rig.workspace();
    auto p = confine::spawn(rig.provider(), rig.policy(), sh("printf '%s|%s' \"$GIVEN\" \"$(pwd -P)\""), options);
    REQUIRE(p);
    CHECK(p->wait().stdout_text == "a b|" + fs::canonical(rig.workspace()).string());
}

TEST_CASE("a portable confinectl ends by the command's signal, reports to a file or descriptor, and passes standard input", "[portable][cli]") {
    OneRunner s("usable", "launcher = \"" FAKE_LAUNCHER "\"\nattest = false\n");
    const std::vector<std::string> run{s.confine.confinectl().string(), "run", "--config", s.config.string(), "--workspace",
                                       s.workspace.path().string()};
    auto with = [&](std::vector<std::string> flags, std::vector<std::string> command) {
        std::vector<std::string> argv = run;
        argv.insert(argv.end(), flags.begin(), flags.end());
        argv.push_back("--");
        argv.insert(argv.end(), command.begin(), command.end());
        return argv;
    };
    auto killed = test::run(with({}, sh("kill -TERM $$")));
    CHECK(killed.exit_code == -1);
    CHECK(killed.signal == SIGTERM);

    const fs::path report = s.confine.scratch("report.json");
    auto reported = test::run(with({"--report", report.string()}, sh("echo 'x: Permission denied' >&2; exit 3")));
    CHECK(reported.exit_code == 3);
    auto j = nlohmann::json::parse(test::read_file(report));
    CHECK(j["outcome"] == "task_failed");
    CHECK(j["exit_code"] == 3);
    CHECK(j["basis"] == "rule");
    CHECK(j["denial_hint"] == "x: Permission denied");

    // The descriptor reaches confinectl as 7 and not the command, which looks by
    // trying to write to it (no /proc on every system).
    const fs::path fd_report = s.confine.scratch("fd-report.json");
    std::vector<std::string> through_fd{"/bin/sh", "-c", "exec 7>\"$1\"; shift; exec \"$@\"", "sh", fd_report.string()};
    for (auto& a : with({"--report-fd", "7"}, sh("if { true >&7; } 2>/dev/null; then echo inherited; else echo not-inherited; fi"))) through_fd.push_back(a);
    auto by_fd = test::run(through_fd);
    CHECK(by_fd.exit_code == 0);
    CHECK(by_fd.out == "not-inherited\n");
    CHECK(nlohmann::json::parse(test::read_file(fd_report))["outcome"] == "completed");

    std::vector<std::string> piped{"/bin/sh", "-c", "printf 'through stdin' | \"$@\"", "sh"};
    for (auto& a : with({}, {"/bin/cat"})) piped.push_back(a);
    auto input = test::run(piped);
    CHECK(input.exit_code == 0);
    CHECK(input.out == "through stdin");
}

TEST_CASE("a portable build loads a plugin by its judged path only while that path still holds the judged file", "[portable][loader]") {
    test::TempDir dir;
    const fs::path base = fs::canonical(dir.path());
    const fs::path judged = base / "confine-runner-x.so", other = base / "other.so", link = base / "link.so";
    test::write_file(judged, "judged", fs::perms(0755));
    test::write_file(other, "other", fs::perms(0755));
    fs::create_symlink(judged, link);
    confine::trust::Descriptor fd(::open(judged.c_str(), O_RDONLY | O_CLOEXEC));
    REQUIRE(fd.get() >= 0);
    auto same = confine::detail::load_path(fd.get(), judged);
    REQUIRE(same);
    CHECK(*same == judged);
    auto swapped = confine::detail::load_path(fd.get(), other);
    REQUIRE_FALSE(swapped);
    CHECK(swapped.error() == other.string() + " changed after it was judged");
    auto through_link = confine::detail::load_path(fd.get(), link);  // never followed, even to the judged file
    REQUIRE_FALSE(through_link);
    CHECK_THAT(through_link.error(), Catch::StartsWith(link.string() + ": cannot open: "));
}

TEST_CASE("a portable build has no host terminal filter, and says so rather than claiming one", "[portable][terminal]") {
    CHECK_FALSE(confine::terminal::host_filter_available);
    CHECK(confine::terminal::install_injection_filter() == -ENOSYS);
    CHECK_THAT(std::string(confine::terminal::without_host_filter), Catch::Contains("--new-session"));
}

#endif
