# bench/xorg.sh — sourced: start_xorg WORKDIR starts Xorg (Tests/Fixtures/
# xorg-dummy.conf: no GPU needed, and it opens its VT) on a free VT and waits until
# it answers; sets XORG_VT, XORG_DISPLAY. stop_xorg ends it and frees its VT.
start_xorg() {
  local work=$1 n=47
  while [ -e "/tmp/.X11-unix/X$n" ]; do n=$((n + 1)); done
  XORG_DISPLAY=:$n
  XORG_VT=$(/usr/bin/python3 -c 'import fcntl,os,struct; c=os.open("/dev/tty0",os.O_RDWR|os.O_NOCTTY); print(struct.unpack("i",fcntl.ioctl(c,0x5600,b"\0"*4))[0])')
  /usr/lib/xorg/Xorg "$XORG_DISPLAY" "vt$XORG_VT" -config "$PWD/Tests/Fixtures/xorg-dummy.conf" -noreset -nolisten tcp \
    -logfile "$work/xorg.log" >/dev/null 2>&1 &
  XORG_PID=$!
  for _ in $(seq 100); do
    DISPLAY=$XORG_DISPLAY timeout 2 xdpyinfo >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "Xorg did not start (see $work/xorg.log)" >&2
  return 1
}

stop_xorg() {
  [ -n "${XORG_PID:-}" ] || return 0
  kill -CONT "$XORG_PID" 2>/dev/null; kill "$XORG_PID" 2>/dev/null; wait "$XORG_PID" 2>/dev/null || true
  /usr/bin/python3 -c "import fcntl,os; c=os.open('/dev/tty0',os.O_RDWR|os.O_NOCTTY); fcntl.ioctl(c,0x5608,$XORG_VT)" 2>/dev/null || true
  XORG_PID=
}
