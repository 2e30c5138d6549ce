// Escape attempts against the run's limits (issue 29, point 3): a command run as root
// that tries to leave the run's cgroup — writing its own process ID into the cgroup.procs
// of the cgroups above it, where nothing would hold it — and then floods; judged by how
// many processes it could start, never by the exit status. On every Linux way that runs
// a command with limits (a run with limits is never executed in place).
#if defined(__linux__) && !defined(CONFINE_PORTABLE_POSIX)
#include "run_cgroup.hpp"
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

using test::name_of;
using test::Way;
namespace fs = std::filesystem;

namespace {

void leave_the_cgroup(Way way) {
    test::Sandbox box(way);
    if (::geteuid() != 0) test::skip_test("only root makes the run a cgroup here");
    const auto places = confine::detail::find_cgroup_places("/sys/fs/cgroup", test::read_file("/proc/self/cgroup"));
    if (places.v1_pids.empty() && places.v2.empty()) test::skip_test("no cgroup for a run here");
    test::Tree tree(false);
    std::string leave;
    for (const fs::path& parent : {places.v2, places.v1_memory, places.v1_pids})
        if (!parent.empty()) leave += "echo $$ > " + (parent / "cgroup.procs").string() + " 2>/dev/null; ";
    const auto r = box.confine.run({"run", "--config", box.config.string(), "--workspace", tree.ws.string(), "--limit", "processes=32", "--limit",
                                    "memory=256M", "--report", (tree.root / "report.json").string(), "--", "/bin/sh", "-c",
                                    "cd " + tree.ws.string() + " && " + leave +
                                        "i=0; while [ $i -lt 200 ]; do sleep 2718.5 & echo $! >> started; i=$((i+1)); done"});
    INFO(name_of(way) << "\n" << r.err << test::read_file(tree.root / "report.json"));
    const std::size_t started = test::line_count(test::read_file(tree.ws / "started"));
    CHECK(started >= 1);
    CHECK(started <= 32);
}

}  // namespace

#define LEAVE_CASES(WAY, TAG)                                                                                                          \
    TEST_CASE("a command run as root cannot leave the run's cgroup to flood past processes=32, through " TAG,                          \
              "[escape][e2e][limits][linux-only]") {                                                                                  \
        leave_the_cgroup(WAY);                                                                                                         \
    }

LEAVE_CASES(Way::bwrap, "the bwrap plugin")
LEAVE_CASES(Way::runner_command, "an asserted runner_command")
LEAVE_CASES(Way::landlock_launcher, "landlock-run")
LEAVE_CASES(Way::landlock_forked, "landlock in a forked child")

#endif
