# Tests/Wayland/compositor.sh — Debian 13 (trixie) root filesystem with real
# Wayland compositors (sway, labwc, Mir) run headless in a container, for the
# Wayland lock screen's tests and bench/wayland. Sourced, not run:
#   wl_prepare           host tools, the cached root filesystem, a fresh copy
#                        with passlock's release build in /opt/passlock, the
#                        container started (systemd-nspawn, not booted)
#   wl_start sway|labwc|mir
#                        the compositor on two headless outputs, as WL_USER;
#                        sets WL_OUTPUT_1 and WL_OUTPUT_2 to their names
#   wl_output NAME on|off|scale=N (sway: scale only)
#                        switches an output on or off or scales it, as each
#                        compositor's users do, and waits for it to happen
#   wl_stop_compositor   ends it and everything that ran as WL_USER
#   inside CMD…          runs CMD in the container as root
#   as_user CMD…         runs CMD as WL_USER in the compositor's environment
#   wl_shutdown          stops the container, removes the copy (the caller
#                        traps EXIT, TERM and INT with it)
# Recipe and pitfalls: ../shared/DESIGN.md, "A Wayland compositor, headless".

WL_RELEASE=trixie
WL_PACKAGES=(sway swaylock swayidle swaybg labwc grim wtype foot wlr-randr wayland-utils libxkbcommon-tools
  fonts-dejavu-core fonts-vlgothic passwd login libpam-modules procps python3-minimal util-linux mount libstdc++6
  mir-demos mir-platform-graphics-virtual mir-platform-rendering-egl-generic mir-platform-input-evdev10
  libgl1-mesa-dri libegl-mesa0 mir-test-tools)
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

# The compositor ($1: sway, labwc or mir) on two outputs of 1024×768 side by
# side, no GPU (pixman on sway and labwc; Mir's virtual platform with Mesa's
# software renderer), no input devices but the virtual keyboards tests add.
# The desktop is green (#00ff00); a foot terminal (blue, #0000ff) has the
# focus and writes whatever reaches it to /out/typed (raw mode: every key at
# once).
wl_start() {
  local compositor=$1 socket
  WL_COMPOSITOR=$compositor WL_DISPLAY= WL_SWAYSOCK=
  WL_OUTPUT_1=HEADLESS-1 WL_OUTPUT_2=HEADLESS-2
  rm -f "$WL_OUT/typed"
  case $compositor in
    sway)
      as_user mkdir -p "/home/$WL_USER/.config/sway"
      printf '%s\n' 'output * bg #00ff00 solid_color' 'default_border none' \
        | as_user tee "/home/$WL_USER/.config/sway/config" >/dev/null ;;
    mir)
      # Mir's demo server (mir-test-tools; Mir's example of a server built
      # on its library, which every Mir shell uses and which holds Mir's
      # session lock) on its virtual platform. miral-shell would do the same
      # but paints its own wallpaper over the desktop the tests look for.
      # Its outputs are laid out, switched and scaled by its display file,
      # which it reloads when the file changes; it offers ext-session-lock
      # only when asked, as a Mir shell asks for it.
      WL_OUTPUT_1=Virtual-1 WL_OUTPUT_2=Virtual-2
      WL_MIR_OUTPUT_2=(enabled 1)
      wl_mir_layout ;;
  esac
  if [ "$compositor" = mir ]; then
    as_user mir_demo_server --platform-display-libs mir:virtual --virtual-output 1024x768 --virtual-output 1024x768 \
      --cursor null --add-wayland-extensions ext_session_lock_manager_v1 \
      --display-config "static=/home/$WL_USER/.config/mir.display" >"$WL_OUT/$compositor.log" 2>&1 &
  else
    as_user env WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1 WLR_HEADLESS_OUTPUTS=2 \
      "$compositor" >"$WL_OUT/$compositor.log" 2>&1 &
  fi
  for _ in $(seq 100); do
    socket=$(inside sh -c "ls /run/user/$WL_UID/ | grep -E '^wayland-[0-9]+$' | head -n 1" 2>/dev/null || true)
    [ -n "$socket" ] && break
    sleep 0.1
  done
  [ -n "$socket" ] || { cat "$WL_OUT/$compositor.log" >&2; wl_log "$compositor did not start"; return 1; }
  WL_DISPLAY=$socket
  case $compositor in
    sway)
      for _ in $(seq 50); do
        WL_SWAYSOCK=$(inside sh -c "ls /run/user/$WL_UID/sway-ipc.*.sock 2>/dev/null | head -n 1" || true)
        [ -n "$WL_SWAYSOCK" ] && as_user swaymsg -t get_outputs >/dev/null 2>&1 && break
        sleep 0.1
      done
      as_user swaymsg output HEADLESS-1 resolution 1024x768 position 0 0 >/dev/null
      as_user swaymsg output HEADLESS-2 resolution 1024x768 position 1024 0 >/dev/null ;;
    labwc)
      for _ in $(seq 50); do as_user wlr-randr >/dev/null 2>&1 && break; sleep 0.1; done
      as_user wlr-randr --output HEADLESS-1 --custom-mode 1024x768 --pos 0,0 --output HEADLESS-2 --custom-mode 1024x768 --pos 1024,0 ;;
  esac
  if [ "$compositor" != sway ]; then
    # labwc and Mir draw no background of their own: the same green as sway's.
    as_user swaybg -c '#00ff00' >"$WL_OUT/swaybg.log" 2>&1 &
  fi
  as_user foot -o colors.background=0000ff sh -c 'stty raw -echo; exec cat >/out/typed' >"$WL_OUT/foot.log" 2>&1 &
  for _ in $(seq 100); do [ -e "$WL_OUT/typed" ] && break; sleep 0.1; done
  [ -e "$WL_OUT/typed" ] || { cat "$WL_OUT/foot.log" >&2; wl_log "foot did not start"; return 1; }
}

# Mir's display file: Virtual-1 at 0,0; Virtual-2 right of it, in the state
# and at the scale WL_MIR_OUTPUT_2 holds. Written whole and renamed into
# place, so Mir never reads half of it.
wl_mir_layout() {
  as_user mkdir -p "/home/$WL_USER/.config"
  printf '%s\n' layouts: '  default:' '    cards:' '    - card-id: 0' \
    '      Virtual-1:' '        state: enabled' '        position: [0, 0]' '        scale: 1' \
    '      Virtual-2:' "        state: ${WL_MIR_OUTPUT_2[0]}" '        position: [1024, 0]' "        scale: ${WL_MIR_OUTPUT_2[1]}" \
    | as_user sh -c "cat >/home/$WL_USER/.config/mir.display.new && mv /home/$WL_USER/.config/mir.display.new /home/$WL_USER/.config/mir.display"
}

# Whether OUTPUT is a wl_output clients see now, and at what scale.
wl_output_shown() { as_user wayland-info 2>/dev/null | grep -A2 "name: $1\$" | grep -q "scale: ${2:-[0-9]*},"; }

# wl_output OUTPUT on|off|scale=N: as sway's, labwc's or Mir's users do it
# (swaymsg, wlr-randr, Mir's display file); returns once clients see it.
wl_output() {
  local output=$1 change=$2 scale=
  case $change in scale=*) scale=${change#scale=} ;; esac
  case $WL_COMPOSITOR in
    sway)
      # sway's tests add and unplug outputs instead (swaymsg create_output).
      [ -n "$scale" ] && as_user swaymsg output "$output" scale "$scale" >/dev/null ;;
    labwc)
      case $change in
        on) as_user wlr-randr --output "$output" --on --custom-mode 1024x768 --pos 1024,0 ;;
        off) as_user wlr-randr --output "$output" --off ;;
        *) as_user wlr-randr --output "$output" --scale "$scale" ;;
      esac ;;
    mir)
      [ "$output" = Virtual-2 ] || { wl_log "only Virtual-2 is switched on Mir"; return 1; }
      case $change in
        on) WL_MIR_OUTPUT_2=(enabled "${WL_MIR_OUTPUT_2[1]}") ;;
        off) WL_MIR_OUTPUT_2=(disabled "${WL_MIR_OUTPUT_2[1]}") ;;
        *) WL_MIR_OUTPUT_2=("${WL_MIR_OUTPUT_2[0]}" "$scale") ;;
      esac
      wl_mir_layout ;;
  esac || { wl_log "$WL_COMPOSITOR refused: $output $change"; return 1; }
  for _ in $(seq 50); do
    case $change in
      off) wl_output_shown "$output" || return 0 ;;
      on) wl_output_shown "$output" && return 0 ;;
      *) wl_output_shown "$output" "$scale" && return 0 ;;
    esac
    sleep 0.1
  done
  wl_log "$output did not turn $change on $WL_COMPOSITOR"
  return 1
}

# Ends the compositor and everything the user runs.
wl_stop_compositor() {
  inside pkill -KILL -u "$WL_UID" 2>/dev/null || true
  for _ in $(seq 50); do inside pgrep -u "$WL_UID" >/dev/null 2>&1 || break; sleep 0.1; done
  inside sh -c "rm -rf /run/user/$WL_UID/*" 2>/dev/null || true
  WL_DISPLAY= WL_SWAYSOCK= WL_COMPOSITOR=
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
