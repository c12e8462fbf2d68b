#!/usr/bin/env bash
# A Debian bookworm root for the system test (make test-system): debootstrap with Debian's
# kernel, systemd, and the packages parleyd uses at run time (what debian/control depends on,
# plus the libraries the release binaries link). Cached: rebuilt only when this file changes.
# Usage: build-root.sh CACHEDIR   (the root goes to CACHEDIR/root)
set -euo pipefail
cache=${1:?usage: build-root.sh CACHEDIR}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(
  linux-image-amd64 systemd-sysv udev kmod dbus util-linux procps
  # what parleyd and parley link (ldd on the release build) and what debian/control depends on
  libasound2 libsqlite3-0 libcurl4 libespeak-ng1 libpocketsphinx3 libsphinxbase3 libpulse0 libqrencode4 libspeexdsp1
  apertium apertium-eng-spa espeak-ng espeak-ng-data pocketsphinx pocketsphinx-en-us
  alsa-utils pocketsphinx-testdata
)
stamp=$(printf '%s\n' "$mirror" "${packages[@]}" | sha256sum | cut -c1-16)
if [ -f "$cache/root/.parley-root-$stamp" ]; then
  echo "build-root: $cache/root is up to date"
  exit 0
fi
rm -rf "$cache/root.new"
mkdir -p "$cache"
echo "build-root: debootstrap bookworm into $cache/root (a few minutes, once)"
debootstrap --variant=minbase --include="$(printf '%s,' "${packages[@]}" | sed 's/,$//')" \
  bookworm "$cache/root.new" "$mirror" > "$cache/debootstrap.log" 2>&1 || {
  echo "build-root: debootstrap failed; the end of $cache/debootstrap.log:" >&2
  tail -30 "$cache/debootstrap.log" >&2
  exit 1
}
# The kernel and initramfs are booted from outside (qemu -kernel/-initrd).
ls "$cache/root.new"/boot/vmlinuz-* "$cache/root.new"/boot/initrd.img-* >/dev/null
chroot "$cache/root.new" apt-get clean
touch "$cache/root.new/.parley-root-$stamp"
rm -rf "$cache/root"
mv "$cache/root.new" "$cache/root"
echo "build-root: done"
