#include <confine/limits.hpp>

#include <limits>

namespace confine {
namespace {

template <class L>
auto slot(L& limits, std::string_view name) -> decltype(&limits.memory) {
    if (name == "memory") return &limits.memory;
    if (name == "processes") return &limits.processes;
    if (name == "cpu") return &limits.cpu;
    if (name == "file-size") return &limits.file_size;
    if (name == "open-files") return &limits.open_files;
    return nullptr;
}

// A positive whole number, with a binary K, M or G where `sized`; nullopt if not one.
std::optional<std::uint64_t> amount(std::string_view text, bool sized) {
    std::uint64_t unit = 1;
    if (sized && !text.empty()) {
        const char last = text.back();
        unit = last == 'K' || last == 'k' ? 1ull << 10 : last == 'M' || last == 'm' ? 1ull << 20 : last == 'G' || last == 'g' ? 1ull << 30 : 1;
        if (unit != 1) text.remove_suffix(1);
    }
    if (text.empty() || text.size() > 19) return std::nullopt;
    std::uint64_t n = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (n == 0 || n > std::numeric_limits<std::uint64_t>::max() / unit) return std::nullopt;
    return n * unit;
}

}  // namespace

Limits Limits::over(const Limits& under) const {
    Limits out = *this;
    for (const std::string_view name : {"memory", "processes", "cpu", "file-size", "open-files"}) {
        auto& mine = *slot(out, name);
        if (!mine) mine = *slot(under, name);
    }
    return out;
}

std::optional<std::string> set_limit(Limits& limits, std::string_view name, std::string_view value, std::string_view subject) {
    auto* into = slot(limits, name);
    if (!into) return "unknown limit '" + std::string(name) + "' (known: " + std::string(limit_names) + ")";
    const std::string who(subject.empty() ? name : subject);
    const bool sized = name == "memory" || name == "file-size";
    const auto n = amount(value, sized);
    if (!n)
        return who + " must be a positive whole number" +
               (sized ? " of bytes (K, M, G: KiB, MiB, GiB)" : name == "cpu" ? " of seconds" : "") + ", not '" + std::string(value) + "'";
    if (*into) return who + " is limited twice";
    *into = *n;
    return std::nullopt;
}

std::string describe(const Limits& limits) {
    std::string out;
    for (const std::string_view name : {"memory", "processes", "cpu", "file-size", "open-files"})
        if (const auto& v = *slot(limits, name)) {
            if (!out.empty()) out += ' ';
            out.append(name).append("=").append(std::to_string(*v));
        }
    return out;
}

}  // namespace confine
