#!/usr/bin/env bash
# make test's runner: every test, in two processes side by side (one after the other on a single
# core), each running its tests one at a time. The suites that spend their time waiting on real
# time (live daemons hearing real-time audio, a sound server, a browser, servers that answer
# late) run in one process, everything else in the other, so the waits of the one overlap the
# engines' work of the other. In one process, Swift Testing's own parallelism would not do:
# there, tests that block a thread (a child process, a socket read) starve the in-memory
# conversations of the shared thread pool.
# Usage: Tests/run/run-tests.sh BIN_DIR (`swift build --show-bin-path`, tests built).
# Each line is prefixed with its process ([live] or [rest]); a failure's lines are repeated at
# the end. Exits non-zero when either process fails.
set -uo pipefail
bin=${1:?usage: run-tests.sh BIN_DIR}
tests="$bin/ParleyPackageTests.xctest"
[ -x "$tests" ] || { echo "run-tests: $tests is missing; run swift build --build-tests first" >&2; exit 2; }
export PARLEY_BIN_DIR="$bin"
live='\.(RealTimeTests|ControlLimitsTests|WebBrowserTests|HistoryEndToEndTests|TranslatorChainFaultTests|LiveALSATests)/'
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
run() {  # name, then the selection
  local name=$1; shift
  "$tests" --testing-library swift-testing --no-parallel "$@" 2>&1 | tee "$logs/$name" | sed -u "s/^/[$name] /"
  # The test process's own status, not sed's.
  echo "${PIPESTATUS[0]}" > "$logs/$name.status"
}
start=$SECONDS
if [ "$(nproc)" -ge 2 ]; then
  run live --filter "$live" &
  run rest --skip "$live"
  wait
else  # one core: the processes would take each other's time, and real-time tests need theirs
  run live --filter "$live"
  run rest --skip "$live"
fi
status=0
for name in live rest; do
  code=$(cat "$logs/$name.status" 2>/dev/null || echo 1)
  if [ "$code" != 0 ]; then
    status=1
    echo "run-tests: the $name tests failed (exit $code):"
    grep -a '✘' "$logs/$name" || tail -n 40 "$logs/$name"
  fi
  grep -a 'Test run with' "$logs/$name" | sed "s/^/[$name] /"
done
echo "run-tests: both processes ended after $((SECONDS - start)) s"
exit $status
