"""A virtual keyboard with a keymap of our choosing, spoken in Wayland's wire
protocol directly (no client library in the root filesystem): it uploads the
keymap file given (e.g. French AZERTY from `xkbcli compile-keymap --layout
fr`) and presses keys by their evdev codes, so the key *positions* reach the
focused client with that keymap's keysyms (wtype instead makes up a keymap
holding the keysyms it types, so it cannot test positions).

Usage: vkbd.py [--keymap-after SECONDS] KEYMAP-FILE CODE...
  (evdev codes, pressed and released in order; --keymap-after: a keyboard
  without a keymap for that long, during which the compositor gives clients
  a keymap of format NO_KEYMAP)
Protocols: wl_display, wl_registry, wl_seat, zwp_virtual_keyboard_manager_v1.
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


def main():
    arguments = sys.argv[1:]
    keymap_after = 0.0
    if arguments[:1] == ["--keymap-after"]:
        keymap_after, arguments = float(arguments[1]), arguments[2:]
    keymap_file, codes = arguments[0], [int(code) for code in arguments[1:]]
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
    for needed in ("wl_seat", "zwp_virtual_keyboard_manager_v1"):
        if needed not in globals_:
            raise SystemExit("vkbd: the compositor offers no " + needed)

    def bind(interface, version):
        obj = wl.new_id()
        name, _ = globals_[interface]
        wl.send(registry, 0, struct.pack("<I", name) + string(interface) + struct.pack("<II", version, obj))
        return obj

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
    wl.roundtrip()


main()
