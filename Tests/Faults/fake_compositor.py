#!/usr/bin/python3
"""A tiny Wayland compositor that sends what no real one should, for the
lock screen's fault tests (Tests/EndToEndTests/WaylandFaultTests).

It listens on a Unix socket, speaks just enough of the wire format for one
client (wl_display, wl_registry, wl_compositor, wl_shm, wl_output, wl_seat
with a keyboard, ext_session_lock_manager_v1), logs every request it gets
(one line each: `object.request`), and follows a scenario:

  nonsense     a keymap whose announced size is far beyond its file (a
               client that maps it faults with SIGBUS), `locked`, then a
               configure of 0x90000000 × 1 and an output scale of 2^30
  late-locked  a real keymap; the passcode's keys before `locked` (the
               client must not act on them), then `locked`, a sane
               configure, and, after a pause, the keys again

Usage: fake_compositor.py SOCKET LOG SCENARIO [PASSCODE]
It ends when the client disconnects.
"""
import array
import os
import socket
import struct
import sys
import time

socket_path, log_path, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
passcode = sys.argv[4] if len(sys.argv) > 4 else "2580"
log = open(log_path, "w", buffering=1)

# Our globals, as wl_registry.global names them (name → interface, version).
GLOBALS = {
    1: ("wl_compositor", 4),
    2: ("wl_shm", 1),
    3: ("wl_output", 4),
    4: ("wl_seat", 5),
    5: ("ext_session_lock_manager_v1", 1),
}
# Request names by interface, in opcode order (wayland.xml, ext-session-lock-v1.xml).
REQUESTS = {
    "wl_display": ["sync", "get_registry"],
    "wl_registry": ["bind"],
    "wl_compositor": ["create_surface", "create_region"],
    "wl_shm": ["create_pool"],
    "wl_shm_pool": ["create_buffer", "destroy", "resize"],
    "wl_buffer": ["destroy"],
    "wl_surface": ["destroy", "attach", "damage", "frame", "set_opaque_region", "set_input_region", "commit",
                   "set_buffer_transform", "set_buffer_scale", "damage_buffer", "offset"],
    "wl_region": ["destroy", "add", "subtract"],
    "wl_output": ["release"],
    "wl_seat": ["get_pointer", "get_keyboard", "get_touch", "release"],
    "wl_keyboard": ["release"],
    "wl_pointer": ["set_cursor", "release"],
    "wl_touch": ["release"],
    "wl_callback": [],
    "ext_session_lock_manager_v1": ["destroy", "lock"],
    "ext_session_lock_v1": ["destroy", "get_lock_surface", "unlock_and_destroy"],
    "ext_session_lock_surface_v1": ["destroy", "ack_configure"],
}

# A keymap with the ten digits on the top row (evdev KEY_1..KEY_0 = 2..11).
KEYMAP = """xkb_keymap {
xkb_keycodes "fake" { minimum = 8; maximum = 255;
 <AE01> = 10; <AE02> = 11; <AE03> = 12; <AE04> = 13; <AE05> = 14;
 <AE06> = 15; <AE07> = 16; <AE08> = 17; <AE09> = 18; <AE10> = 19; };
xkb_types "fake" { type "ONE_LEVEL" { modifiers = none; level_name[Level1] = "Any"; }; };
xkb_compatibility "fake" { };
xkb_symbols "fake" {
 key <AE01> { [ 1 ] }; key <AE02> { [ 2 ] }; key <AE03> { [ 3 ] }; key <AE04> { [ 4 ] };
 key <AE05> { [ 5 ] }; key <AE06> { [ 6 ] }; key <AE07> { [ 7 ] }; key <AE08> { [ 8 ] };
 key <AE09> { [ 9 ] }; key <AE10> { [ 0 ] }; };
};
"""


def evdev(digit):
    return 11 if digit == "0" else int(digit) + 1


def string(text):
    data = text.encode() + b"\0"
    return struct.pack("<I", len(data)) + data + b"\0" * (-len(data) % 4)


class Client:
    def __init__(self, connection):
        self.connection = connection
        self.objects = {1: "wl_display"}
        self.buffer = b""
        self.fds = []
        self.serial = 0
        self.keyboard = self.lock = None
        self.lock_surfaces = []
        self.output = None

    def send(self, object_id, opcode, payload=b"", fds=()):
        header = struct.pack("<II", object_id, (8 + len(payload)) << 16 | opcode)
        if fds:
            socket.send_fds(self.connection, [header + payload], list(fds))
        else:
            self.connection.sendall(header + payload)

    def next_serial(self):
        self.serial += 1
        return self.serial

    # Events we send.
    def key(self, digit):
        for state in (1, 0):
            self.send(self.keyboard, 3, struct.pack("<IIII", self.next_serial(), 0, evdev(digit), state))

    def keymap(self, text, announced):
        fd = os.memfd_create("keymap")
        os.write(fd, text.encode())
        self.send(self.keyboard, 0, struct.pack("<II", 1, announced), fds=[fd])
        os.close(fd)

    def configure(self, width, height):
        for surface in self.lock_surfaces:
            self.send(surface, 0, struct.pack("<III", self.next_serial(), width, height))

    # Requests we get.
    def receive(self, timeout):
        self.connection.settimeout(timeout)
        try:
            data, fds, _, _ = socket.recv_fds(self.connection, 65536, 16)
        except socket.timeout:
            return True
        if not data:
            return False
        self.buffer += data
        self.fds += fds
        while len(self.buffer) >= 8:
            object_id, word = struct.unpack_from("<II", self.buffer)
            size, opcode = word >> 16, word & 0xFFFF
            if len(self.buffer) < size:
                break
            body, self.buffer = self.buffer[8:size], self.buffer[size:]
            self.request(object_id, opcode, body)
        return True

    def request(self, object_id, opcode, body):
        interface = self.objects.get(object_id, "?")
        names = REQUESTS.get(interface, [])
        name = names[opcode] if opcode < len(names) else f"#{opcode}"
        log.write(f"{interface}.{name}\n")
        word = lambda index: struct.unpack_from("<I", body, 4 * index)[0]
        if interface == "wl_display" and name == "sync":
            self.send(word(0), 0, struct.pack("<I", 0))
            self.send(1, 1, struct.pack("<I", word(0)))
        elif interface == "wl_display" and name == "get_registry":
            self.objects[word(0)] = "wl_registry"
            for global_name, (global_interface, version) in GLOBALS.items():
                self.send(word(0), 0, struct.pack("<I", global_name) + string(global_interface) + struct.pack("<I", version))
        elif interface == "wl_registry" and name == "bind":
            length = word(1)
            offset = 8 + length + (-length % 4)
            bound = GLOBALS[word(0)][0]
            new_id = struct.unpack_from("<I", body, offset + 4)[0]
            self.objects[new_id] = bound
            self.bound(bound, new_id)
        elif interface == "wl_compositor":
            self.objects[word(0)] = "wl_surface" if name == "create_surface" else "wl_region"
        elif interface == "wl_shm" and name == "create_pool":
            self.objects[word(0)] = "wl_shm_pool"
            for fd in self.fds:
                os.close(fd)
            self.fds = []
        elif interface == "wl_shm_pool" and name == "create_buffer":
            self.objects[word(0)] = "wl_buffer"
        elif interface == "wl_seat" and name == "get_keyboard":
            self.keyboard = word(0)
            self.objects[word(0)] = "wl_keyboard"
            self.keyboard_ready()
        elif interface == "wl_seat" and name in ("get_pointer", "get_touch"):
            self.objects[word(0)] = "wl_pointer" if name == "get_pointer" else "wl_touch"
        elif interface == "ext_session_lock_manager_v1" and name == "lock":
            self.lock = word(0)
            self.objects[word(0)] = "ext_session_lock_v1"
        elif interface == "ext_session_lock_v1" and name == "get_lock_surface":
            self.objects[word(0)] = "ext_session_lock_surface_v1"
            self.lock_surfaces.append(word(0))

    def bound(self, interface, new_id):
        if interface == "wl_shm":
            self.send(new_id, 0, struct.pack("<I", 0))  # ARGB8888
        elif interface == "wl_output":
            self.output = new_id
            self.send(new_id, 1, struct.pack("<Iiii", 3, 1024, 768, 60000))  # mode: current, preferred
            self.send(new_id, 3, struct.pack("<i", 1))  # scale
            self.send(new_id, 2)  # done
        elif interface == "wl_seat":
            self.send(new_id, 0, struct.pack("<I", 2))  # capabilities: keyboard

    def keyboard_ready(self):
        if scenario == "nonsense":
            # 64 MiB announced for a file of a few bytes: mapped, it faults.
            self.keymap("xkb_keymap {", 64 << 20)
        else:
            self.keymap(KEYMAP, len(KEYMAP.encode()) + 1)


def pump(client, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not client.receive(0.02):
            return False
    return True


def wait_for(client, condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        if not client.receive(0.02):
            return False
    return condition()


def main():
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_path)
    server.listen(1)
    connection, _ = server.accept()
    client = Client(connection)
    if not wait_for(client, lambda: client.lock is not None and client.keyboard is not None, 10):
        log.write("(no lock asked)\n")
        return
    if scenario == "nonsense":
        client.send(client.lock, 0)  # locked
        log.write("> locked\n")
        wait_for(client, lambda: client.lock_surfaces, 5)
        client.configure(0x90000000, 1)
        log.write("> configure 0x90000000 x 1\n")
        client.send(client.output, 3, struct.pack("<i", 1 << 30))  # scale
        client.send(client.output, 2)  # done
        log.write("> scale 2^30\n")
        pump(client, 60)
    else:
        pump(client, 0.5)
        for digit in passcode:
            client.key(digit)
        log.write("> keys before locked\n")
        pump(client, 0.5)
        client.send(client.lock, 0)
        log.write("> locked\n")
        wait_for(client, lambda: client.lock_surfaces, 5)
        client.configure(640, 480)
        pump(client, 1.5)
        for digit in passcode:
            client.key(digit)
        log.write("> keys after locked\n")
        pump(client, 60)


main()
