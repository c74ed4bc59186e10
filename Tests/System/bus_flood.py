"""A raw D-Bus client that floods one connection with unicast signals, each
carrying descriptors: what any local user may send to anyone on the system
bus. Used by Tests/System/run as another user against passlockd.

Usage: python3 - DESTINATION SIGNALS DESCRIPTORS   (the script on stdin)
Prints how many signals the bus took before it stopped taking them.
"""
import errno
import os
import socket
import struct
import sys
import time


def pad(data, alignment):
    return data + b"\0" * (-len(data) % alignment)


def field(code, signature, value):
    body = bytes([code, len(signature)]) + signature.encode() + b"\0"
    if signature in ("s", "o"):
        body = pad(body, 4) + struct.pack("<I", len(value)) + value.encode() + b"\0"
    elif signature == "u":
        body = pad(body, 4) + struct.pack("<I", value)
    return body


def message(kind, serial, fields, body=b""):
    encoded = b""
    for f in fields:
        encoded = pad(encoded, 8) + f
    header = struct.pack("<cBBBIII", b"l", kind, 0, 1, len(body), serial, len(encoded)) + encoded
    return pad(header, 8) + body


def main():
    destination, signals, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bus = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bus.connect("/run/dbus/system_bus_socket")
    bus.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    reader = bus.makefile("rb")
    assert reader.readline().startswith(b"OK "), "EXTERNAL refused"
    bus.sendall(b"NEGOTIATE_UNIX_FD\r\n")
    assert reader.readline().startswith(b"AGREE_UNIX_FD"), "no descriptor passing"
    bus.sendall(b"BEGIN\r\n")
    hello = [field(1, "o", "/org/freedesktop/DBus"), field(2, "s", "org.freedesktop.DBus"),
             field(3, "s", "Hello"), field(6, "s", "org.freedesktop.DBus")]
    bus.sendall(message(1, 1, hello))
    null = os.open("/dev/null", os.O_RDONLY)
    fds = struct.pack("<%di" % per, *([null] * per))
    sent = 0
    deadline = time.monotonic() + 10
    for serial in range(2, signals + 2):
        signal = [field(1, "o", "/flood"), field(2, "s", "org.example.Flood"), field(3, "s", "Boom"),
                  field(6, "s", destination), field(9, "u", per)]
        while True:
            try:
                bus.sendmsg([message(4, serial, signal)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
                break
            except OSError as error:
                # The kernel caps descriptors in flight at the sender's
                # RLIMIT_NOFILE (ETOOMANYREFS): wait for the bus to take some.
                if error.errno not in (errno.ETOOMANYREFS, errno.EAGAIN) or time.monotonic() > deadline:
                    print(f"{sent} (then: {error.strerror})")
                    return
                time.sleep(0.001)
        sent += 1
    print(sent)


main()
