"""A caller at a console of its own, for the world proofs (world_proof.py).

world_proof.py starts this with CREATE_NEW_CONSOLE. It runs a command with the console
as its standard input and output, then says what the command left in the console's
input buffer, or sends the console a real Ctrl+C while the command runs:

  console_host.py RESULT.json inject console|null COMMAND...
                                                  run COMMAND (its last argument is
                                                  replaced by this process's id) with
                                                  the console or NUL as its standard
                                                  input and its output captured, then
                                                  read the console input left queued
  console_host.py RESULT.json ctrl-c SECONDS COMMAND...
                                                  run COMMAND, wait SECONDS, send
                                                  CTRL_C_EVENT to every process on the
                                                  console, wait for COMMAND
"""
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from ctypes import wintypes

from probe import INPUT_RECORD, KEY_EVENT

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
kernel32.GetStdHandle.restype = wintypes.HANDLE
kernel32.PeekConsoleInputW.argtypes = [wintypes.HANDLE, ctypes.POINTER(INPUT_RECORD), wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
kernel32.GetNumberOfConsoleInputEvents.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD)]
kernel32.FlushConsoleInputBuffer.argtypes = [wintypes.HANDLE]
kernel32.GenerateConsoleCtrlEvent.argtypes = [wintypes.DWORD, wintypes.DWORD]


def queued_text(conin):
    count = wintypes.DWORD(0)
    if not kernel32.GetNumberOfConsoleInputEvents(conin, ctypes.byref(count)):
        return None, f"cannot count console input events, error {ctypes.get_last_error()}"
    if count.value == 0:
        return "", None
    records = (INPUT_RECORD * count.value)()
    read = wintypes.DWORD(0)
    if not kernel32.PeekConsoleInputW(conin, records, count.value, ctypes.byref(read)):
        return None, f"cannot read console input events, error {ctypes.get_last_error()}"
    text = "".join(r.Event.KeyEvent.uChar for r in records[: read.value] if r.EventType == KEY_EVENT and r.Event.KeyEvent.bKeyDown)
    return text, None


def main(argv):
    result_file, mode = argv[1], argv[2]
    result = {"mode": mode}
    conin = open("CONIN$", "rb", buffering=0)
    conout = open("CONOUT$", "wb", buffering=0)
    import msvcrt
    conin_handle = msvcrt.get_osfhandle(conin.fileno())
    if mode == "inject":
        # With the console as standard input, a launcher copying it into the command's
        # pipe would take queued keystrokes out of the buffer: the command's own report
        # (that its standard input refused WriteConsoleInput) is the proof there, and
        # with NUL as standard input nothing else reads the buffer.
        stdin = conin if argv[3] == "console" else subprocess.DEVNULL
        command = argv[4:-1] + [str(os.getpid())]
        kernel32.FlushConsoleInputBuffer(conin_handle)
        done = subprocess.run(command, stdin=stdin, capture_output=True, text=True, timeout=300)
        result["status"] = done.returncode
        result["output"] = done.stdout + done.stderr
        text, error = queued_text(conin_handle)
        result["queued"] = text
        result["error"] = error
    elif mode == "ctrl-c":
        seconds = float(argv[3])
        # A Python handler (not the inherited "ignore Ctrl+C" flag): the command keeps
        # the console's default handling.
        received = []
        signal.signal(signal.SIGINT, lambda *_: received.append(time.time()))
        started = time.time()
        child = subprocess.Popen(argv[4:], stdin=conin, stdout=conout, stderr=conout)
        time.sleep(seconds)
        result["sent"] = bool(kernel32.GenerateConsoleCtrlEvent(0, 0))  # CTRL_C_EVENT to the whole console
        try:
            result["status"] = child.wait(timeout=120)
        except subprocess.TimeoutExpired:
            child.kill()
            result["status"] = None
        result["seconds"] = round(time.time() - started, 1)
        result["host_saw_ctrl_c"] = bool(received)
    with open(result_file, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
