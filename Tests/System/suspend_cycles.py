"""Suspend cycles through the real logind of the booted test system.

Each cycle: logind's Suspend is called; we watch, every millisecond, the
session's terminal (the byte stream script(1) copies) for the lock screen and
the container's /sys/power/state (a plain file bound over it) for logind's
write, which is the moment logind stopped waiting for delay inhibitors and
"suspended". Then the passcode is typed, and the next cycle waits for the
daemon's new inhibitor. Used by Tests/System/run (--check: fail on any miss)
and bench/suspend --real (prints p50/p99).

Environment: BED_LEADER (the container's PID 1), BED_WORK (screen, keys,
power/state), PASSCODE, SESSION_TTY.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

leader, work = os.environ["BED_LEADER"], os.environ["BED_WORK"]
passcode, tty = os.environ.get("PASSCODE", "2580"), os.environ["SESSION_TTY"]
screen_path, state_path = f"{work}/screen", f"{work}/power/state"
# Frames reach the screen file through script(1), after the pty: a frame seen
# this much after logind's write still came before it on the terminal. The
# lock screen writes its ready byte only after its frame is in the pty, but
# script(1)'s copy is a process of its own, scheduled whenever the 2 cores
# allow: 21 and 29 ms were seen on an otherwise quiet run.
COPY_SLACK_MS = 50


def inside(*command):
    return subprocess.run(["nsenter", "-t", leader, "-a", "--", *command], capture_output=True, text=True)


def now_ms():
    return time.monotonic_ns() / 1e6


def wait(what, seconds, condition):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    print(f"timed out waiting for {what}", file=sys.stderr)
    return False


def holds_inhibitor():
    out = inside("systemd-inhibit", "--list", "--no-legend", "--no-pager").stdout
    return any(line.split()[:1] == ["passlock"] for line in out.splitlines())


def session_id():
    for line in inside("loginctl", "list-sessions", "--no-legend").stdout.splitlines():
        sid = line.split()[0]
        if "/dev/" + inside("loginctl", "show-session", sid, "-p", "TTY", "--value").stdout.strip() == tty:
            return sid
    raise SystemExit(f"no session on {tty}")


def locked_hint(sid):
    return inside("loginctl", "show-session", sid, "-p", "LockedHint", "--value").stdout.strip() == "yes"


def lock_screen_running():
    out = subprocess.run(["pgrep", "-f", f"^passlock lock --tty {tty}( |$)"], capture_output=True, text=True).stdout
    return bool(out.strip())


def sleep_settled():
    """logind is not preparing a sleep, and systemd runs no job (the last
    cycle's suspend has finished): a Suspend now is not refused as busy."""
    preparing = inside("busctl", "get-property", "org.freedesktop.login1", "/org/freedesktop/login1",
                       "org.freedesktop.login1.Manager", "PreparingForSleep").stdout.strip()
    jobs = inside("systemctl", "list-jobs", "--no-legend").stdout.strip()
    return preparing == "b false" and not jobs


STOP_KILLING = "/tmp/passlock-stop-killing"


def start_killer(user):
    """A program of the user's own that kills every passlock-auth as it
    starts (Tests/Faults/kill_gatekeepers.py, copied into the container)."""
    inside("rm", "-f", STOP_KILLING)
    # Real-time (set by root, inherited), so that nothing starves it: a
    # gatekeeper runs a few ms, and one it missed would be a verdict.
    return subprocess.Popen(["nsenter", "-t", leader, "-a", "--", "chrt", "-f", "10", "runuser", "-u", user, "--", "/usr/bin/python3",
                             "/usr/local/bin/kill_gatekeepers.py", "--seconds", "20", "--stop-file", STOP_KILLING],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def stop_killer(killer):
    inside("touch", STOP_KILLING)
    out, _ = killer.communicate(timeout=10)
    return int(out.strip() or 0)


def cycle(sid, inhibitor, killer_user=None):
    # With an inhibitor, the new one after resume says the last sleep ended;
    # without, logind and systemd say it.
    if not inhibitor:
        wait("the last sleep to finish", 10, sleep_settled)
    killer = start_killer(killer_user) if killer_user else None
    if killer:
        time.sleep(0.3)  # it scans before the sleep starts
    mark = os.path.getsize(screen_path)
    state_before = os.stat(state_path).st_mtime_ns
    start = now_ms()
    call = subprocess.Popen(["nsenter", "-t", leader, "-a", "--", "busctl", "call", "org.freedesktop.login1",
                             "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "Suspend", "b", "false"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    frame = proceeded = None
    with open(screen_path, "rb") as screen:
        while now_ms() - start < 10_000 and (frame is None or proceeded is None):
            if frame is None:
                screen.seek(mark)
                if b"Enter Passcode" in screen.read():
                    frame = now_ms() - start
            if proceeded is None and os.stat(state_path).st_mtime_ns != state_before:
                proceeded = now_ms() - start
            time.sleep(0.001)
    refused = call.communicate()[1].decode(errors="replace").strip()
    if refused:
        print(f"Suspend: {refused}", file=sys.stderr)
    hint = locked_hint(sid)
    # The fault gone (the person's own program ended), the lock screen gets
    # its status on its next try: the passcode is read once it has.
    killed = stop_killer(killer) if killer else 0
    if killer:
        time.sleep(0.2)
    # Unlock, as the person would on resume.
    with open(f"{work}/keys", "w") as keys:
        keys.write(passcode)
    unlocked = wait("the lock screen to end", 10, lambda: not lock_screen_running()) and \
        wait("LockedHint=no", 5, lambda: not locked_hint(sid))
    inhibited = wait("a new inhibitor after resume", 10, holds_inhibitor) if inhibitor else True
    return frame, proceeded, hint, unlocked, inhibited, killed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--check", action="store_true")
    # Where logind refuses the inhibitor (no polkit): the system sleep hook
    # is what holds the sleep until the lock screen is up.
    parser.add_argument("--without-inhibitor", action="store_true")
    # Fail closed: a program of this user's kills every gatekeeper as it
    # starts while the machine goes to sleep; the lock comes first all the same.
    parser.add_argument("--kill-gatekeepers-of", metavar="USER")
    args = parser.parse_args()
    sid = session_id()
    if not args.without_inhibitor and not wait("the daemon's inhibitor", 10, holds_inhibitor):
        return 1
    delay_max = int(inside("busctl", "get-property", "org.freedesktop.login1", "/org/freedesktop/login1",
                           "org.freedesktop.login1.Manager", "InhibitDelayMaxUSec").stdout.split()[-1]) / 1000
    frames, proceeds, misses, kills = [], [], [], 0
    for n in range(1, args.cycles + 1):
        frame, proceeded, hint, unlocked, inhibited, killed = cycle(sid, not args.without_inhibitor, args.kill_gatekeepers_of)
        kills += killed
        problems = []
        if frame is None:
            problems.append("no lock screen on the terminal")
        if proceeded is None:
            problems.append("logind never proceeded to sleep")
        elif proceeded >= delay_max * 0.8:
            problems.append(f"sleep waited {proceeded:.0f} ms: the inhibitor (or the sleep hook's file) was not released")
        if frame is not None and proceeded is not None and frame > proceeded + COPY_SLACK_MS:
            problems.append(f"the lock screen came {frame - proceeded:.0f} ms after logind proceeded")
        if not hint:
            problems.append("LockedHint was not set")
        if not unlocked:
            problems.append("the passcode did not unlock")
        if not inhibited:
            problems.append("no new inhibitor after resume")
        if frame is not None:
            frames.append(frame)
        if proceeded is not None:
            proceeds.append(proceeded)
        if problems:
            misses.append(n)
            print(f"cycle {n}: " + "; ".join(problems))
    def pct(values, p):
        return sorted(values)[min(len(values) - 1, int(len(values) * p))] if values else float("nan")
    print(f"Suspend → lock screen on the terminal: p50 {statistics.median(frames):.1f} ms, p99 {pct(frames, 0.99):.1f} ms")
    print(f"Suspend → logind proceeds to sleep:    p50 {statistics.median(proceeds):.1f} ms, "
          f"p99 {pct(proceeds, 0.99):.1f} ms (InhibitDelayMaxSec {delay_max / 1000:.0f} s)")
    if args.kill_gatekeepers_of:
        print(f"gatekeepers killed as they started: {kills}")
        if kills == 0:
            print("the fault never happened: no gatekeeper was killed")
            misses.append(0)
    print(f"cycles {args.cycles}, misses {len(misses)}")
    return 1 if args.check and misses else 0


sys.exit(main())
