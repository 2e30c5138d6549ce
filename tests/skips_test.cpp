// Two test cases for the skip test (tests/skips/skip-goes-on.sh), which runs them together
// in one process: the first skips, the second must still run. Hidden ([.]): they have no
// CTest test of their own and stay out of a plain run of the binary.
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
