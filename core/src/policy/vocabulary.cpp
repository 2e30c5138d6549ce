// The vocabulary's names (confine/policy.hpp, confine/wrap_result.hpp): the platform
// this build runs on, each level, mode, network, /tmp and verdict as text, and the part
// of a runner's `open` about one dimension.
#include <confine/provider.hpp>

#include <string>
#include <string_view>

namespace confine {

std::string_view current_platform() noexcept {
#if defined(__linux__)
    return "linux";
#elif defined(__APPLE__)
    return "darwin";
#elif defined(_WIN32)
    return "windows";
#elif defined(__FreeBSD__)
    return "freebsd";
#elif defined(__NetBSD__)
    return "netbsd";
#elif defined(__OpenBSD__)
    return "openbsd";
#else
    return "unknown";
#endif
}

std::string_view to_string(Mode mode) noexcept {
    return mode == Mode::read_only ? "read-only" : "workspace-write";
}
std::string_view to_string(Enforcement e) noexcept { return e == Enforcement::full ? "full" : "partial"; }
std::string_view to_string(Level l) noexcept { return l == Level::full ? "full" : l == Level::partial ? "partial" : "none"; }
std::string_view to_string(Network network) noexcept {
    return network == Network::none ? "none" : network == Network::proxy ? "proxy" : "allow";
}
std::string_view to_string(Tmp tmp) noexcept { return tmp == Tmp::private_ ? "private" : tmp == Tmp::host ? "host" : "unsaid"; }
std::string_view to_string(Loopback loopback) noexcept { return loopback == Loopback::own ? "own" : loopback == Loopback::none ? "none" : "unsaid"; }
std::string_view to_string(Verdict::Kind kind) noexcept {
    switch (kind) {
    case Verdict::Kind::full: return "full";
    case Verdict::Kind::partial: return "partial";
    case Verdict::Kind::unusable: break;
    }
    return "unusable";
}

std::string open_about(const std::string& open, std::string_view dimension) {
    const std::string head = std::string(dimension) + ": ";
    std::size_t at = open.find(head);
    while (at != std::string::npos && at != 0 && (at < 2 || open.compare(at - 2, 2, "; ") != 0)) at = open.find(head, at + 1);
    if (at == std::string::npos) return {};
    // Up to the next part: "; <known dimension>: ", or the carve's "; cost: ".
    std::size_t end = std::string::npos;
    for (const char* next : {"; write: ", "; network: ", "; processes: ", "; read: ", "; protect: ", "; metadata: ", "; lifetime: ", "; limits: ", "; cost: "}) {
        const std::size_t found = open.find(next, at + head.size());
        if (found != std::string::npos && found < end) end = found;
    }
    return open.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace confine
