// Reading a run's stderr as it passes, for what the classifier needs (docs/design.md §5,
// §13), in memory bounded by the failure rule's own sizes whatever the volume. Internal
// to libconfine; scan_stderr (classify.hpp) is the same over a whole text.
//
//   StderrScanner scan(wrap.failure_rule, wrap.denial_signatures, wrap.denial_paths);
//   scan.feed(bytes);  ...  scan.feed(more);
//   StderrFindings found = scan.finish();
#pragma once

#include <confine/execute.hpp>

#include "classify.hpp"
#include "needle_set.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

// Lines end at '\n'. A signature matches without regard to ASCII case anywhere in a line,
// however long the line and wherever the reads cut it; informational lines are compared
// whole and exact. Per line it keeps the first evidence_line_max bytes (or the longest
// informational line's length, if more), the last (longest signature - 1) bytes and
// which signatures it has carried so far; a chunk with no signature in it costs one
// pass through it for all the signatures still wanted (NeedleSet, and no copy), and
// nothing at all once both findings are made.
//
// A line is a denial hint when it carries one of the runner's denial signatures, or when
// it carries one of the errors a refusal of a path gives (path_refusal_errors) and names
// one of `denial_paths` within its first evidence_line_max bytes: the path whole, not
// part of a longer name (".git" is not named by ".gitignore", "/home/u/.ssh" not by
// "/home/u/.ssh2"). A missing file elsewhere (a typo) says ENOENT too, and is no hint.
class StderrScanner {
public:
    StderrScanner(const FailureRule& rule, std::span<const std::string> denial_signatures,
                  std::span<const std::string> denial_paths = {});

    void feed(std::string_view bytes);
    // The end of the stream: a last line without a newline counts.
    StderrFindings finish();
    // False once nothing more could change the findings.
    bool wants_more() const;

private:
    enum class Kind { fatal, denial, path_error };
    // What a needle says when found; what it searches for is set_[its position].
    struct Needle {
        std::size_t index;   // fatal: position in the rule's list; otherwise unused
        Kind kind;
    };
    bool wanted(const Needle& n) const;
    bool seen(const Needle& n) const;
    void continue_line(std::string_view bytes);
    void mark_hits(std::string_view bytes);
    bool names_denial_path(std::string_view line) const;
    void end_line();
    void scan_whole_lines(std::string_view bytes);
    std::string evidence() const;

    std::vector<Needle> needles_;
    NeedleSet set_;                   // each needle's text, case-folded, in needles_' order
    std::vector<std::string> texts_;  // those texts until the first bytes are fed, then set_'s
    std::vector<std::string> fatal_signatures_;
    std::vector<std::string> informational_;
    std::vector<std::string> denial_paths_;
    std::size_t informational_max_ = 0;
    std::size_t overlap_ = 0;    // longest needle - 1: what a match across two reads needs
    std::size_t head_keep_ = 0;  // bytes of a line kept from its start

    // The line being read.
    std::string head_;            // its first head_keep_ bytes, as written
    std::uint64_t length_ = 0;
    std::string tail_;            // its last overlap_ bytes
    std::size_t fatal_hit_;       // the lowest fatal index it carries; npos: none
    bool denial_hit_ = false;
    bool path_error_hit_ = false;

    std::string seam_;  // tail_ and the start of the next chunk, reused
    StderrFindings found_;
};

}  // namespace confine::detail
