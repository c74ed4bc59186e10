# Tests/Machine/image.sh — the whole Debian machine the machine suite and
# bench/machine boot under qemu, built from Debian's archive and cached:
# bookworm by default, trixie (MACHINE_RELEASE=trixie) for Wayfire.
# Sourced, not run:
#   machine_host_tools   installs qemu, mmdebstrap, e2fsprogs, netpbm when missing
#   machine_image        builds (once) or reuses the cached image; prints its
#                        directory: rootfs.img (raw ext4), vmlinuz, initrd.img
# Recipe and traps: ../shared/DESIGN.md, "A whole machine under qemu".

MACHINE_RELEASE=${MACHINE_RELEASE:-bookworm}
# A minimal console machine, as many physlock and vlock users run: no polkitd
# (its packages are downloaded into /opt/polkitd, not installed; the suite
# installs them for the "with polkitd" runs). On bookworm, weston for a
# graphical session on the bochs DRM device and physlock for bench/machine;
# on trixie, Wayfire 0.9 (its session-lock plugin) with Mesa's software GL on
# that device, and foot in it.
MACHINE_PACKAGES=(systemd systemd-sysv dbus libpam-systemd login passwd linux-image-amd64 initramfs-tools udev kbd procps)
case $MACHINE_RELEASE in
  trixie) MACHINE_PACKAGES+=(fonts-dejavu-core xkb-data sudo wayfire libgl1-mesa-dri libegl-mesa0 foot) ;;
  *) MACHINE_PACKAGES+=(weston fonts-dejavu-core xkb-data sudo physlock) ;;
esac
MACHINE_CACHE=${MACHINE_CACHE:-/var/cache/passlock-test}
MACHINE_USER=tester MACHINE_PASSWORD=tester-pw-1
MACHINE_OTHER=sam MACHINE_OTHER_PASSWORD=sam-pw-1

machine_log() { printf '%s\n' "machine: $*" >&2; }

machine_host_tools() {
  bash "$(dirname "${BASH_SOURCE[0]}")/../../scripts/install-deps" --packages qemu-system-x86 qemu-utils mmdebstrap e2fsprogs netpbm
}

# Runs inside mmdebstrap before the packages are installed: the initrd that
# linux-image-amd64's installation builds then holds only what this machine
# boots from (kernel start ~7 s instead of ~24 s under TCG).
machine_essential_hook() {
  local root=$1
  mkdir -p "$root/etc/initramfs-tools/conf.d" "$root/etc/initramfs-tools/hooks"
  printf 'MODULES=list\nCOMPRESS=gzip\n' >"$root/etc/initramfs-tools/conf.d/passlock-test.conf"
  cat >"$root/etc/initramfs-tools/hooks/passlock-test" <<'HOOK'
#!/bin/sh
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
for m in virtio_pci virtio_blk ext4 crc32c_generic; do
  manual_add_modules "$m"
  echo "$m" >>"$DESTDIR/conf/modules"
done
HOOK
  chmod 755 "$root/etc/initramfs-tools/hooks/passlock-test"
}

# Runs inside mmdebstrap once everything is installed.
machine_customize_hook() {
  local root=$1 unit
  echo passlock-machine >"$root/etc/hostname"
  printf '127.0.0.1 localhost\n127.0.1.1 passlock-machine\n' >"$root/etc/hosts"
  echo 6b7c0c4f5a9e4d6c8a3b2f1e0d9c8b7a >"$root/etc/machine-id"
  : >"$root/etc/fstab"
  # Nothing scheduled may run in the middle of a test; no network to wait for.
  for unit in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer fstrim.timer \
    e2scrub_all.timer e2scrub_reap.service systemd-networkd-wait-online.service man-db.timer; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
  done
  # The harness's control channel: a root shell on the serial line.
  mkdir -p "$root/etc/systemd/system/serial-getty@ttyS0.service.d"
  printf '[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear --keep-baud 115200 %%I dumb\n' \
    >"$root/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf"
  ln -sf /lib/systemd/system/serial-getty@.service \
    "$root/etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service"
  # Users: the one at the console, and another one for the shared-seat test.
  chroot "$root" useradd --create-home --shell /bin/bash --groups sudo "$MACHINE_USER"
  chroot "$root" useradd --create-home --shell /bin/bash "$MACHINE_OTHER"
  printf '%s:%s\n%s:%s\n' "$MACHINE_USER" "$MACHINE_PASSWORD" "$MACHINE_OTHER" "$MACHINE_OTHER_PASSWORD" |
    chroot "$root" chpasswd
  # weston as its user sets it up: pixman (no GPU driver), a terminal at start.
  mkdir -p "$root/home/$MACHINE_USER/.config"
  printf '[core]\nuse-pixman=true\nidle-time=0\n\n[shell]\nlocking=false\nbackground-color=0xff204a87\npanel-position=none\n\n[autolaunch]\npath=/usr/bin/weston-terminal\n' \
    >"$root/home/$MACHINE_USER/.config/weston.ini"
  chroot "$root" chown -R "$MACHINE_USER:$MACHINE_USER" "/home/$MACHINE_USER/.config"
  # polkitd and what it needs, downloaded, not installed.
  mkdir -p "$root/opt/polkitd"
  chroot "$root" apt-get install -y -qq --download-only -o Dir::Cache::archives=/opt/polkitd polkitd >/dev/null
  rm -rf "$root/opt/polkitd/partial" "$root/opt/polkitd/lock"
  cp "$root/boot/vmlinuz-"* "$MACHINE_IMAGE_TMP/vmlinuz"
  cp "$root/boot/initrd.img-"* "$MACHINE_IMAGE_TMP/initrd.img"
}

# The cached image, keyed by release, package list and this recipe; built once
# (~2 minutes from Debian's archive), then reused.
machine_image() {
  local key dir
  key=$( { printf '%s\n' "$MACHINE_RELEASE" "${MACHINE_PACKAGES[@]}" "$MACHINE_USER" "$MACHINE_OTHER"
    declare -f machine_essential_hook machine_customize_hook; } | sha256sum | cut -c1-12)
  dir="$MACHINE_CACHE/machine-$key"
  if [ ! -f "$dir/stamp" ]; then
    machine_log "building the $MACHINE_RELEASE machine image (once; cached in $dir)"
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp"
    local list started=$SECONDS
    list=$(IFS=,; echo "${MACHINE_PACKAGES[*]}")
    # mmdebstrap runs a hook that is an executable file as a script.
    local hook
    for hook in essential customize; do
      { echo '#!/bin/bash'; echo 'set -e'
        declare -p MACHINE_USER MACHINE_OTHER MACHINE_PASSWORD MACHINE_OTHER_PASSWORD
        echo "MACHINE_IMAGE_TMP=$dir.tmp"
        declare -f "machine_${hook}_hook"; echo "machine_${hook}_hook \"\$1\""
      } >"$dir.tmp/$hook-hook"
      chmod 755 "$dir.tmp/$hook-hook"
    done
    # The host's archive sources, with the release renamed.
    sed "s/bookworm/$MACHINE_RELEASE/g" /etc/apt/sources.list.d/debian.sources >"$dir.tmp/sources"
    mmdebstrap --quiet --variant=apt --include="$list" \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/info/*' \
      --essential-hook="$dir.tmp/essential-hook" --customize-hook="$dir.tmp/customize-hook" \
      "$MACHINE_RELEASE" "$dir.tmp/root" "$dir.tmp/sources" >&2 || return 1
    mkfs.ext4 -q -F -L passlock-root -d "$dir.tmp/root" "$dir.tmp/rootfs.img" 4G >&2 || return 1
    rm -rf "$dir.tmp/root" "$dir.tmp/"*-hook "$dir.tmp/sources"
    mv "$dir.tmp" "$dir"
    touch "$dir/stamp"
    machine_log "image built in $((SECONDS - started)) s"
  fi
  printf '%s\n' "$dir"
}
