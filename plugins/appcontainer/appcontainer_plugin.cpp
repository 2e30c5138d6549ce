// The appcontainer runner: Windows AppContainer through the appcontainer-run launcher.
#include "../common/pending_runner.hpp"

namespace {

struct AppcontainerTraits {
    static constexpr std::array<std::string_view, 1> settings{"launcher"};
};

}  // namespace

using AppcontainerRunner = confine::builtin::PendingRunner<AppcontainerTraits>;
CONFINE_RUNNER_PLUGIN(AppcontainerRunner, "appcontainer", CONFINE_VERSION, "Windows AppContainer through the appcontainer-run launcher")
