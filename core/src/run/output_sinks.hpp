// Where a run's output goes as the executor reads it (docs/design.md §13): kept up to a
// bound, copied on to this process's stderr, read by the classifier's scanner — each in
// memory that does not grow with the volume. Portable; internal to libconfine.
#pragma once

#include "executor.hpp"
#include "stderr_scan.hpp"

#include <confine/execute.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace confine::detail {

// At most `limit` bytes of a stream, its head or its tail, and a count of the rest. The
// tail is kept in at most twice the limit while the stream lasts.
class CapturedOutput {
public:
    explicit CapturedOutput(RunOptions::Capture capture) : capture_(capture) {}
    void take(std::string_view bytes);
    // What was kept; dropped() then counts every byte that was not.
    std::string finish();
    std::uint64_t dropped() const { return dropped_; }

private:
    RunOptions::Capture capture_;
    std::string kept_;
    std::uint64_t dropped_ = 0;
};

// Copies stderr on to this process's own as it is read, or holds it back while asked (a
// runner's set-up output, until the command exists). At most 64 KiB is held: past that,
// it is all copied. A copy that fails (the reader has gone) stops the copying, not the run.
class StderrCopy {
public:
    explicit StderrCopy(bool copying) : copying_(copying) {}
    void hold() { holding_ = copying_; }
    void take(std::string_view bytes);
    void release();  // copies what is held and stops holding
    // What is held still, for the caller to show or not once the outcome is known.
    std::string finish();

private:
    void copy(std::string_view bytes);
    bool copying_;
    bool holding_ = false;
    bool ok_ = true;
    std::string held_;
};

// A run's stderr as the executor reads it: scanned always, copied on in the
// foreground when the spec says so, kept up to the capture bound in the background.
class StderrSink {
public:
    explicit StderrSink(const ExecSpec& spec);
    void take(std::string_view bytes);
    StderrCopy& copy() { return copy_; }
    // Into `result`: the findings, what was captured and dropped, what is held still.
    void finish(Executed& result);

private:
    bool background_;
    StderrScanner scanner_;
    StderrCopy copy_;
    CapturedOutput captured_;
};

}  // namespace confine::detail
