// The bwrap runner: bubblewrap mount-namespace sandbox.
#include "../common/pending_runner.hpp"

namespace {

struct BwrapTraits {
    static constexpr std::array<std::string_view, 1> settings{"program"};
};

}  // namespace

using BwrapRunner = confine::builtin::PendingRunner<BwrapTraits>;
CONFINE_RUNNER_PLUGIN(BwrapRunner, "bwrap", CONFINE_VERSION, "bubblewrap mount-namespace sandbox")
