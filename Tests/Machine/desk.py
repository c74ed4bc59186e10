"""What a person at the whole machine does, and the machine states it starts from.

Shared by the machine suite (run) and bench/machine (bench.py): the cached
image and the .deb (host_setup, build_deb), the booted and installed
machine and the one with the user logged in on tty1 and a passcode set,
each saved once and restored for every test (Desk.machine), and what a
person does there: a getty login, a VT switch, `passlock set`, the passcode,
weston, a suspend and a resume watched in screendumps (Desk.suspend,
Desk.wake, Desk.sleep_problems).
"""
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import time

from machine import Looks, Machine, MachineError, Screen, now, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PASSCODE = "2580"
HOST = "passlock-machine"
# The lock must stay on screen this long after a resume before it counts as confirmed.
SETTLE_S = 1.5


class Failed(Exception):
    """Ends a test: what was required did not happen."""


class Desk:
    def __init__(self, work, image, deb, names):
        self.work, self.image, self.deb = work, image, deb
        self.user, self.password, self.other, self.other_password = names
        self.states = {}
        self.broken = set()
        self.weston_vt = None
        self.runs = 0
        self.failures = []
        self.vm = None
        self.shots = []
        # Installed beside the .deb (on trixie: passlock-wayland, for Wayfire).
        self.extra_debs = []

    # --- states --------------------------------------------------------------

    def machine(self, state):
        """A machine restored from STATE (prepared first when needed)."""
        if state in self.broken:
            raise Failed(f"no '{state}' machine: preparing it failed earlier")
        if state not in self.states:
            try:
                getattr(self, f"prepare_{state}")()
            except Exception:
                self.broken.add(state)
                raise
        path, disk = self.states[state]
        self.vm = Machine(self.image, self.work)
        self.vm.extra_drive = f"{self.work}/deb.img"
        self.runs += 1
        run_disk = self.vm.overlay(disk, f"{self.work}/run-{self.runs}.qcow2")
        self.vm.restore(path, run_disk)
        self.weston_vt = None
        return self.vm

    def save(self, name):
        path = f"{self.work}/{name}.state"
        self.vm.save(path)
        self.states[name] = (path, self.vm.disk)
        self.vm = None

    def prepare_installed(self):
        """Boots the image, installs the .deb with apt from a second disk, saves."""
        started = now()
        debs = f"{self.work}/debs"
        os.makedirs(debs, exist_ok=True)
        packages = [self.deb] + self.extra_debs
        for deb in packages:
            shutil.copy(deb, debs)
        # The package's autopkgtests, for the one only a machine can run.
        shutil.copytree(os.path.join(os.path.dirname(__file__), "../../debian/tests"), f"{debs}/tests", dirs_exist_ok=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-d", debs, f"{self.work}/deb.img", "64M"], check=True)
        self.vm = Machine(self.image, self.work)
        self.vm.extra_drive = f"{self.work}/deb.img"
        disk = self.vm.overlay(f"{self.image}/rootfs.img", f"{self.work}/installed.qcow2", "raw")
        self.vm.boot(disk)
        booted = now() - started
        deb = " ".join(os.path.basename(d) for d in packages)
        paths = " ".join(shlex.quote(f"/mnt/deb/{os.path.basename(d)}") for d in packages)
        status, out = self.vm.sh(f"mkdir -p /mnt/deb && mount -o ro /dev/vdb /mnt/deb && "
                                 f"apt-get install -y {paths}", timeout=600)
        self.vm.sh("umount /mnt/deb")
        if status != 0:
            raise Failed(f"apt install {deb} failed in the guest:\n{out[-1500:]}")
        print(f"    booted in {booted:.0f} s, {deb} installed with apt in {now() - started - booted:.0f} s")
        self.save("installed")

    def prepare_console(self):
        """The user logged in on tty1 at getty, a passcode set; references."""
        m = self.machine("installed")
        try:
            self.console_login_and_set(m)
        except Exception:
            m.stop()
            raise
        self.save("console")

    # --- what a person does --------------------------------------------------

    def vcs_has(self, m, vt, text):
        return text in m.vcs(vt)

    def press_switch(self, m, vt):
        """Ctrl-Alt-Fn on the keyboard. weston 10 here does not act on
        Ctrl-Alt-Fn at all (checked without passlock, freshly started), so
        from weston's VT the switch is `chvt` by the admin instead."""
        if m.active_vt() == self.weston_vt:
            m.background(f"timeout 20 chvt {vt}")
        else:
            m.key("ctrl", "alt", f"f{vt}")

    def switch_to(self, m, vt):
        """Switches to VT; waits for the kernel to show it."""
        self.press_switch(m, vt)
        wait_for(f"VT {vt} on screen", 15, lambda: m.active_vt() == vt)

    def login(self, m, vt, user, password):
        """Types USER and PASSWORD at the getty on VT; returns logind's session id."""
        if m.active_vt() != vt:
            self.switch_to(m, vt)
        wait_for(f"a login prompt on tty{vt}", 30, lambda: "login:" in m.vcs(vt))
        m.type(f"{user}\n")
        wait_for(f"the password prompt on tty{vt}", 30, lambda: "Password:" in m.vcs(vt))
        m.type(f"{password}\n")
        wait_for(f"{user}'s shell on tty{vt}", 60, lambda: f"{user}@{HOST}" in m.vcs(vt))
        return wait_for(f"{user}'s logind session on tty{vt}", 10, lambda: self.session_on(m, f"tty{vt}"))

    def session_on(self, m, tty):
        # The TTY column moved in systemd 257 (Debian 13): a field equal to TTY.
        for line in m.out("loginctl list-sessions --no-legend").splitlines():
            fields = line.split()
            if len(fields) >= 5 and tty in fields[2:]:
                return fields[0]
        return None

    def prop(self, m, sid, name):
        return m.out(f"loginctl show-session {sid} -p {name} --value")

    def run_typed(self, m, vt, command, marker):
        """Types COMMAND at the shell on VT; waits for MARKER on that VT."""
        m.type(command + "\n")
        wait_for(f"'{marker}' on tty{vt}", 30, lambda: marker in m.vcs(vt))

    def screen(self, m, label=""):
        shot = m.screendump()
        self.shots.append([shot.path, label])
        return shot

    def label(self, shot, text):
        """Names SHOT in the kept screendumps (time and what it showed)."""
        for entry in reversed(self.shots):
            if entry[0] == shot.path:
                entry[1] = text
                return

    def console_login_and_set(self, m):
        sid = self.login(m, 1, self.user, self.password)
        for p, want in (("Type", "tty"), ("VTNr", "1"), ("Seat", "seat0"), ("Active", "yes")):
            got = self.prop(m, sid, p)
            if got != want:
                raise Failed(f"the getty login is not a local seat0 session: {p}={got}")
        state = m.as_user(self.user, "systemctl --user is-enabled passlockd; systemctl --user is-active passlockd")[1]
        if state.split() != ["enabled", "active"]:  # enabled for every user by the package
            raise Failed(f"the package's user unit is not enabled and running at login: {state!r}")
        # The keypad on the console: new passcode + Enter, again + Enter, then
        # the account password on the plain terminal (the root-held store).
        m.type("passlock set\n")
        wait_for("passlock set's keypad", 30, lambda: "Set Passcode" in m.vcs(1))
        m.type(PASSCODE + "\n")
        wait_for("the confirmation", 30, lambda: "Confirm Passcode" in m.vcs(1))
        m.type(PASSCODE + "\n")
        wait_for("the account password prompt", 30, lambda: "Password:" in m.vcs(1).split("Confirm Passcode")[-1])
        m.type(self.password + "\n")
        wait_for("'Passcode set'", 30, lambda: "Passcode set" in m.vcs(1))
        status = m.as_user(self.user, "passlock status")[1]
        if "Store: system" not in status:
            raise Failed(f"passlock set did not use the system store:\n{status}")
        # The session's console as its user set it up: white on blue, so that
        # anything of the session on screen is unmistakable in a screendump.
        self.run_typed(m, 1, "setterm --background blue --foreground white --store --clear all; "
                       "ls -l /usr/bin; echo tty1-is-$((6*7))", "tty1-is-42")
        session = self.screen(m)
        session_ref = f"{self.work}/ref-tty1-session.ppm"
        shutil.copy(session.path, session_ref)
        # The lock screen as it looks on this machine, for the screendumps.
        m.sh(f"loginctl lock-session {sid}")
        wait_for("the lock screen's VT", 20, lambda: m.active_vt() != 1)
        vt = m.active_vt()
        wait_for("'Enter Passcode' on the lock VT", 20, lambda: "Enter Passcode" in m.vcs(vt))
        wait_for("LockedHint=yes", 10, lambda: self.prop(m, sid, "LockedHint") == "yes")
        lock = self.stable_screen(m)
        shutil.copy(lock.path, f"{self.work}/ref-lock.ppm")
        self.unlock(m, sid, 1)

    def stable_screen(self, m, seconds=20):
        """Waits until two screendumps in a row are the same; returns the last."""
        last = self.screen(m)
        deadline = now() + seconds
        while True:
            time.sleep(0.3)
            shot = self.screen(m)
            if shot.differs(last) == 0:
                return shot
            if now() > deadline:
                raise Failed("the screen did not settle")
            last = shot

    def looks(self, session_ref=None):
        lock = Screen(f"{self.work}/ref-lock.ppm")
        return Looks(lock, Screen(session_ref or f"{self.work}/ref-tty1-session.ppm"))

    def unlock(self, m, sid, back_vt):
        """Types the passcode; waits for the session's VT and LockedHint=no."""
        m.type(PASSCODE)
        wait_for(f"VT {back_vt} back after the passcode", 20, lambda: m.active_vt() == back_vt)
        wait_for("LockedHint=no after the passcode", 10, lambda: self.prop(m, sid, "LockedHint") == "no")

    def suspend(self, m, looks):
        """`systemctl suspend` as root; screendumps until QMP says suspended.
        Returns (seconds to S3, [(seconds, kind, path)])."""
        self.stalls = self.stall_count(m)
        started = now()
        m.background("systemctl suspend")
        frames = []
        while True:
            if m.status() == "suspended":
                return now() - started, frames
            if now() - started > 30:
                raise Failed("the machine did not suspend within 30 s")
            shot = self.screen(m)
            frames.append((now() - started, looks.classify(shot), shot.path))
            self.label(shot, f"suspending-{frames[-1][0]:.2f}s-{frames[-1][1]}")

    def wake(self, m, looks, timeout=20):
        """system_wakeup; screendumps until the lock has been on screen for
        SETTLE_S. Returns [(seconds, kind, path)]."""
        m.wakeup()
        started, frames, lock_since = now(), [], None
        while now() - started < timeout:
            shot = self.screen(m)
            kind = looks.classify(shot)
            frames.append((now() - started, kind, shot.path))
            self.label(shot, f"woken-{frames[-1][0]:.2f}s-{kind}")
            if kind == "lock":
                lock_since = lock_since or now()
                if now() - lock_since >= SETTLE_S:
                    break
            else:
                lock_since = None
        return frames

    def sleep_problems(self, took, before, after):
        """What a suspend and resume showed that must not be."""
        problems = []
        lit = [f for f in before if f[1] != "blank"]
        if not lit or lit[-1][1] != "lock":  # a part-drawn lock is not yet the lock
            last = f"{lit[-1][1]} at {lit[-1][0]:.2f} s" if lit else "nothing lit"
            problems.append(f"the lock was not on screen before S3 (last frame before the display went blank: {last})")
        shown = [f for f in after if f[1] not in ("blank", "lock", "partial lock")]
        if shown:
            first = shown[0]
            problems.append(f"after wake the screen showed {first[1]} at {first[0]:.2f} s "
                            f"({len(shown)} of {len(after)} screendumps not the lock)")
        if not after or after[-1][1] != "lock":
            problems.append("the lock was not on screen after wake")
        if self.journal_stall(self.vm):
            problems.append(f"S3 came {took:.1f} s after `systemctl suspend`, and the journal says why: "
                            + self.stall_lines(self.vm)[-1])
        return problems

    def stall_lines(self, m):
        """What logind (a delay inhibitor held to its timeout) and passlock's
        sleep hook (no lock screens up within 5 s) say when a sleep waited
        for a lock that did not come."""
        return m.out("journalctl -b -q --no-pager -o cat | grep -e 'inhibitor timeout is reached' "
                     "-e 'did not report its lock screens up'").splitlines()

    def stall_count(self, m):
        return len(self.stall_lines(m))

    def journal_stall(self, m):
        return self.stall_count(m) > self.stalls

    def session_status(self, m, user=None):
        """passlock status's line for each session, by session id."""
        lines = {}
        for line in m.as_user(user or self.user, "passlock status")[1].splitlines():
            if line.startswith("Session ") and ":" in line:
                lines[line.split()[1].rstrip(":")] = line
        return lines

    def fail(self, message):
        self.failures.append(message)

    def expect(self, condition, message):
        if not condition:
            self.fail(message)


def keep_screendumps(shots, where):
    """Every screendump as PNG, in order, named by what it showed; a run of
    identical ones is kept once (its name says how many)."""
    os.makedirs(where, exist_ok=True)
    runs = []
    for path, label in shots:
        if not os.path.exists(path):
            continue
        digest = hashlib.sha1(open(path, "rb").read()).digest()
        if runs and runs[-1][2] == digest:
            runs[-1][3] += 1
        else:
            runs.append([path, label, digest, 1])
    for i, (path, label, _, count) in enumerate(runs):
        name = f"{i:04d}" + (f"-{label}" if label else "") + (f"-x{count}" if count > 1 else "") + ".png"
        with open(os.path.join(where, name), "wb") as png:
            subprocess.run(["pnmtopng", path], stdout=png, stderr=subprocess.DEVNULL)
    return len(runs)


def host_setup():
    """Host tools and the cached image; returns (image dir, user names)."""
    out = subprocess.run(["bash", "-c", f"source {shlex.quote(HERE)}/image.sh && machine_host_tools && "
                          "echo \"names $MACHINE_USER $MACHINE_PASSWORD $MACHINE_OTHER $MACHINE_OTHER_PASSWORD\" && "
                          "machine_image"], capture_output=True, text=True)
    sys.stderr.write(out.stderr)
    lines = out.stdout.split("\n")
    names = next((l.split()[1:] for l in lines if l.startswith("names ")), None)
    image = lines[-2] if len(lines) >= 2 else ""
    return out.returncode, image, names


def build_deb(release="bookworm"):
    """passlock's .deb: scripts/package here (Debian 12), or Debian 13's
    built by its own Swift (scripts/debian-build trixie)."""
    build = ["bash", "scripts/package"] if release == "bookworm" else ["bash", "scripts/debian-build", release]
    out = subprocess.run(["flock", "/tmp/passlock-build.lock"] + build, cwd=ROOT,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stdout[-3000:] + out.stderr[-3000:])
        return None
    return os.path.join(ROOT, out.stdout.strip().splitlines()[-1])
