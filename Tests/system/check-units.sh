#!/usr/bin/env bash
# The systemd units: `systemd-analyze verify` must have nothing to say (it exits 0 on unknown
# keys and bad values, so any output fails), and the service's exposure score must be <= 2.0.
# Usage: check-units.sh BINDIR   (the folder holding the parleyd binary to point ExecStart at)
set -euo pipefail
bindir=${1:?usage: check-units.sh BINDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -e "s|@bindir@|$bindir|g" -e "s|@sysconfdir@|/etc|g" "$root/systemd/parleyd.service.in" > "$work/parleyd.service"
cp "$root/systemd/parleyd.socket" "$work/parleyd.socket"
cd "$work"

if ! out=$(systemd-analyze verify --man=no ./parleyd.service ./parleyd.socket 2>&1) || [ -n "$out" ]; then
  echo "check-units: systemd-analyze verify complained:" >&2
  echo "$out" >&2
  exit 1
fi
echo "check-units: systemd-analyze verify: parleyd.service and parleyd.socket are clean"

report=$(systemd-analyze security --offline=true ./parleyd.service 2>&1 || true)
score=$(echo "$report" | sed -n 's/.*Overall exposure level for parleyd.service: \([0-9.]*\).*/\1/p')
if [ -z "$score" ]; then
  echo "check-units: no exposure score in systemd-analyze's report:" >&2
  echo "$report" >&2
  exit 1
fi
if ! systemd-analyze security --offline=true --threshold=20 ./parleyd.service >/dev/null 2>&1; then
  echo "check-units: exposure score $score is above 2.0; what counts against it:" >&2
  echo "$report" | grep '✗' >&2
  exit 1
fi
echo "check-units: systemd-analyze security: exposure $score (limit 2.0)"
