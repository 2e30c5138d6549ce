#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#if !defined(_WIN32) && defined(TEST_HOME_DIR)
#include <sys/stat.h>

#include <cstdlib>
#endif

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
    return Catch::Session().run(argc, argv);
}
