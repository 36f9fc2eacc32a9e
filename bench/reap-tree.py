"""Run a command as a child subreaper and account for every process it leaves behind.

`ray start` daemonises its nodes: without a subreaper they are re-parented to init and their CPU
time is lost to `/usr/bin/time`. As a subreaper (prctl PR_SET_CHILD_SUBREAPER) this process adopts
and waits for every orphaned descendant, so `/usr/bin/time -v python3 bench/reap-tree.py ...`
counts the whole tree. Meanwhile every process's own peak RSS (VmHWM) is sampled every 0.25 s so
the largest process can be named. Writes a JSON summary to --json.
Usage: python3 bench/reap-tree.py --json OUT -- command [args...]
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def sample(peaks: dict, stop: threading.Event) -> None:
    while not stop.is_set():
        for pid in descendants(os.getpid()):
            try:
                with open(f"/proc/{pid}/status") as f:
                    status = f.read()
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            hwm = next((int(l.split()[1]) for l in status.splitlines() if l.startswith("VmHWM:")), 0)
            name = " ".join(a.decode(errors="replace") for a in argv[:3] if a)[:120]
            key = f"{pid}"
            if hwm > peaks.get(key, {}).get("kb", -1):
                peaks[key] = {"kb": hwm, "cmd": name}
        stop.wait(0.25)


def main() -> int:
    args = sys.argv[1:]
    out = args[args.index("--json") + 1]
    command = args[args.index("--") + 1 :]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    peaks: dict = {}
    stop = threading.Event()
    sampler = threading.Thread(target=sample, args=(peaks, stop), daemon=True)
    started = time.monotonic()
    main_child = subprocess.Popen(command)
    sampler.start()
    rc = None
    leaked: list[str] = []
    main_ended = None
    while True:
        try:
            # Only after the command ended: wait at most 30 s for what it left, then name and kill it.
            pid, status, _ = os.wait4(-1, 0 if main_ended is None else os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() - main_ended >= 30:
                for left in descendants(os.getpid()):
                    leaked.append(open(f"/proc/{left}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:120])
                    os.kill(left, signal.SIGKILL)
            time.sleep(0.1)
            continue
        if pid == main_child.pid:
            rc = os.waitstatus_to_exitcode(status)
            main_child.returncode = rc
            main_ended = time.monotonic()
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    top = sorted(peaks.values(), key=lambda p: -p["kb"])[:8]
    with open(out, "w") as f:
        json.dump({"rc": rc, "wall_s": wall, "leaked": leaked, "largest": top}, f, indent=1)
    return rc if rc is not None else 1


if __name__ == "__main__":
    sys.exit(main())
