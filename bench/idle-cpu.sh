#!/usr/bin/env bash
# Idle CPU of parleyd listening to silence in real time: a private PulseAudio server's null
# sink is the microphone (its monitor delivers silence at the real rate), ALSA's pulse plugin
# is the device. Prints the start-up time until ready and the share of one core parleyd used
# over the measuring window.
# Usage: bench/idle-cpu.sh [BIN_DIR] [SECONDS]
set -euo pipefail
bin=${1:-$(swift build -c release --show-bin-path)}
seconds=${2:-20}
work=$(mktemp -d /tmp/parley-bench-XXXXXX)
export XDG_RUNTIME_DIR=$work/run HOME=$work PULSE_SERVER=unix:$work/pulse.sock
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
cleanup() {
  [[ -n ${daemon:-} ]] && kill "$daemon" 2>/dev/null || true
  [[ -f $XDG_RUNTIME_DIR/pulse/pid ]] && kill -9 "$(cat "$XDG_RUNTIME_DIR/pulse/pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
pulseaudio -n --daemonize=yes --exit-idle-time=-1 --log-target=file:"$work/pulse.log" \
  -L "module-native-protocol-unix socket=$work/pulse.sock auth-anonymous=1" \
  -L "module-null-sink sink_name=mic" -L "module-null-sink sink_name=speaker"
printf 'pcm.pmic { type pulse; device "mic.monitor" }\npcm.pspk { type pulse; device "speaker" }\n' > "$work/.asoundrc"
cat > "$work/parley.toml" <<TOML
[audio]
capture_device = "pmic"
playback_device = "pspk"
[history]
path = "$work/history.sqlite"
[control]
socket = "$work/control.sock"
[log]
level = "warning"
TOML
launched=$(date +%s.%N)
"$bin/parleyd" --config "$work/parley.toml" 2>"$work/parleyd.log" &
daemon=$!
# Ready: the models are loaded, the microphone is open and the socket answers.
until "$bin/parley" status --socket "$work/control.sock" >/dev/null 2>&1; do sleep 0.01; done
ready=$(date +%s.%N)
awk -v a="$launched" -v b="$ready" 'BEGIN { printf "start-up until ready: %.0f ms\n", 1000 * (b - a) }'
sleep 2  # let start-up settle
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$daemon/stat"; }
before=$(cpu); start=$(date +%s.%N)
sleep "$seconds"
after=$(cpu); end=$(date +%s.%N)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$daemon/status")
state=$("$bin/parley" status --json --socket "$work/control.sock" | awk -F'"' '/"state"/ {print $4}')
awk -v b="$before" -v a="$after" -v s="$start" -v e="$end" -v t="$ticks" -v r="$rss" -v st="$state" 'BEGIN {
  printf "idle CPU while %s to silence: %.2f%% of one core over %.0f s; resident memory %.1f MiB\n", st, 100 * (a - b) / t / (e - s), e - s, r / 1024
}'
