#!/usr/bin/env bash
# The Debian package `make deb` built: it holds every piece (binaries, config as a conffile,
# units, sysusers, tmpfiles, the Spanish model, man pages, completions), its maintainer scripts
# create the parley user and /run/parley, and lintian has nothing to say that
# debian/parley.lintian-overrides does not explain.
# Usage: check-deb.sh DIR   (the folder holding parley_*.deb; `make check-deb` runs it on out/deb)
set -euo pipefail
dir=${1:?usage: check-deb.sh DIR}
fail() { echo "check-deb: $*" >&2; exit 1; }
deb=$(ls "$dir"/parley_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || fail "no parley_*.deb in $dir: run make deb"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

contents=$(dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|')
for file in /usr/bin/parleyd /usr/bin/parley /etc/parley/parley.toml \
  /lib/systemd/system/parleyd.service /lib/systemd/system/parleyd.socket \
  /usr/lib/sysusers.d/parley.conf /usr/lib/tmpfiles.d/parley.conf \
  /usr/share/parley/models/es/es.lm.bin /usr/share/parley/models/es/es.dict /usr/share/parley/models/es/acoustic/mdef \
  /usr/share/parley/models/es/NOTICE \
  /usr/share/man/man1/parley.1.gz /usr/share/man/man8/parleyd.8.gz /usr/share/man/man5/parley.toml.5.gz \
  /usr/share/bash-completion/completions/parley /usr/share/zsh/site-functions/_parley \
  /usr/share/fish/vendor_completions.d/parley.fish /usr/share/doc/parley/copyright; do
  grep -qx -- "$file" <<<"$contents" || fail "$file is not in $(basename "$deb")"
done

dpkg-deb -e "$deb" "$work/control"
grep -qx /etc/parley/parley.toml "$work/control/conffiles" || fail "/etc/parley/parley.toml is not a conffile"
grep -q systemd-sysusers "$work/control/postinst" || fail "postinst does not create the parley user"
grep -q 'systemd-tmpfiles.*parley' "$work/control/postinst" || fail "postinst does not create /run/parley"
grep -q 'deb-systemd-helper.*parleyd.service' "$work/control/postinst" || fail "postinst does not enable parleyd.service"

# The binaries in the package are stripped and run; the installed config points at the model.
dpkg-deb -x "$deb" "$work/root"
for binary in parleyd parley; do
  sections=$(readelf -S --wide "$work/root/usr/bin/$binary")  # read whole: `readelf | grep -q` may die of SIGPIPE under pipefail
  grep -q '\.symtab' <<<"$sections" && fail "$binary is not stripped"
done
"$work/root/usr/bin/parley" --version >/dev/null || fail "the packaged parley does not run"
grep -qx 'acoustic_model = "/usr/share/parley/models/es/acoustic"' "$work/root/etc/parley/parley.toml" ||
  fail "the packaged config does not point at the packaged Spanish model"

# lintian: errors and warnings fail, unless overridden (with the reason) in debian/parley.lintian-overrides.
report=$(lintian --fail-on none --display-level '>=warning' "$deb" 2>&1 | grep -v '^running with root privileges' || true)
if [ -n "$report" ]; then
  echo "$report" >&2
  fail "lintian has something to say about $(basename "$deb")"
fi
echo "check-deb: $(basename "$deb") holds every piece, its conffile and maintainer scripts are right, and lintian is clean"
