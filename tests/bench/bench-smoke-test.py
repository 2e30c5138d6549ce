#!/usr/bin/env python3
"""The benchmark scripts stay runnable: each Python script under bench/ compiles and
prints its help; each C program under bench/ (the floors and launchers bench/startup
builds at its start) compiles and links without a warning, as bench/startup builds it;
bench/startup prints its tables, plain and Markdown, from a report of the shape its
--json writes (nothing is measured).

    bench-smoke-test.py SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def fail(message):
    failures.append(message)
    print(f"bench-smoke-test: {message}", file=sys.stderr)


def python_scripts(bench):
    for name in sorted(os.listdir(bench)):
        path = os.path.join(bench, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                first = f.readline()
            if first.startswith("#!") and "python" in first:
                yield path


def check_scripts(bench):
    scripts = list(python_scripts(bench))
    if "startup" not in [os.path.basename(s) for s in scripts]:
        fail("bench/startup is not among the Python scripts of bench/")
    for script in scripts:
        name = os.path.relpath(script, os.path.dirname(bench))
        try:
            compile(open(script, encoding="utf-8").read(), script, "exec")
        except SyntaxError as e:
            fail(f"{name} does not compile: {e}")
            continue
        r = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0 or "usage:" not in r.stdout:
            fail(f"{name} --help exited {r.returncode} without a usage: {r.stderr.strip()[-200:]}")
        elif "--runs" not in r.stdout:
            fail(f"{name} --help names no --runs")
    print(f"bench-smoke-test: {len(scripts)} scripts compile and print their help")


def row(key, label, median, ratio, baseline, build=None, **extra):
    return {"key": key, "label": label, "build": build, "median_ms": median, "ratio": ratio, "baseline": baseline, "runs": 3, **extra}


def report():
    """Two users, two builds: every kind of line the tables have."""
    minimal, direct = "minimal Landlock launcher", "bwrap direct, same arguments"
    results = []
    for user, scale in (("root", 1.0), ("nobody", 1.1)):
        rows = [row("bare", "/bin/true", 0.61 * scale, 0.5, minimal), row("minimal", minimal, 1.2 * scale, None, "(baseline)"),
                row("landlock-supervised", "Landlock, supervised (default)", 3.3 * scale, 2.75, minimal, "A"),
                row("landlock-supervised", "Landlock, supervised (default)", 1.5 * scale, 1.25, minimal, "B", b_to_a=0.45),
                row("bwrap-direct", direct, 6.0 * scale, None, "(baseline)"),
                row("bwrap", "bwrap (network none)", 9.0 * scale, 1.5, direct, "A"),
                row("bwrap", "bwrap (network none)", 7.2 * scale, 1.2, direct, "B", b_to_a=0.8),
                row("peer:codex", "peer: codex", 51.0 * scale, 42.5, minimal)]
        concurrency = [{"key": "minimal", "label": minimal, "build": None, "median_s": 0.44, "baseline": "(baseline)", "ratio": None},
                       {"key": "landlock-supervised", "label": "Landlock, supervised (default)", "build": "A", "median_s": 0.7,
                        "baseline": minimal, "ratio": 1.59},
                       {"key": "landlock-supervised", "label": "Landlock, supervised (default)", "build": "B", "median_s": 0.5,
                        "baseline": minimal, "ratio": 1.14}]
        results.append({"user": user, "uid": 0 if user == "root" else 65534, "rows": rows, "concurrency": concurrency,
                        "unavailable_peers": {"peer: srt": "exited 1: ripgrep (rg) not found"} if user == "nobody" else {},
                        "syscalls": [{"key": "bare", "label": "/bin/true", "build": None, "exit": 0, "total": 29,
                                      "top": [["mmap", 8], ["mprotect", 3]]}]})
    return {"tree": "0123456789ab", "builds": {"A": "/a/bin/confinectl", "B": "/b/bin/confinectl"}, "date": "2026-12-02 06:00 UTC",
            "kernel": "6.1", "cpus": 2, "results": results,
            "params": {"runs": 3, "batches": 1, "concurrent_runs": 400, "concurrent_jobs": 8, "perf_runs": 3, "peers": {}}}


def check_tables(bench):
    startup = os.path.join(bench, "startup")
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "report.json")
        with open(saved, "w") as f:
            json.dump(report(), f)
        for markdown in (False, True):
            r = subprocess.run([sys.executable, startup, "--from-json", saved] + (["--markdown"] if markdown else []),
                               capture_output=True, text=True, timeout=60)
            what = "--markdown" if markdown else "plain"
            if r.returncode != 0:
                fail(f"bench/startup --from-json ({what}) exited {r.returncode}: {r.stderr.strip()}")
                continue
            out = r.stdout
            x = "×" if markdown else "x"
            lines = out.splitlines()
            supervised = [l for l in lines if l.lstrip("| ").startswith("Landlock, supervised (default)")]
            # the ratio table's line and the concurrency table's, and the B/A one
            if len(supervised) != 3:
                fail(f"{what}: {len(supervised)} lines for the supervised Landlock path, not 3 (ratios, concurrency, B/A)")
            else:
                for expected in (f"2.75{x}", f"1.25{x}", f"1.59{x}", f"1.14{x}", f"0.45{x}"):
                    if not any(expected in l for l in supervised):
                        fail(f"{what}: {expected} (a ratio of the report) is in no line of the supervised Landlock path")
            for expected in ("root A:", "nobody B:", "peer: codex", "bwrap direct, same arguments", "(baseline)",
                             "peer: srt could not run: exited 1: ripgrep (rg) not found", "system calls per launch, as root",
                             "tree 0123456789ab"):
                if expected not in out:
                    fail(f"{what}: {expected!r} is not in the tables")
            if markdown:
                table = [l for l in lines if l.startswith("|")]
                header = next((l for l in table if l.startswith("| path |")), "")
                if header.count("|") != 2 + 2 * 4 + 1:
                    fail(f"--markdown: the ratio table's header has {header.count('|') - 1} cells, not 10: {header}")
                rows = [l for l in table if " ms |" in l]
                if any(l.count("|") != header.count("|") for l in rows):
                    fail("--markdown: a row of the ratio table has not as many cells as its header")
        r = subprocess.run([sys.executable, startup, "--from-json", os.path.join(tmp, "missing.json")], capture_output=True, text=True)
        if r.returncode == 0 or len(r.stderr.strip().splitlines()) != 1 or not r.stderr.startswith("bench/startup: "):
            fail(f"--from-json of a missing file: exit {r.returncode}, stderr {r.stderr!r}, not one line and a failure")
    print("bench-smoke-test: bench/startup prints its tables from a saved report")


def check_c_programs(bench):
    import shutil
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        fail("no C compiler (cc) to build bench/'s C programs with")
        return
    programs = [n for n in sorted(os.listdir(bench)) if n.endswith(".c")]
    for name in ("samework-landlock.c", "samework-bwrap.c", "minimal-landlock-launcher.c"):
        if name not in programs:
            fail(f"bench/{name} is missing")
    with tempfile.TemporaryDirectory() as tmp:
        for name in programs:
            r = subprocess.run([cc, "-O2", "-Wall", "-Werror", "-o", os.path.join(tmp, name[:-2]), os.path.join(bench, name)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"bench/{name} does not build: {r.stderr.strip()[:400]}")
    print(f"bench-smoke-test: {len(programs)} C programs of bench/ build")


def main():
    source = sys.argv[1]
    bench = os.path.join(source, "bench")
    check_scripts(bench)
    if sys.platform.startswith("linux"):
        check_c_programs(bench)
    check_tables(bench)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
