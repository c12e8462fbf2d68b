#!/usr/bin/env bash
# The man pages: parley.toml(5) is what man/config-to-man.py makes of config/parley.toml today
# (so the two cannot disagree), parley(1) and parleyd(8) describe every subcommand and option the
# binaries' --help lists, and `man --warnings` has nothing to say about any of the three.
# Usage: check-man.sh BINDIR   (the folder holding the parley and parleyd binaries)
set -euo pipefail
bindir=${1:?usage: check-man.sh BINDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "check-man: $*" >&2; exit 1; }
cd "$root"
version=$(sed -n 's/.*static let string = "\(.*\)"/\1/p' Sources/Protocol/Messages.swift)

python3 man/config-to-man.py config/parley.toml "$version" | cmp -s - man/parley.toml.5 ||
  fail "man/parley.toml.5 is not what config/parley.toml makes: run \`make man\` and commit man/parley.toml.5"

# Every option of parleyd and of each parley subcommand, as the argument parser lists them.
options() { "$@" --help | sed -n 's/^  *\(-[a-z-]*, \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' | sort -u; }
subcommands() { "$@" --help | sed -n '/^SUBCOMMANDS:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p'; }
mentions() { grep -qF -- "$(printf '%s' "$2" | sed 's/-/\\-/g')" "$1"; }

for option in $(options "$bindir/parleyd") $(options "$bindir/parleyd" model check) $(options "$bindir/parleyd" model install) $(options "$bindir/parleyd" model install-translation) $(options "$bindir/parleyd" model install-voice); do
  mentions man/parleyd.8 "$option" || fail "parleyd's $option is not in man/parleyd.8"
done
for command in $(subcommands "$bindir/parleyd"); do
  for sub in $(subcommands "$bindir/parleyd" "$command"); do
    mentions man/parleyd.8 "$command $sub" || fail "parleyd $command $sub is not in man/parleyd.8"
  done
done

for option in $(options "$bindir/parley"); do
  mentions man/parley.1 "$option" || fail "parley's $option is not in man/parley.1"
done
for command in $(subcommands "$bindir/parley"); do
  [ "$command" = help ] && continue
  mentions man/parley.1 "$command" || fail "parley $command is not in man/parley.1"
  for option in $(options "$bindir/parley" "$command"); do
    mentions man/parley.1 "$option" || fail "parley $command's $option is not in man/parley.1"
  done
  for sub in $(subcommands "$bindir/parley" "$command"); do
    mentions man/parley.1 "$command $sub" || [ "$sub" = list ] || fail "parley $command $sub is not in man/parley.1"
    for option in $(options "$bindir/parley" "$command" "$sub"); do
      mentions man/parley.1 "$option" || fail "parley $command $sub's $option is not in man/parley.1"
    done
  done
done

for page in man/parley.1 man/parleyd.8 man/parley.toml.5; do
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "man --warnings on $page: $warnings"
  for section in NAME SYNOPSIS DESCRIPTION FILES ENVIRONMENT "EXIT STATUS" "SEE ALSO"; do
    grep -q "^\.SH \"\{0,1\}$section\"\{0,1\}$" "$page" || fail "$page has no $section section"
  done
done
echo "check-man: parley.toml.5 matches config/parley.toml; parley.1 and parleyd.8 cover every option; no warnings"
