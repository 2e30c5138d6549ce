#!/usr/bin/env bash
# The Debian package on this machine: install it with apt-get, then `confinectl probe`
# and a confined run from the installed /usr tree; build the installed example runner
# against the package as its README says, run its tests (its unit test, then confinectl
# on it), install it where it installs by default and see the packaged confinectl find it
# there; remove both again. Needs root (CI).
#
#   package-test.sh DEB
set -euo pipefail
deb=$(realpath "$1")
fail() { echo "package-test: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root to install a package"

DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >/dev/null
trap 'DEBIAN_FRONTEND=noninteractive apt-get remove -y -q confine >/dev/null' EXIT

[ "$(command -v confinectl)" = /usr/bin/confinectl ] || fail "confinectl is not /usr/bin/confinectl"
confinectl --version
confinectl probe || fail "probe failed on the installed package"
# Outputs are read whole before they are matched: grep -q leaving early would end the
# writer by SIGPIPE, and pipefail would count that as a failure.
listing=$(confinectl plugins) || fail "confinectl plugins failed on the installed package"
grep -q "^bwrap  " <<<"$listing" || fail "the installed plugins are not found"
[ -f /usr/share/man/man1/confinectl.1.gz ] || fail "no manual page for confinectl"
[ -f /usr/share/man/man5/confine.toml.5.gz ] || fail "no manual page for confine.toml"
[ -f /usr/share/man/man7/confine-plugin.7.gz ] || fail "no manual page for writing a runner plugin"
# What a system package holds besides: lintian finds no error in it; the commented
# /etc/confine/confine.toml and the logrotate file as conffiles, read (and changing
# nothing); the copyright and changelog; /var/log/confine for the run records.
lintian --fail-on error "$deb" >/dev/null 2>&1 || { lintian "$deb" >&2 || true; fail "lintian finds errors in the package"; }
conffiles=$(dpkg-query -W -f='${Conffiles}' confine)
for f in /etc/confine/confine.toml /etc/logrotate.d/confine; do
  echo "$conffiles" | grep -q " $f " || fail "$f is not a conffile"
done
effective=$(confinectl config) || fail "confinectl config failed on the installed package"
grep -q "^# files: /etc/confine/confine.toml$" <<<"$effective" || fail "the packaged /etc/confine/confine.toml is not read: $(head -2 <<<"$effective")"
[ "$(confinectl config --json | python3 -c 'import json,sys; print(len([s for s in json.load(sys.stdin)["settings"] if s["origin"] != "default" and not s["key"].endswith("[]")]))')" = 0 ] \
  || fail "the packaged /etc/confine/confine.toml changes a default"
[ -f /usr/share/doc/confine/copyright ] || fail "no copyright file"
[ -f /usr/share/doc/confine/changelog.gz ] || fail "no changelog"
[ "$(stat -c '%a %U' /var/log/confine)" = "1733 root" ] || fail "/var/log/confine is not root's with mode 1733: $(stat -c '%a %U' /var/log/confine)"
[ -f /usr/share/bash-completion/completions/confinectl ] || fail "no bash completion"
for doc in design.md landlock-run.md security.md platforms.md hosts.md operators.md; do
  [ -f "/usr/share/doc/confine/$doc" ] || fail "no /usr/share/doc/confine/$doc"
done
[ -f /usr/share/confine/examples/runner-plugin/CMakeLists.txt ] || fail "the example runner plugin is not installed"
[ -f /usr/share/confine/examples/host-program/CMakeLists.txt ] || fail "the example host program is not installed"
[ -f "$(pkg-config --variable=prefix confine 2>/dev/null)/include/confine/sdk/plugin.hpp" ] || fail "pkg-config does not find the SDK"

work=$(mktemp -d /var/tmp/confine-package-XXXXXX)
trap 'rm -rf "$work"; DEBIAN_FRONTEND=noninteractive apt-get remove -y -q confine >/dev/null' EXIT
(cd "$work" && confinectl run -- sh -c 'echo kept > kept') || fail "a confined run failed"
[ "$(cat "$work/kept")" = kept ] || fail "the workspace write did not hold"
if (cd "$work" && confinectl run -- sh -c 'echo x > /var/tmp/confine-package-denied' 2>/dev/null); then fail "a write outside the workspace succeeded"; fi
[ ! -e /var/tmp/confine-package-denied ] || fail "a denied write left a file"
# The network through the run's proxy, from the installed tree (confine-proxy and
# confine-loopback beside the plugins): the proxy answers, and refuses an unlisted host.
refused=$(cd "$work" && confinectl run --allow-host example.org -- curl -s -o /dev/null -w '%{http_connect}' https://example.net/ || true)
[ "$refused" = 403 ] || fail "the run's proxy did not refuse an unlisted host (CONNECT answered '$refused')"
# The example runner, built as its README says, installed where the packaged confinectl
# looks (the package's plugin directory, pkg-config's plugindir) with nothing configured.
plugindir=$(pkg-config --variable=plugindir confine) || fail "pkg-config names no plugin directory"
plugindir=$(realpath -m "$plugindir")  # ${pcfiledir}/../.. as the listing shows it: resolved
cp -r /usr/share/confine/examples/runner-plugin "$work/offline"
trap 'rm -f "$plugindir/confine-runner-offline.so"; rm -rf "$work"; DEBIAN_FRONTEND=noninteractive apt-get remove -y -q confine >/dev/null' EXIT
cmake -S "$work/offline" -B "$work/offline/build" -DCMAKE_PREFIX_PATH=/usr >"$work/offline.log" 2>&1 \
  || { cat "$work/offline.log" >&2; fail "the installed example does not configure against the package"; }
cmake --build "$work/offline/build" >"$work/offline.log" 2>&1 || { cat "$work/offline.log" >&2; fail "the installed example does not build"; }
(cd "$work/offline/build" && ctest --output-on-failure >"$work/offline.log" 2>&1) \
  || { cat "$work/offline.log" >&2; fail "the installed example's tests fail against the package"; }
cmake --install "$work/offline/build" >/dev/null
listing=$(confinectl plugins 2>&1) || fail "confinectl plugins failed with the example installed: $listing"
grep -q "^offline  .*  $plugindir/confine-runner-offline.so" <<<"$listing" \
  || fail "the packaged confinectl does not find the example installed by default: $(confinectl plugins 2>&1)"
# A purge takes what confine made at run time, and the run records, with it.
rm -f "$plugindir/confine-runner-offline.so"
[ -d /var/lib/confine ] || fail "the package does not own /var/lib/confine"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q confine >/dev/null
for d in /var/lib/confine /var/log/confine /etc/confine; do
  [ ! -e "$d" ] || fail "$d is left after a purge"
done
trap 'rm -rf "$work"' EXIT
echo "package-test: ok"
