#!/bin/bash
# A skip ends only its own test case: the test binary ($1) runs a case that skips and one
# after it, in one process, and goes on to the second; its summary names the skip; a run
# of the skipping case alone exits 77 (CTest's skip); CONFINE_TEST_NO_SKIP=1 makes the
# skip a failure.
set -u
binary=$1
skipping="skips: a test case that skips"
after="skips: the test case after one that skipped"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

out=$(env -u CONFINE_TEST_NO_SKIP "$binary" --order decl "$skipping,$after" 2>&1); status=$?
echo "$out"
[ "$status" -eq 0 ] || fail "a run with one skip and one pass exited $status, not 0"
grep -q "^the test case after a skip ran$" <<<"$out" || fail "the case after the skip did not run"
grep -q "^1 of 2 test cases skipped" <<<"$out" || fail "the summary does not count the skip"
grep -q "^  $skipping: the skip test's own skip$" <<<"$out" || fail "the summary does not name the skipped case and its reason"
grep -q "the skip did not end the test case" <<<"$out" && fail "the skip did not end its test case"

out=$(env -u CONFINE_TEST_NO_SKIP "$binary" "$skipping" 2>&1); status=$?
[ "$status" -eq 77 ] || { echo "$out"; fail "a run whose only case skipped exited $status, not 77"; }

out=$(CONFINE_TEST_NO_SKIP=1 "$binary" --order decl "$skipping,$after" 2>&1); status=$?
if [ "$status" -eq 0 ] || [ "$status" -eq 77 ]; then echo "$out"; fail "under CONFINE_TEST_NO_SKIP=1 a skip exited $status, not a failure"; fi
grep -q "would skip, but CONFINE_TEST_NO_SKIP is set: the skip test's own skip" <<<"$out" || fail "under CONFINE_TEST_NO_SKIP=1 the failure does not say why"
grep -q "^the test case after a skip ran$" <<<"$out" || fail "under CONFINE_TEST_NO_SKIP=1 the case after the failed one did not run"

[ "$failures" -eq 0 ] && echo "PASS"
exit $((failures > 0))
