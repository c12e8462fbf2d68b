#!/usr/bin/env bash
# Memory of the Apertium pipelines a pair of languages keeps warm: parleyd in file mode on a
# paced recording of silence (the accurate pass off, so only translation differs; Spanish and
# English heard by PocketSphinx, so a pair without either cannot start here), measured
# after start-up has warmed every leg. PSS (smaps_rollup) of the Apertium stages, and their count;
# with ENGINES set (an engines folder with Bergamot, `make engines`: .build/engines), Bergamot's
# routes are used too, and its worker's PSS is given apart.
# Usage: [ENGINES=.build/engines] bench/route-memory.sh [BIN_DIR] [PAIRS...]   (pairs as a-b; default en-es en-pt es-fr en-fr)
set -euo pipefail
bin=${1:-$(swift build -c release --show-bin-path)}
shift || true
pairs=("$@")
[[ ${#pairs[@]} -gt 0 ]] || pairs=(en-es en-pt es-fr en-fr)
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -c $((16000 * 2 * 30)) /dev/zero > "$work/silence.raw"
bergamot_on=false engines_line=
if [ -n "${ENGINES:-}" ]; then bergamot_on=true engines_line="engines = \"$(cd "$ENGINES" && pwd)\""; fi
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
[translator]
bergamot = $bergamot_on
$engines_line
TOML
  "$bin/parleyd" --config "$work/parley.toml" --input "$work/silence.raw" --output "$work/out.wav" --pace 2>"$work/log" &
  daemon=$!
  sleep 15
  if ! kill -0 "$daemon" 2>/dev/null; then echo "$pair: parleyd did not run: $(tail -1 "$work/log")"; continue; fi
  stages= worker=
  for pid in $(pgrep -P "$daemon" || true); do
    if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q parley-bergamot; then worker=$pid; else stages="$stages $pid"; fi
  done
  pss=$(for pid in $stages; do awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null; done | awk '{s += $1} END {print s + 0}')
  self=$(awk '/^Pss:/ {print $2}' "/proc/$daemon/smaps_rollup")
  count=$(echo $stages | wc -w)
  bergamot=$( [ -n "$worker" ] && awk '/^Pss:/ {printf "; Bergamot worker %.1f MiB", $2 / 1024}' "/proc/$worker/smaps_rollup" || true)
  kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true
  awk -v p="$pair" -v s="$pss" -v c="$count" -v d="$self" -v b="$bergamot" 'BEGIN { printf "%s: %d Apertium stages, %.1f MiB (PSS)%s; parleyd itself %.1f MiB\n", p, c, s / 1024, b, d / 1024 }'
done
