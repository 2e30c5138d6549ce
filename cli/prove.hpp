// `confinectl probe --prove`: canaries under the selected runner and the policy in effect,
// each judged by what the world shows afterwards (a file that is or is not there, a
// listener that did or did not get a connection, a process that is or is not alive).
#pragma once

#include <confine/provider.hpp>

#include <string>
#include <vector>

namespace confinectl {

struct ProofCheck {
    std::string check;
    std::string dimension;
    std::string expected;  // "allowed" or "refused"
    std::string observed;
    // The level the runner reports for the dimension ("full", "partial", "none"; empty
    // when it did not say). A check the runner reports it does not enforce at all is
    // `open` when it is allowed: the report and the world agree, and the proof says so.
    // So is one that tries a hole a runner names when it reports the dimension partial
    // (`open_when_partial`: metadata, which Landlock does not govern).
    std::string reported;
    bool open_when_partial = false;
    bool held() const { return expected == observed; }
    bool open() const { return !held() && (reported == "none" || (open_when_partial && reported == "partial")); }
};

struct Proof {
    std::string runner;
    std::string network;  // the policy's: "none" or "allow"
    std::vector<ProofCheck> checks;
    std::string error;  // set when the proof could not be made at all
};

// Runs the canaries through `provider` (its selection must be usable), with `self` the
// path of this program (the canary runs it confined, as `confinectl __canary ...`).
Proof prove(const confine::Provider& provider, const std::string& self);

// `confinectl __canary WHAT ARG [ARG]`: what a canary does inside the sandbox; prints "ok" or
// why not, exits 0.
int canary(int argc, char** argv);

}  // namespace confinectl
