#!/usr/bin/python3
"""The setuid gatekeeper against the real fingerprint stack.

Run as root inside a mount namespace of its own (unshare --mount): the
gatekeeper clears its environment, so pam_fprintd inside it reaches the
system bus only at the standard path. This mounts a private /run there with
a bus that allows everything, runs python-dbusmock's polkit (told to allow)
and fprintd with libfprint's virtual reader, enrolls USER's right index
finger, then runs `PREFIX/bin/passlock lock` as USER on a pty of theirs and
swipes: a wrong finger, Space to try again, then the right one. Prints what it saw as key=value
lines for the Swift test (SetuidEndToEndTests) to judge.

Usage: setuid-fprintd.py USER UID GID PREFIX WORK
"""
import fcntl
import os
import pty
import select
import socket
import struct
import subprocess
import sys
import termios
import time

user, uid, gid, prefix, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
reader = f"{work}/fp.sock"
attempts = f"{prefix}/var/lib/passlock/{user}/attempts"
quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
processes = []


def report(key, value):
    print(f"{key}={value}", flush=True)


def wait_until(what, seconds, condition):
    deadline = time.time() + seconds
    while not condition():
        if time.time() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.02)


def dbus_ok(code):
    script = "import dbus\nbus = dbus.SystemBus()\n" + code
    return subprocess.run(["/usr/bin/python3", "-c", script], **quiet).returncode == 0


def start(argv, **environment):
    processes.append(subprocess.Popen(argv, env=dict(PATH="/usr/bin:/bin", **environment), **quiet))
    return processes[-1]


def send(command):
    wait_until("the virtual reader's socket", 10, lambda: os.path.exists(reader))
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(reader)
        s.sendall(command.encode())


def start_fprintd():
    # Its socket exists while the device is claimed: a stale one would mislead send().
    if os.path.exists(reader):
        os.unlink(reader)
    start(["/usr/libexec/fprintd", "--no-timeout"], FP_VIRTUAL_DEVICE=reader, STATE_DIRECTORY=f"{work}/fprintd")
    wait_until("fprintd's device", 10, lambda: dbus_ok(
        "m = bus.get_object('net.reactivated.Fprint', '/net/reactivated/Fprint/Manager')\n"
        "assert len(m.GetDevices(dbus_interface='net.reactivated.Fprint.Manager')) == 1"))


def external_failures():
    try:
        with open(attempts) as f:
            for line in f:
                if line.startswith("external_failures="):
                    return int(line.split("=", 1)[1])
    except OSError:
        pass
    return None


def main():
    # The standard system-bus path, in this namespace only.
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=755", "passlock-test-run", "/run"], check=True)
    os.makedirs("/run/dbus")
    with open(f"{work}/bus.conf", "w") as f:
        f.write('<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"'
                ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">'
                "<busconfig><type>system</type><listen>unix:path=/run/dbus/system_bus_socket</listen>"
                "<auth>EXTERNAL</auth><policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
                "<allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy></busconfig>")
    start(["/usr/bin/dbus-daemon", f"--config-file={work}/bus.conf", "--nofork", "--nopidfile"])
    wait_until("the bus", 10, lambda: os.path.exists("/run/dbus/system_bus_socket"))
    start(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd"])
    wait_until("polkit", 10, lambda: dbus_ok(
        "o = bus.get_object('org.freedesktop.PolicyKit1', '/org/freedesktop/PolicyKit1/Authority')\n"
        "o.AllowUnknown(True, dbus_interface='org.freedesktop.DBus.Mock')"))
    os.makedirs(f"{work}/fprintd", exist_ok=True)
    start_fprintd()

    enrolling = subprocess.Popen(["/usr/bin/fprintd-enroll", "-f", "right-index-finger", user], **quiet)
    for _ in range(5):
        time.sleep(0.3)
        send("SCAN finger-A")
    report("enrolled", enrolling.wait(timeout=15) == 0)
    # A swipe the enrolment did not use would match the next verification.
    # Waited for: until it is gone it holds the bus name and the reader, and
    # a new fprintd started meanwhile gives up (seen once under load).
    stale = processes.pop()
    stale.kill()
    stale.wait()
    start_fprintd()

    # The lock screen as USER, on a pty that is theirs (as login leaves it).
    master, slave = pty.openpty()
    os.fchown(slave, uid, -1)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))

    def controlling_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    lock = subprocess.Popen(
        ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--",
         "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "TERM=xterm", "LANG=C", f"HOME={work}",
         f"XDG_CONFIG_HOME={work}/config", f"{prefix}/bin/passlock", "lock"],
        stdin=slave, stdout=slave, stderr=slave, preexec_fn=controlling_terminal, close_fds=True)
    os.close(slave)
    screen = b""

    def read_screen(seconds):
        nonlocal screen
        readable, _, _ = select.select([master], [], [], seconds)
        if readable:
            try:
                screen += os.read(master, 65536)
            except OSError:
                pass

    def seen(text, seconds=10, since=0):
        deadline = time.time() + seconds
        while text.encode() not in screen[since:] and time.time() < deadline and lock.poll() is None:
            read_screen(0.05)
        return text.encode() in screen[since:]

    report("prompt", seen("Swipe your"))
    mark = len(screen)
    send("SLEEP 100")
    send("SCAN finger-B")
    # (Counted before the stack ran; the failure keeps it counted.)
    report("not_recognized", seen("Not recognized", since=mark))
    report("failures_after_wrong_finger", external_failures())
    # As on iOS, the reader runs again when asked (Space), counted first again.
    mark = len(screen)
    os.write(master, b" ")
    report("prompt_again", seen("Swipe your", since=mark))
    report("failures_while_retrying", external_failures())
    send("SLEEP 100")
    send("SCAN finger-A")
    deadline = time.time() + 10
    while lock.poll() is None and time.time() < deadline:
        read_screen(0.05)
    report("exit", lock.poll())
    report("failures_after_match", external_failures())
    if lock.poll() is None:
        lock.kill()
        report("screen", screen[-600:].decode(errors="replace").replace("\n", " "))


try:
    main()
finally:
    for process in reversed(processes):
        process.kill()
        process.wait()
