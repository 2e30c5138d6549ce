#include "platform.hpp"

#include <confine/internal/windows_finish.hpp>

#include <windows.h>

#include <csignal>
#include <filesystem>
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

namespace {

std::atomic<int>* g_child = nullptr;
std::atomic<int> g_interrupted{0};

BOOL WINAPI on_console_event(DWORD event) { return finish_child_on_console_event(event) ? TRUE : FALSE; }

}  // namespace

// A console event (Ctrl+C, Ctrl+Break, the console closed, logoff, shutdown) reaches
// confinectl, not the runner: it runs without a console. Left to its default, it would
// end confinectl, and the run's job with it, killing a runner that has something to undo
// (the AppContainer launcher's access-list entries) before it could. Instead, while a
// runner runs, confinectl asks it to finish (internal/windows_finish.hpp) and waits a bounded
// time for it; the run then ends as it would have, and confinectl with 128 + the signal
// the event stands for. A runner without the event, or no runner yet, leaves the event
// to its default.
bool finish_child_on_console_event(unsigned long event) {
    const int pid = g_child ? g_child->load() : 0;
    if (pid <= 0) return false;
    HANDLE runner = ::OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
    if (!runner) return false;
    HANDLE finish = ::OpenEventW(EVENT_MODIFY_STATE, FALSE, confine::windows::finish_event_name(static_cast<std::uint32_t>(pid)).c_str());
    const bool asked = finish && ::SetEvent(finish);
    if (asked) {
        g_interrupted = event == CTRL_C_EVENT ? SIGINT : event == CTRL_BREAK_EVENT ? SIGBREAK : SIGTERM;
        ::WaitForSingleObject(runner, confine::windows::finish_wait_ms);
    }
    if (finish) ::CloseHandle(finish);
    ::CloseHandle(runner);
    return asked;
}

void forward_signals(std::atomic<int>& child) {
    g_child = &child;
    ::SetConsoleCtrlHandler(&on_console_event, TRUE);
}

void await_command() {}
void child_changed() {}

std::optional<int> interrupted_by() {
    const int sig = g_interrupted.load();
    return sig ? std::optional<int>(sig) : std::nullopt;
}

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
                          std::string(".").append(target.filename().string()).append(".").append(std::to_string(random()));
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

std::string own_program() {
    std::wstring buf(32768, L'\0');
    const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0 || n >= buf.size()) return {};
    buf.resize(n);
    return std::filesystem::path(buf).string();
}

}  // namespace confinectl
