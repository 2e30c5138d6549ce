"""What a confined command tries, for the world proofs (world_proof.py).

Runs inside the AppContainer (and, for the controls, outside it). Each action prints
one line that world_proof.py reads; the exit status is 0 when the action did what it
tried, 1 when it was stopped.

  probe.py write PATH            create PATH with a line in it
  probe.py connect HOST PORT     open a TCP connection
  probe.py pipe NAME             open \\\\.\\pipe\\NAME for reading and writing
  probe.py inject [PID]          queue keystrokes into every console input it can reach:
                                 its standard input, CONIN$, and the console of PID
  probe.py sleep SECONDS         wait
  probe.py noop                  nothing
"""
import ctypes
import socket
import sys
import time
from ctypes import wintypes

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)

GENERIC_READ = 0x80000000
GENERIC_WRITE = 0x40000000
FILE_SHARE_READ = 1
FILE_SHARE_WRITE = 2
OPEN_EXISTING = 3
STD_INPUT_HANDLE = -10
INVALID_HANDLE_VALUE = ctypes.c_void_p(-1).value
KEY_EVENT = 1
ATTACH_PARENT_PROCESS = -1


class KEY_EVENT_RECORD(ctypes.Structure):
    _fields_ = [("bKeyDown", wintypes.BOOL), ("wRepeatCount", wintypes.WORD), ("wVirtualKeyCode", wintypes.WORD),
                ("wVirtualScanCode", wintypes.WORD), ("uChar", wintypes.WCHAR), ("dwControlKeyState", wintypes.DWORD)]


class _EVENT(ctypes.Union):
    _fields_ = [("KeyEvent", KEY_EVENT_RECORD), ("_pad", ctypes.c_byte * 16)]


class INPUT_RECORD(ctypes.Structure):
    _fields_ = [("EventType", wintypes.WORD), ("Event", _EVENT)]


kernel32.CreateFileW.restype = wintypes.HANDLE
kernel32.CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p, wintypes.DWORD, wintypes.DWORD,
                                 wintypes.HANDLE]
kernel32.GetStdHandle.restype = wintypes.HANDLE
kernel32.GetStdHandle.argtypes = [wintypes.DWORD]
kernel32.WriteConsoleInputW.argtypes = [wintypes.HANDLE, ctypes.POINTER(INPUT_RECORD), wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
kernel32.AttachConsole.argtypes = [wintypes.DWORD]
kernel32.CloseHandle.argtypes = [wintypes.HANDLE]


def keystrokes(text):
    records = (INPUT_RECORD * len(text))()
    for i, ch in enumerate(text):
        records[i].EventType = KEY_EVENT
        records[i].Event.KeyEvent.bKeyDown = True
        records[i].Event.KeyEvent.wRepeatCount = 1
        records[i].Event.KeyEvent.uChar = ch
    return records


def inject(handle, what):
    text = "echo CONFINE-INJECTED\r"
    records = keystrokes(text)
    written = wintypes.DWORD(0)
    ok = kernel32.WriteConsoleInputW(handle, records, len(text), ctypes.byref(written))
    print(f"inject {what}: {'written ' + str(written.value) if ok else 'refused error ' + str(ctypes.get_last_error())}")
    return bool(ok) and written.value > 0


def open_conin():
    h = kernel32.CreateFileW("CONIN$", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, None, OPEN_EXISTING, 0, None)
    return None if h in (None, INVALID_HANDLE_VALUE) else h


def main(argv):
    action = argv[1] if len(argv) > 1 else ""
    if action == "write":
        try:
            with open(argv[2], "w") as f:
                f.write("written by a confined command\n")
            print(f"write: created {argv[2]}")
            return 0
        except OSError as e:
            print(f"write: stopped: {e}")
            return 1
    if action == "connect":
        try:
            with socket.create_connection((argv[2], int(argv[3])), timeout=10):
                print(f"connect: connected to {argv[2]}:{argv[3]}")
                return 0
        except OSError as e:
            print(f"connect: stopped: {e}")
            return 1
    if action == "pipe":
        try:
            with open(r"\\.\pipe" + "\\" + argv[2], "r+b", buffering=0):
                print(f"pipe: opened {argv[2]}")
                return 0
        except OSError as e:
            print(f"pipe: stopped: {e}")
            return 1
    if action == "inject":
        reached = inject(kernel32.GetStdHandle(STD_INPUT_HANDLE), "standard input")
        h = open_conin()
        if h:
            reached = inject(h, "CONIN$") or reached
            kernel32.CloseHandle(h)
        else:
            print(f"inject CONIN$: cannot open, error {ctypes.get_last_error()}")
        targets = [("parent console", ATTACH_PARENT_PROCESS & 0xFFFFFFFF)]
        if len(argv) > 2:
            targets.append((f"console of {argv[2]}", int(argv[2])))
        for what, pid in targets:
            kernel32.FreeConsole()
            if not kernel32.AttachConsole(pid):
                print(f"inject {what}: cannot attach, error {ctypes.get_last_error()}")
                continue
            h = open_conin()
            if h:
                reached = inject(h, what) or reached
                kernel32.CloseHandle(h)
        # The exit status says whether any write was accepted; world_proof.py judges by
        # what reached the caller's console, not by this.
        return 0 if reached else 1
    if action == "sleep":
        time.sleep(float(argv[2]))
        print("sleep: done")
        return 0
    if action == "noop":
        print("noop")
        return 0
    print(f"probe: unknown action {action!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
