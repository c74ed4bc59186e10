#!/usr/bin/python3
"""Kills every gatekeeper as it starts, as a program of the user's own would.

The setuid passlock-auth runs with the user's real uid, so any process of
theirs may signal it (and the OOM killer may pick it). This scans
/proc every ~0.5 ms for new processes named NAME (the kernel keeps 15
characters) whose *real* uid (the first field of `Uid:`; a setuid process's
/proc/PID is root's) is UID, and SIGKILLs each. Fast enough to catch the
status request of a lock screen starting (a few ms).

Usage: kill_gatekeepers.py [--name passlock-auth] [--uid UID] [--seconds S]
                           [--stop-file PATH] [--ready-file PATH]
Ends after S seconds or once the stop file exists; prints how many it
killed. The ready file is created once the processes that were there at its
start are scanned and settled (then each scan reads only new ones).
"""
import argparse
import os
import signal
import time


def real_uid(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Uid:"):
                return int(line.split()[1])
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="passlock-auth")
    parser.add_argument("--uid", type=int, default=os.getuid())
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--stop-file")
    parser.add_argument("--ready-file")
    args = parser.parse_args()
    name = args.name[:15]
    deadline = time.monotonic() + args.seconds
    killed = set()
    # A process is looked at while it is young (it may not have exec'd the
    # gatekeeper yet: until then it bears its parent's name), then skipped
    # while it lives, so that a scan reads only new processes: well under a
    # millisecond, fast enough for a status request of ~3 ms.
    young, settled = {}, set()
    initial, ready = None, False
    while time.monotonic() < deadline and not (args.stop_file and os.path.exists(args.stop_file)):
        now = time.monotonic()
        current = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}
        settled &= current
        for pid in current - settled:
            first = young.setdefault(pid, now)
            try:
                with open(f"/proc/{pid}/comm") as comm:
                    ours = comm.read().strip() == name and real_uid(pid) == args.uid
                if ours:
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                ours = False
            if ours or now - first > 0.05:
                settled.add(pid)
                young.pop(pid, None)
        for pid in list(young):
            if pid not in current:
                del young[pid]
        # Ready once every process that was there at the start has settled:
        # until then each scan reads them all, too slowly to catch a
        # gatekeeper of a few ms.
        if initial is None:
            initial = current
        if args.ready_file and not ready and not (initial & young.keys()):
            open(args.ready_file, "w").close()
            ready = True
        time.sleep(0.0005)
    print(len(killed), flush=True)


main()
