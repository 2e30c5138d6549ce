#include "platform.hpp"

#include <windows.h>

#include <cstdlib>
#include <random>

namespace confinectl {
namespace {

std::string last_error_text() {
    const DWORD error = ::GetLastError();
    char buf[512] = {};
    ::FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, error, 0, buf, sizeof buf, nullptr);
    std::string text(buf);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
    return text.empty() ? "error " + std::to_string(error) : text;
}

}  // namespace

// A process of the same user opens another only as its access list allows; nothing to
// change here.
void make_undumpable() {}

// Windows has no signals to pass on; a console's Ctrl+C reaches the whole console group.
void forward_signals(std::atomic<int>&) {}

void die_by(int sig) { std::_Exit(128 + sig); }

struct ReportFile::Impl {
    std::filesystem::path target;
};

ReportFile::ReportFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ReportFile::ReportFile(ReportFile&&) noexcept = default;
ReportFile& ReportFile::operator=(ReportFile&&) noexcept = default;
ReportFile::~ReportFile() = default;

std::expected<ReportFile, std::string> ReportFile::open(const std::string& path) {
    namespace fs = std::filesystem;
    auto impl = std::make_unique<Impl>();
    impl->target = fs::path(path);
    const std::string name = impl->target.filename().string();
    if (name.empty() || name == "." || name == "..") return std::unexpected(path + ": names a directory, not a file");
    std::error_code ec;
    const fs::path dir = impl->target.parent_path().empty() ? fs::path(".") : impl->target.parent_path();
    if (!fs::is_directory(dir, ec)) return std::unexpected(path + ": cannot write in " + dir.string() + ": not a directory");
    if (fs::is_directory(impl->target, ec)) return std::unexpected(path + ": is a directory");
    return ReportFile(std::move(impl));
}

std::optional<std::string> ReportFile::write(const std::string& text) {
    namespace fs = std::filesystem;
    const fs::path& target = impl_->target;
    std::random_device random;
    const fs::path temp = (target.parent_path().empty() ? fs::path(".") : target.parent_path()) /
                          ("." + target.filename().string() + "." + std::to_string(random()));
    HANDLE h = ::CreateFileW(temp.wstring().c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) return last_error_text();
    DWORD written = 0;
    const bool ok = ::WriteFile(h, text.data(), static_cast<DWORD>(text.size()), &written, nullptr) && written == text.size();
    std::optional<std::string> error = ok ? std::nullopt : std::optional<std::string>(last_error_text());
    ::CloseHandle(h);
    if (!error && !::MoveFileExW(temp.wstring().c_str(), target.wstring().c_str(), MOVEFILE_REPLACE_EXISTING)) error = last_error_text();
    if (error) ::DeleteFileW(temp.wstring().c_str());
    return error;
}

std::optional<std::string> prepare_report_descriptor(int) {
    return std::string("--report-fd is not available on Windows; use --report FILE");
}

std::optional<std::string> write_to_descriptor(int, const std::string&) { return std::string("not available on Windows"); }

std::string own_program() { return {}; }  // probe --prove is POSIX-only

}  // namespace confinectl
