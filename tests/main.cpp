#define CATCH_CONFIG_RUNNER
#include "skips.hpp"

#include <catch2/catch.hpp>

#if !defined(_WIN32) && defined(TEST_HOME_DIR)
#include <sys/stat.h>

#include <cstdlib>
#endif

#include <cstdio>
#include <string>
#include <vector>

namespace {

// The test cases run so far, the running one's skip (empty: none), and the cases that
// skipped with no failure.
std::size_t cases_run = 0;
std::string running_skip;
struct Skipped {
    std::string test_case, reason;
};
std::vector<Skipped> skipped;

// Counts the test cases and notes those that skipped. A case that skipped and also failed
// (before its skip, or in another section) is a failure, as Catch counts it.
class SkipListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseStarting(Catch::TestCaseInfo const& info) override {
        ++cases_run;
        running_skip.clear();
        TestEventListenerBase::testCaseStarting(info);
    }
    void testCaseEnded(Catch::TestCaseStats const& stats) override {
        if (!running_skip.empty() && stats.totals.assertions.failed == 0) skipped.push_back({stats.testInfo.name, running_skip});
        running_skip.clear();
        TestEventListenerBase::testCaseEnded(stats);
    }
};

}  // namespace

CATCH_REGISTER_LISTENER(SkipListener)

namespace test {

void end_as_skipped(const std::string& reason) {
    WARN("SKIPPED: " << reason);
    if (running_skip.empty()) running_skip = reason;
    // What a failed REQUIRE throws once its failure is recorded: Catch ends the test case
    // (or its section) there, and counts nothing against it.
    throw Catch::TestFailureException();
}

}  // namespace test

int main(int argc, char* argv[]) {
#if !defined(_WIN32) && defined(TEST_HOME_DIR)
    // A home of the tests' own: what the default deny_read names there (~/.ssh, ~/.aws…)
    // exists only where a test puts it, whatever the machine's own home holds, and no
    // agent socket of the person running the tests is in play.
    ::mkdir(TEST_HOME_DIR, 0755);
    ::chmod(TEST_HOME_DIR, 0755);
    ::setenv("HOME", TEST_HOME_DIR, 1);
    ::unsetenv("SSH_AUTH_SOCK");
#endif
    const int failed = Catch::Session().run(argc, argv);
    if (!skipped.empty()) {
        std::printf("%zu of %zu test cases skipped (Catch counts them as passed):\n", skipped.size(), cases_run);
        for (const auto& s : skipped) std::printf("  %s: %s\n", s.test_case.c_str(), s.reason.c_str());
        std::fflush(stdout);
    }
    // Every selected case skipped, none failed: the run is a skip (CTest's 77).
    return failed == 0 && cases_run > 0 && skipped.size() == cases_run ? 77 : failed;
}
