#!/usr/bin/env bash
# Memory of the Apertium pipelines a pair of languages keeps warm: parleyd in file mode on a
# paced recording of silence (the accurate pass off, so only translation differs; Spanish and
# English heard by PocketSphinx, so a pair without either cannot start here), measured
# after start-up has warmed every leg. PSS (smaps_rollup) of the Apertium stages, and their count.
# Usage: bench/route-memory.sh [BIN_DIR] [PAIRS...]   (pairs as a-b; default en-es en-pt es-fr en-fr)
set -euo pipefail
bin=${1:-$(swift build -c release --show-bin-path)}
shift || true
pairs=("$@")
[[ ${#pairs[@]} -gt 0 ]] || pairs=(en-es en-pt es-fr en-fr)
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -c $((16000 * 2 * 30)) /dev/zero > "$work/silence.raw"
for pair in "${pairs[@]}"; do
  a=${pair%-*}; b=${pair#*-}
  cat > "$work/parley.toml" <<TOML
[conversation]
speaker_a = "$a"
speaker_b = "$b"
[transcriber]
enabled = false
[recognizer.es]
acoustic_model = "$repo/models/es/acoustic"
language_model = "$repo/models/es/es.lm.bin"
dictionary = "$repo/models/es/es.dict"
[history]
enabled = false
[control]
socket = "$work/control.sock"
TOML
  "$bin/parleyd" --config "$work/parley.toml" --input "$work/silence.raw" --output "$work/out.wav" --pace 2>"$work/log" &
  daemon=$!
  sleep 15
  if ! kill -0 "$daemon" 2>/dev/null; then echo "$pair: parleyd did not run: $(tail -1 "$work/log")"; continue; fi
  stages=$(pgrep -P "$daemon" || true)
  pss=$(for pid in $stages; do awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null; done | awk '{s += $1} END {print s + 0}')
  self=$(awk '/^Pss:/ {print $2}' "/proc/$daemon/smaps_rollup")
  count=$(echo $stages | wc -w)
  kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true
  awk -v p="$pair" -v s="$pss" -v c="$count" -v d="$self" 'BEGIN { printf "%s: %d Apertium stages, %.1f MiB (PSS); parleyd itself %.1f MiB\n", p, c, s / 1024, d / 1024 }'
done
