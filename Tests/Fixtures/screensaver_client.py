#!/usr/bin/python3
"""An application calling org.freedesktop.ScreenSaver on the session bus (as
a browser playing a video does), for passlockd's tests.

Usage: screensaver_client.py ADDRESS hold APPLICATION REASON
         Inhibit, print the cookie, keep the connection until killed
       screensaver_client.py ADDRESS release-after SECONDS
         Inhibit, print the cookie, UnInhibit after SECONDS, then keep the
         connection until killed
       screensaver_client.py ADDRESS uninhibit COOKIE
         UnInhibit someone else's COOKIE; print the error's name, or "ok"
       screensaver_client.py ADDRESS own
         take org.freedesktop.ScreenSaver (a desktop's own service) and keep it
       screensaver_client.py ADDRESS replace
         take it from its owner (REPLACE_EXISTING, as a desktop's service
         may) and keep it
ADDRESS: the bus address ("session": the user's session bus).
"""
import sys
import time

import dbus

address, mode, arguments = sys.argv[1], sys.argv[2], sys.argv[3:]
bus = dbus.SessionBus() if address == "session" else dbus.bus.BusConnection(address)
NAME = "org.freedesktop.ScreenSaver"


def screensaver():
    return dbus.Interface(bus.get_object(NAME, "/org/freedesktop/ScreenSaver"), NAME)


if mode == "hold":
    print(screensaver().Inhibit(arguments[0], arguments[1]), flush=True)
elif mode == "release-after":
    cookie = screensaver().Inhibit("presenter", "Showing slides")
    print(cookie, flush=True)
    time.sleep(float(arguments[0]))
    screensaver().UnInhibit(cookie)
    print("released", flush=True)
elif mode == "uninhibit":
    try:
        screensaver().UnInhibit(dbus.UInt32(int(arguments[0])))
        print("ok", flush=True)
    except dbus.exceptions.DBusException as error:
        print(error.get_dbus_name(), flush=True)
    sys.exit(0)
elif mode == "own":
    bus.request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    print("owned", flush=True)
elif mode == "replace":
    bus.request_name(NAME, dbus.bus.NAME_FLAG_REPLACE_EXISTING | dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    print("owned", flush=True)
while True:
    time.sleep(60)
