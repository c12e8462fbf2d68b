#!/usr/bin/env bash
# Idle CPU of parleyd listening to silence in real time, on the PulseAudio rig of bench/rig.sh.
# Prints the start-up time until ready and the share of one core parleyd used over the
# measuring window.
# Usage: bench/idle-cpu.sh [BIN_DIR] [SECONDS]
set -euo pipefail
bin=${1:-$(swift build -c release --show-bin-path)}
seconds=${2:-20}
source "$(dirname "$0")/rig.sh"
start_rig "$bin"
# The first start also cuts the dictionary down to the language model's words and keeps the
# copy in the cache folder; later starts load the copy.
start_daemon
awk -v a="$launched" -v b="$ready" 'BEGIN { printf "start-up until ready, first start (dictionary cut down): %.0f ms\n", 1000 * (b - a) }'
stop_daemon
for run in 1 2 3; do
  start_daemon
  awk -v a="$launched" -v b="$ready" 'BEGIN { printf "start-up until ready, later start: %.0f ms\n", 1000 * (b - a) }'
  [[ $run = 3 ]] || stop_daemon
done
sleep 2  # let start-up settle
ticks=$(getconf CLK_TCK)
# parleyd and its children (the Whisper worker).
family() { echo "$daemon" $(pgrep -P "$daemon" || true) $(for child in $(pgrep -P "$daemon" || true); do pgrep -P "$child" || true; done); }
cpu() { for pid in $(family); do awk '{print $14 + $15}' "/proc/$pid/stat"; done | awk '{s += $1} END {print s}'; }
before=$(cpu); start=$(date +%s.%N)
sleep "$seconds"
after=$(cpu); end=$(date +%s.%N)
rss=$(for pid in $(family); do awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup"; done | awk '{s += $1} END {print s}')
state=$("$bin/parley" status --json --socket "$work/control.sock" | awk -F'"' '/"state"/ {print $4}')
awk -v b="$before" -v a="$after" -v s="$start" -v e="$end" -v t="$ticks" -v r="$rss" -v st="$state" 'BEGIN {
  printf "idle CPU while %s to silence: %.2f%% of one core over %.0f s; memory %.1f MiB (PSS of parleyd, the Whisper worker and the Apertium stages)\n", st, 100 * (a - b) / t / (e - s), e - s, r / 1024
}'
