// A run's limits on Windows (run_limits.hpp): not enforced here yet; the report says
// none, and [policy.enforcement] limits decides whether such a run is accepted.
#include "run_limits.hpp"

namespace confine::detail {

int apply_child_limits(const ChildLimits&) noexcept { return 0; }

std::shared_ptr<RunLimits> prepare_run_limits(const Limits& limits) {
    if (!limits.any()) return nullptr;
    auto run = std::make_shared<RunLimits>();
    run->limits = limits;
    run->level = Level::none;
    run->open = "limits: not enforced on Windows";
    return run;
}

void RunLimits::judge_end(Observation&, bool, std::chrono::steady_clock::duration) const {}

}  // namespace confine::detail
