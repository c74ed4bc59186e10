# Tests/Wayland/compositor.sh — Debian 13 (trixie) root filesystem with real
# Wayland compositors (sway, labwc) run headless in a container, for the
# Wayland lock screen's tests and bench/wayland. Sourced, not run:
#   wl_prepare           host tools, the cached root filesystem, a fresh copy
#                        with passlock's release build in /opt/passlock, the
#                        container started (systemd-nspawn, not booted)
#   wl_start sway|labwc  the compositor on two headless outputs, as WL_USER
#   wl_stop_compositor   ends it and everything that ran as WL_USER
#   inside CMD…          runs CMD in the container as root
#   as_user CMD…         runs CMD as WL_USER in the compositor's environment
#   wl_shutdown          stops the container, removes the copy (the caller
#                        traps EXIT, TERM and INT with it)
# Recipe and pitfalls: ../shared/DESIGN.md, "A Wayland compositor, headless".

WL_RELEASE=trixie
WL_PACKAGES=(sway swaylock swayidle swaybg labwc grim wtype foot wlr-randr wayland-utils libxkbcommon-tools
  fonts-dejavu-core fonts-vlgothic passwd login libpam-modules procps python3-minimal util-linux mount libstdc++6)
WL_CACHE=${WL_CACHE:-/var/cache/passlock-test}
WL_USER=alice
WL_UID=1000
WL_PREFIX=/opt/passlock

wl_log() { printf '%s\n' "wayland: $*" >&2; }

# Host tools for the container, installed by the suite itself.
wl_host_tools() {
  bash "$(dirname "${BASH_SOURCE[0]}")/../../scripts/install-deps" --packages systemd-container mmdebstrap
}

# The cached root filesystem, keyed by release and package list; built once
# (~60 s). The host's own archive sources, with the release renamed.
wl_rootfs() {
  local key dir sources
  key=$(printf '%s\n' "$WL_RELEASE" "${WL_PACKAGES[@]}" | sha256sum | cut -c1-12)
  dir="$WL_CACHE/wayland-rootfs-$key"
  if [ ! -f "$dir.stamp" ]; then
    wl_log "building the $WL_RELEASE root filesystem (once; cached in $dir)"
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$WL_CACHE"
    sources=$(mktemp)
    sed "s/bookworm/$WL_RELEASE/g" /etc/apt/sources.list.d/debian.sources >"$sources"
    local list
    list=$(IFS=,; echo "${WL_PACKAGES[*]}")
    if ! mmdebstrap --quiet --variant=apt --include="$list" "$WL_RELEASE" "$dir.tmp" "$sources" >&2; then
      rm -f "$sources"
      return 1
    fi
    rm -f "$sources"
    chroot "$dir.tmp" useradd --create-home --uid "$WL_UID" --shell /bin/bash "$WL_USER"
    mv "$dir.tmp" "$dir"
    touch "$dir.stamp"
  fi
  printf '%s\n' "$dir"
}

# Starts a fresh copy of the cached root filesystem in a container (not
# booted: a stub init as PID 1, --as-pid2) with passlock's binaries from BIN
# (default: the release build) in $WL_PREFIX/bin; BIN "none": without them
# (Tests/KDE installs the package instead). Sets WL_ROOT, WL_WORK,
# WL_OUT (the container's /out), WL_LEADER (its PID 1 as seen from here).
wl_prepare() {
  local bin=${1:-.build/release} cached p
  wl_host_tools || return 1
  cached=$(wl_rootfs) || return 1
  WL_WORK=$(mktemp -d /var/tmp/passlock-wayland.XXXXXX)
  WL_ROOT="$WL_WORK/root"
  WL_OUT="$WL_WORK/out"
  mkdir -p "$WL_OUT"
  chmod 777 "$WL_OUT"
  cp -a --reflink=auto "$cached" "$WL_ROOT"
  install -d "$WL_ROOT$WL_PREFIX/bin"
  for p in passlock passlock-auth passlock-wayland; do
    [ "$bin" != none ] || break
    [ -x "$bin/$p" ] || { wl_log "$bin/$p is missing: build first"; return 1; }
    install -m 755 "$bin/$p" "$WL_ROOT$WL_PREFIX/bin/$p"
  done
  systemd-nspawn -q -D "$WL_ROOT" --register=no --keep-unit --as-pid2 --private-network \
    --system-call-filter=@memlock --bind="$WL_OUT:/out" /bin/sleep infinity \
    >"$WL_WORK/nspawn.log" 2>&1 </dev/null &
  WL_NSPAWN=$!
  # The container's PID 1 is nspawn's stub init (not one of nspawn's own
  # short-lived helpers).
  WL_LEADER=
  for _ in $(seq 100); do
    WL_LEADER=$(pgrep -P "$WL_NSPAWN" -x '\(sd-stubinit\)' || true)
    [ -n "$WL_LEADER" ] && break
    sleep 0.1
  done
  [ -n "$WL_LEADER" ] || { cat "$WL_WORK/nspawn.log" >&2; wl_log "the container did not start"; return 1; }
  inside install -d -m 700 -o "$WL_UID" -g "$WL_UID" "/run/user/$WL_UID"
}

inside() { nsenter -t "$WL_LEADER" -a -- "$@"; }

# WAYLAND_DISPLAY and SWAYSOCK of the running compositor (set by wl_start).
WL_DISPLAY= WL_SWAYSOCK=

# Runs CMD as WL_USER with the compositor's WAYLAND_DISPLAY and SWAYSOCK
# (each only once known: an empty SWAYSOCK stops sway's IPC).
as_user() {
  local session=()
  [ -z "$WL_DISPLAY" ] || session+=("WAYLAND_DISPLAY=$WL_DISPLAY")
  [ -z "$WL_SWAYSOCK" ] || session+=("SWAYSOCK=$WL_SWAYSOCK")
  inside setpriv --reuid="$WL_UID" --regid="$WL_UID" --init-groups -- env -i HOME="/home/$WL_USER" USER="$WL_USER" \
    LOGNAME="$WL_USER" PATH="$WL_PREFIX/bin:/usr/bin:/bin" XDG_RUNTIME_DIR="/run/user/$WL_UID" LANG=C.UTF-8 \
    "${session[@]}" "$@"
}

# The compositor ($1: sway or labwc) on two headless outputs of 1024×768,
# pixman renderer, no input devices but the virtual keyboards tests add.
# The desktop is green (#00ff00); a foot terminal (blue, #0000ff) has the
# focus and writes whatever reaches it to /out/typed (raw mode: every key at
# once).
wl_start() {
  local compositor=$1 socket
  WL_COMPOSITOR=$compositor WL_DISPLAY= WL_SWAYSOCK=
  rm -f "$WL_OUT/typed"
  if [ "$compositor" = sway ]; then
    as_user mkdir -p "/home/$WL_USER/.config/sway"
    printf '%s\n' 'output * bg #00ff00 solid_color' 'default_border none' \
      | as_user tee "/home/$WL_USER/.config/sway/config" >/dev/null
  fi
  as_user env WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1 WLR_HEADLESS_OUTPUTS=2 \
    "$compositor" >"$WL_OUT/$compositor.log" 2>&1 &
  for _ in $(seq 100); do
    socket=$(inside sh -c "ls /run/user/$WL_UID/ | grep -E '^wayland-[0-9]+$' | head -n 1" 2>/dev/null || true)
    [ -n "$socket" ] && break
    sleep 0.1
  done
  [ -n "$socket" ] || { cat "$WL_OUT/$compositor.log" >&2; wl_log "$compositor did not start"; return 1; }
  WL_DISPLAY=$socket
  if [ "$compositor" = sway ]; then
    for _ in $(seq 50); do
      WL_SWAYSOCK=$(inside sh -c "ls /run/user/$WL_UID/sway-ipc.*.sock 2>/dev/null | head -n 1" || true)
      [ -n "$WL_SWAYSOCK" ] && as_user swaymsg -t get_outputs >/dev/null 2>&1 && break
      sleep 0.1
    done
    as_user swaymsg output HEADLESS-1 resolution 1024x768 position 0 0 >/dev/null
    as_user swaymsg output HEADLESS-2 resolution 1024x768 position 1024 0 >/dev/null
  else
    for _ in $(seq 50); do as_user wlr-randr >/dev/null 2>&1 && break; sleep 0.1; done
    as_user wlr-randr --output HEADLESS-1 --custom-mode 1024x768 --pos 0,0 --output HEADLESS-2 --custom-mode 1024x768 --pos 1024,0
    # labwc draws no background of its own: the same green as sway's.
    as_user swaybg -c '#00ff00' >"$WL_OUT/swaybg.log" 2>&1 &
  fi
  as_user foot -o colors.background=0000ff sh -c 'stty raw -echo; exec cat >/out/typed' >"$WL_OUT/foot.log" 2>&1 &
  for _ in $(seq 100); do [ -e "$WL_OUT/typed" ] && break; sleep 0.1; done
  [ -e "$WL_OUT/typed" ] || { cat "$WL_OUT/foot.log" >&2; wl_log "foot did not start"; return 1; }
}

# Ends the compositor and everything the user runs.
wl_stop_compositor() {
  inside pkill -KILL -u "$WL_UID" 2>/dev/null || true
  for _ in $(seq 50); do inside pgrep -u "$WL_UID" >/dev/null 2>&1 || break; sleep 0.1; done
  inside sh -c "rm -rf /run/user/$WL_UID/*" 2>/dev/null || true
  WL_DISPLAY= WL_SWAYSOCK=
}

wl_shutdown() {
  [ -n "${WL_WORK:-}" ] || return 0
  if [ -n "${WL_NSPAWN:-}" ] && kill -0 "$WL_NSPAWN" 2>/dev/null; then
    kill -TERM "$WL_NSPAWN" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$WL_NSPAWN" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$WL_NSPAWN" 2>/dev/null || true
    wait "$WL_NSPAWN" 2>/dev/null || true
  fi
  rm -rf "$WL_WORK"
  WL_WORK=
}
