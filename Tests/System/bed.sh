# Tests/System/bed.sh — a real Debian bookworm with systemd as PID 1, booted in
# a container (systemd-nspawn), for tests and benchmarks that need a real
# logind, a real user manager and real PAM clients. Sourced, not run:
#   bed_boot            build (or reuse) the root filesystem, copy it, boot it
#   bed_install         install passlock into it with scripts/install --destdir
#   bed_add_user NAME   a user with a home and the password NAME-password-1
#   inside CMD…         run CMD in the container (all namespaces)
#   as_user CMD…        run CMD as the test user, reaching their user manager
#   bed_shutdown        power it off, remove the copy (the caller traps EXIT,
#                       and TERM and INT, which would skip EXIT, with it)
# Recipe and pitfalls: ../shared/DESIGN.md, "A real systemd machine in a container".

# Debian 12 (bookworm, systemd 252) by default; BED_RELEASE=trixie boots
# Debian 13 (systemd 257) from the same archive.
BED_RELEASE=${BED_RELEASE:-bookworm}
# (autopkgtest, with the dpkg-dev it needs for a source tree, and pamtester:
# the package's own autopkgtests run on the booted system; python3-dbus: an
# application calling org.freedesktop.ScreenSaver.)
BED_PACKAGES=(systemd systemd-sysv dbus dbus-user-session libpam-systemd login passwd polkitd
  procps python3-minimal libstdc++6 util-linux sudo openssh-server openssh-client sshpass
  autopkgtest dpkg-dev pamtester python3-dbus)
# Debian 13's sway (1.10) offers ext-session-lock-v1 (bookworm's 1.7 does
# not): a Wayland desktop in a logind session of its own, run headless, with
# grim for screenshots, wtype for keys and foot for a window (one that
# inhibits idle).
[ "$BED_RELEASE" = bookworm ] || BED_PACKAGES+=(sway grim wtype fonts-dejavu-core foot)
# And KDE Plasma's KWin with its screen locker and greeter (whose lock
# screen is plasma-workspace's; layer-shell-qt is only recommended, and the
# greeter cannot start without it): a real KDE lock screen beside logind.
[ "$BED_RELEASE" = bookworm ] || BED_PACKAGES+=(kwin-wayland libkscreenlocker6 plasma-workspace layer-shell-qt)
# The desktops whose own lock screens take the passcode through their own
# PAM services (Debian 13): their packages are also downloaded into the
# root (/var/cache/passlock-test-debs), for the tests to take each service's
# file unchanged from them; GNOME itself is not installed.
BED_DOWNLOADS=()
[ "$BED_RELEASE" = bookworm ] || BED_DOWNLOADS=(gdm3 libkscreenlocker6)
BED_CACHE=${BED_CACHE:-/var/cache/passlock-test}
BED_USER=alice

bed_log() { printf '%s\n' "bed: $*" >&2; }

# Host tools for the container, installed by the project itself.
bed_host_tools() {
  bash "$(dirname "${BASH_SOURCE[0]}")/../../scripts/install-deps" --packages systemd-container mmdebstrap
}

# The cached root filesystem, keyed by release and package list; built once.
bed_rootfs() {
  local key dir
  key=$(printf '%s\n' "$BED_RELEASE" "${BED_PACKAGES[@]}" ${BED_DOWNLOADS[@]+"download:"} ${BED_DOWNLOADS[@]+"${BED_DOWNLOADS[@]}"} \
    | sha256sum | cut -c1-12)
  dir="$BED_CACHE/rootfs-$key"
  if [ ! -f "$dir.stamp" ]; then
    bed_log "building the $BED_RELEASE root filesystem (once; cached in $dir)"
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$BED_CACHE"
    local list
    list=$(IFS=,; echo "${BED_PACKAGES[*]}")
    # The host's own archive, with the release's suites (no host is named here).
    sed "s/bookworm/$BED_RELEASE/g" /etc/apt/sources.list.d/debian.sources >"$dir.sources"
    local downloads=()
    [ ${#BED_DOWNLOADS[@]} -eq 0 ] || downloads=(--customize-hook="mkdir -p \"\$1/var/cache/passlock-test-debs\" && chroot \"\$1\" sh -c 'cd /var/cache/passlock-test-debs && apt-get download -q ${BED_DOWNLOADS[*]}'")
    mmdebstrap --quiet --variant=apt --include="$list" ${downloads[@]+"${downloads[@]}"} "$BED_RELEASE" "$dir.tmp" "$dir.sources" >&2
    # Timers that would run apt or fstrim in the middle of a test.
    for unit in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer fstrim.timer e2scrub_all.timer; do
      ln -sf /dev/null "$dir.tmp/etc/systemd/system/$unit"
    done
    # Nothing to fetch or resolve inside: the container has no network.
    ln -sf /dev/null "$dir.tmp/etc/systemd/system/systemd-networkd-wait-online.service"
    mv "$dir.tmp" "$dir"
    touch "$dir.stamp"
  fi
  printf '%s\n' "$dir"
}

bed_shutdown() {
  [ -n "${BED_ROOT:-}" ] || return 0
  if [ -n "${BED_LEADER:-}" ] && kill -0 "$BED_LEADER" 2>/dev/null; then
    nsenter -t "$BED_LEADER" -a systemctl poweroff >/dev/null 2>&1 || true
    for _ in $(seq 100); do kill -0 "$BED_NSPAWN" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ -n "${BED_NSPAWN:-}" ] && kill -0 "$BED_NSPAWN" 2>/dev/null; then
    kill -KILL "$BED_NSPAWN" 2>/dev/null || true
    sleep 0.5
  fi
  rm -rf "$BED_ROOT" "$BED_WORK"
  BED_ROOT=
}

# Boots a fresh copy of the root filesystem; sets BED_ROOT, BED_LEADER (the
# container's PID 1 as seen from here), BED_WORK (host-side scratch).
bed_boot() {
  bed_host_tools
  local cached
  cached=$(bed_rootfs)
  BED_WORK=$(mktemp -d /var/tmp/passlock-bed.XXXXXX)
  BED_ROOT="$BED_WORK/root"
  cp -a --reflink=auto "$cached" "$BED_ROOT"
  # /sys/power that "suspends" by writing to a plain file (DESIGN.md).
  mkdir -p "$BED_WORK/power"
  echo "freeze mem" > "$BED_WORK/power/state"
  echo "s2idle [deep]" > "$BED_WORK/power/mem_sleep"
  echo "platform" > "$BED_WORK/power/disk"
  systemd-nspawn -D "$BED_ROOT" -b --register=no --keep-unit --private-network \
    --console=read-only --bind="$BED_WORK/power:/sys/power" >"$BED_WORK/console.log" 2>&1 </dev/null &
  BED_NSPAWN=$!
  BED_LEADER=
  for _ in $(seq 200); do
    local child
    child=$(pgrep -P "$BED_NSPAWN" | head -n 1 || true)
    if [ -n "$child" ] && [ "$(cat /proc/"$child"/comm 2>/dev/null)" = systemd ]; then BED_LEADER=$child; break; fi
    sleep 0.1
  done
  [ -n "$BED_LEADER" ] || { cat "$BED_WORK/console.log" >&2; bed_log "the container did not start"; return 1; }
  for _ in $(seq 300); do
    inside loginctl list-sessions >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  cat "$BED_WORK/console.log" >&2
  bed_log "logind did not answer in 30 s"
  return 1
}

# Installs this checkout into the booted system, as an admin would.
bed_install() {
  bash scripts/install --destdir "$BED_ROOT" 2>"$BED_WORK/install.log" || { cat "$BED_WORK/install.log" >&2; return 1; }
  inside systemctl daemon-reload
}

# A user with a home and the password NAME-password-1.
bed_add_user() {
  inside useradd --create-home --shell /bin/bash "$1"
  printf '%s:%s-password-1\n' "$1" "$1" | inside chpasswd
}

inside() { nsenter -t "$BED_LEADER" -a -- "$@"; }

bed_uid() { inside id -u "$BED_USER"; }

# Runs as the test user with their user manager and bus in reach.
as_user() {
  local uid
  uid=$(bed_uid)
  inside runuser -u "$BED_USER" -- env XDG_RUNTIME_DIR="/run/user/$uid" \
    DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" HOME="/home/$BED_USER" "$@"
}
