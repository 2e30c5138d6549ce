// Proving a runner: canaries run confined under a provider's selected runner and the
// policy in effect, each judged by what the world shows afterwards (a file that is or is
// not there, a listener that did or did not get a connection, a process that is or is not
// alive), against what the runner reported of the check's dimension. `confinectl probe
// --prove` renders what prove() returns.
//
// A canary is a program the proof runs confined, once per check: the host's own
// executable, answering an argument of its choosing by calling canary_main() with the
// arguments after it, before it does anything else (confinectl answers `__canary`):
//
//   int main(int argc, char** argv) {
//       if (argc >= 2 && std::strcmp(argv[1], "__canary") == 0) return confine::canary_main(argc - 2, argv + 2);
//       ...
//       auto provider = confine::Provider::create(std::move(*config));
//       const confine::Proof proof = confine::prove(**provider, {"/abs/path/of/this/program", "__canary"});
//       if (!proof.error.empty()) ...  // no proof was made
//       for (const auto& c : proof.checks)
//           if (c.outcome() == confine::ProofOutcome::over_claim) ...  // the runner said more than held
//   }
//
// The proof runs the canary command's program under the runner, so it names it by an
// absolute path that the confined command may run. On Windows no proof is made: prove()
// returns a Proof with `error` set, and canary_main() refuses.
#pragma once

#include <confine/provider.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace confine {

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

// Runs the canaries through `provider` (its selection must be usable) in a throwaway
// workspace under /var/tmp, removed afterwards. `canary_command` is the argv prefix that
// runs a canary: each check appends WHAT ARG [ARG] to it, and the program it names must
// answer with canary_main(). The read-scope check gives the canary the directory two
// levels above that program as its read root (its installation: bin/PROGRAM lies in it).
Proof prove(const Provider& provider, std::vector<std::string> canary_command);

// What a canary does inside the sandbox: `argv` holds WHAT ARG [ARG], the arguments after
// the canary command's prefix. Prints "ok", with what it read where it read something, or
// "refused: " and why not, on stdout, and returns 0; 2, said on stderr, when it is not
// given two or three arguments.
int canary_main(int argc, char** argv);

}  // namespace confine
