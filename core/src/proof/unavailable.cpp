// Windows: no proof is made (confine/prove.hpp). The canaries are sockets, processes and
// files of a POSIX host (core/src/proof/prove.cpp).
#include <confine/prove.hpp>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace confine {

Proof prove(const Provider& provider, std::vector<std::string> canary_command) {
    (void)canary_command;
    Proof proof;
    proof.runner = provider.selection().runner.value_or("");
    proof.error = "proving is not available on Windows";
    return proof;
}

int canary_main(int argc, char** argv) {
    (void)argc, (void)argv;
    std::fprintf(stderr, "canary: not available on Windows\n");
    return 2;
}

}  // namespace confine
