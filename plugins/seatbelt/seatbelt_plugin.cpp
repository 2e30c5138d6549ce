// The seatbelt runner: macOS Seatbelt through sandbox-exec.
#include "../common/pending_runner.hpp"

namespace {

struct SeatbeltTraits {
    static constexpr std::array<std::string_view, 1> settings{"program"};
};

}  // namespace

using SeatbeltRunner = confine::builtin::PendingRunner<SeatbeltTraits>;
CONFINE_RUNNER_PLUGIN(SeatbeltRunner, "seatbelt", CONFINE_VERSION, "macOS Seatbelt through sandbox-exec")
