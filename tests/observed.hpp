// An observation with its whole stderr text, judged as the executor would after reading
// the stream: what the scanner finds in it is what the classifier judges.
#pragma once

#include <confine/execute.hpp>

#include "classify.hpp"

#include <string>
#include <utility>

namespace test {

struct Seen : confine::Observation {
    std::string stderr_text;
};

// A run that exited with `code`, its stderr `stderr_text`.
inline Seen exited(int code, std::string stderr_text) {
    Seen o;
    o.exit_code = code;
    o.stderr_seen = true;
    o.stderr_text = std::move(stderr_text);
    return o;
}

inline confine::Outcome classified(const confine::WrapResult& w, Seen seen) {
    seen.stderr_findings = confine::scan_stderr(w, seen.stderr_text);
    return confine::classify(w, seen);
}

}  // namespace test
