# The tier of each test case of a Catch test binary, as CTest properties (run after the
# binary is built, beside Catch's own discovery; tests/CMakeLists.txt). A case's tags
# say what it is:
#
#   escape   [escape]: the escape suite, attacks on every Linux way, as root and nobody
#   e2e      [e2e] or [linux-only], and not [escape]: real runs of a sandbox, or what
#            only Linux has
#   unit     the rest: no sandbox of the kernel's started, seconds in all
#
# and further labels and locks come with other tags:
#
#   network  [network-reach]: reaches beyond this machine (the npm registry, the
#            Debian archive)
#   slow     [slow]: seconds of its own even here (a gigabyte of output, probe --prove)
#   lock     [limits]: makes cgroups and counts those left, which no other case
#            may do at the same time (RESOURCE_LOCK run-cgroups)
#
# Each tier has a time limit, so that a case that hangs fails in minutes, with its name.
#
# Input: TEST_EXECUTABLE, TEST_EXECUTOR (an emulator, or empty), BASE_SPEC (a Catch test
# spec every case must also match, or empty), OUT_FILE (the CTest script written).
cmake_minimum_required(VERSION 3.25)  # a script's own policies: a quoted word is never a variable

set(tiers
  "escape|[escape]|300"
  "e2e|[e2e]~[escape],[linux-only]~[escape]|300"
  "unit|~[e2e]~[escape]~[linux-only]|120")
# What further tags give: a label added, or the lock taken.
set(further
  "label|network|[network-reach]"
  "label|slow|[slow]"
  "lock|run-cgroups|[limits]")

# The cases matching `spec` (filters joined by commas: any of them) and BASE_SPEC.
function(cases_matching spec out)
  string(REPLACE "," "${BASE_SPEC}~[.]," spec "${spec}")
  execute_process(COMMAND ${TEST_EXECUTOR} "${TEST_EXECUTABLE}" "${spec}${BASE_SPEC}~[.]" --list-test-names-only
                  OUTPUT_VARIABLE listed RESULT_VARIABLE result)
  if(result LESS 0)
    message(FATAL_ERROR "cannot list the test cases of ${TEST_EXECUTABLE} matching ${spec}: ${result}")
  endif()
  string(REGEX REPLACE "[\r]" "" listed "${listed}")
  string(REGEX MATCHALL "[^\n]+" names "${listed}")
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

set(script "")
set(all "")
foreach(tier IN LISTS tiers)
  string(REPLACE "|" ";" tier "${tier}")
  list(GET tier 0 label)
  list(GET tier 1 spec)
  list(GET tier 2 timeout)
  cases_matching("${spec}" names)
  foreach(name IN LISTS names)
    string(MD5 key "${name}")
    set(label_${key} "${label}")
    set(timeout_${key} "${timeout}")
    set(lock_${key} "")
    list(APPEND all "${key}")
    set(name_${key} "${name}")
  endforeach()
endforeach()
foreach(rule IN LISTS further)
  string(REPLACE "|" ";" rule "${rule}")
  list(GET rule 0 kind)
  list(GET rule 1 value)
  list(GET rule 2 spec)
  cases_matching("${spec}" names)
  foreach(name IN LISTS names)
    string(MD5 key "${name}")
    if(kind STREQUAL "label")
      set(label_${key} "${label_${key}};${value}")
    else()
      set(lock_${key} "${value}")
    endif()
  endforeach()
endforeach()
foreach(key IN LISTS all)
  set(properties "LABELS \"${label_${key}}\" TIMEOUT ${timeout_${key}}")
  if(lock_${key})
    string(APPEND properties " RESOURCE_LOCK ${lock_${key}}")
  endif()
  string(APPEND script "set_tests_properties([==[${name_${key}}]==] PROPERTIES ${properties})\n")
endforeach()
file(WRITE "${OUT_FILE}" "${script}")
