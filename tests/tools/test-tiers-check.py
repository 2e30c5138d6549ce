#!/usr/bin/env python3
"""Every test CTest knows in a build has one tier label (unit, e2e or escape) and a time
limit: a hung test then fails in minutes with its name, and each pass of scripts/test
can pick its tiers.

    test-tiers-check.py CTEST BUILD_DIR
"""
import json
import subprocess
import sys

TIERS = {"unit", "e2e", "escape"}


def main():
    ctest, build = sys.argv[1], sys.argv[2]
    shown = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True)
    tests = json.loads(shown.stdout)["tests"]
    problems = []
    for test in tests:
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        labels = props.get("LABELS", [])
        tiers = TIERS.intersection(labels)
        if len(tiers) != 1:
            problems.append(f"{test['name']}: tier labels {sorted(tiers) or 'none'} (labels: {labels})")
        if not props.get("TIMEOUT"):
            problems.append(f"{test['name']}: no TIMEOUT")
    for p in problems:
        print(p)
    print(f"{len(tests)} tests, {len(problems)} problems")
    return 1 if problems or not tests else 0


if __name__ == "__main__":
    sys.exit(main())
