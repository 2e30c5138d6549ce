#include "output_sinks.hpp"

#include <algorithm>

namespace confine::detail {
namespace {

constexpr std::size_t hold_limit = 64 * 1024;

}  // namespace

void CapturedOutput::take(std::string_view bytes) {
    const std::size_t limit = capture_.limit;
    if (capture_.keep == RunOptions::Capture::Keep::head) {
        const std::size_t kept = std::min(limit - kept_.size(), bytes.size());
        kept_.append(bytes.substr(0, kept));
        dropped_ += bytes.size() - kept;
        return;
    }
    if (bytes.size() >= limit) {
        dropped_ += kept_.size() + (bytes.size() - limit);
        kept_.assign(bytes.substr(bytes.size() - limit));
        return;
    }
    kept_.append(bytes);
    // Trimmed once the excess reaches the limit: each byte is moved at most once more.
    if (kept_.size() > limit && kept_.size() - limit >= limit) {
        dropped_ += kept_.size() - limit;
        kept_.erase(0, kept_.size() - limit);
    }
}

std::string CapturedOutput::finish() {
    if (kept_.size() > capture_.limit) {
        dropped_ += kept_.size() - capture_.limit;
        kept_.erase(0, kept_.size() - capture_.limit);
    }
    return std::move(kept_);
}

void StderrCopy::take(std::string_view bytes) {
    if (!copying_) return;
    if (holding_) {
        if (held_.size() + bytes.size() <= hold_limit) {
            held_.append(bytes);
            return;
        }
        release();
    }
    copy(bytes);
}

void StderrCopy::release() {
    holding_ = false;
    copy(held_);
    held_.clear();
    held_.shrink_to_fit();
}

std::string StderrCopy::finish() { return ok_ ? std::move(held_) : std::string(); }

void StderrCopy::copy(std::string_view bytes) {
    if (ok_ && !bytes.empty()) ok_ = write_to_stderr(bytes);
}

StderrSink::StderrSink(const ExecSpec& spec)
    : background_(spec.background),
      scanner_(spec.failure_rule, spec.denial_signatures, spec.denial_paths),
      copy_(spec.copy_stderr),
      captured_(spec.capture) {}

void StderrSink::take(std::string_view bytes) {
    scanner_.feed(bytes);
    copy_.take(bytes);
    if (background_) captured_.take(bytes);
}

void StderrSink::finish(Executed& result) {
    result.observed.stderr_findings = scanner_.finish();
    if (background_) {
        result.stderr_text = captured_.finish();
        result.stderr_dropped = captured_.dropped();
    }
    result.held_stderr = copy_.finish();
}

}  // namespace confine::detail
