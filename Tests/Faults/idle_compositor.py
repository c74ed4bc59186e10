#!/usr/bin/python3
"""A compositor's idle notification as a test plays it, for passlockd's
idle-from-the-compositor tests (Tests/EndToEndTests/DaemonEndToEndTests):
only the wire format's part that an idle watch meets (wl_display,
wl_registry, ext_idle_notifier_v1, ext_idle_notification_v1).

It listens on SOCKET, logs each request it gets (one line each,
`get_idle_notification TIMEOUT` for that one), and follows a scenario for
each client:

  idle      offers a seat and ext_idle_notifier_v1; sends `idled` IDLE_AFTER
            seconds after the first notification is asked for (later ones
            stay active)
  without   offers a seat only (a compositor without the protocol)
  silent    reads and never answers (a hung compositor)

Usage: idle_compositor.py SOCKET LOG SCENARIO [IDLE_AFTER]
"""
import os
import socket
import struct
import sys
import time

socket_path, log_path, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
idle_after = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
log = open(log_path, "a", buffering=1)
idled_once = False


def message(obj, opcode, payload=b""):
    return struct.pack("=II", obj, (8 + len(payload)) << 16 | opcode) + payload


def string(text):
    data = text.encode() + b"\0"
    return struct.pack("=I", len(data)) + data + b"\0" * (-len(data) % 4)


def serve(client):
    buffer = b""
    notification = None
    idle_at = None
    client.settimeout(0.1)
    while True:
        if idle_at is not None and time.monotonic() >= idle_at:
            client.sendall(message(notification, 0))  # idled
            log.write("idled\n")
            idle_at = None
        try:
            data = client.recv(4096)
        except socket.timeout:
            continue
        if not data:
            return
        buffer += data
        while len(buffer) >= 8:
            obj, size_opcode = struct.unpack("=II", buffer[:8])
            size, opcode = size_opcode >> 16, size_opcode & 0xFFFF
            if len(buffer) < size:
                break
            args, buffer = buffer[8:size], buffer[size:]
            if scenario == "silent":
                log.write("request (no answer)\n")
                continue
            if obj == 1 and opcode == 1:  # wl_display.get_registry
                registry = struct.unpack("=I", args[:4])[0]
                globals_ = [(1, "wl_seat", 5)]
                if scenario == "idle":
                    globals_.append((2, "ext_idle_notifier_v1", 1))
                for name, interface, version in globals_:
                    client.sendall(message(registry, 0, struct.pack("=I", name) + string(interface) + struct.pack("=I", version)))
                log.write("get_registry\n")
            elif obj == 1 and opcode == 0:  # wl_display.sync
                callback = struct.unpack("=I", args[:4])[0]
                client.sendall(message(callback, 0, struct.pack("=I", 1)))  # done
                log.write("sync\n")
            elif opcode == 1 and len(args) == 12:  # ext_idle_notifier_v1.get_idle_notification
                notification, timeout, _seat = struct.unpack("=III", args)
                log.write(f"get_idle_notification {timeout}\n")
                global idled_once
                if not idled_once:
                    idle_at = time.monotonic() + idle_after
                    idled_once = True
            else:
                log.write(f"request {obj}.{opcode}\n")


server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(socket_path)
server.listen(4)
while True:
    connection, _ = server.accept()
    log.write("connected\n")
    try:
        serve(connection)
    except OSError:
        pass
    connection.close()
    log.write("disconnected\n")
