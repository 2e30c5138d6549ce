#!/usr/bin/env python3
"""Checks that a binary was linked with its cmake/hot-text list (scripts/hot-text): it has
the section .text.confine_hot, every function the list names that the binary has lies in
it, and so does each function given as a must (a name as nm -C prints it, up to its
parameter list), which a confined run always executes.

    hot-text-check.py BINARY LIST.ld [MUST...]
"""
import re
import subprocess
import sys


def fail(message):
    print(f"hot-text-check: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 3:
        fail("usage: hot-text-check.py BINARY LIST.ld [MUST...]")
    binary, listing, musts = sys.argv[1], sys.argv[2], sys.argv[3:]
    section = None
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.search(r"\]\s+\.text\.confine_hot\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            section = (int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16))
    if not section:
        fail(f"{binary} has no .text.confine_hot section: it was linked without {listing}")
    named = set(re.findall(r"\*\(\.text\.(\S+) ", open(listing).read()))
    if not named:
        fail(f"{listing} names no function")
    inside = lambda address: section[0] <= address < section[1]
    mangled = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines()
    # A name may be several local functions' (one per translation unit): one of them lying
    # in the section is the one the list was made of.
    where = {}
    for line in mangled:
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW" and parts[2] in named:
            where[parts[2]] = where.get(parts[2], False) or inside(int(parts[0], 16))
    present = len(where)
    outside = sorted(name for name, placed in where.items() if not placed)
    for name in outside:
        print(f"hot-text-check: {name} is named by {listing} but lies outside .text.confine_hot", file=sys.stderr)
    if present == 0:
        fail(f"none of the functions {listing} names is in {binary}: the list is for other code")
    demangled = subprocess.run(["nm", "-C", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines()
    for must in musts:
        found = [l for l in demangled if len(l.split(" ", 2)) == 3 and l.split(" ", 2)[1] in "tTwW" and
                 (l.split(" ", 2)[2] == must or l.split(" ", 2)[2].startswith(must + "("))]
        if not found:
            fail(f"{binary} has no function {must}")
        if not any(inside(int(l.split(" ", 1)[0], 16)) for l in found):
            fail(f"{must} lies outside .text.confine_hot: the list no longer names it (run scripts/hot-text)")
    if outside:
        fail(f"{len(outside)} of the {present} functions {listing} names lie outside .text.confine_hot")
    print(f"hot-text-check: {binary}: the {present} functions {listing} names lie in .text.confine_hot, and {len(musts)} run-path functions")


if __name__ == "__main__":
    main()
