#!/usr/bin/env bash
# The portable POSIX build calls only what macOS has: this fails, naming the call and
# where it is, when confine's own code — libconfine's objects and confinectl's — refers
# to a function only Linux (or only glibc) provides, or when confinectl imports one that
# the C++ runtime linked into it does not explain. confinectl links libstdc++
# statically and the C library dynamically, so its dynamic imports are the C library
# calls of confine's code and of that runtime (which a macOS build replaces with its
# own); objects are read before linking, so that a call no test reaches is still seen.
#
#   linux-imports.sh CXX CONFINECTL ARCHIVE_OR_OBJECT...
set -euo pipefail
cxx=$1 confinectl=$2
shift 2

# Linux system calls and glibc extensions that macOS lacks (it has getentropy, not
# getrandom; waitpid, not waitid with P_PIDFD; poll, not epoll or signalfd).
forbidden=(
  prctl pipe2 ptrace syscall pidfd_open pidfd_send_signal pidfd_getfd openat2 seccomp
  signalfd signalfd4 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2
  dup3 accept4 getrandom memfd_create close_range waitid getauxval execveat clone clone3
  unshare setns inotify_init inotify_init1 eventfd timerfd_create landlock_create_ruleset
  landlock_add_rule landlock_restrict_self
)

# The forbidden names among stdin's symbols, one a line.
forbidden_in() { grep -Fx -f <(printf '%s\n' "${forbidden[@]}") | sort -u || true; }

# Undefined symbols of an archive or object, as "member<TAB>symbol" lines ("-": an object).
undefined() {
  nm --undefined-only "$1" 2>/dev/null | awk '
    /:$/ { member = substr($0, 1, length($0) - 1); next }
    $1 == "U" || $1 == "w" { print (member == "" ? "-" : member) "\t" $2 }'
}

found=0
ours=""
for file in "$@"; do
  while IFS=$'\t' read -r member name; do
    [ -n "$name" ] || continue
    if [ -n "$(forbidden_in <<<"$name")" ]; then
      echo "linux-imports: $file$([ "$member" = - ] || echo "($member)") calls $name" >&2
      found=1
    fi
    ours+="$name"$'\n'
  done < <(undefined "$file")
done

# confinectl's dynamic imports, without symbol versions (prctl@GLIBC_2.2.5). One that
# confine's code does not refer to must come from the statically linked C++ runtime.
runtime=()
for lib in libstdc++.a libgcc.a libgcc_eh.a; do
  path=$("$cxx" -print-file-name="$lib")
  [ -f "$path" ] && runtime+=("$path")
done
imports=$(nm -D --undefined-only "$confinectl" | awk '{ sub(/@.*/, "", $NF); print $NF }')
notes=()
while read -r name; do
  [ -n "$name" ] || continue
  grep -Fxq "$name" <<<"$ours" && continue  # already reported above
  from=""
  for lib in "${runtime[@]}"; do
    members=$(undefined "$lib" | awk -F'\t' -v n="$name" '$2 == n { print $1 }' | sort -u | tr '\n' ' ')
    [ -n "$members" ] && from+="$(basename "$lib")(${members% }) "
  done
  if [ -n "$from" ]; then
    notes+=("$name, from the C++ runtime linked into it: ${from% }")
  else
    echo "linux-imports: $confinectl imports $name, which neither confine's code nor its C++ runtime explains" >&2
    found=1
  fi
done < <(forbidden_in <<<"$imports")

for n in "${notes[@]}"; do echo "linux-imports: note: $confinectl imports $n; confine's code does not call it"; done
if [ "$found" = 0 ]; then
  echo "linux-imports: none of ${#forbidden[@]} Linux-only calls in confine's code ($*)," \
       "nor among the $(wc -l <<<"$imports") imports of $confinectl but the C++ runtime's noted above, if any"
fi
exit "$found"
