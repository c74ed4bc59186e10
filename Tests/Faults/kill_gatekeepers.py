#!/usr/bin/python3
"""Kills every gatekeeper as it starts, as a program of the user's own would.

The setuid passlock-auth runs with the user's real uid, so any process of
theirs may signal it (and the OOM killer may pick it). This scans
/proc/*/comm every ~0.5 ms for processes named NAME (the kernel keeps 15
characters) whose *real* uid (the first field of `Uid:`; a setuid process's
/proc/PID is root's) is UID, and SIGKILLs each. Fast enough to catch the
status request of a lock screen starting (a few ms).

Usage: kill_gatekeepers.py [--name passlock-auth] [--uid UID] [--seconds S]
                           [--stop-file PATH]
Ends after S seconds or once PATH exists; prints how many it killed.
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
    args = parser.parse_args()
    name = args.name[:15]
    deadline = time.monotonic() + args.seconds
    killed = set()
    while time.monotonic() < deadline and not (args.stop_file and os.path.exists(args.stop_file)):
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in killed:
                continue
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    if comm.read().strip() != name or real_uid(entry) != args.uid:
                        continue
                os.kill(int(entry), signal.SIGKILL)
                killed.add(int(entry))
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                continue
        time.sleep(0.0005)
    print(len(killed), flush=True)


main()
