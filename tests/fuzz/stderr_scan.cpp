// Fuzz target: the classifier's stderr scanner (core/src/run/stderr_scan.hpp), with the
// runners' own failure rules and denial dialects. Properties: the findings are the same
// however the reads cut the stream, and they are what the whole-text reading below (the
// specification of docs/design.md §5 and §13) finds.
#include "fuzz.hpp"

#include "classify.hpp"
#include "stderr_scan.hpp"

#include <confine/sdk/vocabulary.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace {

using confine::FailureRule;
using confine::StderrFindings;
using confine::fuzz::require;

struct Dialect {
    FailureRule rule;
    std::vector<std::string> denial;
};

// As the plugins give them (plugins/*/..._plugin.cpp), the network's words added.
const std::vector<Dialect>& dialects() {
    static const std::vector<Dialect> all = [] {
        const std::vector<std::string> network = confine::sdk::network_denial_signatures();
        auto with_network = [&](std::vector<std::string> d) {
            d.insert(d.end(), network.begin(), network.end());
            return d;
        };
        return std::vector<Dialect>{
            {{{125}, {"landlock-run: "}, {"landlock-run: partial enforcement (older Landlock ABI)"}},
             with_network({"permission denied", "eacces", "eperm", "operation not permitted"})},
            {{{}, {"bwrap: ", "confine-loopback: "}, {}},
             with_network({"read-only file system", "permission denied", "no such process", "erofs", "eacces", "eperm", "esrch"})},
            {{{}, {"sandbox-exec: "}, {}}, {"operation not permitted", "eperm", "eacces"}},
            {{{}, {"appcontainer-run: "}, {}}, {"access is denied", "eacces", "eperm"}},
        };
    }();
    return all;
}

bool contains_folded(std::string_view hay, std::string_view needle) {
    auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
    return !needle.empty() &&
           std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [&](char a, char b) { return lower(a) == lower(b); }) != hay.end();
}

bool name_byte(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || std::isalnum(u) || std::strchr("._-+~@%#", c) != nullptr;
}

// A denied path named whole: not part of a longer name before or after it ("./" may
// come before a relative one), within the evidence kept of the line.
bool names_whole(std::string_view line, std::string_view path) {
    line = line.substr(0, confine::evidence_line_max);
    for (std::size_t at = line.find(path); at != std::string_view::npos; at = line.find(path, at + 1)) {
        const std::size_t end = at + path.size();
        if (end < line.size() && line[end] != '/' && name_byte(line[end])) continue;
        if (at == 0) return true;
        if (line[at - 1] != '/') {
            if (!name_byte(line[at - 1])) return true;
            continue;
        }
        if (path.front() != '/' && at >= 2 && line[at - 2] == '.' && (at == 2 || (line[at - 3] != '/' && !name_byte(line[at - 3])))) return true;
    }
    return false;
}

const char* const refusals[] = {"no such file or directory", "permission denied", "operation not permitted", "read-only file system",
                                "resource busy", "access is denied", "enoent", "eacces", "eperm", "erofs", "ebusy"};

StderrFindings whole_text_reading(const Dialect& d, const std::vector<std::string>& paths, std::string_view text) {
    StderrFindings f;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        const auto& info = d.rule.informational_lines;
        if (!f.fatal_line && std::find(info.begin(), info.end(), line) == info.end())
            for (const auto& sig : d.rule.fatal_signatures)
                if (contains_folded(line, sig)) {
                    f.fatal_line = std::string(line);
                    f.fatal_signature = sig;
                    break;
                }
        bool denial = std::any_of(d.denial.begin(), d.denial.end(), [&](const std::string& s) { return contains_folded(line, s); });
        if (!denial && std::any_of(std::begin(refusals), std::end(refusals), [&](const char* e) { return contains_folded(line, e); }))
            denial = std::any_of(paths.begin(), paths.end(), [&](const std::string& p) { return !p.empty() && names_whole(line, p); });
        if (!f.denial_line && denial) f.denial_line = std::string(line);
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return f;
}

// The evidence kept of `line`: the line, or its first bytes (at most evidence_line_max,
// whole characters) and "…".
bool kept_of(const std::optional<std::string>& kept, const std::optional<std::string>& line) {
    if (!kept || !line) return kept.has_value() == line.has_value();
    if (line->size() <= confine::evidence_line_max) return *kept == *line;
    const std::string_view mark = "\xE2\x80\xA6";
    if (!kept->ends_with(mark)) return false;
    const std::string_view head = std::string_view(*kept).substr(0, kept->size() - mark.size());
    return head.size() <= confine::evidence_line_max && head.size() + 3 >= confine::evidence_line_max && line->starts_with(head);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    confine::fuzz::Input in(data, size);
    const Dialect& d = dialects()[in.byte() % dialects().size()];
    std::vector<std::string> paths;
    if (in.byte() & 1) paths = {".git", "/home/u/.ssh", std::string(in.until('\n'))};
    const std::size_t cuts = in.byte() % 9;
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < cuts; ++i) at.push_back(static_cast<std::size_t>(in.byte()) << 8 | in.byte());
    const std::string_view text = in.rest();

    confine::WrapResult wrap;
    wrap.failure_rule = d.rule;
    wrap.denial_signatures = d.denial;
    wrap.denial_paths = paths;
    const StderrFindings whole = confine::scan_stderr(wrap, text);

    confine::detail::StderrScanner scanner(d.rule, d.denial, paths);
    std::size_t from = 0;
    for (std::size_t cut : at) {
        cut = text.empty() ? 0 : cut % (text.size() + 1);
        if (cut <= from) continue;
        scanner.feed(text.substr(from, cut - from));
        from = cut;
    }
    scanner.feed(text.substr(from));
    const StderrFindings pieces = scanner.finish();
    require(pieces.fatal_line == whole.fatal_line && pieces.fatal_signature == whole.fatal_signature &&
                pieces.denial_line == whole.denial_line,
            "the findings do not depend on where the reads cut the stream");

    const StderrFindings want = whole_text_reading(d, paths, text);
    require(kept_of(whole.fatal_line, want.fatal_line) && whole.fatal_signature == want.fatal_signature, "the fatal line is the whole-text reading's",
            whole.fatal_line.value_or("(none)"));
    require(kept_of(whole.denial_line, want.denial_line), "the denial hint is the whole-text reading's", whole.denial_line.value_or("(none)"));
    return 0;
}
