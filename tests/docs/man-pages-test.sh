#!/usr/bin/env bash
# The manual pages render without a single warning from groff (tables through tbl), and
# each names itself as its file does.
set -euo pipefail
status=0
for page in "$@"; do
  warnings="$(groff -t -man -ww -z "$page" 2>&1 || true)"
  if [ -n "$warnings" ]; then
    echo "$page: groff warns:" >&2
    printf '%s\n' "$warnings" >&2
    status=1
  fi
  name="$(basename "$page")"
  section="${name##*.}"
  title="$(sed -n 's/^\.TH \([^ ]*\) \([0-9]\).*/\1 \2/p' "$page")"
  expected="$(printf '%s' "${name%.*}" | tr '[:lower:]' '[:upper:]') $section"
  if [ "$title" != "$expected" ]; then
    echo "$page: .TH says '$title', the file is '$expected'" >&2
    status=1
  fi
done
exit "$status"
