#!/usr/bin/env bash
# Memory of one warm Apertium pipeline per direction (PSS of all its stages, after one sentence),
# for the pairs between Parley's offline languages: what a route costs to keep warm.
# Usage: bench/pair-memory.sh [MODE...]   (default: every installed mode between en es fr pt it ca gl)
set -euo pipefail
modes=("$@")
if [[ ${#modes[@]} -eq 0 ]]; then
  codes='(eng|spa|fra|por|ita|cat|glg|en|es|fr|pt|it|ca|gl)'
  mapfile -t modes < <(ls /usr/share/apertium/modes | sed -n -E "s/^(${codes}-${codes})\.mode$/\1/p")
fi
descendants() { local kids; kids=$(pgrep -P "$1" || true); for k in $kids; do echo "$k"; descendants "$k"; done; }
for mode in "${modes[@]}"; do
  (echo "The house is red."; sleep 6) | apertium -u "$mode" > /dev/null &
  pipeline=$!
  sleep 4
  pss=$(for pid in $(descendants "$pipeline"); do awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || true; done | awk '{s += $1} END {print s + 0}')
  wait "$pipeline" 2>/dev/null || true
  awk -v m="$mode" -v s="$pss" 'BEGIN { printf "%s %.1f\n", m, s / 1024 }'
done
