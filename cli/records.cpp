#include "records.hpp"

#include "effective_config.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#if !defined(_WIN32)
#include <dlfcn.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#endif

namespace confinectl {
namespace {

using nlohmann::json;

// "2026-12-04T16:50:01.123Z"
std::string utc_text(std::chrono::system_clock::time_point t) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
#if defined(_WIN32)
    gmtime_s(&tm, &seconds);
#else
    gmtime_r(&seconds, &tm);
#endif
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
    char out[48];
    std::snprintf(out, sizeof out, "%s.%03dZ", text, static_cast<int>(ms));
    return out;
}

// "fnv1a64:<hex>" of a file's bytes, or null when it cannot be read: which text was in
// force, to compare with what an operator shipped.
json content_hash(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return nullptr;
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::istreambuf_iterator<char> it(in), end; it != end; ++it) h = (h ^ static_cast<unsigned char>(*it)) * 0x100000001b3ULL;
    char out[32];
    std::snprintf(out, sizeof out, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
    return out;
}

json files_json(const std::vector<std::filesystem::path>& files) {
    json out = json::array();
    for (const auto& f : files) out.push_back({{"path", f.string()}, {"hash", content_hash(f)}});
    return out;
}

json user_json() {
#if defined(_WIN32)
    return {{"name", nullptr}, {"uid", nullptr}};
#else
    const uid_t uid = ::geteuid();
    const passwd* pw = ::getpwuid(uid);
    return {{"name", pw ? json(pw->pw_name) : json(nullptr)}, {"uid", uid}};
#endif
}

std::string host_name() {
#if defined(_WIN32)
    return {};
#else
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return {};
    return name;
#endif
}

std::string working_directory() {
    std::error_code ec;
    const auto here = std::filesystem::current_path(ec);
    return ec ? std::string() : here.string();
}

}  // namespace

json record_json(const RecordContext& context, const confine::Config* config, json body, int exit_status) {
    json r = std::move(body);
    r["schema_version"] = 1;
    r["time"] = utc_text(context.began);
    r["duration_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - context.began_steady).count();
    r["user"] = user_json();
    r["host"] = host_name();
    r["version"] = CONFINE_VERSION;
    r["command"] = context.command;
    r["working_directory"] = working_directory();
    r["workspace"] = context.workspace.empty() ? json(nullptr) : json(context.workspace);
    r["exit_status"] = exit_status;
    if (config) {
        r["configuration"] = {{"files", files_json(config->files)}, {"managed", files_json(config->managed.files)}};
        json settings = effective_document(*config)["settings"];
        // The values [policy.env] set gives are the operator's or the user's, and may be
        // secrets: a record names them only.
        for (auto& setting : settings)
            if (setting["key"] == "policy.env.set")
                for (auto& [name, value] : setting["value"].items()) value = "(set)";
        r["policy"] = std::move(settings);
    } else {
        r["configuration"] = nullptr;
        r["policy"] = nullptr;
    }
    return r;
}

#if !defined(_WIN32)

std::expected<Records, std::string> Records::open(const confine::RunRecords& records) {
    Records out;
    out.journal_ = records.journal;
    if (records.directory.empty()) return out;
    const std::string dir = records.directory.string();
    // Searched, never listed: the operator's directory lets users add their file, not read others'.
#if defined(O_PATH)
    const int dirfd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
    const int dirfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
    if (dirfd < 0) return std::unexpected("the records directory " + dir + ": " + std::strerror(errno));
    const passwd* pw = ::getpwuid(::geteuid());
    const std::string name = (pw ? std::string(pw->pw_name) : std::to_string(::geteuid())) + ".jsonl";
    out.file_ = (records.directory / name).string();
    const int fd = ::openat(dirfd, name.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    const int saved = errno;
    ::close(dirfd);
    if (fd < 0) return std::unexpected("the run record " + out.file_ + ": " + std::strerror(saved));
    // Another user's file, planted under this user's name, is not where this user's
    // records go.
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
        ::close(fd);
        return std::unexpected("the run record " + out.file_ + " is not a file of this user's");
    }
    out.fd_ = fd;
    return out;
}

Records::~Records() {
    if (fd_ >= 0) ::close(fd_);
}

void Records::write(const RecordContext& context, const confine::Config* config, json body, int exit_status) const {
    if (!wanted()) return;
    const json record = record_json(context, config, std::move(body), exit_status);
    if (fd_ >= 0) {
        // One write: appended whole, never interleaved with another run's.
        const std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace) + '\n';
        const ssize_t n = ::write(fd_, line.data(), line.size());
        if (n != static_cast<ssize_t>(line.size()))
            std::fprintf(stderr, "confinectl: cannot write the run record %s: %s\n", file_.c_str(), n < 0 ? std::strerror(errno) : "short write");
    }
    if (journal_)
        if (auto why = send_to_journal(record)) std::fprintf(stderr, "confinectl: cannot send the run record to the journal: %s\n", why->c_str());
}

std::optional<std::string> send_to_journal(const json& record) {
#if defined(__linux__)
    using SendV = int (*)(const struct iovec*, int);
    static SendV sendv = [] {
        void* lib = ::dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        return lib ? reinterpret_cast<SendV>(::dlsym(lib, "sd_journal_sendv")) : nullptr;
    }();
    if (!sendv) return std::string("libsystemd.so.0 (sd_journal_sendv) is not there");
    auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.is_null() ? std::string() : v.dump(); };
    std::string command;
    for (const auto& a : record.value("command", json::array())) {
        if (!command.empty()) command += ' ';
        command += text(a);
    }
    const std::string outcome = record.contains("outcome") ? text(record["outcome"]) : "refused";
    const bool failed = outcome == "sandbox_unavailable" || outcome == "refused";
    std::vector<std::string> fields{
        "MESSAGE=confinectl run: " + outcome + " (exit " + text(record["exit_status"]) + "): " + command,
        std::string("PRIORITY=") + (failed ? "4" : "6"),
        "SYSLOG_IDENTIFIER=confinectl",
        "CONFINE_OUTCOME=" + outcome,
        "CONFINE_EXIT_STATUS=" + text(record["exit_status"]),
        "CONFINE_RUNNER=" + (record.contains("runner") ? text(record["runner"]) : std::string()),
        "CONFINE_USER=" + text(record["user"]["name"]),
        "CONFINE_WORKSPACE=" + text(record["workspace"]),
        "CONFINE_RECORD=" + record.dump(-1, ' ', false, json::error_handler_t::replace),
    };
    std::vector<iovec> iov;
    for (auto& f : fields) iov.push_back({f.data(), f.size()});
    const int r = sendv(iov.data(), static_cast<int>(iov.size()));
    if (r < 0) return std::string(std::strerror(-r));
    return std::nullopt;
#else
    (void)record;
    return std::string("there is no journal on this platform");
#endif
}

#else  // _WIN32

std::expected<Records, std::string> Records::open(const confine::RunRecords& records) {
    if (!records.directory.empty() || records.journal) return std::unexpected(std::string("run records are not kept on Windows"));
    return Records{};
}
Records::~Records() = default;
void Records::write(const RecordContext&, const confine::Config*, json, int) const {}
std::optional<std::string> send_to_journal(const json&) { return std::string("there is no journal on this platform"); }

#endif

Records::Records(Records&& other) noexcept : fd_(other.fd_), journal_(other.journal_), file_(std::move(other.file_)) { other.fd_ = -1; }

Records& Records::operator=(Records&& other) noexcept {
    if (this != &other) {
        std::swap(fd_, other.fd_);
        journal_ = other.journal_;
        file_ = std::move(other.file_);
    }
    return *this;
}

}  // namespace confinectl
