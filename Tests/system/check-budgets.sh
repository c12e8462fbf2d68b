#!/usr/bin/env bash
# Budgets that do not depend on the machine, checked on the release build as `make` makes it:
# - the `parley` CLI, stripped, is at most 15 MB (docs/benchmarks.md, "Under 15 MB");
# - it links no ICU (icudt, 30-40 MB of tables), which Foundation's classes bring in when a
#   module the CLI links (ParleyCore, ParleyProtocol) uses them.
# Building the CLI in release here also guards `make`'s own release build of that product.
# Usage: check-budgets.sh (from anywhere; builds what it checks).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
swift=${SWIFT:-swift}
fail() { echo "check-budgets: $*" >&2; exit 1; }
limit=$((15 * 1000 * 1000))

cd "$root"
"$swift" build -c release --static-swift-stdlib --product parley >/tmp/check-budgets.$$.log 2>&1 \
  || { tail -n 40 /tmp/check-budgets.$$.log >&2; rm -f /tmp/check-budgets.$$.log; fail "the release build of parley failed"; }
rm -f /tmp/check-budgets.$$.log
cli="$("$swift" build -c release --show-bin-path)/parley"
[ -x "$cli" ] || fail "$cli was not built"

# Read whole first: under pipefail, `nm | grep -q` fails at random when grep quits early (SIGPIPE).
symbols=$(nm "$cli" 2>/dev/null || true)
[ -n "$symbols" ] || fail "nm read no symbols from $cli"
icu=$(grep -c 'icudt' <<<"$symbols" || true)
[ "$icu" = 0 ] || fail "the parley CLI links ICU ($icu icudt symbols): a module it links uses Foundation's classes; keep them in modules only parleyd links (docs/architecture.md, \"Budgets\")"

stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
strip -o "$stripped" "$cli"
size=$(stat -c %s "$stripped")
[ "$size" -le "$limit" ] || fail "the parley CLI is $size bytes stripped, over the budget of $limit"
echo "check-budgets: parley CLI $size bytes stripped (budget $limit), no ICU"
