#!/usr/bin/env python3
"""A host program in Python that runs a command confined through `confinectl wrap --json`
and tells, with evidence, whether a failure came from the command or from the sandbox.
Standard library only; Linux (it opens directories with O_PATH and makes a memfd).

    confine_host.py [--confinectl PATH] [--config FILE] [--workspace DIR]
                    [--network none|allow] [--env NAME[=VALUE]]... [--wrap-json FILE]
                    -- command [args...]

It asks confinectl for the wrap (or reads one saved by `confinectl wrap --json`, with
--wrap-json), fills in the placeholders the wrap lists, runs the argv itself with the
environment the wrap gives (its variables and no others: confine's [policy.env] filter
has taken out what looks like a secret), and judges
the run as confinectl would: by the runner's attestation where it has one it can read (a
status descriptor), else by the runner's failure rule. The command's stdout and stderr
pass through; the verdict is one JSON line on stderr, last:

    {"outcome": "task_failed", "exit_code": 3, "signal": null,
     "basis": "attestation", "evidence": null, "runner": "bwrap"}

Exit status: the command's (128 + N if a signal ended it); 125 when the sandbox failed
or no wrap could be had; 126/127 when the command cannot run or does not exist.
"""

import argparse
import base64
import json
import os
import signal
import subprocess
import sys
import threading


def wrap_of(args):
    """The wrap result, or exits as confinectl did (its error object says why)."""
    if args.wrap_json:
        with open(args.wrap_json, encoding="utf-8") as f:
            return json.load(f)
    cmd = [args.confinectl, "wrap", "--json"]
    if args.config:
        cmd += ["--config", args.config]
    if args.workspace:
        cmd += ["--workspace", args.workspace]
    if args.network:
        cmd += ["--network", args.network]
    for e in args.env:
        cmd += ["--env", e]
    cmd += ["--"] + args.command
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        result = json.loads(done.stdout)
    except ValueError:
        verdict({"outcome": "sandbox_unavailable", "evidence": "confinectl wrap --json printed no JSON"})
        sys.exit(125)
    if "error" in result:
        verdict({"outcome": "not_run", "error": result["error"]})
        sys.exit(done.returncode or 125)
    return result


def open_directory(path):
    """A descriptor of directory `path`, opened without following a link anywhere in
    it: a link found now was swapped in since confinectl resolved the path."""
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY)
    try:
        for part in [p for p in path.split("/") if p]:
            if part in (".", ".."):
                raise OSError(f"{path}: not a resolved path")
            nxt = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def fill_placeholders(wrap):
    """The argv to run, the descriptors it inherits, and the status pipe's read end."""
    argv = list(wrap["argv"])
    inherited, status_read = [], None
    for p in wrap.get("placeholders", []):
        kind, index = p["kind"], p["argument"]
        if kind == "status-fd":
            status_read, write_end = os.pipe()
            argv[index] = str(write_end)
            inherited.append(write_end)
        elif kind in ("dir-fd", "dir-path"):
            fd = open_directory(p["path"])
            argv[index] = str(fd) if kind == "dir-fd" else f"/proc/self/fd/{fd}"
            inherited.append(fd)
        elif kind in ("network-filter-fd", "loopback-filter-fd"):
            program = p.get("program_base64")
            if program is None:
                raise OSError("the wrap needs the network filter, and this platform has none")
            fd = os.memfd_create("confine-network-filter", 0)
            os.write(fd, base64.b64decode(program))
            os.lseek(fd, 0, os.SEEK_SET)
            argv[index] = str(fd)
            inherited.append(fd)
        else:
            raise OSError(f"unknown placeholder kind {kind!r}: this host is too old for the wrap")
    return argv, inherited, status_read


def environment_of(wrap):
    """The environment to give the runner: exactly the wrap's variables. A wrap without
    them (a confinectl older than the environment filter) leaves this host's own."""
    env = wrap.get("environment")
    if env is None:
        return None
    return {name: value for name, value in env["variables"].items()}


def copy_stderr(stream, lines):
    """Passes the runner's stderr on as it comes, and keeps its lines for the rule."""
    pending = b""
    for chunk in iter(lambda: stream.read1(65536), b""):
        sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()
        pending += chunk
        *complete, pending = pending.split(b"\n")
        lines.extend(complete)
    if pending:
        lines.append(pending)


def fatal_line(rule, lines):
    """The first stderr line the failure rule holds as the runner's, or None."""
    info = {s.encode() for s in rule["informational_lines"]}
    signatures = [s.lower().encode() for s in rule["fatal_signatures"]]
    for line in lines:
        if line.rstrip(b"\r") in info:
            continue
        if any(sig in line.lower() for sig in signatures):
            return line.decode("utf-8", "replace")
    return None


def classify(wrap, returncode, status_text, lines):
    exit_code = returncode if returncode >= 0 else None
    sig = -returncode if returncode < 0 else None
    attestation = wrap["attestation"]
    out = {"runner": wrap["runner"], "exit_code": exit_code, "signal": sig, "evidence": None}
    if attestation["kind"] == "status_fd":
        # Out of band: only the runner can write there, never the command.
        out["basis"] = "attestation"
        marker = attestation["status_marker"].encode()
        if any(marker in line for line in status_text.split(b"\n")):
            out["outcome"] = "completed" if exit_code == 0 else "task_failed"
        else:
            out["outcome"] = "sandbox_unavailable"
            out["evidence"] = fatal_line(wrap["failure_rule"], lines) or "the runner ended before it started the command"
        return out
    # No attestation this host can read (an exec attestation needs ptrace): the rule.
    out["basis"] = "rule"
    rule = wrap["failure_rule"]
    at = rule["evidence_exit_codes"]  # the statuses at which a fatal line is evidence; empty: any
    evidence = None
    if exit_code not in (None, 0) and (not at or exit_code in at):
        evidence = fatal_line(rule, lines)
    out["outcome"] = "sandbox_unavailable" if evidence else ("completed" if exit_code == 0 else "task_failed")
    out["evidence"] = evidence
    return out


def verdict(result):
    sys.stderr.write(json.dumps(result, sort_keys=True) + "\n")
    sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--confinectl", default="confinectl")
    parser.add_argument("--config")
    parser.add_argument("--workspace")
    parser.add_argument("--network", choices=["none", "allow"])
    parser.add_argument("--env", action="append", default=[], metavar="NAME[=VALUE]",
                        help="pass NAME through confine's environment filter, or set it")
    parser.add_argument("--wrap-json", help="run this saved wrap result instead of asking confinectl")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command and not args.wrap_json:
        parser.error("no command given")

    wrap = wrap_of(args)
    try:
        argv, inherited, status_read = fill_placeholders(wrap)
    except OSError as e:
        verdict({"outcome": "sandbox_unavailable", "evidence": str(e), "runner": wrap.get("runner")})
        return 125
    for fd in inherited:
        os.set_inheritable(fd, True)
    # Signals sent to this host go on to the runner, which passes them to the command.
    proc = subprocess.Popen(argv, pass_fds=inherited, stderr=subprocess.PIPE, env=environment_of(wrap))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, _f: proc.send_signal(n))
    for fd in inherited:
        os.close(fd)  # the runner has them; the status pipe's end closes with it
    lines = []
    copier = threading.Thread(target=copy_stderr, args=(proc.stderr, lines))
    copier.start()
    status_text = b""
    if status_read is not None:
        with os.fdopen(status_read, "rb") as f:
            status_text = f.read()
    returncode = proc.wait()
    copier.join()
    result = classify(wrap, returncode, status_text, lines)
    verdict(result)
    if result["outcome"] == "sandbox_unavailable":
        return 125
    return result["exit_code"] if result["exit_code"] is not None else 128 + result["signal"]


if __name__ == "__main__":
    sys.exit(main())
