#!/usr/bin/env bash
# The portable POSIX build calls only what macOS has: this fails, naming the call and
# where it is, when confinectl or an object of libconfine imports a function only Linux
# (or only glibc) provides. confinectl links libstdc++ statically and the C library
# dynamically, so its dynamic imports are its C library calls; libconfine's objects are
# read before linking, so that a call no test reaches is still seen.
#
#   linux-imports.sh CONFINECTL LIBCONFINE_ARCHIVE
set -euo pipefail
confinectl=$1 archive=$2

# Linux system calls and glibc extensions that macOS lacks (it has getentropy, not
# getrandom; waitpid, not waitid with P_PIDFD; poll, not epoll or signalfd).
forbidden=(
  prctl pipe2 ptrace syscall pidfd_open pidfd_send_signal pidfd_getfd openat2 seccomp
  signalfd signalfd4 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2
  dup3 accept4 getrandom memfd_create close_range waitid getauxval execveat clone clone3
  unshare setns inotify_init inotify_init1 eventfd timerfd_create landlock_create_ruleset
  landlock_add_rule landlock_restrict_self
)
pattern=$(printf '%s\n' "${forbidden[@]}")

found=0
report() {  # file, symbols (one a line)
  local where=$1 names=$2 hit
  hit=$(grep -Fx -f <(printf '%s\n' "$pattern") <<<"$names" | sort -u || true)
  if [ -n "$hit" ]; then
    echo "linux-imports: $where imports $(tr '\n' ' ' <<<"$hit")" >&2
    found=1
  fi
}

# Dynamic imports of the executable, without their symbol versions (prctl@GLIBC_2.2.5).
report "$confinectl" "$(nm -D --undefined-only "$confinectl" | awk '{ sub(/@.*/, "", $NF); print $NF }')"

# Each object in the archive, separately, so that the message names it.
current= names=
while IFS= read -r line; do
  case "$line" in
    *.o:) [ -n "$current" ] && report "$archive($current)" "$names"; current=${line%:} names= ;;
    *' U '*|*' w '*) names+="${line##* }"$'\n' ;;
  esac
done < <(nm --undefined-only "$archive")
[ -n "$current" ] && report "$archive($current)" "$names"

if [ "$found" = 0 ]; then
  count=$(nm -D --undefined-only "$confinectl" | wc -l)
  echo "linux-imports: none of ${#forbidden[@]} Linux-only calls in $confinectl ($count imports) or $archive"
fi
exit "$found"
