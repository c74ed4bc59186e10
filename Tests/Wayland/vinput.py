"""Virtual input devices for Tests/Wayland, spoken in Wayland's wire
protocol directly (no client library in the root filesystem).

A keyboard with a keymap of our choosing: it uploads the keymap file given
(e.g. French AZERTY from `xkbcli compile-keymap --layout fr`) and presses
keys by their evdev codes, so the key *positions* reach the focused client
with that keymap's keysyms (wtype instead makes up a keymap holding the
keysyms it types, so it cannot test positions).

A pointer that clicks at points of the output layout (absolute motion,
then the left button), for clicks on the lock screen's keypad.

Usage: vinput.py keys [--keymap-after SECONDS] [--locked MASK] [--group N] [--hold SECONDS] KEYMAP-FILE CODE...
         (evdev codes, pressed and released in order; --keymap-after: a
         keyboard without a keymap for that long, during which the
         compositor gives clients a keymap of format NO_KEYMAP; --locked:
         then the locked modifiers, as a keyboard's own state would have
         them (a virtual keyboard sends its modifiers itself: 2 is Lock,
         Caps Lock on); --group: the layout in force, 0 the first; --hold:
         the keyboard stays that long afterwards)
       vinput.py click WIDTH HEIGHT X,Y...
         (the layout's size, and the points to click, in its pixels)
       vinput.py kwin-keys CODE...
         (KWin: evdev codes pressed and released in order on KWin's own
         keyboard, through its fake input; KWin offers it to any client only
         with KWIN_WAYLAND_NO_PERMISSION_CHECKS=1)
       vinput.py kwin-type TEXT
         (KWin: TEXT and Enter typed at KDE's lock screen on a US layout,
         after a Shift: a key at its clock shows the password field and is
         not typed into it; digits, lower-case letters and '-')
Protocols: wl_display, wl_registry, wl_seat, zwp_virtual_keyboard_manager_v1,
zwlr_virtual_pointer_manager_v1, org_kde_kwin_fake_input (version 4).
"""
import os
import socket
import struct
import sys
import time


class Connection:
    def __init__(self):
        path = os.path.join(os.environ["XDG_RUNTIME_DIR"], os.environ["WAYLAND_DISPLAY"])
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        # A compositor that stops answering fails the test, not hangs it.
        self.sock.settimeout(10)
        self.next_id = 2
        self.buffer = b""

    def new_id(self):
        self.next_id += 1
        return self.next_id - 1

    def send(self, obj, opcode, payload=b"", fds=()):
        header = struct.pack("<II", obj, ((8 + len(payload)) << 16) | opcode)
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("<%di" % len(fds), *fds))] if fds else []
        self.sock.sendmsg([header + payload], ancillary)

    def events(self):
        """Reads one batch of events: (object, opcode, payload)."""
        data = self.sock.recv(65536)
        if not data:
            raise SystemExit("vkbd: the compositor closed the connection")
        self.buffer += data
        while len(self.buffer) >= 8:
            obj, word = struct.unpack("<II", self.buffer[:8])
            size = word >> 16
            if len(self.buffer) < size:
                break
            yield obj, word & 0xFFFF, self.buffer[8:size]
            self.buffer = self.buffer[size:]

    def roundtrip(self, on_event=lambda obj, opcode, payload: None):
        callback = self.new_id()
        self.send(1, 0, struct.pack("<I", callback))  # wl_display.sync
        while True:
            for obj, opcode, payload in self.events():
                if obj == 1 and opcode == 0:  # wl_display.error
                    raise SystemExit("vkbd: protocol error %r" % (payload,))
                if obj == callback:
                    return
                on_event(obj, opcode, payload)


def string(text):
    data = text.encode() + b"\0"
    return struct.pack("<I", len(data)) + data + b"\0" * (-len(data) % 4)


def connect():
    """The connection, the registry's globals, and bind(interface, version)."""
    wl = Connection()
    registry = wl.new_id()
    wl.send(1, 1, struct.pack("<I", registry))  # wl_display.get_registry
    globals_ = {}

    def on_global(obj, opcode, payload):
        if obj == registry and opcode == 0:
            name, length = struct.unpack("<II", payload[:8])
            interface = payload[8:8 + length - 1].decode()
            (version,) = struct.unpack("<I", payload[8 + length + (-length % 4):][:4])
            globals_.setdefault(interface, (name, version))

    wl.roundtrip(on_global)

    def bind(interface, version):
        if interface not in globals_:
            raise SystemExit("vinput: the compositor offers no " + interface)
        obj = wl.new_id()
        name, _ = globals_[interface]
        wl.send(registry, 0, struct.pack("<I", name) + string(interface) + struct.pack("<II", version, obj))
        return obj

    return wl, bind


def keys(arguments):
    options = {"--keymap-after": 0.0, "--hold": 0.0, "--locked": -1, "--group": -1}
    while arguments[:1] and arguments[0] in options:
        options[arguments[0]], arguments = float(arguments[1]), arguments[2:]
    keymap_after = options["--keymap-after"]
    keymap_file, codes = arguments[0], [int(code) for code in arguments[1:]]
    wl, bind = connect()
    seat = bind("wl_seat", 1)
    manager = bind("zwp_virtual_keyboard_manager_v1", 1)
    keyboard = wl.new_id()
    wl.send(manager, 0, struct.pack("<II", seat, keyboard))  # create_virtual_keyboard
    wl.roundtrip()
    time.sleep(keymap_after)
    with open(keymap_file, "rb") as f:
        text = f.read() + b"\0"
    fd = os.memfd_create("keymap")
    os.write(fd, text)
    wl.send(keyboard, 0, struct.pack("<II", 1, len(text)), fds=[fd])  # keymap(XKB_V1, fd, size)
    os.close(fd)
    wl.roundtrip()
    # The headless seat gains its keyboard with this one: give clients a moment.
    time.sleep(0.3)
    start = time.monotonic()
    for code in codes:
        for state in (1, 0):
            stamp = int((time.monotonic() - start) * 1000)
            wl.send(keyboard, 1, struct.pack("<III", stamp, code, state))  # key
            wl.roundtrip()
            time.sleep(0.05)
    if options["--locked"] >= 0 or options["--group"] >= 0:
        locked, group = max(0, int(options["--locked"])), max(0, int(options["--group"]))
        wl.send(keyboard, 2, struct.pack("<IIII", 0, 0, locked, group))  # modifiers
    wl.roundtrip()
    time.sleep(options["--hold"])


def click(arguments):
    width, height = int(arguments[0]), int(arguments[1])
    points = [tuple(int(float(v)) for v in point.split(",")) for point in arguments[2:]]
    wl, bind = connect()
    seat = bind("wl_seat", 1)
    manager = bind("zwlr_virtual_pointer_manager_v1", 1)
    pointer = wl.new_id()
    wl.send(manager, 0, struct.pack("<II", seat, pointer))  # create_virtual_pointer
    wl.roundtrip()
    time.sleep(0.3)
    start = time.monotonic()
    for x, y in points:
        stamp = int((time.monotonic() - start) * 1000)
        wl.send(pointer, 1, struct.pack("<IIIII", stamp, x, y, width, height))  # motion_absolute
        wl.send(pointer, 4)  # frame
        for state in (1, 0):  # BTN_LEFT pressed, released
            wl.send(pointer, 2, struct.pack("<III", stamp, 0x110, state))  # button
            wl.send(pointer, 4)  # frame
        wl.roundtrip()
        time.sleep(0.1)
    wl.roundtrip()


# Evdev codes of a US keyboard's keys.
US_KEYS = dict(zip("1234567890-", range(2, 13))) | dict(zip("qwertyuiop", range(16, 26))) \
    | dict(zip("asdfghjkl", range(30, 39))) | dict(zip("zxcvbnm", range(44, 51)))
SHIFT, ENTER = 42, 28


def kwin_type(arguments):
    kwin_keys([str(SHIFT)])
    time.sleep(1.5)
    kwin_keys([str(US_KEYS[c]) for c in arguments[0]] + [str(ENTER)])


def kwin_keys(arguments):
    wl, bind = connect()
    fake = bind("org_kde_kwin_fake_input", 4)
    wl.send(fake, 0, string("passlock tests") + string("typing at the lock screen"))  # authenticate
    wl.roundtrip()
    for code in [int(code) for code in arguments]:
        for state in (1, 0):
            wl.send(fake, 10, struct.pack("<II", code, state))  # keyboard_key
            wl.roundtrip()
            time.sleep(0.05)


def main():
    {"keys": keys, "click": click, "kwin-keys": kwin_keys, "kwin-type": kwin_type}[sys.argv[1]](sys.argv[2:])

main()
