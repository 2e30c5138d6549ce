#include "stderr_scan.hpp"

#include "ascii_case.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <utility>

namespace confine::detail {
namespace {

constexpr std::size_t npos = std::string::npos;

std::size_t find_newline(std::string_view s, std::size_t from) {
    if (from >= s.size()) return npos;
    const void* at = std::memchr(s.data() + from, '\n', s.size() - from);
    return at ? static_cast<std::size_t>(static_cast<const char*>(at) - s.data()) : npos;
}

// The last newline in s[from, to).
std::size_t find_last_newline(std::string_view s, std::size_t from, std::size_t to) {
#if defined(__GLIBC__)
    const void* at = ::memrchr(s.data() + from, '\n', to - from);
    return at ? static_cast<std::size_t>(static_cast<const char*>(at) - s.data()) : npos;
#else
    for (std::size_t i = to; i > from; --i)
        if (s[i - 1] == '\n') return i - 1;
    return npos;
#endif
}

// A signature that is empty, or that spans a line end, is never within a line.
bool searchable(const std::string& signature) { return !signature.empty() && signature.find('\n') == npos; }

// The errors a refusal of a denied or protected path gives, on some runner: bubblewrap
// masks a denied directory with an empty one (ENOENT for what was in it, EACCES for the
// directory) and a protected path is a read-only mount point (EROFS beneath it, EBUSY for
// a rename or removal of it, "Resource busy" on macOS); Landlock answers EACCES, Seatbelt
// EPERM, AppContainer "Access is denied". As strerror() words them, and by name.
constexpr std::string_view path_refusal_errors[] = {"no such file or directory", "permission denied", "operation not permitted",
                                                    "read-only file system", "resource busy", "access is denied",
                                                    "enoent", "eacces", "eperm", "erofs", "ebusy"};

// Whether `c` may stand inside a file name as tools print one (a name does not end at it).
bool name_byte(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || std::isalnum(u) || std::strchr("._-+~@%#", c) != nullptr;
}

// Whether `path` is named whole at `at` in `line`: nothing of a longer name before it
// (a relative path may follow "./"), and it ends there or at a '/' (what lies beneath).
bool named_at(std::string_view line, std::size_t at, std::string_view path) {
    const std::size_t end = at + path.size();
    if (end < line.size() && line[end] != '/' && name_byte(line[end])) return false;
    if (at == 0) return true;
    const char before = line[at - 1];
    if (before != '/') return !name_byte(before);
    // "./.git": the relative path from where the command runs; "x/.git" is another one.
    return path.front() != '/' && at >= 2 && line[at - 2] == '.' && (at == 2 || (line[at - 3] != '/' && !name_byte(line[at - 3])));
}

}  // namespace

StderrScanner::StderrScanner(const FailureRule& rule, std::span<const std::string> denial_signatures,
                             std::span<const std::string> denial_paths)
    : fatal_signatures_(rule.fatal_signatures), informational_(rule.informational_lines), fatal_hit_(npos) {
    // What each needle searches for, case-folded (ASCII), in the needles' order.
    std::vector<std::string> lower;
    auto add = [&](std::string text, std::size_t index, Kind kind) {
        overlap_ = std::max(overlap_, text.size() - 1);
        lower.push_back(std::move(text));
        needles_.push_back({index, kind});
    };
    for (std::size_t i = 0; i < rule.fatal_signatures.size(); ++i)
        if (searchable(rule.fatal_signatures[i])) add(ascii_folded(rule.fatal_signatures[i]), i, Kind::fatal);
    for (const auto& signature : denial_signatures)
        if (searchable(signature)) add(ascii_folded(signature), 0, Kind::denial);
    for (const auto& path : denial_paths)
        if (searchable(path)) denial_paths_.push_back(path);
    if (!denial_paths_.empty())
        for (const std::string_view error : path_refusal_errors) add(std::string(error), 0, Kind::path_error);
    for (const auto& line : informational_) informational_max_ = std::max(informational_max_, line.size());
    // The set's tables are made at the first bytes fed: a run whose stderr is never read
    // (no report, no pipe) spends nothing on them.
    texts_ = std::move(lower);
    // One byte past the evidence's length tells a line that was cut from one that was not.
    head_keep_ = std::max(evidence_line_max + 1, informational_max_);
}

bool StderrScanner::wanted(const Needle& n) const { return n.kind == Kind::fatal ? !found_.fatal_line : !found_.denial_line; }

bool StderrScanner::wants_more() const {
    return std::any_of(needles_.begin(), needles_.end(), [this](const Needle& n) { return wanted(n); });
}

void StderrScanner::feed(std::string_view bytes) {
    if (bytes.empty() || !wants_more()) return;
    if (!texts_.empty()) set_ = NeedleSet(std::exchange(texts_, {}));
    const std::size_t first = find_newline(bytes, 0);
    if (first == npos) {
        continue_line(bytes);
        return;
    }
    continue_line(bytes.substr(0, first));
    end_line();
    // Whole lines between the first newline and the last: only those with a hit are read.
    const std::size_t last = find_last_newline(bytes, first, bytes.size());
    if (last > first) scan_whole_lines(bytes.substr(first + 1, last - first));
    if (wants_more()) continue_line(bytes.substr(last + 1));
}

StderrFindings StderrScanner::finish() {
    if (length_ > 0) end_line();
    return found_;
}

// More of the line being read: what is searched is the line's kept tail followed by the
// new bytes, so that a signature cut in two by the reads is found whole.
void StderrScanner::continue_line(std::string_view bytes) {
    if (bytes.empty()) return;
    if (!tail_.empty()) {
        seam_.assign(tail_);
        seam_.append(bytes.substr(0, std::min(overlap_, bytes.size())));
        mark_hits(seam_);
    }
    mark_hits(bytes);
    if (head_.size() < head_keep_) head_.append(bytes.substr(0, head_keep_ - head_.size()));
    length_ += bytes.size();
    if (overlap_ == 0) return;
    if (bytes.size() >= overlap_) {
        tail_.assign(bytes.substr(bytes.size() - overlap_));
    } else {
        tail_.append(bytes);
        if (tail_.size() > overlap_) tail_.erase(0, tail_.size() - overlap_);
    }
}

// Notes which signatures `bytes` (part of the line being read) carries: for the fatal
// ones only those earlier in the rule's list than one already seen in this line.
void StderrScanner::mark_hits(std::string_view bytes) {
    const auto fresh = [this](const Needle& n) { return wanted(n) && !seen(n); };
    if (std::none_of(needles_.begin(), needles_.end(), fresh)) return;
    const NeedleSet::Wanted fresh_at = [&](std::size_t i) { return fresh(needles_[i]); };
    // A needle marked is no longer fresh, so the search goes on from the same place.
    for (NeedleSet::Hit hit; (hit = set_.find(bytes, hit.at == NeedleSet::npos ? 0 : hit.at, fresh_at)).at != NeedleSet::npos;) {
        const Needle& n = needles_[hit.index];
        if (n.kind == Kind::fatal) fatal_hit_ = n.index;
        else if (n.kind == Kind::denial) denial_hit_ = true;
        else path_error_hit_ = true;
    }
}

// Whether the line being read already carries what `n` would say.
bool StderrScanner::seen(const Needle& n) const {
    return n.kind == Kind::fatal    ? fatal_hit_ != npos && fatal_hit_ <= n.index
           : n.kind == Kind::denial ? denial_hit_
                                    : denial_hit_ || path_error_hit_;
}

// Whether `line` (its kept start) names one of the denial paths whole.
bool StderrScanner::names_denial_path(std::string_view line) const {
    for (const auto& path : denial_paths_)
        for (std::size_t at = line.find(path); at != npos; at = line.find(path, at + 1))
            if (named_at(line, at, path)) return true;
    return false;
}

// The line being read has ended: it is judged whole, and the next one begins.
void StderrScanner::end_line() {
    const bool informational = length_ <= informational_max_ &&
                               std::find(informational_.begin(), informational_.end(), head_) != informational_.end();
    if (fatal_hit_ != npos && !found_.fatal_line && !informational) {
        found_.fatal_line = evidence();
        found_.fatal_signature = fatal_signatures_[fatal_hit_];
    }
    const bool denial = denial_hit_ || (path_error_hit_ && names_denial_path(std::string_view(head_).substr(0, evidence_line_max)));
    if (denial && !found_.denial_line) found_.denial_line = evidence();
    head_.clear();
    length_ = 0;
    tail_.clear();
    fatal_hit_ = npos;
    denial_hit_ = false;
    path_error_hit_ = false;
}

// Whole lines, each ending with a newline (the last byte of `raw`), and no line in
// progress: the wanted signatures are searched for across all of them in one pass, and
// only a line with a hit is read as a line.
void StderrScanner::scan_whole_lines(std::string_view bytes) {
    const NeedleSet::Wanted still = [this](std::size_t i) { return wanted(needles_[i]); };
    for (std::size_t from = 0; from < bytes.size();) {
        const std::size_t hit = set_.find(bytes, from, still).at;
        if (hit == npos) return;
        const std::size_t before = find_last_newline(bytes, from, hit);
        const std::size_t start = before == npos ? from : before + 1;
        const std::size_t end = find_newline(bytes, hit);
        continue_line(bytes.substr(start, end - start));
        end_line();
        from = end + 1;
    }
}

// The line being read as evidence: whole, or its first evidence_line_max bytes cut back to
// the start of a UTF-8 character, and "…".
std::string StderrScanner::evidence() const {
    if (length_ <= evidence_line_max) return head_;
    std::size_t cut = evidence_line_max;
    for (int back = 0; back < 3 && cut > 0 && (static_cast<unsigned char>(head_[cut]) & 0xC0) == 0x80; ++back) --cut;
    return head_.substr(0, cut) + "\xE2\x80\xA6";
}

}  // namespace confine::detail

namespace confine {

StderrFindings scan_stderr(const WrapResult& wrap, std::string_view stderr_text) {
    detail::StderrScanner scanner(wrap.failure_rule, wrap.denial_signatures, wrap.denial_paths);
    scanner.feed(stderr_text);
    return scanner.finish();
}

}  // namespace confine
