#include "verdict_cache.hpp"

#include "log.hpp"
#include "trust.hpp"

#include <confine/sdk/trust_posix.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace confine::detail {
namespace {

namespace fs = std::filesystem;
// Another version's file (2 had no sample levels) is not read: a miss, started over.
constexpr std::string_view header = "confine-verdicts 3";
constexpr std::size_t max_file_bytes = 256 * 1024;
constexpr std::size_t max_entries = 256;

std::int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string fnv1a_hex(const std::string& text) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return s;
}

std::optional<Verdict::Kind> kind_from(const std::string& s) {
    if (s == "full") return Verdict::Kind::full;
    if (s == "partial") return Verdict::Kind::partial;
    if (s == "unusable") return Verdict::Kind::unusable;  // never written; read only to be dropped
    return std::nullopt;
}

// The cache's directory if it is the caller's own and closed to others, it and every
// directory above it (the trust walk's rule): its descriptor. A cache another user, or a
// confined command (under /tmp), could write is ignored.
std::optional<trust::Descriptor> owned_directory(const fs::path& dir) {
    std::error_code ec;
    auto opened = trust::open_trusted(fs::absolute(dir, ec).string(), trust::path_only | O_DIRECTORY);
    if (!opened) {
        log_debug("verdict cache not used: {}", opened.error());
        return std::nullopt;
    }
    if (opened->status.st_uid != ::geteuid()) {
        log_debug("verdict cache not used: {} is not owned by the current user", dir.string());
        return std::nullopt;
    }
    return std::move(opened->fd);
}

// The text of the cache file `file` (at most max_file_bytes and one more), opened beneath
// its judged directory `dir` without following a link and judged as the trust walk judges
// a file (the caller's own, writable by nobody else), read through that descriptor; ""
// when there is none yet; nullopt when it must not be used.
std::optional<std::string> owned_text(int dir, const fs::path& file) {
    const trust::Descriptor fd(::openat(dir, file.filename().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (fd.get() < 0 && errno == ENOENT) return std::string();
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        log_debug("verdict cache not used: {} is not a regular file that can be read", file.string());
        return std::nullopt;
    }
    if (auto bad = trust::detail::judge_owner(file.string(), st, true); !bad.empty()) {
        log_debug("verdict cache not used: {}", bad);
        return std::nullopt;
    }
    if (st.st_uid != ::geteuid()) {
        log_debug("verdict cache not used: {} is not owned by the current user", file.string());
        return std::nullopt;
    }
    std::string text;
    char chunk[4096];
    while (text.size() <= max_file_bytes) {
        const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(chunk, static_cast<std::size_t>(n));
    }
    return text;
}

// A program's identity as a file: where it resolves, and what is there now.
std::optional<std::string> identity(const fs::path& program) {
    std::error_code ec;
    const fs::path real = fs::canonical(program, ec);
    struct stat st {};
    if (ec || ::stat(real.c_str(), &st) != 0) return std::nullopt;
    const std::string path = real.string();
    if (path.find_first_of("\t\n\x1e\x1f") != std::string::npos) return std::nullopt;
    return path + '\x1f' + file_identity(st);
}

// The sample levels as one field of a line: "shape\x1frunner\x1fcodes\x1fopen", the codes
// a digit each (enforcement, the seven levels, /tmp, attestation); empty for none, or
// when a text holds a separator (then nothing is kept of them).
std::string levels_text(const std::optional<SampleLevels>& l) {
    if (!l) return {};
    for (const std::string* text : {&l->shape, &l->runner, &l->dimensions.open})
        if (text->find_first_of("\t\n\r\x1e\x1f") != std::string::npos) return {};
    const Dimensions& d = l->dimensions;
    std::string codes;
    codes += static_cast<char>('0' + static_cast<int>(l->enforcement));
    for (Level level : {d.write, d.network, d.processes, d.read, d.protect, d.lifetime, d.limits}) codes += static_cast<char>('0' + static_cast<int>(level));
    codes += static_cast<char>('0' + static_cast<int>(l->tmp));
    codes += static_cast<char>('0' + static_cast<int>(l->attestation));
    return l->shape + '\x1f' + l->runner + '\x1f' + codes + '\x1f' + d.open;
}

// levels_text read back; nullopt for a field that is not one, such as one holding a
// separator levels_text never writes (the line is then dropped).
std::optional<std::optional<SampleLevels>> levels_from(const std::string& text) {
    if (text.empty()) return std::optional<SampleLevels>();
    if (text.find_first_of("\r\x1e") != std::string::npos) return std::nullopt;
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const std::size_t end = text.find('\x1f', start);
        parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    if (parts.size() != 4 || parts[2].size() != 10) return std::nullopt;
    std::vector<int> c;
    for (char ch : parts[2]) c.push_back(ch - '0');
    auto in = [](int v, int most) { return v >= 0 && v <= most; };
    if (!in(c[0], 1) || !in(c[8], 2) || !in(c[9], 2)) return std::nullopt;
    for (int i = 1; i <= 7; ++i)
        if (!in(c[static_cast<std::size_t>(i)], 2)) return std::nullopt;
    SampleLevels l{parts[0], parts[1], static_cast<Enforcement>(c[0]), {}, static_cast<Tmp>(c[8]), static_cast<Attestation::Kind>(c[9])};
    Dimensions& d = l.dimensions;
    Level* levels[] = {&d.write, &d.network, &d.processes, &d.read, &d.protect, &d.lifetime, &d.limits};
    for (int i = 0; i < 7; ++i) *levels[i] = static_cast<Level>(c[static_cast<std::size_t>(i) + 1]);
    d.open = parts[3];
    return std::optional<SampleLevels>(std::move(l));
}

}  // namespace

VerdictCache::VerdictCache(fs::path file, std::chrono::seconds max_age) : file_(std::move(file)), max_age_(max_age) {
    std::error_code ec;
    const fs::path dir = file_.parent_path();
    if (struct stat st {}; ::stat(dir.c_str(), &st) != 0 && errno == ENOENT) {
        fs::create_directories(dir.parent_path(), ec);
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return;
    }
    const auto judged = owned_directory(dir);
    if (!judged) return;
    const auto read = owned_text(judged->get(), file_);
    if (!read) return;
    writable_ = true;
    entries_ = read_text(*read);
}

VerdictCache::Entries VerdictCache::read_text(std::string_view whole) {
    Entries entries;
    if (whole.size() > max_file_bytes) return entries;
    std::istringstream lines{std::string(whole)};
    std::string line;
    if (!std::getline(lines, line) || line != header) return entries;  // not ours, or another version: start over
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string key, kind, at, programs, levels, reason;
        if (!std::getline(fields, key, '\t') || !std::getline(fields, kind, '\t') || !std::getline(fields, at, '\t') ||
            !std::getline(fields, programs, '\t') || !std::getline(fields, levels, '\t'))
            continue;
        std::getline(fields, reason);
        auto k = kind_from(kind);
        if (!k || *k == Verdict::Kind::unusable || key.size() != 16) continue;
        char* end = nullptr;
        long long seconds = std::strtoll(at.c_str(), &end, 10);
        if (!end || *end) continue;
        auto sample = levels_from(levels);
        if (!sample) continue;
        Entry e{Verdict{*k, one_line(reason)}, seconds, {}, std::move(*sample)};
        bool empty_program = false;
        for (std::size_t start = 0; start < programs.size();) {
            std::size_t end = programs.find('\x1e', start);
            if (end == std::string::npos) end = programs.size();
            empty_program = empty_program || end == start;  // never written: the line is not ours
            e.programs.push_back(programs.substr(start, end - start));
            start = end + 1;
        }
        if (!empty_program) entries[key] = std::move(e);
    }
    return entries;
}

std::string VerdictCache::key(const std::string& runner, const fs::path& plugin_file, const RunnerTable* settings,
                              std::uint32_t probe_timeout_ms) {
    // The file loaded, as the loader's trust walk found it; else what the path names now.
    std::optional<JudgedFile> plugin = judged_file(plugin_file);
    if (!plugin) {
        std::error_code ec;
        const fs::path real = fs::canonical(plugin_file, ec);
        struct stat st {};
        if (ec || ::stat(real.c_str(), &st) != 0) return {};
        plugin = JudgedFile{real, file_identity(st)};
    }
    struct utsname kernel {};
    ::uname(&kernel);
    std::ostringstream k;
    k << "runner=" << runner << "\nplugin=" << plugin->real_path.string() << ':' << plugin->identity << "\nkernel=" << kernel.release << ' ' << kernel.version
      << "\nuser=" << ::geteuid() << "\ntimeout=" << probe_timeout_ms << '\n';
    if (settings)
        for (const auto& s : settings->settings) {
            k << "setting=" << s.key << '=' << static_cast<int>(s.kind) << ':' << s.string_value << ':' << s.integer_value << ':'
              << s.boolean_value;
            for (const auto& v : s.array_value) k << '\x1f' << v;
            k << '\n';
        }
    return fnv1a_hex(k.str());
}

std::optional<Verdict> VerdictCache::find(const std::string& key) const {
    auto it = key.empty() ? entries_.end() : entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    const std::int64_t age = now_seconds() - it->second.at;
    if (age < 0 || age >= max_age_.count()) return std::nullopt;
    for (const auto& recorded : it->second.programs) {
        const std::string path = recorded.substr(0, recorded.find('\x1f'));
        if (identity(path) != recorded) {
            log_debug("cached verdict not used: {} changed since it was probed", path);
            return std::nullopt;
        }
    }
    return it->second.verdict;
}

void VerdictCache::store(const std::string& key, const Verdict& verdict, const std::vector<fs::path>& programs) {
    if (key.empty() || !writable_ || !verdict.usable()) return;
    Entry e{verdict, now_seconds(), {}};
    for (const auto& p : programs) {
        auto id = identity(p);
        if (!id) return;  // a program that cannot be pinned down: nothing kept
        e.programs.push_back(*id);
    }
    entries_[key] = std::move(e);
    dirty_ = true;
}

std::optional<SampleLevels> VerdictCache::levels(const std::string& key, const std::string& shape) const {
    auto it = key.empty() ? entries_.end() : entries_.find(key);
    if (it == entries_.end() || !it->second.levels || it->second.levels->shape != shape) return std::nullopt;
    return it->second.levels;
}

void VerdictCache::store_levels(const std::string& key, const SampleLevels& levels) {
    auto it = key.empty() || !writable_ ? entries_.end() : entries_.find(key);
    if (it == entries_.end() || (it->second.levels && levels_text(it->second.levels) == levels_text(levels))) return;
    it->second.levels = levels;
    dirty_ = true;
}

std::string VerdictCache::to_text(const Entries& entries) {
    std::vector<std::pair<std::string, Entry>> newest(entries.begin(), entries.end());
    std::sort(newest.begin(), newest.end(), [](const auto& a, const auto& b) { return a.second.at > b.second.at; });
    if (newest.size() > max_entries) newest.resize(max_entries);
    std::string text = std::string(header) + "\n";
    for (const auto& [key, e] : newest) {
        std::string programs;
        for (const auto& p : e.programs) programs += (programs.empty() ? "" : "\x1e") + p;
        text += key + "\t" + std::string(to_string(e.verdict.kind)) + "\t" + std::to_string(e.at) + "\t" + programs + "\t" +
                levels_text(e.levels) + "\t" + one_line(e.verdict.reason) + "\n";
    }
    return text;
}

void VerdictCache::save() const {
    if (!dirty_ || !writable_) return;
    const std::string text = to_text(entries_);
    std::string temp = file_.string() + ".XXXXXX";
    int fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) return;
    bool ok = ::fchmod(fd, 0600) == 0;
    for (std::size_t off = 0; ok && off < text.size();) {
        ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        if (ok) off += static_cast<std::size_t>(n);
    }
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(temp.c_str(), file_.c_str()) != 0) ::unlink(temp.c_str());
}

}  // namespace confine::detail
