// The skip test's two test cases (tests/skips/skip-goes-on.sh runs them together in one
// process: the first skips, the second must still run; hidden ([.]), they have no CTest
// test of their own), and the probes of what a machine has, which a crash must not fail.
#include "support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

TEST_CASE("skips: a test case that skips", "[.][skips]") {
    test::skip_test("the skip test's own skip");
    FAIL("the skip did not end the test case");
}

TEST_CASE("skips: the test case after one that skipped", "[.][skips]") {
    const int printed = std::printf("the test case after a skip ran\n");
    CHECK(printed > 0);
}

#if defined(__linux__)
#include <signal.h>

TEST_CASE("a probe of what the machine has runs in a child, and a crash there means not here, not a failed test", "[skips][unit][linux-only]") {
    CHECK(test::probe_in_child([] { return 7; }) == 7);
    CHECK_FALSE(test::probe_in_child([] { return ::raise(SIGSEGV); }).has_value());
    CHECK_FALSE(test::probe_in_child([] { return ::raise(SIGKILL); }).has_value());
}

TEST_CASE("the terminal helper's i386 entry check survives a machine where int 0x80 faults, and says unavailable", "[skips][unit][linux-only]") {
#if !defined(__x86_64__)
    test::skip_on_other_platforms("the i386 entry is x86-64's");
#endif
    // CONFINE_TEST_I386_FAULTS=1: the helper's probe dies as on such a machine.
    auto faulting = test::run({"/usr/bin/env", "CONFINE_TEST_I386_FAULTS=1", TIOCSTI_HELPER, "--i386", "x"});
    CHECK(faulting.out == "unavailable\n");
    CHECK(faulting.exit_code == 3);
    // As this machine is: either way, a line and an exit status, never a crash.
    auto here = test::run({"/usr/bin/env", "CONFINE_TEST_I386_FAULTS=0", TIOCSTI_HELPER, "--i386", "x"});
    CHECK(here.signal == 0);
    CHECK(here.exit_code >= 0);
    CHECK_FALSE(here.out.empty());
}
#endif
