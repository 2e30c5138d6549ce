// Skipped test cases: a skip ends the test case it happens in, and the binary goes on to
// the next one (tests/main.cpp keeps the count).
#pragma once

#include <string>

namespace test {

// Ends the running test case as skipped for `reason`: no failure, and it is named in the
// list of skipped cases printed after Catch's summary. A binary whose every selected
// test case skipped exits 77, which CTest (SKIP_RETURN_CODE, one test case per CTest
// test) reports as a skip; otherwise it exits as Catch says.
[[noreturn]] void end_as_skipped(const std::string& reason);

}  // namespace test
