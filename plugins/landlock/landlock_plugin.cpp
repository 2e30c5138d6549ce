// The landlock runner: Landlock LSM through the landlock-run launcher.
#include "../common/pending_runner.hpp"

namespace {

struct LandlockTraits {
    static constexpr std::array<std::string_view, 1> settings{"launcher"};
};

}  // namespace

using LandlockRunner = confine::builtin::PendingRunner<LandlockTraits>;
CONFINE_RUNNER_PLUGIN(LandlockRunner, "landlock", CONFINE_VERSION, "Landlock LSM through the landlock-run launcher")
