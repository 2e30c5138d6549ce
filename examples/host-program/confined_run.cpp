// Runs a command confined, writing only in a workspace (and /tmp):
//   confined-run WORKSPACE COMMAND [ARGS...]
#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: confined-run WORKSPACE COMMAND [ARGS...]\n");
        return 125;
    }
    auto config = confine::load_config();  // the layers and the managed layer, as confinectl reads them
    if (!config) {
        std::fprintf(stderr, "confined-run: %s\n", config.error().message.c_str());
        return 125;
    }
    // Plugins from the installation this program was built against (its plugin directory,
    // which confine's CMake package and confine.pc name), after the configuration's.
    auto provider = confine::Provider::create(std::move(*config), {.builtin_plugin_dirs = confine::installed_plugin_dirs()});
    if (!provider) {
        std::fprintf(stderr, "confined-run: %s\n", provider.error().message.c_str());
        return 125;
    }
    // What the request leaves unsaid (the network, which /tmp) is the operator's
    // [policy] network and tmp, as for confinectl.
    confine::PolicyRequest policy{confine::Mode::workspace_write, argv[1]};
    std::vector<std::string> command(argv + 2, argv + argc);

    auto outcome = confine::run(**provider, policy, command);  // foreground
    if (!outcome) {  // nothing ran: a bad policy, a command that does not exist
        std::fprintf(stderr, "confined-run: %s\n", outcome.error().message.c_str());
        return 125;
    }
    switch (outcome->kind) {
    case confine::OutcomeKind::completed:
        return 0;
    case confine::OutcomeKind::task_failed:  // it ran confined and failed: its status is the answer
        if (outcome->denial_hint)
            std::fprintf(stderr, "confined-run: the sandbox may have refused: %s\n", outcome->denial_hint->c_str());
        return outcome->exit_code ? *outcome->exit_code : 128 + outcome->signal.value_or(0);
    case confine::OutcomeKind::sandbox_unavailable:  // it did not run: confine failed closed
        std::fprintf(stderr, "confined-run: sandbox unavailable: %s\n", outcome->evidence.c_str());
        return 125;
    }
    return 125;
}
