#!/usr/bin/env bash
# make test's runner: both test targets (Package.swift), each test one at a time, in two lanes
# side by side (one after the other on a single core):
#   [realtime] the end-to-end suites that spend their time waiting on the wall clock (live
#              daemons hearing real-time audio, the PulseAudio room, the browser, translation
#              servers that answer late): the REALTIME list below;
#   [unit]     then [e2e], one after the other: ParleyTests (in memory, seconds), then the rest
#              of ParleyEndToEndTests (the real engines decoding as fast as the cores allow).
# So the real-time waits overlap the engines' work, and the real-time suites have a process of
# their own. A plain parallel `swift test` runs the same tests in one process, about as fast,
# and mostly passes: the suites' traits (Sources/Testing/BlocksThreads.swift) keep the tests
# that block a thread off the shared pool the in-memory conversations run on; two runs of seven
# hung (docs/architecture.md).
# Usage: Tests/run/run-tests.sh BIN_DIR (`swift build --show-bin-path`, tests built).
# Each line is prefixed with its process; a failure's lines are repeated at the end. Exits
# non-zero when any process fails.
set -uo pipefail
bin=${1:?usage: run-tests.sh BIN_DIR}
tests="$bin/ParleyPackageTests.xctest"
[ -x "$tests" ] || { echo "run-tests: $tests is missing; run swift build --build-tests first" >&2; exit 2; }
export PARLEY_BIN_DIR="$bin"
# The suites of ParleyEndToEndTests that mostly wait on real time. A suite missing here still
# runs (in [e2e]); it only shares the second lane.
REALTIME=(RealTimeTests ControlLimitsTests WebBrowserTests HistoryEndToEndTests TranslatorChainFaultTests LiveALSATests)
realtime="^ParleyEndToEndTests\.($(IFS='|'; echo "${REALTIME[*]}"))/"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
run() {  # name, then the selection
  local name=$1; shift
  "$tests" --testing-library swift-testing --no-parallel "$@" 2>&1 | tee "$logs/$name" | sed -u "s/^/[$name] /"
  # The test process's own status, not sed's.
  echo "${PIPESTATUS[0]}" > "$logs/$name.status"
}
second_lane() {
  run unit --filter '^ParleyTests\.'
  run e2e --filter '^ParleyEndToEndTests\.' --skip "$realtime"
}
start=$SECONDS
if [ "$(nproc)" -ge 2 ]; then
  run realtime --filter "$realtime" &
  second_lane
  wait
else  # one core: the processes would take each other's time, and real-time tests need theirs
  run realtime --filter "$realtime"
  second_lane
fi
status=0
for name in unit e2e realtime; do
  code=$(cat "$logs/$name.status" 2>/dev/null || echo 1)
  if [ "$code" != 0 ]; then
    status=1
    echo "run-tests: the $name tests failed (exit $code):"
    # Each failure with what it said (its "↳" lines and their indented continuations, up to 100).
    awk '/✘/ { print; more = 100; next } more > 0 && /^(↳|  )/ { print; more--; next } { more = 0 }' "$logs/$name" | grep -a . ||
      tail -n 40 "$logs/$name"
  fi
  grep -a 'Test run with' "$logs/$name" | sed "s/^/[$name] /"
done
echo "run-tests: all three processes ended after $((SECONDS - start)) s"
exit $status
