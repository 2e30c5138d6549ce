// `confinectl probe --prove`: canaries under the selected runner and the policy in effect,
// each judged by what the world shows afterwards (a file that is or is not there, a
// listener that did or did not get a connection, a process that is or is not alive).
#pragma once

#include <confine/provider.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace confinectl {

// What a check came to, judged against what the runner reported of the check's dimension
// for the canary's own run. `open` is the runner's honesty, never its say-so: a level of
// `none` admits every hole of the dimension, `partial` only those its explanation names
// (dimensions.open's part about the dimension holds a word of the check's `hole`), and
// `full`, no level, or something the policy allows refused is an over-claim — unless the
// runner named exactly that refusal as what it costs (`cost`: dimensions.open's part
// "cost: ..." lists the path the check tried; Landlock's deny-list carve).
enum class ProofOutcome { held, open, over_claim, cost };

struct ProofCheck {
    std::string check;
    std::string dimension;
    std::string expected;  // "allowed" or "refused"
    std::string observed;
    // The level the runner reported for the dimension in the canary's run ("full",
    // "partial", "none", or "not asked": the network when it was allowed); empty where the
    // dimension is no runner's (env: confine's own filter) or the run reported nothing.
    std::string reported;
    std::string explained;          // what it said it leaves open of the dimension, or ""
    std::vector<std::string> hole;  // words, any one of which in `explained` names what the check tries
    // For a check of what the policy allows that a runner may refuse as a cost: the path it
    // tries, and the paths the run's "cost: ..." part lists.
    std::string costly;
    std::vector<std::string> costs;
    bool held() const { return expected == observed; }
    bool names_hole() const {
        auto lower = [](std::string text) {
            for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
            return text;
        };
        const std::string said = lower(explained);
        for (const auto& word : hole)
            if (!word.empty() && said.find(lower(word)) != std::string::npos) return true;
        return false;
    }
    ProofOutcome outcome() const {
        if (held()) return ProofOutcome::held;
        if (expected == "allowed" && !costly.empty() && std::find(costs.begin(), costs.end(), costly) != costs.end()) return ProofOutcome::cost;
        // Only a refusal that did not hold can be an admitted hole; refusing what the policy
        // allows is never one.
        const bool admitted = expected == "refused" && (reported == "none" || (reported == "partial" && names_hole()));
        return admitted ? ProofOutcome::open : ProofOutcome::over_claim;
    }
    bool open() const { return outcome() == ProofOutcome::open; }
};

struct Proof {
    std::string runner;
    std::string network;  // the policy's: "none", "allow" or "proxy"
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
