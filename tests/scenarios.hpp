// The confinement matrix: one table of end-to-end scenarios (a write inside the
// workspace holds its bytes, a write outside fails in the runner's dialect and is
// classified, /tmp, /dev, read-only mode, extra roots, links, exit statuses, signals…)
// that every runner and every path of a runner goes through, and per runner what it is
// expected to do where runners legitimately differ. Each scenario judges the world
// afterwards (the file is absent, the bytes are there), not the exit status alone.
//
// A new runner gets the whole matrix by stating its expectations:
//
//   const test::RunnerExpectations mine{
//       .name = "mine", .runner = "mine", .config = "[platform.linux]\nchain = [\"mine\"]\n",
//       .require = &require_mine, .denial = "Permission denied", .fatal_signature = "mine: ",
//       .basis = test::Basis::attestation, .tmp = test::Tmp::the_hosts, .dev = test::Dev::the_hosts,
//       .move = test::MoveFromOutside::leaves_nothing, .killed = test::Killed::by_the_same_signal,
//       .reports = test::Reports::when_asked};
//   TEST_CASE("mine confines writes to the policy's roots, as root", "[mine][e2e]") {
//       test::run_matrix(mine, test::User::caller);
//   }
#pragma once

#include "support.hpp"

#include <array>
#include <string>
#include <vector>

namespace test {

// Whose /tmp a workspace-write command writes: one of its own, empty at the start and
// gone afterwards (bubblewrap's tmpfs), or the host's (Landlock, Seatbelt grant it).
enum class Tmp { the_commands_own, the_hosts };

// Whose /dev the command sees: the runner's own (bubblewrap's; a write to /dev/shm may
// succeed there but never reaches the host), or the host's (/dev/shm is refused).
enum class Dev { the_runners_own, the_hosts };

// What a file moved from outside into the workspace leaves there: nothing, or perhaps a
// copy (across bubblewrap's bind mounts the rename fails with EXDEV and mv falls back to
// copying, which reading allows; the original stays where and as it was either way).
enum class MoveFromOutside { leaves_nothing, may_leave_a_copy };

// How confinectl tells the command's own failure from the runner's (the report's
// "basis"): the runner attests that the command started (a status descriptor, an exec),
// or the runner's failure rule alone reads the output — then a line the command forges
// in the runner's dialect is taken for the runner's failure.
enum class Basis { attestation, rule };

// What confinectl's caller sees of a command killed by a signal: the exit status
// 128 + the signal (bubblewrap turns it into that), or confinectl ending by that same
// signal.
enum class Killed { exit_128_plus_signal, by_the_same_signal };

// When a run writes a report (--report): when a scenario asks; on every run (the report
// is what keeps confinectl in front: Landlock's forked child); never (asking for one
// would take another path: Landlock applied in place).
enum class Reports { when_asked, always, never };

// What one runner, or one path of a runner, is expected to do where runners differ.
struct RunnerExpectations {
    std::string name;               // labels every check: "landlock through the launcher"
    std::string runner;             // the report's "runner"
    std::string config;             // configuration text (empty: confinectl's defaults)
    void (*require)() = nullptr;    // skips (test::skip_test) where this machine lacks the mechanism
    std::string denial;             // a denied write in the command's stderr: "Read-only file system"
    std::string fatal_signature;    // the runner's own failure lines start with it: "bwrap: "
    // Under Basis::rule, the exit statuses at which such a line is taken for the
    // runner's failure (the rule's evidence_exit_codes; empty: any).
    std::vector<int> fatal_statuses{};
    Basis basis = Basis::attestation;
    Tmp tmp = Tmp::the_hosts;
    Dev dev = Dev::the_hosts;
    MoveFromOutside move = MoveFromOutside::leaves_nothing;
    Killed killed = Killed::by_the_same_signal;
    Reports reports = Reports::when_asked;
    std::string enforcement = "full";  // the report's "enforcement": full only when every dimension asked is
    // The report's "dimensions" (the network confined, as by default): write, network, processes.
    std::array<std::string, 3> levels{"full", "full", "full"};
};

// Who runs confinectl: whoever runs the tests, or the unprivileged `nobody` (through
// setpriv; the test's tree then belongs to nobody, so that only the sandbox says no).
enum class User { caller, nobody };

// Runs every scenario of the matrix under `runner` as `user`, each in a fresh tree.
// Skips exactly as the runner's `require` does, and for `nobody` as
// test::require_user_switch does.
void run_matrix(const RunnerExpectations& runner, User user);

}  // namespace test
