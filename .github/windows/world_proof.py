"""World proofs of the AppContainer runner on a real Windows host.

Each case does something in the world through `confinectl run` and then looks at the
world, not at confine's report: a marker file there or not, a connection accepted or
not, keystrokes queued in a console or not, a folder's security descriptor (SDDL, from
Get-Acl) as it was or not. Run by .github/workflows/windows.yml as an administrator and
as a standard user; it has not run where it was written (no Windows host was at hand).

  python world_proof.py --confinectl EXE --timed-run EXE --root DIR [--out RESULT.json]

ROOT gets a workspace (ROOT\\ws) and a sibling of it (ROOT\\sibling). Exit 0 when every
case held; each case prints one line, PASS or FAIL, and what it saw.
"""
import argparse
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from ctypes import wintypes
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROBE = HERE / "probe.py"
CONSOLE_HOST = HERE / "console_host.py"
PY = sys.executable

results = []


def check(case, held, saw):
    results.append({"case": case, "held": bool(held), "saw": saw})
    print(f"{'PASS' if held else 'FAIL'} {case}: {saw}", flush=True)


def sddl(path):
    env = dict(os.environ, CONFINE_PROOF_PATH=str(path))
    out = subprocess.run(["powershell.exe", "-NoProfile", "-NonInteractive", "-Command", "(Get-Acl -LiteralPath $env:CONFINE_PROOF_PATH).Sddl"],
                         capture_output=True, text=True, env=env, timeout=120)
    return out.stdout.strip() if out.returncode == 0 else f"<Get-Acl failed: {out.stderr.strip()}>"


class World:
    def __init__(self, args):
        self.confinectl = args.confinectl
        self.timed_run = args.timed_run
        root = Path(args.root)
        self.ws = root / "ws"
        self.sibling = root / "sibling"
        for d in (self.ws, self.sibling):
            d.mkdir(parents=True, exist_ok=True)
        self.profile = Path(os.environ["USERPROFILE"])
        self.temp = Path(tempfile.gettempdir())
        self.watched = {"workspace": self.ws, "%TEMP%": self.temp}
        self.baseline = {name: sddl(p) for name, p in self.watched.items()}
        for name, value in self.baseline.items():
            print(f"baseline {name}: {value}", flush=True)

    def confined(self, *command, env=()):
        argv = [self.confinectl, "run", "--workspace", str(self.ws)]
        for e in env:
            argv += ["--env", e]
        return argv + ["--"] + [str(c) for c in command]

    def run(self, *command, env=(), timeout=300):
        return subprocess.run(self.confined(*command, env=env), cwd=self.ws, capture_output=True, text=True, timeout=timeout)

    def descriptors_unchanged(self, case, after=""):
        for name, path in self.watched.items():
            now = sddl(path)
            check(f"{case}: the {name} security descriptor is unchanged{after}", now == self.baseline[name],
                  "unchanged" if now == self.baseline[name] else f"was {self.baseline[name]} now {now}")

    def recovered(self, case):
        """After a run killed outright, the next start takes back what it left
        (the grant journal): the descriptors must be as before once one more run ends."""
        for name, path in self.watched.items():
            print(f"  {case}: right after, {name}: {sddl(path)}", flush=True)
        done = self.run(PY, PROBE, "noop")
        check(f"{case}: the next run starts", done.returncode == 0, f"status {done.returncode} {done.stderr.strip()}")
        self.descriptors_unchanged(case, " after the next run")


def wait_for_launcher(seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        out = subprocess.run(["tasklist", "/FI", "IMAGENAME eq appcontainer-run.exe", "/FO", "CSV", "/NH"], capture_output=True, text=True)
        if "appcontainer-run.exe" in out.stdout:
            return True
        time.sleep(0.5)
    return False


def case_writes(w):
    inside = w.ws / f"inside-{uuid.uuid4().hex}.txt"
    done = w.run(PY, PROBE, "write", inside)
    check("a write inside the workspace lands", done.returncode == 0 and inside.exists(), done.stdout.strip() or done.stderr.strip())
    w.descriptors_unchanged("write inside")
    for where, marker in (("the user's profile folder", w.profile / f"confine-proof-{uuid.uuid4().hex}.txt"),
                          ("a sibling of the workspace", w.sibling / f"marker-{uuid.uuid4().hex}.txt")):
        done = w.run(PY, PROBE, "write", marker)
        check(f"a write to {where} leaves no file", not marker.exists(), done.stdout.strip() or done.stderr.strip())
        if marker.exists():
            marker.unlink()
        w.descriptors_unchanged(f"write to {where}")


def case_network(w):
    for host, port in (("1.1.1.1", 443), ("example.com", 80)):
        done = w.run(PY, PROBE, "connect", host, port)
        check(f"no connection to {host}:{port}", done.returncode == 1 and "stopped" in done.stdout, done.stdout.strip() or done.stderr.strip())
    # A listener of the caller's on loopback: reachable from outside (the control), not from inside.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    accepted = []

    def accept():
        server.settimeout(1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except OSError:
                pass

    stop = threading.Event()
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    control = subprocess.run([PY, PROBE, "connect", "127.0.0.1", str(port)], capture_output=True, text=True, timeout=60)
    before = len(accepted)
    done = w.run(PY, PROBE, "connect", "127.0.0.1", port)
    time.sleep(1)
    stop.set()
    t.join()
    server.close()
    check("the loopback listener is reachable from outside (control)", control.returncode == 0, control.stdout.strip())
    check("the loopback listener is not reachable from inside", done.returncode == 1 and len(accepted) == before,
          f"{done.stdout.strip()} accepted {len(accepted) - before}")
    w.descriptors_unchanged("network")


def case_named_pipe(w):
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.CreateNamedPipeW.restype = wintypes.HANDLE
    kernel32.CreateNamedPipeW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, wintypes.DWORD, wintypes.DWORD, wintypes.DWORD,
                                          wintypes.DWORD, ctypes.c_void_p]
    kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
    name = f"confine-proof-{uuid.uuid4().hex}"
    PIPE_ACCESS_DUPLEX, PIPE_UNLIMITED_INSTANCES = 3, 255
    # Two instances with the default security descriptor: one for the control, one to be reached.
    handles = [kernel32.CreateNamedPipeW("\\\\.\\pipe\\" + name, PIPE_ACCESS_DUPLEX, 0, PIPE_UNLIMITED_INSTANCES, 4096, 4096, 0, None)
               for _ in range(2)]
    control = subprocess.run([PY, PROBE, "pipe", name], capture_output=True, text=True, timeout=60)
    done = w.run(PY, PROBE, "pipe", name)
    for h in handles:
        kernel32.CloseHandle(h)
    check("a named pipe of the caller's opens from outside (control)", control.returncode == 0, control.stdout.strip())
    check("a named pipe of the caller's does not open from inside", done.returncode == 1, done.stdout.strip() or done.stderr.strip())


def console_host(w, *args, timeout=300):
    result = Path(tempfile.gettempdir()) / f"confine-proof-{uuid.uuid4().hex}.json"
    subprocess.run([PY, CONSOLE_HOST, str(result), *map(str, args)], creationflags=subprocess.CREATE_NEW_CONSOLE, timeout=timeout, cwd=w.ws)
    data = json.loads(result.read_text())
    result.unlink()
    return data


def case_console_injection(w):
    # The control: the same probe unconfined reaches the console, so the check can see it.
    control = console_host(w, "inject", "console", PY, PROBE, "inject", "PID")
    check("keystrokes queued by an unconfined probe are seen (control)", "CONFINE-INJECTED" in (control.get("queued") or ""), str(control))
    # NUL as standard input: nothing reads the caller's console; CONIN$ and attaching to
    # the caller's console by process id must not reach its buffer.
    confined = console_host(w, "inject", "null", *w.confined(PY, PROBE, "inject", "PID"))
    check("a confined command queues nothing into the caller's console input",
          confined.get("error") is None and "CONFINE-INJECTED" not in (confined.get("queued") or ""), str(confined))
    # The console as standard input: what the command gets for it refuses WriteConsoleInput.
    piped = console_host(w, "inject", "console", *w.confined(PY, PROBE, "inject", "PID"))
    output = piped.get("output") or ""
    check("a confined command's standard input is no console it can write into",
          "inject standard input: refused" in output and "CONFINE-INJECTED" not in (piped.get("queued") or ""), str(piped))
    check("a confined command cannot attach to the caller's console", "cannot attach" in output.split("inject console of", 1)[-1], output)
    w.descriptors_unchanged("console injection")


def case_ordinary_work(w):
    done = w.run("cmd.exe", "/c", "echo confine > NUL")
    check("echo > NUL works", done.returncode == 0, f"status {done.returncode} {done.stderr.strip()}")
    done = w.run(PY, "-c", "import tempfile; f = tempfile.NamedTemporaryFile(delete=False); f.write(b'x'); f.close(); print(f.name)")
    check("Python tempfile works", done.returncode == 0, f"status {done.returncode} {done.stdout.strip()} {done.stderr.strip()}")
    repo = f"repo-{uuid.uuid4().hex[:8]}"
    done = w.run("cmd.exe", "/c", f"git init -q {repo} && cd {repo} && git -c user.name=proof -c user.email=proof@example.com commit -q --allow-empty -m init"
                 " && git log --oneline", env=(f"HOME={w.ws}",))
    check("git init && git commit work", done.returncode == 0 and "init" in done.stdout, f"status {done.returncode} {done.stdout.strip()} {done.stderr.strip()}")
    w.descriptors_unchanged("ordinary work")


def case_launcher_killed(w):
    run = subprocess.Popen(w.confined(PY, PROBE, "sleep", 120), cwd=w.ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = wait_for_launcher()
    subprocess.run(["taskkill", "/F", "/IM", "appcontainer-run.exe"], capture_output=True)
    out, err = run.communicate(timeout=120)
    check("the launcher killed: confinectl ends", seen and run.returncode is not None, f"status {run.returncode} {err.strip()}")
    w.recovered("launcher killed")


def case_confinectl_killed(w):
    run = subprocess.Popen(w.confined(PY, PROBE, "sleep", 120), cwd=w.ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = wait_for_launcher()
    run.kill()  # TerminateProcess: its kill-on-close job ends the launcher with it
    run.wait(timeout=60)
    time.sleep(2)
    gone = not wait_for_launcher(2)
    check("confinectl killed: the launcher goes with it", seen and gone, f"launcher seen {seen}, gone {gone}")
    w.recovered("confinectl killed")


def case_time_limit(w):
    done = subprocess.run([w.timed_run, "3000", str(w.ws), PY, str(PROBE), "sleep", "120"], cwd=w.ws, capture_output=True, text=True, timeout=300)
    check("a time limit ends the run", done.returncode == 0 and "timed_out: 1" in done.stdout, f"{done.stdout.strip()} {done.stderr.strip()}")
    w.descriptors_unchanged("time limit")


def case_ctrl_c(w):
    # A real CTRL_C_EVENT on a console confinectl shares. confinectl's console handler
    # asks the launcher to finish (it runs without a console, so the event reaches only
    # confinectl) and waits for it: the launcher ends the command and takes back what it
    # granted before confinectl ends with 130. The descriptors are as before right away.
    data = console_host(w, "ctrl-c", 5, *w.confined(PY, PROBE, "sleep", 120))
    check("Ctrl+C ends the run", data.get("status") is not None and data.get("seconds", 999) < 100, str(data))
    check("Ctrl+C: confinectl ends with 130", data.get("status") == 130, str(data))
    w.descriptors_unchanged("Ctrl+C")
    # And Ctrl+Break sent to confinectl's own process group: 128 + SIGBREAK (21).
    run = subprocess.Popen(w.confined(PY, PROBE, "sleep", 120), cwd=w.ws, creationflags=subprocess.CREATE_NEW_PROCESS_GROUP)
    wait_for_launcher()
    os.kill(run.pid, signal.CTRL_BREAK_EVENT)
    try:
        run.wait(timeout=120)
    except subprocess.TimeoutExpired:
        run.kill()
    check("Ctrl+Break ends the run", run.returncode == 149, f"status {run.returncode}")
    w.descriptors_unchanged("Ctrl+Break")


def case_two_at_once(w):
    markers = [w.ws / f"both-{i}-{uuid.uuid4().hex}.txt" for i in range(2)]
    script = "import sys, time; time.sleep(5); open(sys.argv[1], 'w').write('x')"
    runs = [subprocess.Popen(w.confined(PY, "-c", script, m), cwd=w.ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for m in markers]
    statuses = [r.wait(timeout=300) for r in runs]
    check("two runs at once both write", statuses == [0, 0] and all(m.exists() for m in markers), f"statuses {statuses}")
    w.descriptors_unchanged("two runs at once")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--confinectl", required=True)
    parser.add_argument("--timed-run", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--out")
    args = parser.parse_args()
    w = World(args)
    probe = subprocess.run([w.confinectl, "probe"], capture_output=True, text=True)
    print(probe.stdout + probe.stderr, flush=True)
    check("confinectl probe selects appcontainer", probe.returncode == 0, probe.stderr.strip()[:300])
    for case in (case_writes, case_network, case_named_pipe, case_console_injection, case_ordinary_work, case_launcher_killed,
                 case_confinectl_killed, case_time_limit, case_ctrl_c, case_two_at_once):
        try:
            case(w)
        except Exception as e:  # one case's surprise is its failure, not the end of the others
            check(case.__name__, False, f"raised {type(e).__name__}: {e}")
    failed = [r for r in results if not r["held"]]
    print(f"{len(results) - len(failed)} held, {len(failed)} failed", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
