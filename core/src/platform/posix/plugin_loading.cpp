// Loading a runner plugin with POSIX calls (all of them on macOS too): the trust walk's
// descriptor, kept open and loaded through; the dynamic loader's flags and its reason
// for a refusal; where the running program is.
#include "plugins/loader.hpp"
#include "platform/posix/descriptor_paths.hpp"
#include "trust.hpp"

#include <confine/sdk/trust_posix.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

#include <map>
#include <mutex>

namespace fs = std::filesystem;

namespace confine::detail {
namespace {

// The descriptor a plugin file is loaded through, one per file for the life of the
// process. The dynamic loader knows a library by the name it was opened by, and would
// hand back the library already loaded by a descriptor's name ("/proc/self/fd/N") for
// another file that got the same number once the first descriptor was closed; a
// descriptor kept open also keeps its file's identity from passing to another file.
int pinned_descriptor(trust::Descriptor fd, const struct stat& st) {
    static std::mutex mutex;
    static std::map<std::pair<dev_t, ino_t>, int> pinned;
    std::lock_guard lock(mutex);
    auto [it, added] = pinned.try_emplace({st.st_dev, st.st_ino}, fd.get());
    if (added) fd.release();
    return it->second;
}

}  // namespace

std::expected<LoadTarget, Error> trusted_load_path(const fs::path& file) {
    // Judged on the descriptor the walk opened, and loaded through that same descriptor
    // where the OS names one by a path (Linux): no other file can be put in its place
    // between the two. Elsewhere by the judged path, checked again (judged_paths.cpp).
    std::error_code ec;
    const fs::path absolute = fs::absolute(file, ec);
    auto opened = trust::open_trusted(absolute.string(), O_RDONLY);
    if (!opened) return std::unexpected(plugin_error(ErrorCode::plugin_untrusted, file, "refusing plugin: " + opened.error()));
    // Code is installed executable; a plugin file without the permission was not.
    if ((opened->status.st_mode & 0111) == 0)
        return std::unexpected(plugin_error(ErrorCode::plugin_not_executable, file,
                                            "refusing plugin: it is not executable (mode " + trust::detail::mode_text(opened->status.st_mode) + ")"));
    // What is loaded, where it really is: the verdict cache keys by it, and a run checks
    // that it does not lie where the command may write.
    remember_judged(absolute, JudgedFile{opened->real_path, file_identity(opened->status)});
    const int pinned = pinned_descriptor(std::move(opened->fd), opened->status);
    auto path = load_path(pinned, opened->real_path);
    if (!path) return std::unexpected(plugin_error(ErrorCode::plugin_untrusted, file, "refusing plugin: " + path.error()));
    return LoadTarget{*path, pinned};
}

std::optional<std::string> map_library(boost::dll::shared_library& library, const fs::path& load_path) {
    std::error_code ec;
    ::dlerror();
    library.load(load_path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
    if (!ec) return std::nullopt;
    const char* why = ::dlerror();
    return why ? std::string(why) : ec.message();
}

fs::path running_program() {
    if (fs::path started = started_program(); !started.empty()) return started;
    // The file the dynamic loader mapped this code from: the program itself when
    // libconfine is linked in statically, as confinectl links it.
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&running_program), &info) && info.dli_fname && *info.dli_fname) {
        std::error_code ec;
        return fs::canonical(info.dli_fname, ec);
    }
    return {};
}

}  // namespace confine::detail
