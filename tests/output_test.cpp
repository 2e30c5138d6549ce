// Output streaming (docs/design.md §13): the classifier's scanner against the whole-text
// reading it replaced, bounded captures, and a gigabyte through confinectl on each path —
// every byte unchanged, the evidence still found after it, and memory that stays flat.
#include "pty.hpp"
#include "support.hpp"
#include "ways.hpp"

#include "executor.hpp"
#include "output_sinks.hpp"
#include "stderr_scan.hpp"

#include <confine/execute.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

using confine::StderrFindings;
using confine::detail::StderrScanner;
namespace fs = std::filesystem;

namespace {

const std::string notice = "landlock-run: partial enforcement (older Landlock ABI)";
const std::string fatal = "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)";

confine::FailureRule landlock_rule() { return {{125}, {"landlock-run: "}, {notice}}; }

// The classifier's reading before it streamed, kept as the specification: the whole text
// split at '\n' (a last line without one counts), the first line with a fatal signature
// that is not an informational line (with the rule's first signature it carries), and the
// first line with a denial signature; signatures case-insensitive, lines whole.
bool contains_ignoring_case(std::string_view hay, std::string_view needle) {
    if (needle.empty()) return false;
    auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
    return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [&](char a, char b) { return lower(a) == lower(b); }) != hay.end();
}

StderrFindings whole_text_reading(const confine::FailureRule& rule, const std::vector<std::string>& denial, std::string_view text) {
    StderrFindings f;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        const bool informational = std::find(rule.informational_lines.begin(), rule.informational_lines.end(), line) != rule.informational_lines.end();
        if (!f.fatal_line && !informational)
            for (const auto& sig : rule.fatal_signatures)
                if (contains_ignoring_case(line, sig)) {
                    f.fatal_line = std::string(line);
                    f.fatal_signature = sig;
                    break;
                }
        if (!f.denial_line)
            for (const auto& sig : denial)
                if (contains_ignoring_case(line, sig)) f.denial_line = std::string(line);
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return f;
}

StderrFindings scan_in_pieces(const confine::FailureRule& rule, const std::vector<std::string>& denial, std::string_view text,
                              const std::vector<std::size_t>& cuts) {
    StderrScanner scanner(rule, denial);
    std::size_t at = 0;
    for (std::size_t cut : cuts) {
        if (cut <= at || cut > text.size()) continue;
        scanner.feed(text.substr(at, cut - at));
        at = cut;
    }
    scanner.feed(text.substr(at));
    return scanner.finish();
}

void check_same(const StderrFindings& got, const StderrFindings& want) {
    CHECK(got.fatal_line == want.fatal_line);
    CHECK(got.fatal_signature == want.fatal_signature);
    CHECK(got.denial_line == want.denial_line);
}

}  // namespace

TEST_CASE("the streaming scanner finds what reading the whole text found, however the reads cut it", "[output][classify]") {
    // "[x]@" has bytes that setting bit 0x20 turns into others ("{x}`"): never a match.
    const confine::FailureRule rule{{}, {"zz-fatal: ", "BOOM", "kaput", "[x]@"}, {"zz-fatal: only a note", "BOOM is informational here"}};
    const std::vector<std::string> denial{"permission denied", "read-only file system"};
    const std::vector<std::string> words{"zz-fatal: ", "ZZ-FATAL: ", "boom", "Boom", "kap", "ut", "kaput", "permission ",
                                         "denied", "Permission Denied", "read-only file system", "zz-fatal: only a note",
                                         "BOOM is informational here", "x", "\n", "\n", "\n", "é", "\r\n", " ", "[x]@", "[X]@",
                                         "{x}`", "{x]@", "[x}`", std::string(1, '\0'), "\xC0", "\xE0"};
    std::mt19937 random(20261130);
    for (int round = 0; round < 3000; ++round) {
        std::string text;
        const int n = std::uniform_int_distribution<int>(0, 40)(random);
        for (int i = 0; i < n; ++i) text += words[std::uniform_int_distribution<std::size_t>(0, words.size() - 1)(random)];
        std::vector<std::size_t> cuts;
        const int pieces = std::uniform_int_distribution<int>(0, 8)(random);
        for (int i = 0; i < pieces && !text.empty(); ++i) cuts.push_back(std::uniform_int_distribution<std::size_t>(0, text.size())(random));
        std::sort(cuts.begin(), cuts.end());
        INFO("round " << round << ": " << text);
        check_same(scan_in_pieces(rule, denial, text, cuts), whole_text_reading(rule, denial, text));
    }
}

TEST_CASE("a signature cut in two by the reads is found, at every cut", "[output][classify]") {
    const std::string text = "cc: compiling\n" + fatal + "\nmore\n";
    const std::vector<std::string> denial{"permission denied"};
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        for (std::size_t second = cut; second <= text.size(); second += 7) {
            INFO(cut << ", " << second);
            auto found = scan_in_pieces(landlock_rule(), denial, text, {cut, second});
            CHECK(found.fatal_line == fatal);
            CHECK(found.fatal_signature == "landlock-run: ");
        }
    }
    // A byte at a time, and a final line without a newline.
    StderrScanner scanner(landlock_rule(), denial);
    const std::string last = "ls: cannot open directory '/root': PERMISSION DENIED";
    for (char c : "line one\n" + last) scanner.feed(std::string_view(&c, 1));
    CHECK(scanner.finish().denial_line == last);
}

TEST_CASE("a line that names a denied path with an error a refusal gives is the hint, however the reads cut it", "[output][classify]") {
    const std::vector<std::string> paths{"/home/u/.ssh", ".git"};
    const std::string named = "cat: /home/u/.ssh/id: No such file or directory", unnamed = "cat: /home/u/.ssh2/id: No such file or directory";
    const std::string text = "cc: compiling\n" + unnamed + "\nrm: cannot remove '.gitx': Device or resource busy\n" + named + "\nmore\n";
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        for (std::size_t second = cut; second <= text.size(); second += 11) {
            INFO(cut << ", " << second);
            StderrScanner scanner(landlock_rule(), std::vector<std::string>{"read-only file system"}, paths);
            scanner.feed(std::string_view(text).substr(0, cut));
            scanner.feed(std::string_view(text).substr(cut, second - cut));
            scanner.feed(std::string_view(text).substr(second));
            CHECK(scanner.finish().denial_line == named);
        }
    }
    // Without the paths, the same text has no hint.
    CHECK_FALSE(scan_in_pieces(landlock_rule(), {"read-only file system"}, text, {}).denial_line);
}

TEST_CASE("a signature is found in any case at every place in a read, and a near miss at none", "[output][classify]") {
    for (std::size_t before = 0; before < 70; ++before) {
        for (std::size_t after : {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{40}}) {
            INFO(before << " before, " << after << " after");
            const std::string pad(before, 'a'), tail(after, 'b');
            CHECK(scan_in_pieces(landlock_rule(), {}, pad + "LandLock-RUN: x" + tail, {}).fatal_line == pad + "LandLock-RUN: x" + tail);
            CHECK_FALSE(scan_in_pieces(landlock_rule(), {}, pad + "landlock-run; x" + tail, {}).fatal_line);
            CHECK_FALSE(scan_in_pieces(landlock_rule(), {}, pad + "landlock-ru" + tail, {}).fatal_line);
        }
    }
}

TEST_CASE("a line longer than any read is matched as one line, and its evidence is cut at a character", "[output][classify]") {
    // 3 MiB in one line: the signature near its end, read 64 KiB at a time.
    std::string line(3 << 20, 'x');
    for (std::size_t i = 0; i < line.size(); i += 3) line.replace(i, 2, "\xC3\xA9");  // é: two bytes
    line += " landlock-run: late";
    const std::string text = "short\n" + line + "\nafter\n";
    StderrScanner scanner(landlock_rule(), std::vector<std::string>{});
    for (std::size_t at = 0; at < text.size(); at += 65536) scanner.feed(std::string_view(text).substr(at, 65536));
    const auto found = scanner.finish();
    REQUIRE(found.fatal_line);
    CHECK(found.fatal_line->size() <= confine::evidence_line_max + 3);
    CHECK(found.fatal_line->ends_with("\xE2\x80\xA6"));  // …
    const std::string kept = found.fatal_line->substr(0, found.fatal_line->size() - 3);
    CHECK(line.starts_with(kept));
    CHECK(kept.size() % 3 == 0);  // whole characters only: é and x, é and x, ...
    CHECK(kept.size() > confine::evidence_line_max - 3);

    // Exactly the maximum is whole and not marked.
    const std::string exact = "landlock-run: " + std::string(confine::evidence_line_max - 14, 'y');
    confine::WrapResult wrap;
    wrap.failure_rule = landlock_rule();
    CHECK(confine::scan_stderr(wrap, exact + "\n").fatal_line == exact);
}

TEST_CASE("informational lines are exact whole lines, whatever their length and however they arrive", "[output][classify]") {
    const std::string long_note = "landlock-run: note " + std::string(10000, 'n');
    const confine::FailureRule rule{{125}, {"landlock-run: "}, {notice, long_note}};
    for (std::size_t piece : {std::size_t{1}, std::size_t{13}, std::size_t{4096}, std::size_t{1} << 20}) {
        INFO(piece);
        auto read = [&](const std::string& text) {
            std::vector<std::size_t> cuts;
            for (std::size_t at = piece; at < text.size(); at += piece) cuts.push_back(at);
            return scan_in_pieces(rule, {}, text, cuts);
        };
        CHECK_FALSE(read(notice + "\n" + long_note + "\n" + long_note).fatal_line);
        CHECK(read(long_note + "n\n").fatal_line == long_note.substr(0, confine::evidence_line_max) + "\xE2\x80\xA6");
        CHECK(read(notice + " \n").fatal_line == notice + " ");
        CHECK(read(" " + notice).fatal_line == " " + notice);
        CHECK(read(notice + "\r\n").fatal_line == notice + "\r");  // lines end at '\n' only, as ever
    }
}

TEST_CASE("an empty signature or one with a newline never matches, and nothing is read once both are found", "[output][classify]") {
    const confine::FailureRule rule{{}, {"", "two\nlines"}, {}};
    CHECK_FALSE(scan_in_pieces(rule, {""}, "two\nlines\n\n", {}).fatal_line);
    CHECK_FALSE(scan_in_pieces(rule, {""}, "two\nlines\n\n", {}).denial_line);

    StderrScanner scanner(landlock_rule(), std::vector<std::string>{"denied"});
    CHECK(scanner.wants_more());
    scanner.feed("x: denied\n" + fatal + "\n");
    CHECK_FALSE(scanner.wants_more());
    scanner.feed("landlock-run: a later one\n");
    const auto found = scanner.finish();
    CHECK(found.fatal_line == fatal);
    CHECK(found.denial_line == "x: denied");
    StderrScanner nothing(confine::FailureRule{}, std::vector<std::string>{});
    CHECK_FALSE(nothing.wants_more());
}

TEST_CASE("a capture keeps the head or the tail up to its limit and counts what it dropped", "[output]") {
    using Keep = confine::RunOptions::Capture::Keep;
    std::string text;
    for (int i = 0; i < 100000; ++i) text += std::to_string(i) + "\n";
    for (Keep keep : {Keep::head, Keep::tail}) {
        for (std::size_t limit : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, text.size() - 1, text.size(), text.size() + 5}) {
            for (std::size_t piece : {std::size_t{1}, std::size_t{777}, std::size_t{65536}, text.size()}) {
                if (piece == 1 && limit > 1000) continue;  // slow and adds nothing
                INFO((keep == Keep::head ? "head" : "tail") << " limit " << limit << " piece " << piece);
                confine::detail::CapturedOutput capture({.limit = limit, .keep = keep});
                for (std::size_t at = 0; at < text.size(); at += piece) capture.take(std::string_view(text).substr(at, piece));
                const std::string kept = capture.finish();
                const std::size_t n = std::min(limit, text.size());
                CHECK(kept == (keep == Keep::head ? text.substr(0, n) : text.substr(text.size() - n)));
                CHECK(capture.dropped() == text.size() - n);
            }
        }
    }
}

#if defined(__linux__)
namespace {

// What came of running a program with its stderr read here as a stream: its size, its
// FNV-1a, its last bytes; stdout whole; and the peak resident memory of the process and
// the descendants it waited for, by the kernel's accounting (wait4, in peak-rss: a child
// of this test would count the test's own memory too).
struct Streamed {
    int status = -1;
    std::uint64_t err_bytes = 0;
    std::uint64_t err_fnv = 0xcbf29ce484222325ULL;
    std::string err_tail;
    std::string out;
    long max_rss_kib = 0;

    int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
    std::string last_line() const {
        std::string t = err_tail;
        if (!t.empty() && t.back() == '\n') t.pop_back();
        return t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
    }
};

Streamed stream_run(const std::vector<std::string>& command) {
    const test::TempDir dir;
    const fs::path rss_file = dir / "peak";
    std::vector<std::string> argv{PEAK_RSS, rss_file.string(), "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    int out[2], err[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    Streamed s;
    std::vector<char> buf(1 << 20);
    for (bool out_open = true, err_open = true; out_open || err_open;) {
        pollfd fds[2] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) continue;
        if (fds[0].revents) {
            const ssize_t n = ::read(out[0], buf.data(), buf.size());
            if (n <= 0) out_open = false;
            else s.out.append(buf.data(), static_cast<std::size_t>(n));
        }
        if (fds[1].revents) {
            const ssize_t n = ::read(err[0], buf.data(), buf.size());
            if (n <= 0) {
                err_open = false;
                continue;
            }
            for (ssize_t i = 0; i < n; ++i) s.err_fnv = (s.err_fnv ^ static_cast<unsigned char>(buf[i])) * 0x100000001b3ULL;
            s.err_bytes += static_cast<std::uint64_t>(n);
            s.err_tail.append(buf.data(), static_cast<std::size_t>(n));
            if (s.err_tail.size() > 16384) s.err_tail.erase(0, s.err_tail.size() - 8192);
        }
    }
    ::close(out[0]);
    ::close(err[0]);
    REQUIRE(::waitpid(pid, &s.status, 0) == pid);
    s.max_rss_kib = std::stol(test::read_file(rss_file));
    return s;
}

// What stream-lines said it wrote: "<bytes> <fnv hex>" on the first line of stdout.
std::pair<std::uint64_t, std::uint64_t> generated(const std::string& out) {
    std::uint64_t bytes = 0, fnv = 0;
    REQUIRE(std::sscanf(out.c_str(), "%" SCNu64 " %" SCNx64, &bytes, &fnv) == 2);
    return {bytes, fnv};
}

constexpr std::uint64_t gigabyte = std::uint64_t{1} << 30;
constexpr std::uint64_t ten_megabytes = 10'000'000;

// confinectl run on `config` with a report, the command writing `bytes` of compiler-like
// lines to stderr and then `last`, exiting `status`.
struct GigabyteRun {
    Streamed streamed;
    nlohmann::json report;
};

GigabyteRun through_confinectl(const test::Installed& confine, const fs::path& config, const fs::path& ws, std::uint64_t bytes,
                               const std::string& last, int status, std::vector<std::string> env = {}) {
    const fs::path report = confine.scratch("report.json");
    std::vector<std::string> argv{"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + confine.scratch("cache").string(),
                                  "STREAM_LINES_EXIT=" + std::to_string(status)};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {confine.confinectl().string(), "run", "--config", config.string(), "--workspace", ws.string(), "--report",
                             report.string(), "--", STREAM_LINES, std::to_string(bytes), last});
    GigabyteRun run{stream_run(argv), {}};
    run.report = nlohmann::json::parse(test::read_file(report));
    return run;
}

// The bytes that reached confinectl's caller are the generator's, all of them, unchanged.
void check_unchanged(const Streamed& s) {
    const auto [bytes, fnv] = generated(s.out);
    CHECK(s.err_bytes == bytes);
    CHECK(s.err_fnv == fnv);
}

// Peak memory flat between 10 MB and 1 GB: the same within what a page cache of the
// allocator may round to, and under 16 MiB where no sanitizer adds its own.
void check_flat(long small_kib, long large_kib) {
    INFO("peak resident memory: " << small_kib << " KiB at 10 MB, " << large_kib << " KiB at 1 GiB");
    CHECK(large_kib <= small_kib + 2048);
#if !defined(__SANITIZE_ADDRESS__)
    CHECK(large_kib < 16 * 1024);
#endif
}

}  // namespace

namespace {

// 10 MB and then a gigabyte through confinectl with a report on a chain of `runner`
// alone, the command ending with a line in its denial dialect and exit status 2: every
// byte reaches the caller, the line is the report's denial hint, memory stays flat.
void check_gigabyte(const std::string& runner, const std::string& denial) {
    test::Installed confine;
    test::TempDir ws;
    const fs::path config = confine.scratch(runner + ".toml");
    test::write_file(config, "[platform.linux]\nchain = [\"" + runner + "\"]\n");
    const auto small = through_confinectl(confine, config, ws.path(), ten_megabytes, denial, 2);
    const auto large = through_confinectl(confine, config, ws.path(), gigabyte, denial, 2);
    for (const auto* run : {&small, &large}) {
        CHECK(run->streamed.exit_code() == 2);
        check_unchanged(run->streamed);
        CHECK(run->streamed.last_line() == denial);
        CHECK(run->report["outcome"] == "task_failed");
        CHECK(run->report["basis"] == "attestation");
        CHECK(run->report["denial_hint"] == denial);
    }
    check_flat(small.streamed.max_rss_kib, large.streamed.max_rss_kib);
}

}  // namespace

TEST_CASE("bubblewrap with a report carries a gigabyte unchanged in flat memory, and the denial after it is still the hint", "[output][bwrap][slow][linux-only]") {
    test::require_bwrap();
    check_gigabyte("bwrap", "sh: 1: cannot create /etc/confine-test: Read-only file system");
}

TEST_CASE("the Landlock path with a report carries a gigabyte unchanged in flat memory, and the denial after it is still the hint", "[output][landlock][slow][linux-only]") {
    test::require_landlock();
    check_gigabyte("landlock", "sh: 1: cannot create /etc/confine-test: Permission denied");
}

TEST_CASE("a fatal line after a gigabyte of output is still the evidence against a runner judged by its rule", "[output][slow][linux-only]") {
    test::Installed confine;
    test::TempDir plugins, ws;
    test::install_fake(plugins.path(), "usable");
    const fs::path config = confine.scratch("rule.toml");
    test::write_file(config, "plugin_dirs = [\"" + plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n"
                             "[runner.usable]\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = false\n");
    const auto run = through_confinectl(confine, config, ws.path(), gigabyte, "no signature here", 0, {"FAKE_LAUNCHER_FAIL_AFTER=1"});
    CHECK(run.streamed.exit_code() == 125);
    CHECK(run.report["outcome"] == "sandbox_unavailable");
    CHECK(run.report["basis"] == "rule");
    CHECK(run.report["evidence"]["line"] == fatal);
    CHECK(run.report["evidence"]["rule"] == "landlock-run: ");
    CHECK(run.streamed.last_line() == "confinectl: sandbox unavailable: " + fatal);
    // Every byte of the command's, with the launcher's notice before and its line after.
    const auto [bytes, fnv] = generated(run.streamed.out);
    (void)fnv;
    CHECK(run.streamed.err_bytes == bytes + notice.size() + 1 + fatal.size() + 1 + ("confinectl: sandbox unavailable: " + fatal).size() + 1);
}
namespace {

// Whether, with descriptors 1 and 2 set up by `arrange` (in a child, which then asks),
// confine takes stdout and stderr to share one destination.
bool shared_after(const std::function<void()>& arrange) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        arrange();
        ::_exit(confine::detail::standard_outputs_shared() ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status) == 0;
}

// Descriptors 1 and 2 opened on `file` with `flags`, each on its own, or 2 a copy of 1.
void open_both(const fs::path& file, int flags, bool one_description) {
    ::dup2(::open(file.c_str(), flags, 0644), 1);
    if (one_description) ::dup2(1, 2);
    else ::dup2(::open(file.c_str(), flags, 0644), 2);
}

// A command writing `lines` lines to stdout and stderr in turn: "out N", then "err N".
std::string interleaving(int lines) {
    return "i=0; while [ $i -lt " + std::to_string(lines) + " ]; do echo \"out $i\"; echo \"err $i\" >&2; i=$((i+1)); done";
}

// The "out N" and "err N" lines of `text` (a terminal's \r\n or a file's \n), in order; what
// else a runner may print (a notice) left out.
std::vector<std::string> interleaved_lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.starts_with("out ") || line.starts_with("err ")) out.push_back(line);
    }
    return out;
}

std::vector<std::string> expected_lines(int lines) {
    std::vector<std::string> out;
    for (int i = 0; i < lines; ++i) {
        out.push_back("out " + std::to_string(i));
        out.push_back("err " + std::to_string(i));
    }
    return out;
}

}  // namespace

TEST_CASE("stdout and stderr share a destination when they are one pipe, or one file through one description or appending, never a terminal", "[output][linux-only]") {
    test::TempDir dir;
    const fs::path file = dir / "out";
    CHECK(shared_after([&] { open_both(file, O_WRONLY | O_CREAT | O_TRUNC, true); }));          // > out 2>&1
    CHECK_FALSE(shared_after([&] {  // > out 2> out: two offsets, apart once one has written
        open_both(file, O_WRONLY | O_CREAT | O_TRUNC, false);
        (void)!::write(1, "x", 1);
    }));
#if !defined(CONFINE_PORTABLE_POSIX)
    CHECK_FALSE(shared_after([&] { open_both(file, O_WRONLY | O_CREAT | O_TRUNC, false); }));  // and before: kcmp tells them apart
#endif
    CHECK(shared_after([&] { open_both(file, O_WRONLY | O_CREAT | O_APPEND, false); }));        // >> out 2>> out
    CHECK_FALSE(shared_after([&] {
        open_both(file, O_WRONLY | O_CREAT | O_TRUNC, false);
        ::dup2(::open((dir / "other").c_str(), O_WRONLY | O_CREAT, 0644), 2);
    }));
    CHECK(shared_after([] {
        int p[2];
        if (::pipe(p) == 0) ::dup2(p[1], 1), ::dup2(p[1], 2);
    }));
    CHECK_FALSE(shared_after([] {
        int a[2], b[2];
        if (::pipe(a) == 0 && ::pipe(b) == 0) ::dup2(a[1], 1), ::dup2(b[1], 2);
    }));
    CHECK_FALSE(shared_after([] { open_both("/dev/null", O_WRONLY, true); }));
    CHECK_FALSE(shared_after([] {
        const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
        if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return;
        open_both(::ptsname(master), O_RDWR | O_NOCTTY, true);
    }));
}

TEST_CASE("a command's stdout and stderr reach one file, one pipe or one terminal in the order written, with and without a report, on bubblewrap and Landlock", "[output][e2e][linux-only]") {
    constexpr int lines = 200;
    for (const test::Way way : {test::Way::bwrap, test::Way::landlock_launcher, test::Way::landlock_forked}) {
        test::require_way(way);
        test::Installed confine;
        test::TempDir ws;
        const fs::path config = confine.scratch("order.toml"), out = confine.scratch("out"), report = confine.scratch("report.json");
        test::write_file(config, test::way_config(way));
        for (const bool reporting : {false, true}) {
            INFO(test::name_of(way) << (reporting ? ", with a report" : ", without a report"));
            std::vector<std::string> run{"/usr/bin/env", "-u", "CONFINE_CONFIG", "XDG_CACHE_HOME=" + confine.scratch("cache").string(),
                                         confine.confinectl().string(), "run", "--config", config.string(), "--workspace", ws.path().string()};
            if (reporting) run.insert(run.end(), {"--report", report.string()});
            run.insert(run.end(), {"--", "/bin/sh", "-c", interleaving(lines)});
            // One file, through one description; one pipe.
            for (const std::string script : {"out=$1; shift; \"$@\" > \"$out\" 2>&1", "out=$1; shift; \"$@\" 2>&1 | cat > \"$out\""}) {
                INFO(script);
                std::vector<std::string> sh{"/bin/sh", "-c", script, "sh", out.string()};
                sh.insert(sh.end(), run.begin(), run.end());
                auto r = test::run(sh);
                CHECK(r.exit_code == 0);
                CHECK(interleaved_lines(test::read_file(out)) == expected_lines(lines));
                if (reporting) CHECK(nlohmann::json::parse(test::read_file(report))["outcome"] == "completed");
            }
            // One terminal: the command's own on both streams.
            test::PtyJob job(run);
            auto ended = job.wait();
            REQUIRE(ended);
            CHECK(ended->exit_code == 0);
            CHECK(interleaved_lines(job.screen()) == expected_lines(lines));
        }
    }
}

TEST_CASE("under a runner judged by its rule, stdout stays apart from stderr, so what a command prints is never a runner's fatal line", "[output][security][linux-only]") {
    test::Installed confine;
    test::TempDir plugins, ws;
    test::install_fake(plugins.path(), "usable");
    const fs::path out = confine.scratch("out"), report = confine.scratch("report.json");
    for (const bool attest : {false, true}) {
        INFO((attest ? "attesting" : "judged by its rule"));
        const fs::path config = confine.scratch("fake.toml");
        test::write_file(config, "plugin_dirs = [\"" + plugins.path().string() + "\"]\n[platform.linux]\nchain = [\"usable\"]\n"
                                 "[runner.usable]\nlauncher = \"" FAKE_LAUNCHER "\"\nattest = " + (attest ? "true" : "false") + "\n");
        // The command prints the launcher's fatal line on stdout and ends with its status.
        auto r = test::run({"/bin/sh", "-c", "out=$1; shift; \"$@\" > \"$out\" 2>&1", "sh", out.string(), "/usr/bin/env", "-u", "CONFINE_CONFIG",
                            "XDG_CACHE_HOME=" + confine.scratch("cache").string(), confine.confinectl().string(), "run", "--config", config.string(),
                            "--workspace", ws.path().string(), "--report", report.string(), "--", "/bin/sh", "-c", "echo '" + fatal + "'; exit 125"});
        CHECK(r.exit_code == 125);
        const auto j = nlohmann::json::parse(test::read_file(report));
        CHECK(j["outcome"] == "task_failed");
        CHECK(j["exit_code"] == 125);
        CHECK_THAT(test::read_file(out), Catch::Contains(fatal + "\n"));
        CHECK_THAT(test::read_file(out), !Catch::Contains("sandbox unavailable"));
    }
}
#endif
