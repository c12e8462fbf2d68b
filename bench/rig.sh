# Sourced by the benchmarks: a private PulseAudio server whose null sinks are a real-time
# microphone (its monitor delivers silence at the real rate) and speaker, reached through
# ALSA's pulse plugin, and parleyd started on them. Sets $work, $daemon, $launched and $ready.
# Usage: start_rig BIN_DIR; start_daemon
start_rig() {
  bin=$1
  work=$(mktemp -d /tmp/parley-bench-XXXXXX)
  export XDG_RUNTIME_DIR=$work/run HOME=$work PULSE_SERVER=unix:$work/pulse.sock XDG_CACHE_HOME=$work/cache
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
  trap stop_rig EXIT
  pulseaudio -n --daemonize=yes --exit-idle-time=-1 --log-target=file:"$work/pulse.log" \
    -L "module-native-protocol-unix socket=$work/pulse.sock auth-anonymous=1" \
    -L "module-null-sink sink_name=mic" -L "module-null-sink sink_name=speaker"
  printf 'pcm.pmic { type pulse; device "mic.monitor" }\npcm.pspk { type pulse; device "speaker" }\n' > "$work/.asoundrc"
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
# Both people heard: Spanish with the model Parley ships.
[recognizer.es]
acoustic_model = "$root/models/es/acoustic"
language_model = "$root/models/es/es.lm.bin"
dictionary = "$root/models/es/es.dict"
# The accurate pass as \`make engines\` installed it (PARLEY_ACCURATE=0: PocketSphinx alone).
[transcriber]
enabled = $([ "${PARLEY_ACCURATE:-1}" != 0 ] && [ -e "$root/.build/engines/.complete" ] && echo true || echo false)
engines = "$root/.build/engines"
# Bergamot's models and worker from the same build (Festival, when Debian's is installed, speaks
# English as shipped).
[translator]
engines = "$root/.build/engines"
# The voice detector (PARLEY_VAD=level: the level alone).
[endpoint]
voice_detector = "${PARLEY_VAD:-silero}"
$([ -n "${PARLEY_VOICE_EN:-}" ] && printf '# English spoken by PARLEY_VOICE_EN (as shipped when unset)\n[voice.en]\nengine = "%s"\n' "$PARLEY_VOICE_EN")
TOML
}

# Stops parleyd and waits until it has exited.
stop_daemon() {
  kill "$daemon" 2>/dev/null || true
  while kill -0 "$daemon" 2>/dev/null; do sleep 0.05; done
}

stop_rig() {
  [[ -n ${daemon:-} ]] && kill "$daemon" 2>/dev/null || true
  [[ -f $XDG_RUNTIME_DIR/pulse/pid ]] && kill -9 "$(cat "$XDG_RUNTIME_DIR/pulse/pid")" 2>/dev/null || true
  rm -rf "$work"
}

# Starts parleyd and waits until it answers (models loaded, microphone open, socket up).
start_daemon() {
  launched=$(date +%s.%N)
  "$bin/parleyd" --config "$work/parley.toml" 2>"$work/parleyd.log" &
  daemon=$!
  until "$bin/parley" status --socket "$work/control.sock" >/dev/null 2>&1; do sleep 0.01; done
  ready=$(date +%s.%N)
}
