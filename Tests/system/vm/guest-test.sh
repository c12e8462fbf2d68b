#!/usr/bin/env bash
# Runs inside the test VM (make test-system) as a oneshot unit once the system is up, against
# parleyd installed by `make install` with its real, hardened units. Each check prints one line
# "CHECK <name> PASS|FAIL <detail>" on the serial console, then "SYSTEM-TEST END passed=N failed=M";
# the host reads them (run-vm.sh). The VM powers off afterwards (the unit's ExecStopPost).
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export SYSTEMD_PAGER= SYSTEMD_COLORS=0
passed=0 failed=0
pass() { echo "CHECK $1 PASS ${*:2}"; passed=$((passed + 1)); }
fail() { echo "CHECK $1 FAIL ${*:2}"; failed=$((failed + 1)); }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name" "($*)"; fi; }
note() { echo "NOTE $*"; }
# Polls CONDITION (a shell command) once a second, up to SECONDS; true when it held.
wait_for() { local seconds=$1; shift; for _ in $(seq "$seconds"); do eval "$1" && return 0; sleep 1; done; eval "$1"; }
main_pid() { systemctl show -P MainPID parleyd.service; }
as() { local user=$1; shift; runuser -u "$user" -- "$@"; }
journal_since() { journalctl -q --no-pager -u parleyd.service --since "$1" "${@:2}"; }
# The record: the unit's exposure on the running system, then parleyd's journal.
finish() {
  echo "--- systemd-analyze security parleyd.service (on the running system)"
  systemd-analyze security --no-pager parleyd.service | tail -1
  echo "--- journalctl -u parleyd -u parleyd.socket -p warning"
  journalctl -q --no-pager -u parleyd.service -u parleyd.socket -p warning  | tail -30
  echo "--- journalctl -u parleyd -u parleyd.socket"
  journalctl -q --no-pager -u parleyd.service -u parleyd.socket  | tail -80
  if [ "$failed" != 0 ]; then
    echo "--- systemctl status parleyd.service parleyd.socket"
    systemctl status --no-pager -l -n 40 parleyd.service parleyd.socket
    echo "--- journalctl -b | grep parley"
    journalctl -b --no-pager  2>&1 | grep -i parley | tail -60
    echo "--- journalctl --no-pager -n 20"
    journalctl --no-pager -n 20 2>&1
  fi
  echo "SYSTEM-TEST END passed=$passed failed=$failed seconds=$(( $(date +%s) - start ))"
  exit 0
}

echo "SYSTEM-TEST BEGIN $(uname -r) $(systemctl --version | head -1)"
start=$(date +%s)

# --- what `make install` does after copying (as root, without DESTDIR), and the admin's steps
systemd-sysusers /usr/local/lib/sysusers.d/parley.conf
systemd-tmpfiles --create /usr/local/lib/tmpfiles.d/parley.conf
systemctl daemon-reload
useradd --create-home --groups parley alice   # may use the service
useradd --create-home bob                     # may not
modprobe snd-aloop
udevadm settle
check sound-card wait_for 20 '[ -e /dev/snd/pcmC0D0c ]'
note "cards: $(tr -s ' \n' ' ' < /proc/asound/cards)"
note "parley user: $(id parley)"

# --- socket activation: the socket listens, the service is not running until a client connects
systemctl enable --now parleyd.socket
check socket-listening systemctl is-active --quiet parleyd.socket
check service-not-started-before-connect test "$(systemctl is-active parleyd.service)" = inactive
out=$(as alice parley status --timeout 300 2>&1); rc=$?
if [ $rc = 0 ] && systemctl is-active --quiet parleyd.service; then
  pass socket-activation "alice's parley status started parleyd.service"
else
  fail socket-activation "rc=$rc: $out"
fi
echo "$out" | sed 's/^/  status: /'
# Nothing after this means anything without a running service.
systemctl is-active --quiet parleyd.service || { fail service-up "$(systemctl is-active parleyd.service)"; finish; }

# --- the sandboxed service: user parley, READY, the card open
pid=$(main_pid)
user=$(ps -o user= -p "$pid" | tr -d ' ')
check runs-as-parley test "$user" = parley
note "MainPID $pid: user $user, groups $(ps -o supgrp= -p "$pid")"
# Type=notify: active (running) only after READY=1; the status line is parleyd's STATUS=.
state=$(systemctl show -P ActiveState parleyd.service)/$(systemctl show -P SubState parleyd.service)
statustext=$(systemctl show -P StatusText parleyd.service)
if [ "$state" = active/running ] && [ -n "$statustext" ]; then pass ready "$state, STATUS=$statustext"; else fail ready "$state, STATUS=$statustext"; fi
# A capture substream RUNNING on a device parleyd holds open. (/proc/asound's owner_pid is the
# thread that opened it, which may since have exited.)
card_owner() {
  local f node
  for f in /proc/asound/card*/pcm*c/sub*/status; do
    grep -q '^state: RUNNING' "$f" || continue
    node=$(echo "$f" | sed -n 's|/proc/asound/card\([0-9]*\)/pcm\([0-9]*\)c/.*|/dev/snd/pcmC\1D\2c|p')
    ls -l "/proc/$1/fd" 2>/dev/null | grep " $node\$" >/dev/null && { echo "$f"; return; }
  done
}
if wait_for 10 '[ -n "$(card_owner "$pid")" ]'; then
  f=$(card_owner "$pid"); pass alsa-capture-open "$f: $(grep -E '^(state|owner_pid)' "$f" | tr -s ' \n' ' ')"
else
  fail alsa-capture-open "no RUNNING capture substream on a device $pid holds: $(ls -l /proc/$pid/fd | grep snd | tr -s ' \n' ' ')"
fi
check alsa-device-fd sh -c "ls -l /proc/$pid/fd | grep -q /dev/snd/pcmC"

# --- who may talk to it
out=$(as bob parley status --timeout 5 2>&1); rc=$?
if [ $rc != 0 ]; then pass others-refused "bob, default socket: rc=$rc: $out"; else fail others-refused "bob got: $out"; fi
out=$(as bob parley status --timeout 5 --socket /run/parley/control.sock 2>&1); rc=$?
if [ $rc != 0 ]; then pass others-refused-explicit-socket "bob, --socket /run/parley/control.sock: rc=$rc: $out"; else fail others-refused-explicit-socket "bob got: $out"; fi
note "socket: $(ls -ld /run/parley /run/parley/control.sock | tr '\n' ' ')"

# --- a typed turn: Apertium translates, espeak-ng speaks it on the card, the history keeps it
out=$(as alice parley say --timeout 60 --speaker a "good morning, where is the station" 2>&1); rc=$?
echo "$out" | sed 's/^/  say: /'
check typed-turn test $rc = 0
hist=$(as alice parley history --timeout 30 2>&1)
echo "$hist" | sed 's/^/  history: /'
# Apertium's answer: "buenos días, dónde es la canal"
check typed-turn-translated sh -c "echo \"\$1\" | grep -q 'b: buenos días'" _ "$hist"
check history-in-var-lib test -s /var/lib/parley/history.sqlite
note "state: $(ls -ld /var/lib/parley /var/lib/parley/* 2>&1 | tr '\n' ' ')"
check history-owned-by-parley test "$(stat -c %U:%a /var/lib/parley)" = parley:700

# --- a spoken turn: a recording played into the loopback card is heard (PocketSphinx), translated, spoken
wav=/usr/share/pocketsphinx/test/data/goforward.raw
turns() { as alice parley status --json 2>/dev/null | sed -n 's/.*"turns" *: *\([0-9]*\).*/\1/p'; }
turns_before=$(turns)
aplay -q -D plughw:Loopback,1,0 -t raw -f S16_LE -r 16000 -c 1 "$wav"
# silence after it, so the end of the utterance is heard
aplay -q -D plughw:Loopback,1,0 -t raw -f S16_LE -r 16000 -c 1 -d 3 /dev/zero
if wait_for 60 '[ "$(turns)" -gt "${turns_before:-0}" ] 2>/dev/null'; then
  newest=$(as alice parley history | head -3 | tr -s ' \n' ' ')
  # PocketSphinx hears "go forward ten meters" in the recording
  if echo "$newest" | grep -qi forward; then pass spoken-turn "$newest"; else fail spoken-turn "heard: $newest"; fi
  # Apertium's answer to it, not to an earlier sentence: "Va de frente diez metros"
  if echo "$newest" | grep -qi 'b: va de frente'; then pass spoken-turn-translated; else fail spoken-turn-translated "$newest"; fi
else
  fail spoken-turn "turns still ${turns_before:-?}; $(journal_since -2min -o cat | tail -5 | tr '\n' ' ')"
fi

# --- reload: applied in place (same process), and a bad file is refused with an error in the journal
since=$(date '+%Y-%m-%d %H:%M:%S'); sleep 1
pid=$(main_pid)
sed -i 's/^min_confidence = 0.5 /min_confidence = 0.4 /' /etc/parley/parley.toml
if systemctl reload parleyd.service && [ "$(main_pid)" = "$pid" ] && journal_since "$since" -o cat | grep 'config reloaded' >/dev/null; then
  pass reload "same MainPID $pid; $(journal_since "$since" -o cat | grep 'config reloaded' | tail -1)"
else
  fail reload "MainPID $pid -> $(main_pid); $(journal_since "$since" -o cat | tail -3 | tr '\n' ' ')"
fi
cp /etc/parley/parley.toml /root/parley.toml.good
# A bad value for a known key (appended at the end, it would land in the last table, [web],
# and be refused as an unknown key there instead).
sed -i 's/^mode = "auto" /mode = "sideways" /' /etc/parley/parley.toml
grep -q '^mode = "sideways"' /etc/parley/parley.toml || fail reload-invalid-setup "could not set mode = \"sideways\" in /etc/parley/parley.toml"
if systemctl reload parleyd.service; then fail reload-invalid-refused "systemctl reload succeeded on a bad file"; else pass reload-invalid-refused "systemctl reload failed, as it should"; fi
cp /root/parley.toml.good /etc/parley/parley.toml
check still-running-after-bad-reload test "$(main_pid)" = "$pid" -a "$pid" != 0

# --- journald: parleyd's lines carry their priority (<N> prefixes parsed, not printed)
errors=$(journal_since "$since" -p err -o cat)
notices=$(journal_since "$since" -p notice..notice -o cat)
priorities=$(journal_since -10min -o export | sed -n 's/^PRIORITY=//p' | sort | uniq -c | tr -s ' \n' ' ')
note "parleyd priorities in the journal (count value): $priorities"
if grep -q 'config not reloaded' <<<"$errors" && ! grep -q 'config reloaded' <<<"$errors" \
   && grep -q 'config reloaded' <<<"$notices"; then
  pass journal-priorities "-p err: $(echo "$errors" | grep 'config not reloaded' | head -1 | cut -c1-120)"
else
  fail journal-priorities "err: [$errors] notice: [$notices]"
fi
check journal-no-raw-prefixes sh -c "! journalctl -q --no-pager -u parleyd.service -o cat | grep -qE '^<[0-7]>'"

# --- the watchdog: a stopped daemon misses its pings and systemd restarts it
restarts=$(systemctl show -P NRestarts parleyd.service)
pid=$(main_pid)
since=$(date '+%Y-%m-%d %H:%M:%S')
kill -STOP "$pid"
note "SIGSTOP $pid at $(date +%T); WatchdogSec=$(systemctl show -P WatchdogUSec parleyd.service)"
if wait_for 120 '[ "$(main_pid)" != "$pid" ] && [ "$(main_pid)" != 0 ] && systemctl is-active --quiet parleyd.service'; then
  note "restarted at $(date +%T) as $(main_pid)"
  if journalctl -q --no-pager -u parleyd.service --since "$since" -o cat | grep -i 'watchdog timeout' >/dev/null; then
    pass watchdog-restart "NRestarts $restarts -> $(systemctl show -P NRestarts parleyd.service); $(journalctl -q --no-pager -u parleyd.service --since "$since" -o cat | grep -i 'watchdog timeout' | head -1)"
  else
    fail watchdog-restart "restarted but no watchdog timeout in the journal"
  fi
else
  fail watchdog-restart "MainPID still $(main_pid) ($(systemctl is-active parleyd.service))"
fi
check status-after-restart as alice parley status --timeout 60
check history-kept-after-restart sh -c "runuser -u alice -- parley history | grep -q 'where is the station'"

finish
