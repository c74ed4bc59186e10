"""A whole Debian machine under qemu (TCG), driven as a person at it would.

The machine suite (Tests/Machine/run) and bench/machine use this. What the
harness has, and nothing more:
  - QMP `send-key`: the keyboard the guest kernel's console sees (getty logins,
    Ctrl-Alt-Fn, Alt-SysRq, a passcode typed at the lock screen);
  - QMP `screendump`: what the screen shows (PPM, read here without PIL);
  - QMP `query-status` / `system_wakeup`: suspended or running, and the lid;
  - a root shell on the serial line (autologin on ttyS0): the admin's view
    (`systemctl suspend`, /dev/vcsN, /proc/sys/kernel/sysrq, loginctl); a
    second one on ttyS1 takes over when ttyS0 stays silent after a resume.
A booted state is saved with QMP `migrate` to a file and restored with
`-incoming` (about a second), each time over a fresh qcow2 overlay.
Recipe and traps: ../shared/DESIGN.md, "A whole machine under qemu".
"""
import json
import os
import re
import shlex
import socket
import subprocess
import time


class MachineError(Exception):
    pass


class GuestDidNotResume(MachineError):
    """The guest's kernel did not come back from S3: neither serial shell
    answers, the machine running. Seen under TCG in 3 of ~25 Wayfire
    resumes on one day (CI's run among them), after the kernel had
    suspended its consoles; the kernel log (ttyS2, consoles kept on through
    the suspend) and the CPUs' registers (nokaslr: addresses that
    /proc/kallsyms of the same kernel names) say where it stopped."""


def now():
    return time.monotonic()


def connect_unix(path, timeout, what):
    """A stream socket connected to `path`, retried until qemu has made it."""
    deadline = now() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if now() > deadline:
                raise MachineError(f"no {what} socket at {path}")
            time.sleep(0.05)


class QMP:
    """QMP over a unix socket: one call at a time, events kept as they come."""

    def __init__(self, path, timeout=30):
        self.sock = connect_unix(path, timeout, "QMP")
        self.buf = b""
        self.events = []
        self._message(timeout)  # the greeting
        self.call("qmp_capabilities")

    def _message(self, timeout):
        deadline = now() + timeout
        while b"\n" not in self.buf:
            left = deadline - now()
            if left <= 0:
                raise MachineError("QMP did not answer")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise MachineError("QMP closed (qemu exited)")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, command, timeout=60, **arguments):
        request = {"execute": command}
        if arguments:
            request["arguments"] = arguments
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        while True:
            message = self._message(timeout)
            if "event" in message:
                self.events.append(message)
                continue
            if "error" in message:
                raise MachineError(f"QMP {command}: {message['error'].get('desc')}")
            return message.get("return")

    def close(self):
        self.sock.close()


class Serial:
    """A serial line of the guest (ttyS0, ttyS1), a root shell once logged in (autologin)."""

    def __init__(self, path, name, timeout=30):
        self.name = name
        self.sock = connect_unix(path, timeout, f"{name} serial")
        self.buf = b""
        self.log = None

    def write(self, data):
        self.sock.sendall(data)

    def read_until(self, pattern, timeout):
        """Reads until PATTERN (bytes regex) matches; returns (text before, match)."""
        regex = re.compile(pattern)
        deadline = now() + timeout
        while True:
            m = regex.search(self.buf)
            if m:
                before, self.buf = self.buf[: m.start()], self.buf[m.end():]
                return before, m
            left = deadline - now()
            if left <= 0:
                raise MachineError(f"serial: no {pattern!r} within {timeout} s (last: {self.buf[-300:]!r})")
            self.sock.settimeout(min(left, 1))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise MachineError("serial closed (qemu exited)")
            if self.log:
                self.log.write(chunk)
                self.log.flush()
            self.buf += chunk

    def close(self):
        self.sock.close()


# QEMU key codes for what a US keyboard types.
_PLAIN = {" ": "spc", "\n": "ret", "-": "minus", "=": "equal", ".": "dot", ",": "comma", "/": "slash",
          ";": "semicolon", "'": "apostrophe", "`": "grave_accent", "[": "bracket_left",
          "]": "bracket_right", "\\": "backslash", "\t": "tab", "\b": "backspace"}
_SHIFTED = {"_": "minus", "+": "equal", ">": "dot", "<": "comma", "?": "slash", ":": "semicolon",
            '"': "apostrophe", "~": "grave_accent", "{": "bracket_left", "}": "bracket_right",
            "|": "backslash", "!": "1", "@": "2", "#": "3", "$": "4", "%": "5", "^": "6", "&": "7",
            "*": "8", "(": "9", ")": "0"}


def keys_for(ch):
    if ch.isascii() and (ch.islower() or ch.isdigit()):
        return [ch]
    if ch.isascii() and ch.isupper():
        return ["shift", ch.lower()]
    if ch in _PLAIN:
        return [_PLAIN[ch]]
    if ch in _SHIFTED:
        return ["shift", _SHIFTED[ch]]
    raise ValueError(f"no key for {ch!r}")


class Screen:
    """One screendump: width, height and RGB bytes (PPM P6, 8 bits)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        fields, pos = [], 0
        while len(fields) < 4:  # magic, width, height, maxval; '#' comments
            while data[pos:pos + 1].isspace():
                pos += 1
            if data[pos:pos + 1] == b"#":
                pos = data.index(b"\n", pos) + 1
                continue
            end = pos
            while not data[end:end + 1].isspace():
                end += 1
            fields.append(data[pos:end])
            pos = end
        if fields[0] != b"P6" or fields[3] != b"255":
            raise MachineError(f"{path}: not an 8-bit PPM")
        self.path = path
        self.width, self.height = int(fields[1]), int(fields[2])
        self.pixels = data[pos + 1:]

    def black_box(self):
        """The bounding box (x0, y0, x1, y1) of pure black pixels, sampled on
        an 8-pixel grid: a terminal window on weston's coloured desktop."""
        xs, ys, row = [], [], self.width * 3
        for y in range(0, self.height, 8):
            line = self.pixels[y * row:(y + 1) * row]
            for x in range(0, self.width, 8):
                if line[x * 3:x * 3 + 3] == b"\0\0\0":
                    xs.append(x)
                    ys.append(y)
        return (min(xs), min(ys), max(xs), max(ys)) if xs else None

    def lit(self):
        """The fraction of bytes that are not black."""
        return 1 - self.pixels.count(0) / len(self.pixels)

    def differs(self, other):
        """The fraction of bytes that differ from OTHER's (1.0 for another size)."""
        if (self.width, self.height) != (other.width, other.height):
            return 1.0
        a = int.from_bytes(self.pixels, "little") ^ int.from_bytes(other.pixels, "little")
        n = len(self.pixels)
        return (n - a.to_bytes(n, "little").count(0)) / n


class Machine:
    """One qemu process: boot, restore, keys, screen, serial root shell, suspend."""

    def __init__(self, image, work, name="vm"):
        self.image, self.work, self.name = image, work, name
        self.proc = self.qmp = self.serial = self.spare = None
        self.disk = None
        self.shots = 0
        self.counter = 0
        self.extra_drive = None
        self.unsynced = False

    # --- life cycle ---------------------------------------------------------

    def _qemu(self, disk, incoming=None):
        qmp_path, serial_path = f"{self.work}/{self.name}.qmp", f"{self.work}/{self.name}.serial"
        spare_path = f"{self.work}/{self.name}.serial1"
        for p in (qmp_path, serial_path, spare_path):
            if os.path.exists(p):
                os.unlink(p)
        args = ["qemu-system-x86_64", "-machine", "pc", "-accel", "tcg,thread=multi,tb-size=512",
                "-cpu", "max", "-m", "2G", "-smp", "2", "-nodefaults", "-no-user-config",
                "-kernel", f"{self.image}/vmlinuz", "-initrd", f"{self.image}/initrd.img",
                # The kernel's own messages, suspend and resume among them, go
                # to a third serial line kept as a file: a guest that does not
                # come back from S3 says why there.
                "-append", "root=/dev/vda rw quiet loglevel=7 console=ttyS2 no_console_suspend nokaslr",
                "-drive", f"file={disk},if=virtio,cache=unsafe,format=qcow2",
                "-global", "PIIX4_PM.disable_s3=0", "-vga", "std", "-display", "none",
                "-qmp", f"unix:{qmp_path},server=on,wait=off",
                "-chardev", f"socket,id=serial0,path={serial_path},server=on,wait=off",
                "-serial", "chardev:serial0",
                "-chardev", f"socket,id=serial1,path={spare_path},server=on,wait=off",
                "-serial", "chardev:serial1",
                "-chardev", f"file,id=kernel,path={self.work}/{self.name}.kernel.log,append=on",
                "-serial", "chardev:kernel", "-nic", "none",
                # A pointer with absolute coordinates: a click lands where it is aimed.
                "-device", "virtio-tablet-pci"]
        if self.extra_drive:
            args += ["-drive", f"file={self.extra_drive},if=virtio,format=raw,readonly=on"]
        if incoming:
            args += ["-incoming", f"exec:cat {shlex.quote(incoming)}"]
        log = open(f"{self.work}/{self.name}.qemu.log", "ab")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        self.disk = disk
        self.qmp = QMP(qmp_path)
        self.serial = Serial(serial_path, "ttyS0")
        self.serial.log = open(f"{self.work}/{self.name}.serial.log", "ab")
        self.spare = Serial(spare_path, "ttyS1")
        self.spare.log = open(f"{self.work}/{self.name}.serial1.log", "ab")

    def overlay(self, backing, path, backing_format="qcow2"):
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-b", backing, "-F", backing_format, path],
                       check=True)
        return path

    # No line editing (readline echoes by itself), no echo, no flow control,
    # no prompts: what comes back is what the command printed.
    SHELL_SETUP = (b"set +o emacs +o vi +m; stty -echo -onlcr -ixon; PS1= PS2=; unset PROMPT_COMMAND; "
                   b"export SYSTEMD_PAGER= PAGER=cat SYSTEMD_COLORS=0 TERM=dumb DEBIAN_FRONTEND=noninteractive\n")

    def boot(self, disk, timeout=180):
        """Boots from DISK (a qcow2 overlay) to the serial root shell, and
        starts a second one on ttyS1 (the spare, for a ttyS0 that stays
        silent after a resume)."""
        self._qemu(disk)
        self.serial.read_until(rb"root@[^\r\n]*# ", timeout)
        self.serial.write(self.SHELL_SETUP)
        self.sh("true", timeout=30)
        self.sh("d=/etc/systemd/system/serial-getty@ttyS1.service.d; mkdir -p $d && "
                "cp /etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf $d/ && "
                "systemctl daemon-reload && systemctl start serial-getty@ttyS1.service", check=True)
        self.spare.read_until(rb"root@[^\r\n]*# ", 60)
        self.spare.write(self.SHELL_SETUP)
        self._sh("true", 30, serial=self.spare)

    def save(self, path):
        """Saves the running machine to PATH and stops it; its disk must then stay as it is."""
        self.qmp.call("migrate-set-parameters", **{"max-bandwidth": 8 << 30})
        self.qmp.call("migrate", uri=f"exec:cat > {shlex.quote(path)}")
        deadline = now() + 300
        while True:
            status = self.qmp.call("query-migrate").get("status")
            if status == "completed":
                break
            if status in ("failed", "cancelled") or now() > deadline:
                raise MachineError(f"saving the machine: migration {status}")
            time.sleep(0.1)
        self.stop()

    def restore(self, state, disk, timeout=120):
        """Starts from a saved STATE over DISK (a fresh overlay of the saved disk)."""
        self._qemu(disk, incoming=state)
        deadline = now() + timeout
        while self.qmp.call("query-status").get("status") != "running":
            if now() > deadline:
                raise MachineError("the saved machine did not come back")
            time.sleep(0.05)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                self.qmp.call("quit", timeout=5)
            except MachineError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for c in (self.qmp, self.serial, self.spare):
            if c:
                c.close()
        for c in (self.serial, self.spare):
            if c and c.log:
                c.log.close()
        self.proc = self.qmp = self.serial = self.spare = None

    # --- the admin's serial shell -------------------------------------------

    def resync(self, tries=5):
        """After a resume the guest's UART drops what arrives while it comes
        back: kill the half-typed line and wait for a command to answer.
        Now and then (about one resume in a hundred under TCG) a serial line
        stays silent after the resume, the guest running: the shell on the
        other line goes on, and the output says so. A guest that went back
        to sleep (QMP says so) is woken again."""
        for attempt in range(2 * tries):
            if attempt == tries:
                print(f"    {self.serial.name} silent after the resume; going on with the root shell on "
                      f"{self.spare.name}", flush=True)
                self.serial, self.spare = self.spare, self.serial
            self.serial.write(b"\x15\n")
            try:
                self._sh("true", 3)
                self.unsynced = False
                return
            except MachineError:
                if self.status() == "suspended":
                    print("    the guest was asleep again after its wake; woken again", flush=True)
                    self.qmp.call("system_wakeup")
        self.dump_cpus("no-answer-after-resume")
        raise GuestDidNotResume(f"neither serial shell answers after the resume (QMP status: {self.status()}; "
                                f"the kernel's last line: {self.kernel_said()!r}; its CPUs in "
                                f"{self.work}/{self.name}.no-answer-after-resume.cpus)")

    def kernel_said(self):
        try:
            with open(f"{self.work}/{self.name}.kernel.log", "rb") as log:
                lines = log.read().decode(errors="replace").strip().splitlines()
            return lines[-1] if lines else ""
        except OSError:
            return ""

    def dump_cpus(self, what):
        """What the guest's CPUs are doing, three looks a second apart, for
        a guest that does not answer."""
        with open(f"{self.work}/{self.name}.{what}.cpus", "w") as out:
            for _ in range(3):
                out.write(self.qmp.call("human-monitor-command", **{"command-line": "info registers -a"}) + "\n")
                time.sleep(1)

    def sh(self, command, timeout=60, check=False):
        """Runs COMMAND as root in the guest; returns (status, output)."""
        if self.unsynced:
            self.resync()
        return self._sh(command, timeout, check)

    def _sh(self, command, timeout=60, check=False, serial=None):
        serial = serial or self.serial
        self.counter += 1
        n = self.counter
        # The marker is printed by printf from parts, so a command echoed
        # before echo went off cannot look like its end.
        serial.write(f"{{ {command}\n}} </dev/null 2>&1; printf '\\n__PL%s_%s__\\n' {n} $?\n".encode())
        before, m = serial.read_until(rb"__PL" + str(n).encode() + rb"_(\d+)__\n", timeout)
        out = before.decode(errors="replace").replace("\r", "")
        out = out[:-1] if out.endswith("\n") else out
        status = int(m.group(1))
        if check and status != 0:
            raise MachineError(f"guest command failed ({status}): {command}\n{out}")
        return status, out

    def out(self, command, timeout=60):
        return self.sh(command, timeout)[1].strip()

    def as_user(self, user, command, timeout=60):
        """COMMAND as USER with their user manager in reach."""
        uid = self.out(f"id -u {user}")
        return self.sh(f"runuser -u {user} -- env XDG_RUNTIME_DIR=/run/user/{uid} HOME=/home/{user} "
                       f"sh -c {shlex.quote(command)}", timeout)

    def vcs(self, n):
        """The text on VT N (/dev/vcsN), printable ASCII only."""
        return self.out(f"tr -c '[:print:]' ' ' </dev/vcs{n}")

    def active_vt(self):
        return int(self.out("cat /sys/class/tty/tty0/active").split("\n")[-1].removeprefix("tty") or 0)

    # --- the keyboard and the screen ----------------------------------------

    def key(self, *names, hold=30):
        self.qmp.call("send-key", keys=[{"type": "qcode", "data": k} for k in names], **{"hold-time": hold})

    def type(self, text, hold=30):
        for ch in text:
            self.key(*keys_for(ch), hold=hold)

    def click(self, x, y):
        """A left click at pixel (X, Y) of a WIDTH×HEIGHT screen (fractions 0–1)."""
        def abs_event(axis, v):
            return {"type": "abs", "data": {"axis": axis, "value": int(v * 32767)}}
        self.qmp.call("input-send-event", events=[abs_event("x", x), abs_event("y", y)])
        self.qmp.call("input-send-event", events=[{"type": "btn", "data": {"down": True, "button": "left"}}])
        time.sleep(0.05)
        self.qmp.call("input-send-event", events=[{"type": "btn", "data": {"down": False, "button": "left"}}])

    def screendump(self, path=None):
        self.shots += 1
        path = path or f"{self.work}/{self.name}-shot-{self.shots:04d}.ppm"
        self.qmp.call("screendump", filename=path)
        return Screen(path)

    def status(self):
        return self.qmp.call("query-status").get("status")

    def wakeup(self):
        self.qmp.call("system_wakeup")
        self.unsynced = True

    def background(self, command):
        """Starts COMMAND as root in the guest without waiting for it."""
        self.sh(f"setsid -f sh -c {shlex.quote(command)} >/dev/null 2>&1")


def wait_for(what, seconds, condition, interval=0.1):
    """Polls CONDITION until it returns something true; raises after SECONDS."""
    deadline = now() + seconds
    while True:
        value = condition()
        if value:
            return value
        if now() > deadline:
            raise MachineError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(interval)


_LIT = bytes([0] + [1] * 255)


def background(screen):
    """The most common colour (sampled): a console's or a desktop's background."""
    px = screen.pixels
    counts = {}
    for i in range(0, len(px) - 2, 3 * 251):
        c = px[i:i + 3]
        counts[c] = counts.get(c, 0) + 1
    return max(counts, key=counts.get)


def lit_mask(screen):
    """An integer with one byte per pixel, 1 where the pixel is not the
    background colour: what is drawn, whatever the background."""
    bg = background(screen) * (len(screen.pixels) // 3)
    t = (int.from_bytes(screen.pixels, "little") ^ int.from_bytes(bg, "little")).to_bytes(
        len(screen.pixels), "little").translate(_LIT)
    return (int.from_bytes(t[0::3], "little") | int.from_bytes(t[1::3], "little")
            | int.from_bytes(t[2::3], "little"))


class Looks:
    """Tells what a screendump shows, against reference screendumps taken in
    the same run: the lock screen, and the session it must hide. A frame is
    the lock when almost nothing is drawn (not background) where the lock
    screen has only background (the clock, a filled dot, a message may
    differ; the background colour may too: a lock screen on a console whose
    default background is blue); session content (a shell's text, weston's
    windows) is drawn there. A frame of one colour is "blank" (a display off
    for the suspend, a console being redrawn)."""

    def __init__(self, lock, session=None):
        self.lock, self.session = lock, session
        self.mask = lit_mask(lock)
        self.pixels = lock.width * lock.height
        self.lock_lit = self.mask.bit_count()

    def measure(self, screen):
        """(lit, outside the lock, missing from the lock), in pixels."""
        m = lit_mask(screen)
        return m.bit_count(), (m & ~self.mask).bit_count(), (self.mask & ~m).bit_count()

    def classify(self, screen):
        if (screen.width, screen.height) != (self.lock.width, self.lock.height):
            return "session" if self.session and screen.differs(self.session) < 0.5 else "other"
        lit, outside, missing = self.measure(screen)
        if lit < self.pixels * 0.0002:
            return "blank"
        if outside <= self.lock_lit * 0.1:
            # A lock screen redrawing itself (after a resume) is only part drawn.
            return "lock" if missing <= self.lock_lit * 0.5 else "partial lock"
        if self.session and screen.differs(self.session) < screen.differs(self.lock):
            return "session"
        return "other"

