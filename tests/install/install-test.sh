#!/usr/bin/env bash
# An installed-package check: first the SDK alone (sdk-only-test.sh: the `sdk`
# component installed by itself, and the example runner built against it); then install
# confine into a throwaway prefix and build the example runner from that installation's
# own copy (share/confine/examples/runner-plugin) against that installation only: it
# installs into that installation's plugin directory unless told otherwise, and exports
# its two symbols and nothing else. Move the prefix elsewhere, and from the moved tree list plugins, probe,
# run confined, build the example again and run its own tests (confine::confinectl),
# and see broken plugin files refused, each with its reason. The README's host program
# (share/confine/examples/host-program) is built against the moved tree, with its CMake
# package and with confine.pc, and run from elsewhere: it finds the installation's
# plugins and runs a command confined.
#
#   install-test.sh BUILD_DIR SOURCE_DIR [EXPORTED_SYMBOLS]
# EXPORTED_SYMBOLS lists what an ELF file exports (tests/tools/exported_symbols.cpp);
# without it, where plugins are not ELF, the exports are not checked.
# Exit 77 (skipped) when no runner can confine on this machine, unless
# CONFINE_TEST_NO_SKIP is set.
set -euo pipefail
build=$1
src=$2
exported_symbols=${3:-}

fail() { echo "install-test: $*" >&2; exit 1; }

bash "$(dirname "$0")/sdk-only-test.sh" "$build" "$src" || fail "the SDK does not stand alone"

work=$(mktemp -d /var/tmp/confine-install-XXXXXX)   # not under /tmp, which confined runs may write
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
umask 022

cmake --install "$build" --prefix "$work/prefix" >/dev/null
# Every document of docs/ is installed: the manual pages in their sections, the rest in
# share/doc/confine, where the manual pages and the installed headers point.
for doc in "$src"/docs/*; do
  name=$(basename "$doc")
  case "$name" in
    *.bash-completion) installed="$work/prefix/share/bash-completion/completions/confinectl" ;;
    *.[1-8]) installed="$work/prefix/share/man/man${name##*.}/$name" ;;
    *) installed="$work/prefix/share/doc/confine/$name" ;;
  esac
  cmp -s "$doc" "$installed" || fail "docs/$name is not installed as $installed"
done
# The examples are installed whole, as they are in the source tree.
for example in runner-plugin host-program; do
  diff -r "$src/examples/$example" "$work/prefix/share/confine/examples/$example" >&2 \
    || fail "share/confine/examples/$example differs from the source tree's examples/$example"
done

# The example runner, from the installed tree, against the installed package alone;
# installed by default into confine's plugin directory, where confine looks, whatever
# its own install prefix.
cmake -S "$work/prefix/share/confine/examples/runner-plugin" -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_INSTALL_PREFIX="$work/author" >"$work/example.log" 2>&1 \
  || { cat "$work/example.log" >&2; fail "the installed example does not configure against the installed package"; }
cmake --build "$work/example" >"$work/example.log" 2>&1 || { cat "$work/example.log" >&2; fail "the installed example does not build"; }
grep -qF -- "-DCONFINE_PLUGIN_VERSION=\\\"1.0.0\\\"" "$work/example/build.ninja" || fail "the example's plugin is not given its project's version"
cmake --install "$work/example" >/dev/null
[ -f "$work/prefix/lib/confine/plugins/confine-runner-offline.so" ] || fail "the example was not installed into confine's plugin directory"
[ ! -e "$work/author" ] || fail "the example was installed under its own prefix, where confine does not look: $(find "$work/author" 2>&1)"
# The installed confinectl finds it there, with nothing configured.
# (The listing is read whole first: grep -q leaving early would end it by SIGPIPE.)
listing=$("$work/prefix/bin/confinectl" plugins 2>&1) || fail "the installed confinectl plugins failed: $listing"
grep -q "^offline  .*  $work/prefix/lib/confine/plugins/confine-runner-offline.so" <<<"$listing" \
  || fail "the installed confinectl does not list the example installed by default: $listing"
if [ -n "$exported_symbols" ]; then
  exports=$("$exported_symbols" "$work/example/confine-runner-offline.so" | sort | tr '\n' ' ') || fail "cannot read the example's exports"
  [ "$exports" = "confine_plugin confine_plugin_abi " ] || fail "the example plugin exports more or less than its two symbols: $exports"
fi

# confine_add_runner_plugin's other choices, and its refusals, each in a project of its own.
plugin_project() {  # DIR, then the project() arguments, then the call's arguments, separated by --
  local dir=$1; shift
  local project_args=() call_args=()
  while [ "$1" != -- ]; do project_args+=("$1"); shift; done; shift
  call_args=("$@")
  mkdir -p "$dir"
  cp "$src/examples/runner-plugin/offline_runner.cpp" "$dir/"
  { echo "cmake_minimum_required(VERSION 3.25)"
    echo "project(${project_args[*]} LANGUAGES CXX)"
    echo "find_package(confine REQUIRED)"
    echo "confine_add_runner_plugin(offline SOURCES offline_runner.cpp ${call_args[*]})"; } >"$dir/CMakeLists.txt"
  cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
        -DCMAKE_INSTALL_PREFIX="$work/elsewhere-prefix" >"$dir/configure.log" 2>&1
}
said() {  # FILE TEXT: CMake's message, its lines wrapped, says TEXT
  tr '\n' ' ' <"$1" | tr -s ' ' | grep -F "$2" >/dev/null
}
plugin_project "$work/into" into VERSION 2.0 -- INSTALL_INTO_CONFINE || { cat "$work/into/configure.log" >&2; fail "INSTALL_INTO_CONFINE does not configure"; }
grep -qF "$work/prefix/lib/confine/plugins" "$work/into/build/cmake_install.cmake" \
  || fail "INSTALL_INTO_CONFINE does not install into confine's plugin directory: $(grep -F confine-runner "$work/into/build/cmake_install.cmake")"
plugin_project "$work/dest" dest VERSION 2.0 -- INSTALL_DESTINATION lib/elsewhere || { cat "$work/dest/configure.log" >&2; fail "INSTALL_DESTINATION does not configure"; }
grep -qF '${CMAKE_INSTALL_PREFIX}/lib/elsewhere' "$work/dest/build/cmake_install.cmake" \
  || fail "INSTALL_DESTINATION does not install under the project's prefix: $(grep -F confine-runner "$work/dest/build/cmake_install.cmake")"
# confine_add_plugin_test's refusals: a PLUGIN that is no target, no SOURCES.
plugin_test_project() {  # DIR, then the call's arguments
  local dir=$1; shift
  mkdir -p "$dir"
  cp "$src/examples/runner-plugin/offline_runner.cpp" "$dir/"
  { echo "cmake_minimum_required(VERSION 3.25)"
    echo "project(plugin-test VERSION 1.0 LANGUAGES CXX)"
    echo "find_package(confine REQUIRED)"
    echo "confine_add_runner_plugin(offline SOURCES offline_runner.cpp NO_INSTALL)"
    echo "confine_add_plugin_test(unit $*)"; } >"$dir/CMakeLists.txt"
  cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >"$dir/configure.log" 2>&1
}
plugin_test_project "$work/test-nonesuch" SOURCES offline_runner.cpp PLUGIN nonesuch && fail "a plugin test naming no plugin target configured"
said "$work/test-nonesuch/configure.log" "confine_add_plugin_test(unit): PLUGIN nonesuch is not a target (declare it with confine_add_runner_plugin first)" \
  || fail "no clear error for a plugin test naming no plugin target: $(cat "$work/test-nonesuch/configure.log")"
plugin_test_project "$work/test-unsourced" PLUGIN confine-runner-offline && fail "a plugin test without sources configured"
said "$work/test-unsourced/configure.log" "confine_add_plugin_test(unit): SOURCES is required" \
  || fail "no clear error for a plugin test without sources: $(cat "$work/test-unsourced/configure.log")"
plugin_project "$work/unversioned" unversioned -- && fail "a project without a version configured"
said "$work/unversioned/configure.log" \
  "confine_add_runner_plugin(offline): the plugin has no version: give the project one (project(unversioned VERSION 1.0.0)) or pass VERSION" || fail "no clear error for a plugin without a version: $(cat "$work/unversioned/configure.log")"
plugin_project "$work/given" given -- VERSION 3.1.4 || { cat "$work/given/configure.log" >&2; fail "VERSION does not stand in for the project's"; }
grep -qF -- "-DCONFINE_PLUGIN_VERSION=\\\"3.1.4\\\"" "$work/given/build/build.ninja" || fail "the plugin is not given its VERSION"
plugin_project "$work/both" both VERSION 1.0 -- NO_INSTALL INSTALL_INTO_CONFINE && fail "NO_INSTALL with INSTALL_INTO_CONFINE configured"
said "$work/both/configure.log" \
  "confine_add_runner_plugin(offline): INSTALL_DESTINATION, INSTALL_INTO_CONFINE and NO_INSTALL exclude one another" || fail "no clear error for conflicting install choices: $(cat "$work/both/configure.log")"

# Nothing may depend on where the tree was installed.
mv "$work/prefix" "$work/moved"
confinectl=$work/moved/bin/confinectl
plugdir=$work/moved/lib/confine/plugins

plugins=$("$confinectl" plugins) || fail "confinectl plugins failed: $plugins"
for runner in bwrap landlock seatbelt appcontainer offline; do
  grep -q "^$runner  .*  $plugdir/confine-runner-$runner.so" <<<"$plugins" || fail "confinectl plugins does not list $runner from the moved tree: $plugins"
done
# Started through a link from elsewhere, or by a relative path, it still finds its own plugins.
mkdir "$work/links"
ln -s "$confinectl" "$work/links/confinectl"
plugins=$("$work/links/confinectl" plugins) || fail "confinectl plugins through a link failed: $plugins"
grep -q "^landlock  .*  $plugdir/confine-runner-landlock.so" <<<"$plugins" || fail "started through a link, confinectl did not find its plugins: $plugins"
plugins=$(cd "$work/moved" && bin/confinectl plugins) || fail "confinectl plugins by a relative path failed: $plugins"
grep -q "^landlock  .*  $plugdir/confine-runner-landlock.so" <<<"$plugins" || fail "started by a relative path, confinectl did not find its plugins: $plugins"

# The README's library example is examples/host-program, verbatim.
awk '/^The library does the same for host programs/ { found = 1; next }
     found && /^```cpp$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside' "$src/README.md" >"$work/readme-example.cpp"
[ -s "$work/readme-example.cpp" ] || fail "no library example found in the README"
diff -u "$src/examples/host-program/confined_run.cpp" "$work/readme-example.cpp" >&2 \
  || fail "the README's library example differs from examples/host-program/confined_run.cpp"

# Built against the moved tree: with its CMake package, and with confine.pc alone (make
# builds in place, so from a copy). Each goes where nothing of confine lies beside it.
# Both use the compiler confine was built with; a sanitizer build's libconfine needs the
# sanitizers' runtime in the program that links it.
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
host_cxx=$(cache_value CMAKE_CXX_COMPILER)
host_flags=
[ "$(cache_value CONFINE_SANITIZE)" != ON ] || host_flags=-fsanitize=address,undefined
mkdir -p "$work/elsewhere/bin"
examples=$work/moved/share/confine/examples
cmake -S "$examples/host-program" -B "$work/host-cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/moved" -DCMAKE_CXX_COMPILER="$host_cxx" \
      -DCMAKE_CXX_FLAGS="$host_flags" -DCMAKE_EXE_LINKER_FLAGS="$host_flags" >"$work/host-cmake.log" 2>&1 \
  || { cat "$work/host-cmake.log" >&2; fail "the host program does not configure against the moved tree"; }
cmake --build "$work/host-cmake" >"$work/host-cmake.log" 2>&1 \
  || { cat "$work/host-cmake.log" >&2; fail "the host program does not build against the moved tree's CMake package"; }
cp "$work/host-cmake/confined-run" "$work/elsewhere/bin/confined-run-cmake"
mkdir "$work/host-pc"
cp "$examples/host-program/confined_run.cpp" "$examples/host-program/Makefile" "$work/host-pc/"
PKG_CONFIG_LIBDIR=$work/moved/lib/pkgconfig PKG_CONFIG_PATH= \
  make -C "$work/host-pc" CXX="$host_cxx" CXXFLAGS="$host_flags" LDFLAGS="$host_flags" >"$work/host-pc.log" 2>&1 \
  || { cat "$work/host-pc.log" >&2; fail "the host program does not build against the moved tree's confine.pc"; }
grep -qF -- "-I$work/moved/lib/pkgconfig/../../include" "$work/host-pc.log" || fail "make did not compile with the moved tree's confine.pc: $(cat "$work/host-pc.log")"
cp "$work/host-pc/confined-run" "$work/elsewhere/bin/confined-run-pc"
hosts=("$work/elsewhere/bin/confined-run-cmake" "$work/elsewhere/bin/confined-run-pc")

# Where each looks for plugins: the moved tree's directory, as a chain naming a runner
# no directory has shows. That run fails closed, saying so.
printf '[platform.linux]\nchain = ["nonesuch"]\n' >"$work/nonesuch.toml"
mkdir -p "$work/ws" "$work/outside"
for host in "${hosts[@]}"; do
  status=0
  out=$(cd / && CONFINE_CONFIG=$work/nonesuch.toml "$host" "$work/ws" true 2>&1) || status=$?
  [ "$status" = 125 ] || fail "${host##*/} ran without the runner its chain names (status $status): $out"
  grep -qF "confined-run: sandbox unavailable: " <<<"$out" || fail "${host##*/} did not say the sandbox was unavailable: $out"
  grep -qF "confine-runner-nonesuch.so is in none of $plugdir" <<<"$out" \
    || fail "${host##*/} does not look for plugins in the moved tree's $plugdir: $out"
done

if ! probe=$("$confinectl" probe 2>&1); then
  if [ -n "${CONFINE_TEST_NO_SKIP:-}" ] && [ "${CONFINE_TEST_NO_SKIP}" != 0 ]; then fail "no runner confines here: $probe"; fi
  echo "SKIPPED: no runner confines here: $probe"
  exit 77
fi
grep -q "^selected: " <<<"$probe" || fail "probe selected nothing: $probe"

(cd "$work/ws" && "$confinectl" run -- sh -c 'echo kept > kept') || fail "a confined write in the workspace failed"
[ "$(cat "$work/ws/kept")" = kept ] || fail "the workspace write did not hold"
if (cd "$work/ws" && "$confinectl" run -- sh -c "echo x > '$work/outside/denied'" 2>/dev/null); then fail "a write outside the workspace succeeded"; fi
[ ! -e "$work/outside/denied" ] || fail "a denied write left a file"

# The host programs, run from elsewhere, confine as confinectl does.
for host in "${hosts[@]}"; do
  name=${host##*/}
  status=0
  out=$(cd / && "$host" "$work/ws" sh -c "echo in > '$work/ws/$name'" 2>&1) || status=$?
  [ "$status" = 0 ] || fail "$name: a confined write in the workspace failed (status $status): $out"
  [ "$(cat "$work/ws/$name")" = in ] || fail "$name: the workspace write did not hold"
  status=0
  out=$(cd / && "$host" "$work/ws" sh -c "echo x > '$work/outside/$name'" 2>&1) || status=$?
  [ "$status" != 0 ] && [ "$status" != 125 ] || fail "$name: a write outside the workspace was not a failed task (status $status): $out"
  [ ! -e "$work/outside/$name" ] || fail "$name: a write outside the workspace succeeded"
  grep -qF "confined-run: the sandbox may have refused: " <<<"$out" || fail "$name: no denial hint for the refused write: $out"
done

# The example runner, selected by name: confined, and without a network.
printf '[platform.linux]\nchain = ["offline"]\n' > "$work/offline.toml"
interfaces=$(cd "$work/ws" && "$confinectl" run --config "$work/offline.toml" -- sh -c 'echo y > by-offline; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "') \
  || fail "a run on the example runner failed"
[ "$interfaces" = lo ] || fail "the example runner left network interfaces: $interfaces"
[ -f "$work/ws/by-offline" ] || fail "the example runner did not write the workspace"

# The example runner again, from the moved tree's copy, against the moved package: its
# own tests run the moved tree's confinectl (confine::confinectl) on the plugin as built.
cmake -S "$examples/runner-plugin" -B "$work/example-moved" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/moved" >"$work/example.log" 2>&1 \
  || { cat "$work/example.log" >&2; fail "the example does not configure against the moved tree"; }
cmake --build "$work/example-moved" >"$work/example.log" 2>&1 || { cat "$work/example.log" >&2; fail "the example does not build against the moved tree"; }
tests=$(cd "$work/example-moved" && ctest --show-only=json-v1) || fail "the example's tests cannot be listed"
for t in offline-unit offline-probe offline-run; do
  grep -qF "\"$t\"" <<<"$tests" || fail "the example has no test $t: $tests"
done
grep -qF "\"$confinectl\"" <<<"$tests" || fail "the example's tests do not run the moved tree's confinectl (confine::confinectl): $tests"
# Its tests use the plugin as built (confinectl --plugin), even with the installed one
# in the moved tree's plugin directory. Installed again afterwards, under its prefix.
[ -f "$plugdir/confine-runner-offline.so" ] || fail "the installed example is not in the moved tree's plugin directory"
(cd "$work/example-moved" && ctest --output-on-failure >"$work/example-test.log" 2>&1) \
  || { cat "$work/example-test.log" >&2; fail "the example's own tests failed"; }
rm "$plugdir/confine-runner-offline.so"
cmake --install "$work/example-moved" >/dev/null
[ -f "$plugdir/confine-runner-offline.so" ] || fail "built against the moved tree, the example is not installed into its plugin directory"

# Broken plugin files are refused, each saying exactly why.
chmod 0644 "$plugdir/confine-runner-offline.so"
out=$("$confinectl" plugins 2>&1) && fail "a plugin without its execute bit was accepted"
grep -qF "offline  REFUSED  PLUGIN_NOT_EXECUTABLE: $plugdir/confine-runner-offline.so: refusing plugin: it is not executable (mode 0644)" <<<"$out" \
  || fail "unexpected refusal: $out"
chmod 0775 "$plugdir/confine-runner-offline.so"
out=$("$confinectl" plugins 2>&1) && fail "a group-writable plugin was accepted"
grep -qF "offline  REFUSED  PLUGIN_UNTRUSTED: $plugdir/confine-runner-offline.so: refusing plugin: $plugdir/confine-runner-offline.so is writable by its group (mode 0775)" <<<"$out" \
  || fail "unexpected refusal: $out"
echo "install-test: ok"
