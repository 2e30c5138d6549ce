#include "stderr_scan.hpp"

#include <algorithm>
#include <cstring>

namespace confine::detail {
namespace {

constexpr std::size_t npos = std::string::npos;

// ASCII case folding, as the classifier has always matched (the "C" locale's tolower):
// 16 bytes at a time where the compiler has portable vector types (SSE2, NEON), which
// keeps it well ahead of the pipe that delivers the bytes.
void fold(const char* from, char* to, std::size_t size) {
    std::size_t i = 0;
#if defined(__GNUC__)
    using bytes16 = unsigned char __attribute__((vector_size(16)));
    for (; i + 16 <= size; i += 16) {
        bytes16 v;
        std::memcpy(&v, from + i, 16);
        const bytes16 upper = (v - 'A') < 26;  // all ones where A-Z
        v += upper & 32;
        std::memcpy(to + i, &v, 16);
    }
#endif
    for (; i < size; ++i) {
        const auto c = static_cast<unsigned char>(from[i]);
        to[i] = static_cast<char>(c + (static_cast<unsigned char>(c - 'A') < 26 ? 32 : 0));
    }
}

// Into `out`, without zeroing it first. (The size handed to the callback is not used:
// libstdc++ 12 may pass the grown capacity there instead of the size asked for.)
void fold_into(std::string_view in, std::string& out) {
    out.resize_and_overwrite(in.size(), [in](char* to, std::size_t) {
        fold(in.data(), to, in.size());
        return in.size();
    });
}

std::string folded(std::string_view s) {
    std::string out;
    fold_into(s, out);
    return out;
}

// Where `needle` first is in `hay` at or after `from`.
std::size_t find(std::string_view hay, std::string_view needle, std::size_t from) {
    if (from >= hay.size()) return npos;
#if defined(__GLIBC__) || defined(__APPLE__)
    const void* at = ::memmem(hay.data() + from, hay.size() - from, needle.data(), needle.size());
    return at ? static_cast<std::size_t>(static_cast<const char*>(at) - hay.data()) : npos;
#else
    return hay.find(needle, from);
#endif
}

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

}  // namespace

StderrScanner::StderrScanner(const FailureRule& rule, std::span<const std::string> denial_signatures)
    : fatal_signatures_(rule.fatal_signatures), informational_(rule.informational_lines), fatal_hit_(npos) {
    for (std::size_t i = 0; i < rule.fatal_signatures.size(); ++i)
        if (searchable(rule.fatal_signatures[i])) needles_.push_back({folded(rule.fatal_signatures[i]), i, true});
    for (const auto& signature : denial_signatures)
        if (searchable(signature)) needles_.push_back({folded(signature), 0, false});
    for (const auto& line : informational_) informational_max_ = std::max(informational_max_, line.size());
    for (const auto& n : needles_) overlap_ = std::max(overlap_, n.lower.size() - 1);
    // One byte past the evidence's length tells a line that was cut from one that was not.
    head_keep_ = std::max(evidence_line_max + 1, informational_max_);
}

bool StderrScanner::wanted(const Needle& n) const { return n.fatal ? !found_.fatal_line : !found_.denial_line; }

bool StderrScanner::wants_more() const {
    return std::any_of(needles_.begin(), needles_.end(), [this](const Needle& n) { return wanted(n); });
}

void StderrScanner::feed(std::string_view bytes) {
    if (bytes.empty() || !wants_more()) return;
    fold_into(bytes, lower_);
    const std::string_view lower(lower_);
    const std::size_t first = find_newline(bytes, 0);
    if (first == npos) {
        continue_line(bytes, lower);
        return;
    }
    continue_line(bytes.substr(0, first), lower.substr(0, first));
    end_line();
    // Whole lines between the first newline and the last: only those with a hit are read.
    const std::size_t last = find_last_newline(bytes, first, bytes.size());
    if (last > first) scan_whole_lines(bytes.substr(first + 1, last - first), lower.substr(first + 1, last - first));
    if (wants_more()) continue_line(bytes.substr(last + 1), lower.substr(last + 1));
}

StderrFindings StderrScanner::finish() {
    if (length_ > 0) end_line();
    return found_;
}

// More of the line being read: what is searched is the line's kept tail followed by the
// new bytes, so that a signature cut in two by the reads is found whole.
void StderrScanner::continue_line(std::string_view raw, std::string_view lower) {
    if (raw.empty()) return;
    if (!tail_.empty()) {
        seam_.assign(tail_);
        seam_.append(lower.substr(0, std::min(overlap_, lower.size())));
        mark_hits(seam_);
    }
    mark_hits(lower);
    if (head_.size() < head_keep_) head_.append(raw.substr(0, head_keep_ - head_.size()));
    length_ += raw.size();
    if (overlap_ == 0) return;
    if (lower.size() >= overlap_) {
        tail_.assign(lower.substr(lower.size() - overlap_));
    } else {
        tail_.append(lower);
        if (tail_.size() > overlap_) tail_.erase(0, tail_.size() - overlap_);
    }
}

// Notes which signatures `lower` (part of the line being read) carries: for the fatal
// ones only those earlier in the rule's list than one already seen in this line.
void StderrScanner::mark_hits(std::string_view lower) {
    for (const Needle& n : needles_) {
        if (!wanted(n) || (n.fatal ? fatal_hit_ != npos && fatal_hit_ <= n.index : denial_hit_)) continue;
        if (find(lower, n.lower, 0) == npos) continue;
        if (n.fatal) fatal_hit_ = n.index;
        else denial_hit_ = true;
    }
}

// The line being read has ended: it is judged whole, and the next one begins.
void StderrScanner::end_line() {
    const bool informational = length_ <= informational_max_ &&
                               std::find(informational_.begin(), informational_.end(), head_) != informational_.end();
    if (fatal_hit_ != npos && !found_.fatal_line && !informational) {
        found_.fatal_line = evidence();
        found_.fatal_signature = fatal_signatures_[fatal_hit_];
    }
    if (denial_hit_ && !found_.denial_line) found_.denial_line = evidence();
    head_.clear();
    length_ = 0;
    tail_.clear();
    fatal_hit_ = npos;
    denial_hit_ = false;
}

// Whole lines, each ending with a newline (the last byte of `raw`), and no line in
// progress: each wanted signature is searched for across all of them, and only a line
// with a hit is read as a line. Each signature's next hit is kept, so that the bytes are
// searched once per signature however many lines have hits.
void StderrScanner::scan_whole_lines(std::string_view raw, std::string_view lower) {
    next_hit_.assign(needles_.size(), npos);
    for (std::size_t i = 0; i < needles_.size(); ++i)
        if (wanted(needles_[i])) next_hit_[i] = find(lower, needles_[i].lower, 0);
    for (std::size_t from = 0; from < raw.size();) {
        std::size_t hit = npos;
        for (std::size_t i = 0; i < needles_.size(); ++i) {
            if (!wanted(needles_[i]) || next_hit_[i] == npos) continue;
            if (next_hit_[i] < from) next_hit_[i] = find(lower, needles_[i].lower, from);
            hit = std::min(hit, next_hit_[i]);
        }
        if (hit == npos) return;
        const std::size_t before = find_last_newline(raw, from, hit);
        const std::size_t start = before == npos ? from : before + 1;
        const std::size_t end = find_newline(raw, hit);
        continue_line(raw.substr(start, end - start), lower.substr(start, end - start));
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
    detail::StderrScanner scanner(wrap.failure_rule, wrap.denial_signatures);
    scanner.feed(stderr_text);
    return scanner.finish();
}

}  // namespace confine
