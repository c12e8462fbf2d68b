#!/usr/bin/env bash
# make test-system: boots Debian bookworm with systemd as PID 1 in qemu, with parleyd installed
# by `make install` and its real units, and runs guest-test.sh inside (a oneshot unit that
# prints its checks on the serial console and powers off). Needs root (debootstrap, mkfs.ext4 -d
# of a root-owned tree); uses KVM when /dev/kvm is usable, else software emulation (slower).
# Usage: run-vm.sh CACHEDIR   (the debootstrap root is cached in CACHEDIR/root; the serial
# console log is left in CACHEDIR/console.log and the checks in CACHEDIR/results.txt)
# Environment: VM_ACCEL=kvm|tcg, VM_TIMEOUT (seconds, 1200), VM_CONFIGURATION=release|debug.
set -euo pipefail
cache=${1:?usage: run-vm.sh CACHEDIR}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=$(mkdir -p "$cache" && cd "$cache" && pwd)
timeout=${VM_TIMEOUT:-1200}
began=$(date +%s)

"$here/build-root.sh" "$cache"

stage=$cache/stage
echo "run-vm: staging the root with \`make install\`"
rm -rf "$stage"
cp -a "$cache/root" "$stage"
# VM_CONFIGURATION=debug installs the debug build instead (after `swift build`, for quicker work
# on the test itself); it needs the toolchain's Swift runtime, copied in for it.
configuration=${VM_CONFIGURATION:-release}
make -C "$repo" --no-print-directory install CONFIGURATION="$configuration" DESTDIR="$stage" > "$cache/install.log"
if [ "$configuration" != release ]; then
  runtime=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux
  install -d "$stage/usr/local/lib/parley-swift"
  cp -a "$runtime"/*.so "$stage/usr/local/lib/parley-swift/"
  echo /usr/local/lib/parley-swift > "$stage/etc/ld.so.conf.d/parley-swift.conf"
  chroot "$stage" ldconfig
  # A debug build's first start under software emulation took about 3 minutes on a busy
  # 2-core machine: more than the unit's TimeoutStartSec=60.
  install -d "$stage/etc/systemd/system/parleyd.service.d"
  printf '[Service]\nTimeoutStartSec=600\n' > "$stage/etc/systemd/system/parleyd.service.d/debug-build.conf"
fi
# Under software emulation a freshly started Apertium pipeline takes more than the shipped 5 s
# to give its first answer. Parley waits for a cold pipeline (its first answer may take 30 s)
# instead of restarting it, but a turn's translation is given up after `deadline_ms`, so the
# first turns would be stored untranslated. The guest's config gives a turn a minute; nothing
# else of the installed config changes (Apertium's own timeout_ms stays as shipped).
sed -i -e 's/^deadline_ms = 5000 /deadline_ms = 60000/' "$stage/etc/parley/parley.toml"
grep -q '^deadline_ms = 60000' "$stage/etc/parley/parley.toml" || { echo "run-vm: could not raise the guest's translation deadline" >&2; exit 1; }
# The test: a oneshot unit run once the system is up; it powers the machine off when done.
install -D -m 0755 "$here/guest-test.sh" "$stage/usr/local/lib/parley-test/guest-test.sh"
install -D -m 0644 "$here/parley-system-test.service" "$stage/etc/systemd/system/parley-system-test.service"
mkdir -p "$stage/etc/systemd/system/multi-user.target.wants"
ln -sf ../parley-system-test.service "$stage/etc/systemd/system/multi-user.target.wants/"
# Nobody logs in: no getty on the serial console the checks are written to.
ln -sf /dev/null "$stage/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "$stage/etc/systemd/system/getty@tty1.service"
echo parley-test > "$stage/etc/hostname"
# The release binaries carry the Swift runtime (--static-swift-stdlib): nothing from the
# toolchain is copied in for them, so a library they miss fails here rather than in the guest.
if missing=$(chroot "$stage" ldd /usr/local/bin/parleyd /usr/local/bin/parley | grep 'not found'); then
  echo "run-vm: the installed binaries miss libraries in the guest:" >&2; echo "$missing" >&2; exit 1
fi

image=$cache/root.img
size_mb=$(( $(du -sm "$stage" | cut -f1) + 768 ))
rm -f "$image"
mkfs.ext4 -q -F -L parley-root -d "$stage" "$image" "${size_mb}M"
kernel=$(ls "$stage"/boot/vmlinuz-* | sort -V | tail -1)
initrd=$(ls "$stage"/boot/initrd.img-* | sort -V | tail -1)

# KVM when it works: /dev/kvm may be there and still not run a guest (nested virtualization
# that hangs in early boot, as on this project's build machine), so a kernel must print its
# banner under it within 20 s (it then panics for want of a root, and qemu exits). Else TCG.
# VM_ACCEL=kvm or tcg skips the probe.
accel=${VM_ACCEL:-}
if [ -z "$accel" ]; then
  accel=tcg
  if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
    (timeout 20 qemu-system-x86_64 -accel kvm -cpu host -m 256 -kernel "$kernel" \
      -append "console=ttyS0 panic=-1" -display none -monitor none -serial file:"$cache/kvm-probe.log" \
      -no-reboot >/dev/null 2>&1) 2>/dev/null || true
    grep -q 'Linux version' "$cache/kvm-probe.log" 2>/dev/null && accel=kvm
    [ $accel = tcg ] && echo "run-vm: /dev/kvm is there but a guest does not boot under it; using software emulation"
  fi
fi
cpu=max; [ "$accel" = kvm ] && cpu=host
log=$cache/console.log
echo "run-vm: booting $(basename "$kernel") ($accel, up to ${timeout} s); console in $log"
# no_timer_check: under software emulation on a busy host the kernel's IO-APIC timer check can
# fail ("IO-APIC + timer doesn't work!") and panic.
booted=$(date +%s)
rc=0
timeout "$timeout" qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 2 -m 2048 \
  -kernel "$kernel" -initrd "$initrd" \
  -append "root=/dev/vda rw console=ttyS0 no_timer_check quiet systemd.show_status=0 panic=-1" \
  -drive file="$image",if=virtio,format=raw -nic none -no-reboot \
  -display none -monitor none -serial file:"$log" || rc=$?
finished=$(date +%s)
[ $rc = 124 ] && echo "run-vm: the VM did not power off within ${timeout} s" >&2

tr -d '\r' < "$log" | grep -E '^(CHECK|NOTE|SYSTEM-TEST) ' > "$cache/results.txt" || true
cat "$cache/results.txt"
echo "run-vm: boot and checks $((finished - booted)) s; in all $((finished - began)) s"
grep -q '^SYSTEM-TEST END passed=[0-9]* failed=0 ' "$cache/results.txt" || {
  echo "run-vm: FAILED (see $log)" >&2; exit 1; }
grep -q '^CHECK .* FAIL' "$cache/results.txt" && exit 1
echo "run-vm: all checks passed"
