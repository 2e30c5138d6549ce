#include <confine/environment.hpp>

#include "ascii_case.hpp"

#if defined(_WIN32)
#include "win.hpp"
#else
extern "C" char** environ;
#endif

#include <algorithm>
#include <array>
#include <set>

namespace confine {
namespace {

using detail::ascii_lower;
using detail::equal_ignoring_ascii_case;

// Two names of one variable: Windows' environment ignores case, POSIX's does not.
bool same_name(std::string_view a, std::string_view b) {
#if defined(_WIN32)
    return equal_ignoring_ascii_case(a, b);
#else
    return a == b;
#endif
}

// The name of an entry "NAME=VALUE". On Windows, an entry may begin with '=' (the
// per-drive current directories, "=C:=C:\\src"): that '=' is part of its name.
std::string_view name_of(std::string_view entry) {
#if defined(_WIN32)
    const std::size_t eq = entry.find('=', 1);
#else
    const std::size_t eq = entry.find('=');
#endif
    return entry.substr(0, eq);
}

bool matches_any(std::span<const std::string> patterns, std::string_view name) {
    return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return environment_pattern_matches(p, name); });
}

constexpr std::array core_patterns{
    std::string_view("HOME"), std::string_view("LOGNAME"), std::string_view("USER"), std::string_view("PATH"),
    std::string_view("SHELL"), std::string_view("TERM"), std::string_view("COLORTERM"), std::string_view("LANG"),
    std::string_view("LANGUAGE"), std::string_view("LC_*"), std::string_view("TZ"), std::string_view("TMPDIR"),
    std::string_view("PWD"),
#if defined(_WIN32)
    std::string_view("SystemRoot"), std::string_view("windir"), std::string_view("ComSpec"), std::string_view("PATHEXT"),
    std::string_view("TEMP"), std::string_view("TMP"), std::string_view("USERPROFILE"), std::string_view("USERNAME"),
    std::string_view("USERDOMAIN"), std::string_view("HOMEDRIVE"), std::string_view("HOMEPATH"), std::string_view("APPDATA"),
    std::string_view("LOCALAPPDATA"), std::string_view("ProgramData"), std::string_view("ProgramFiles*"),
    std::string_view("ProgramW6432"), std::string_view("CommonProgramFiles*"), std::string_view("SystemDrive"),
    std::string_view("OS"), std::string_view("NUMBER_OF_PROCESSORS"), std::string_view("PROCESSOR_*"),
#endif
};

// Why `text` cannot name a variable; `what` says what it was meant to be.
std::optional<std::string> invalid_name_text(std::string_view text, std::string_view what) {
    if (text.empty()) return std::string("an empty ") + std::string(what);
    if (text.find('\0') != std::string_view::npos) return std::string("a ") + std::string(what) + " must not contain NUL";
    if (text.find('=') != std::string_view::npos) return std::string("a ") + std::string(what) + " must not contain '='";
    return std::nullopt;
}

std::string quoted(std::string_view text) {
    std::string out = "'";
    for (char c : text) out += c == '\0' ? std::string("\\0") : std::string(1, c);
    return out + "'";
}

Error invalid(std::string message) { return Error{ErrorCode::invalid_policy, std::move(message)}; }

// The policy's own patterns and names, for a policy built by hand (a configuration's were
// checked when it was read, naming their line).
std::optional<Error> check_policy(const EnvironmentPolicy& policy) {
    for (const auto& [list, key] : {std::pair{&policy.exclude, "exclude"}, std::pair{&policy.include, "include"}, std::pair{&policy.held, "held"}})
        for (const auto& p : *list)
            if (auto why = invalid_environment_pattern(p)) return invalid("[policy.env] " + std::string(key) + " entry " + quoted(p) + ": " + *why);
    for (const auto& [name, value] : policy.set) {
        if (auto why = invalid_environment_name(name)) return invalid("[policy.env] set " + quoted(name) + ": " + *why);
        if (value.find('\0') != std::string::npos) return invalid("[policy.env] set " + quoted(name) + ": a value must not contain NUL");
    }
    return std::nullopt;
}

}  // namespace

std::string_view to_string(EnvInherit inherit) noexcept {
    switch (inherit) {
    case EnvInherit::all: return "all";
    case EnvInherit::core: return "core";
    case EnvInherit::none: return "none";
    }
    return "?";
}

std::span<const std::string_view> core_environment_patterns() noexcept { return core_patterns; }

namespace {

// Any pattern, by the classic glob walk: on a mismatch, the last star takes one more
// character.
bool glob_matches(std::string_view pattern, std::string_view name) noexcept {
    std::size_t p = 0, n = 0;
    std::size_t star = std::string_view::npos, star_n = 0;
    while (n < name.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_n = n;
        } else if (p < pattern.size() && ascii_lower(pattern[p]) == ascii_lower(name[n])) {
            ++p;
            ++n;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            n = ++star_n;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

// The shapes every pattern of the default list has — NAME, *PART, PART*, *PART* — each
// compared directly; any other (a star inside) by the glob walk. Each is exactly the
// glob's answer.
enum class Shape { exact, prefix, suffix, inside, glob };
struct PatternShape {
    Shape shape;
    std::string_view part;  // the text between the leading and the trailing star
};
PatternShape shape_of(std::string_view pattern) noexcept {
    const bool leading = !pattern.empty() && pattern.front() == '*';
    const bool trailing = pattern.size() > 1 && pattern.back() == '*';
    const std::string_view part = pattern.substr(leading ? 1 : 0, pattern.size() - (leading ? 1 : 0) - (trailing ? 1 : 0));
    if (part.find('*') != std::string_view::npos) return {Shape::glob, part};
    return {leading ? (trailing ? Shape::inside : Shape::suffix) : (trailing ? Shape::prefix : Shape::exact), part};
}

}  // namespace

bool environment_pattern_matches(std::string_view pattern, std::string_view name) noexcept {
    const auto [shape, part] = shape_of(pattern);
    if (shape == Shape::glob) return glob_matches(pattern, name);
    if (part.size() > name.size()) return false;
    if (shape == Shape::exact) return equal_ignoring_ascii_case(part, name);
    if (shape == Shape::prefix) return equal_ignoring_ascii_case(part, name.substr(0, part.size()));
    if (shape == Shape::suffix) return equal_ignoring_ascii_case(part, name.substr(name.size() - part.size()));
    if (part.empty()) return true;
    const char first = ascii_lower(part.front());
    for (std::size_t at = 0; at + part.size() <= name.size(); ++at)
        if (ascii_lower(name[at]) == first && equal_ignoring_ascii_case(part, name.substr(at, part.size()))) return true;
    return false;
}

namespace {

// Patterns read once for the many names of an environment: each one's shape and its
// text folded, so that a name folded once is compared with plain searches. The same
// answers as environment_pattern_matches, pattern by pattern.
class FoldedPatterns {
public:
    template <typename Patterns>
    explicit FoldedPatterns(const Patterns& patterns) {
        for (const auto& p : patterns) add(p);
    }

    // Whether any pattern matches `name`, given folded (ascii_folded()).
    bool any(std::string_view name) const {
        return std::any_of(list_.begin(), list_.end(), [&](const Pattern& p) {
            switch (p.shape) {
            case Shape::exact: return name == p.text;
            case Shape::prefix: return name.starts_with(p.text);
            case Shape::suffix: return name.ends_with(p.text);
            case Shape::inside: return name.find(p.text) != std::string_view::npos;
            case Shape::glob: return glob_matches(p.text, name);
            }
            return false;
        });
    }

private:
    struct Pattern {
        Shape shape;
        std::string text;  // the part between the stars; the whole pattern for a glob
    };
    void add(std::string_view pattern) {
        const auto [shape, part] = shape_of(pattern);
        list_.push_back({shape, detail::ascii_folded(shape == Shape::glob ? pattern : part)});
    }
    std::vector<Pattern> list_;
};

}  // namespace

bool url_carries_password(std::string_view value) noexcept {
    auto scheme_char = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    };
    for (std::size_t at = value.find("://"); at != std::string_view::npos; at = value.find("://", at + 3)) {
        // A scheme before it: a letter, then letters, digits, '+', '-', '.'.
        std::size_t start = at;
        while (start > 0 && scheme_char(value[start - 1])) --start;
        while (start < at && !((value[start] >= 'a' && value[start] <= 'z') || (value[start] >= 'A' && value[start] <= 'Z'))) ++start;
        if (start == at) continue;
        // The authority: up to the path, query, fragment or a space (a password holding
        // ',' or ';' unencoded still counts: a list of URLs is not cut there).
        std::size_t end = at + 3;
        while (end < value.size() && value[end] != '/' && value[end] != '?' && value[end] != '#' && value[end] != ' ' && value[end] != '\t' &&
               value[end] != '\n')
            ++end;
        const std::string_view authority = value.substr(at + 3, end - at - 3);
        const std::size_t user_end = authority.rfind('@');
        if (user_end == std::string_view::npos) continue;
        const std::size_t colon = authority.substr(0, user_end).find(':');
        if (colon != std::string_view::npos && colon + 1 < user_end) return true;
    }
    return false;
}

std::optional<std::string> invalid_environment_name(std::string_view name) { return invalid_name_text(name, "variable name"); }

std::optional<std::string> invalid_environment_pattern(std::string_view pattern) { return invalid_name_text(pattern, "name pattern"); }

std::vector<std::string> current_environment() {
    std::vector<std::string> out;
#if defined(_WIN32)
    wchar_t* block = ::GetEnvironmentStringsW();
    if (!block) return out;
    for (const wchar_t* entry = block; *entry; entry += std::wstring_view(entry).size() + 1) out.push_back(detail::win::narrow(entry));
    ::FreeEnvironmentStringsW(block);
#else
    for (char** entry = environ; entry && *entry; ++entry) out.emplace_back(*entry);
#endif
    return out;
}

std::expected<FilteredEnvironment, Error> filter_environment(const EnvironmentPolicy& policy, std::span<const std::string> environment,
                                                             std::span<const std::string> overrides) {
    if (auto bad = check_policy(policy)) return std::unexpected(*bad);
    // What is set, in order: the policy's, then the overrides' (a later one of a name wins).
    std::vector<std::pair<std::string, std::string>> set;
    std::vector<std::string> passed;
    auto set_value = [&set](std::string name, std::string value) {
        const auto it = std::find_if(set.begin(), set.end(), [&](const auto& s) { return same_name(s.first, name); });
        if (it != set.end()) it->second = std::move(value);
        else set.emplace_back(std::move(name), std::move(value));
    };
    for (const auto& [name, value] : policy.set) set_value(name, value);
    for (const auto& o : overrides) {
        const std::size_t eq = o.find('=');
        const std::string name = o.substr(0, eq);
        if (auto why = invalid_environment_name(name)) return std::unexpected(invalid("environment override " + quoted(o) + ": " + *why));
        if (o.find('\0') != std::string::npos) return std::unexpected(invalid("environment override " + quoted(name) + ": a value must not contain NUL"));
        if (eq == std::string::npos) passed.push_back(name);
        else if (name.find('*') != std::string::npos)
            return std::unexpected(invalid("environment override " + quoted(o) + ": a pattern cannot be set; name one variable"));
        else set_value(name, o.substr(eq + 1));
    }
    auto is_set = [&set](std::string_view name) { return std::any_of(set.begin(), set.end(), [&](const auto& s) { return same_name(s.first, name); }); };
    // "NAME" passes that name (compared as the platform compares names); a name holding
    // `*` is a pattern, which passes every name it matches, as `include` does.
    auto is_passed = [&passed](std::string_view name) {
        return std::any_of(passed.begin(), passed.end(), [&](const std::string& p) {
            return p.find('*') != std::string::npos ? environment_pattern_matches(p, name) : same_name(p, name);
        });
    };
    const FoldedPatterns held(policy.held), include(policy.include), exclude(policy.exclude), core(core_patterns);
    auto kept = [&](std::string_view name, std::string_view value) {
        const std::string name_folded = detail::ascii_folded(name);
        if (held.any(name_folded)) return false;
        if (is_passed(name) || include.any(name_folded)) return true;
        if (exclude.any(name_folded)) return false;
        if (policy.exclude_url_passwords && url_carries_password(value)) return false;
        switch (policy.inherit) {
        case EnvInherit::all: return true;
        case EnvInherit::core: return core.any(name_folded);
        case EnvInherit::none: return false;
        }
        return false;
    };
    FilteredEnvironment out;
    std::set<std::string> removed;
    for (const auto& entry : environment) {
        const std::string_view name = name_of(entry);
        if (is_set(name)) continue;  // its value is the one set, below
        const std::string_view value = name.size() < entry.size() ? std::string_view(entry).substr(name.size() + 1) : std::string_view();
        if (kept(name, value)) out.variables.push_back(entry);
        else removed.emplace(std::string(name));
    }
    for (auto& [name, value] : set) {
        if (matches_any(policy.held, name)) {
            removed.emplace(name);
            continue;
        }
        out.variables.push_back(name + "=" + value);
        out.set.push_back(name);
    }
    std::sort(out.set.begin(), out.set.end());
    out.removed.assign(removed.begin(), removed.end());
    return out;
}

}  // namespace confine
