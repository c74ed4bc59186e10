"""bench/machine: lock before sleep on the whole machine, passlock beside physlock.

On the machine of Tests/Machine (Debian bookworm under qemu, TCG): the user
logged in on tty1 at getty, the .deb installed, `passlock set`. Each cycle is
`systemctl suspend` as root, then screendumps as fast as QMP gives them until
QMP says the guest is suspended, then `system_wakeup` and the unlock typed on
the keyboard. Measured from the moment the command is sent:
  - session off screen: the first screendump that no longer shows the session,
    the same test for both (passlock's lock VT, cleared until the holder's
    frame a moment later; physlock's VT, blank until its prompt a second
    later — `physlock -d` returns once it has switched);
  - suspended: QMP query-status says `suspended`.
A cycle whose first lit screendump after wake shows the session missed: the
lock was not on screen before S3. passlock runs as the package sets it up
(passlockd, the user unit); physlock the way its users wire it for suspend:
`physlock -d` from a unit ordered before sleep.target (the default), or from
a system-sleep hook (`--physlock hook`; systemd kills the hook's physlock
with systemd-suspend.service at resume), passlockd stopped meanwhile. Cycles
alternate between the two. Under TCG everything is 10–30× slower than on
hardware: compare the ratios, not the times.

Usage: bench/machine [--cycles N] [--polkitd] [--physlock unit|hook] [--deb PATH]
  --polkitd: install polkitd first (passlockd then holds its delay inhibitor).
"""
import argparse
import os
import shlex
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from desk import Desk, Failed, build_deb, host_setup  # noqa: E402
from machine import Looks, MachineError, Screen, wait_for  # noqa: E402

HOOK = "/usr/lib/systemd/system-sleep/physlock"
# physlock's own way to lock before sleep, as its users write it: a unit
# ordered before sleep.target; `physlock -d` returns once it has switched VT
# and locked switching, which is when systemd starts the sleep.
UNIT = """[Unit]
Description=Lock the console with physlock before sleep
Before=sleep.target

[Service]
Type=forking
ExecStart=/usr/bin/physlock -d

[Install]
WantedBy=sleep.target
"""


def cycle(suite, m, looks, hidden):
    """One suspend and resume; returns (off screen s, suspended s, missed)."""
    took, before = suite.suspend(m, looks)
    off = next((t for t, kind, _ in before if hidden(kind)), None)
    after = suite.wake(m, looks, timeout=8)
    first_lit = next((kind for _, kind, _ in after if kind != "blank"), "blank")
    missed = off is None or first_lit == "session"
    return off, took, missed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--polkitd", action="store_true")
    parser.add_argument("--deb", default=os.environ.get("PASSLOCK_DEB"))
    parser.add_argument("--physlock", choices=("unit", "hook"), default="unit",
                        help="physlock from a unit Before=sleep.target (default) or a system-sleep hook")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench/machine needs root (qemu, the image, the guest's suspend)", file=sys.stderr)
        return 1
    status, image, names = host_setup()
    if status != 0 or not names:
        print("bench/machine: no machine image (see above)", file=sys.stderr)
        return 1
    deb = os.path.abspath(args.deb or build_deb() or "")
    if not os.path.isfile(deb):
        print("bench/machine: no package (scripts/package failed)", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="passlock-machine-bench.", dir="/var/tmp")
    suite = Desk(work, image, deb, names)
    try:
        m = suite.machine("console")
        user = suite.user
        sid = suite.session_on(m, "tty1")
        if args.polkitd:
            m.sh("dpkg -i /opt/polkitd/*.deb >/dev/null && systemctl start polkit", check=True, timeout=300)
            wait_for("passlockd's inhibitor", 30,
                     lambda: "passlock" in m.out("systemd-inhibit --list --no-legend --no-pager"))
        # physlock's look, from a lock started by hand as the hook would.
        m.sh("printf '#!/bin/sh\\n[ \"$1\" = pre ] && exec physlock -d\\nexit 0\\n' > /root/physlock-hook; "
             "chmod 755 /root/physlock-hook")
        m.sh(f"printf %s {shlex.quote(UNIT)} > /etc/systemd/system/physlock-sleep.service; systemctl daemon-reload",
             check=True)
        physlock_on = (f"cp /root/physlock-hook {HOOK}" if args.physlock == "hook"
                       else "systemctl enable -q physlock-sleep.service")
        physlock_off = (f"rm -f {HOOK}" if args.physlock == "hook"
                        else "systemctl disable -q physlock-sleep.service")
        m.sh("physlock -d >/dev/null 2>&1")
        wait_for("physlock's prompt", 20, lambda: "assword" in m.vcs(m.active_vt()))
        physlock_ref = suite.stable_screen(m)
        m.type(suite.password + "\n")
        wait_for("physlock to end", 20, lambda: m.active_vt() == 1)
        session = Screen(f"{work}/ref-tty1-session.ppm")
        passlock_looks = Looks(Screen(f"{work}/ref-lock.ppm"), session)
        physlock_looks = Looks(physlock_ref, session)
        results = {"passlock": [], "physlock": []}
        for n in range(args.cycles):
            for locker in ("passlock", "physlock"):
                if locker == "physlock":
                    m.as_user(user, "systemctl --user stop passlockd")
                    m.sh(physlock_on, check=True)
                    off, took, missed = cycle(suite, m, physlock_looks, lambda k: k != "session")
                    try:
                        wait_for("physlock's prompt after wake", 20, lambda: "assword" in m.vcs(m.active_vt()))
                    except MachineError as e:
                        raise MachineError(f"{e}\n" + m.out(
                            "echo active VT $(cat /sys/class/tty/tty0/active); pgrep -a physlock; "
                            "journalctl -b -q --no-pager -o cat | grep -iE 'physlock|sleep' | tail -n 12"))
                    m.type(suite.password + "\n")
                    wait_for("physlock to end", 20, lambda: m.active_vt() == 1)
                    m.sh(physlock_off, check=True)
                    m.as_user(user, "systemctl --user start passlockd")
                    if args.polkitd:
                        wait_for("passlockd's inhibitor", 30,
                                 lambda: "passlock" in m.out("systemd-inhibit --list --no-legend --no-pager"))
                    else:
                        wait_for("passlockd ready", 30, lambda: "Daemon: running" in m.as_user(user, "passlock status")[1])
                else:
                    off, took, missed = cycle(suite, m, passlock_looks, lambda k: k != "session")
                    suite.unlock(m, sid, 1)
                results[locker].append((off, took, missed))
                print(f"cycle {n + 1} {locker}: session off screen "
                      + (f"{off * 1000:.0f} ms" if off is not None else "never before S3")
                      + f", suspended {took * 1000:.0f} ms" + (" (MISSED: the session at wake)" if missed else ""),
                      flush=True)
            suite.shots = []  # the screendumps of passed cycles are not kept
            for entry in os.listdir(work):
                if entry.startswith("vm-shot-"):
                    os.unlink(os.path.join(work, entry))
        m.stop()
    except (Failed, MachineError) as e:
        print(f"bench/machine: {e}", file=sys.stderr)
        return 1
    finally:
        if suite.vm:  # whatever ended the run, no machine is left running
            suite.vm.stop()
        shutil.rmtree(work, ignore_errors=True)

    def p50(values):
        return statistics.median(values) * 1000 if values else float("nan")

    print(f"\nbench/machine: {args.cycles} cycles each, alternating; Debian bookworm under qemu TCG "
          f"({'with' if args.polkitd else 'without'} polkitd). TCG times are 10–30× hardware: read the ratios.")
    rows = {}
    for locker, label in (("passlock", "passlock (passlockd, the package's user unit)"),
                          ("physlock", f"physlock -d ({'system-sleep hook' if args.physlock == 'hook' else 'unit Before=sleep.target'})")):
        r = results[locker]
        offs = [o for o, _, missed in r if o is not None and not missed]
        tooks = [t for _, t, _ in r]
        rows[locker] = (p50(offs), p50(tooks))
        print(f"{label:48s} suspend → session off screen p50 {rows[locker][0]:.0f} ms, "
              f"→ suspended p50 {rows[locker][1]:.0f} ms, lock before S3 in {len(offs)}/{len(r)}")
    print(f"ratio passlock/physlock: session off screen {rows['passlock'][0] / rows['physlock'][0]:.2f}×, "
          f"suspended {rows['passlock'][1] / rows['physlock'][1]:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
