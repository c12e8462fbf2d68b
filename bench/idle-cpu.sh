#!/usr/bin/env bash
# Idle CPU of parleyd listening to silence in real time, on the PulseAudio rig of bench/rig.sh.
# Prints the start-up time until ready, the share of one core parleyd used over the measuring
# window, and the memory (PSS) of every Parley process, by process: idle, then again after
# TURNS English and TURNS Spanish recordings of ../shared/speech have been heard in the room
# (alternating; each waits for its turn to be stored). TURNS=0 skips the turns.
# Usage: bench/idle-cpu.sh [BIN_DIR] [SECONDS] [TURNS]
set -euo pipefail
bin=${1:-$(swift build -c release --show-bin-path)}
seconds=${2:-20}
turns=${3:-4}
speech=${SPEECH:-$(cd "$(dirname "$0")/.." && pwd)/../shared/speech}
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
sleep 10  # let start-up settle: the voice worker loads its voice after parleyd answers (about 2 s here)
ticks=$(getconf CLK_TCK)
# parleyd and its children (the workers, the Apertium stages).
family() { echo "$daemon" $(pgrep -P "$daemon" || true) $(for child in $(pgrep -P "$daemon" || true); do pgrep -P "$child" || true; done); }
cpu() { for pid in $(family); do awk '{print $14 + $15}' "/proc/$pid/stat"; done | awk '{s += $1} END {print s}'; }
before=$(cpu); start=$(date +%s.%N)
sleep "$seconds"
after=$(cpu); end=$(date +%s.%N)
pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
rss=$(for pid in $(family); do pss "$pid"; done | awk '{s += $1} END {print s}')
# PSS by process: parleyd, the Whisper worker (a python3 child), Moonshine's worker (`parleyd
# worker moonshine`), Bergamot's worker, Festival, Piper's worker, the Apertium stages (the rest).
memory() {
  local d w=0 m=0 b=0 f=0 p=0 a=0 n=0 hwm mhwm phwm
  d=$(pss "$daemon")
  for pid in $(family); do
    [[ $pid = "$daemon" ]] && continue
    if grep -q parley-whisper "/proc/$pid/cmdline" 2>/dev/null; then w=$((w + $(pss "$pid"))); hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
    elif tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q 'worker moonshine'; then m=$((m + $(pss "$pid"))); mhwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
    elif grep -q parley-bergamot "/proc/$pid/cmdline" 2>/dev/null; then b=$((b + $(pss "$pid")))
    elif grep -q festival "/proc/$pid/cmdline" 2>/dev/null; then f=$((f + $(pss "$pid")))
    elif grep -q parley-piper "/proc/$pid/cmdline" 2>/dev/null; then p=$((p + $(pss "$pid"))); phwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
    else a=$((a + $(pss "$pid"))); n=$((n + 1)); fi
  done
  awk -v l="$1" -v d="$d" -v w="$w" -v m="$m" -v b="$b" -v f="$f" -v p="$p" -v a="$a" -v n="$n" -v h="${hwm:-0}" -v mh="${mhwm:-0}" -v ph="${phwm:-0}" -v dh="$(awk '/^VmHWM/ {print $2}' "/proc/$daemon/status")" 'BEGIN {
    printf "memory %s: %.1f MiB in all (PSS): parleyd %.1f (VmHWM %.0f), Whisper worker %.1f (VmHWM %.0f), Moonshine worker %.1f (VmHWM %.0f), Bergamot worker %.1f, Festival %.1f, Piper worker %.1f (VmHWM %.0f), %d Apertium stages %.1f\n", l, (d + w + m + b + f + p + a) / 1024, d / 1024, dh / 1024, w / 1024, h / 1024, m / 1024, mh / 1024, b / 1024, f / 1024, p / 1024, ph / 1024, n, a / 1024
  }'
}
state=$("$bin/parley" status --json --socket "$work/control.sock" | awk -F'"' '/"state"/ {print $4}')
awk -v b="$before" -v a="$after" -v s="$start" -v e="$end" -v t="$ticks" -v r="$rss" -v st="$state" 'BEGIN {
  printf "idle CPU while %s to silence: %.2f%% of one core over %.0f s; memory %.1f MiB (PSS of parleyd, its workers and the Apertium stages)\n", st, 100 * (a - b) / t / (e - s), e - s, r / 1024
}'
memory idle
[[ $turns != 0 ]] || exit 0
# Turns: English and Spanish in turn, each played into the microphone; then wait for it to be stored.
stored() { "$bin/parley" history --json --limit 1000 --socket "$work/control.sock" | { grep -o '"source_text"' || true; } | wc -l; }
mapfile -t english < <(ls "$speech"/en/*.wav | head -n "$turns")
mapfile -t spanish < <(ls "$speech"/es/fleurs/*.wav | head -n "$turns")
for i in $(seq 0 $((turns - 1))); do
  for clip in "${english[$i]}" "${spanish[$i]}"; do
    before=$(stored)
    paplay -d mic "$clip"
    for _ in $(seq 200); do [[ $(stored) -gt $before ]] && break; sleep 0.1; done
    sleep 3  # the translation is spoken
  done
done
sleep 5
echo "turns stored: $(stored) from $((2 * turns)) recordings"
"$bin/parley" history --json --limit 1000 --socket "$work/control.sock" |
  python3 -c 'import json, sys; [print("  " + t["source_text"]) for t in sorted(json.load(sys.stdin), key=lambda t: t["id"])]'
memory "after the turns"
