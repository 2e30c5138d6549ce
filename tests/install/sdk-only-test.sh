#!/usr/bin/env bash
# The SDK stands alone: install only the `sdk` component (the headers of
# include/confine/sdk/), then build against that prefix alone every SDK header by itself,
# the usage example at the top of confine/sdk/plugin.hpp, and the out-of-tree example
# runner (examples/runner-plugin), whose unit test then runs. Each confine header any of them reads must come from
# that prefix: an SDK header that includes a host header (confine/provider.hpp ...) or
# anything of core/src fails here, even where a full confine is installed system-wide.
#
#   sdk-only-test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
cxx=${CXX:-c++}

fail() { echo "sdk-only-test: $*" >&2; exit 1; }

work=$(mktemp -d /var/tmp/confine-sdk-XXXXXX)
trap 'rm -rf "$work"' EXIT
umask 022
sdk=$work/sdk

cmake --install "$build" --component sdk --prefix "$sdk" >/dev/null
[ -f "$sdk/include/confine/sdk/plugin.hpp" ] || fail "the sdk component did not install confine/sdk/plugin.hpp"
others=$(cd "$sdk" && find . -type f ! -path './include/confine/sdk/*' | sort)
[ -z "$others" ] || fail "the sdk component installs more than the SDK headers: $others"
# What a plugin author needs, and nothing else: the ABI, the plugin base and its settings,
# the vocabulary, placeholders, trust for runner programs, the bubblewrap profile, the
# host's check of a wrap result, the testing support, and the marshalling plugin.hpp
# includes (detail/). confine's own shared code (internal/confine/internal/) is never
# installed.
installed=$(cd "$sdk/include/confine/sdk" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')
expected="abi.h bwrap_devices.hpp bwrap_profile.hpp detail/entry.hpp placeholders.hpp plugin.hpp program_trust.hpp testing.hpp trust_posix.hpp trust_windows.hpp vocabulary.hpp wrap_check.hpp "
[ "$installed" = "$expected" ] || fail "the installed SDK is not the plugin author's headers: installed $installed; expected $expected"

# Every confine header named in a dependency list ($1) lies in the SDK prefix.
only_sdk_headers() {
  local strays
  strays=$(tr ' \\' '\n\n' <"$1" | grep -E '/include/confine/' | grep -v "^$sdk/include/confine/sdk/" | sort -u || true)
  [ -z "$strays" ] || fail "$2 reads confine headers from outside the SDK: $strays"
}

# Each header by itself. Those named for another OS are compiled on that OS only.
for header in $(cd "$sdk/include/confine/sdk" && find . -type f | sed 's|^\./||' | sort); do
  name=$header
  case "$name" in *_windows.hpp) continue ;; esac
  case "$name" in
    *.h) lang=c; compiler=${CC:-cc}; std=-std=c11 ;;
    *) lang=c++; compiler=$cxx; std=-std=c++23 ;;
  esac
  echo "#include <confine/sdk/$name>" >"$work/one.in"
  "$compiler" "$std" -Wall -Wextra -Werror -fsyntax-only -I"$sdk/include" -MD -MF "$work/one.d" -x "$lang" "$work/one.in" \
    || fail "confine/sdk/$name does not compile against the SDK alone"
  only_sdk_headers "$work/one.d" "confine/sdk/$name"
done

# The usage example at the top of plugin.hpp, as written there.
sed -n '/^\/\/   #include <confine\/sdk\/plugin.hpp>/,/^\/\/   CONFINE_RUNNER_PLUGIN/p' "$sdk/include/confine/sdk/plugin.hpp" \
  | sed 's|^//   ||' >"$work/usage.cpp"
[ -s "$work/usage.cpp" ] || fail "no usage example found at the top of confine/sdk/plugin.hpp"
"$cxx" -std=c++23 -Wall -Wextra -Werror -fsyntax-only -I"$sdk/include" -MD -MF "$work/usage.d" "$work/usage.cpp" \
  || fail "the usage example of confine/sdk/plugin.hpp does not compile"
only_sdk_headers "$work/usage.d" "the usage example of confine/sdk/plugin.hpp"

# The example runner, through its own CMake project. The package files belong to the
# full install, not to the sdk component: here a package of the SDK alone stands in for
# them, whose confine::sdk is this prefix's headers and nothing else.
pkg=$sdk/lib/cmake/confine
mkdir -p "$pkg"
cp "$build/confineConfigVersion.cmake" "$pkg/"
cat >"$pkg/confineConfig.cmake" <<EOF
get_filename_component(_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
add_library(confine::sdk INTERFACE IMPORTED)
set_target_properties(confine::sdk PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "\${_prefix}/include" INTERFACE_COMPILE_FEATURES cxx_std_23)
set(CONFINE_VERSION "\${confine_VERSION}")
set(CONFINE_PLUGIN_DIR "\${_prefix}/lib/confine/plugins")
include("$src/cmake/ConfinePlugin.cmake")
EOF
cmake -S "$src/examples/runner-plugin" -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$sdk" \
      -Dconfine_DIR="$pkg" >/dev/null || fail "the example does not configure against the SDK alone"
cmake --build "$work/example" >"$work/example.log" 2>&1 || { cat "$work/example.log" >&2; fail "the example does not build against the SDK alone"; }
[ -f "$work/example/confine-runner-offline.so" ] || fail "the example built no confine-runner-offline.so"
ninja -C "$work/example" -t deps >"$work/example.d"
grep -q "$sdk/include/confine/sdk/plugin.hpp" "$work/example.d" || fail "the example did not read the SDK from $sdk: $(cat "$work/example.d")"
only_sdk_headers "$work/example.d" "the example runner"
# Its unit test (confine_add_plugin_test) is built and run by the SDK alone: the test
# there is, and passes; the tests that need confinectl are not declared.
tests=$(cd "$work/example" && ctest --show-only=json-v1) || fail "the example's tests cannot be listed"
grep -qF '"offline-unit"' <<<"$tests" || fail "the example declares no unit test against the SDK alone: $tests"
! grep -qF '"offline-probe"' <<<"$tests" || fail "the example declares confinectl's tests without a confinectl"
(cd "$work/example" && ctest --output-on-failure >"$work/example-test.log" 2>&1) \
  || { cat "$work/example-test.log" >&2; fail "the example's unit test fails against the SDK alone"; }
echo "sdk-only-test: ok"
