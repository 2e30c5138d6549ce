// A host that runs one command confined with a time limit, for the Windows world
// proofs (.github/workflows/windows.yml): confinectl has no time-limit option, and the
// library's limit ends the runner's job (the launcher with it) — the case to prove.
//   timed-run LIMIT_MS WORKSPACE COMMAND [ARG...]
// Prints `outcome: KIND timed_out: 0|1 exit: N` and exits 0, or 125 when nothing ran.
#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: timed-run LIMIT_MS WORKSPACE COMMAND [ARG...]\n");
        return 125;
    }
    auto config = confine::load_config();
    if (!config) {
        std::fprintf(stderr, "timed-run: %s\n", config.error().message.c_str());
        return 125;
    }
    auto provider = confine::Provider::create(std::move(*config));
    if (!provider) {
        std::fprintf(stderr, "timed-run: %s\n", provider.error().message.c_str());
        return 125;
    }
    confine::PolicyRequest policy{confine::Mode::workspace_write, argv[2]};
    std::vector<std::string> command(argv + 3, argv + argc);
    confine::RunOptions options;
    options.timeout = std::chrono::milliseconds(std::atoll(argv[1]));
    auto outcome = confine::run(**provider, policy, command, options);
    if (!outcome) {
        std::fprintf(stderr, "timed-run: %s\n", outcome.error().message.c_str());
        return 125;
    }
    std::printf("outcome: %s timed_out: %d exit: %d\n", std::string(confine::to_string(outcome->kind)).c_str(), outcome->timed_out ? 1 : 0,
                outcome->exit_code.value_or(-1));
    return 0;
}
