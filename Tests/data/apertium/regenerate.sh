#!/bin/bash
# Records what the installed `apertium -u` says of each sentence, for ApertiumDifferentialTests.
# Each call starts Apertium cold (a second or more), so this takes some minutes.
#   Tests/data/apertium/regenerate.sh            both directions
#   Tests/data/apertium/regenerate.sh eng-spa    one
# Output: DIRECTION.tsv, one "sentence<TAB>translation" line per line of DIRECTION.sentences,
# in the same order, after a comment naming the package versions.
set -euo pipefail
cd "$(dirname "$0")"
for direction in "${@:-eng-spa spa-eng}"; do
  for d in $direction; do
    {
      echo "# apertium -u $d, one sentence per line: sentence<TAB>translation; made by regenerate.sh with"
      echo "# $(dpkg-query -W -f '${Package} ${Version}' apertium), $(dpkg-query -W -f '${Package} ${Version}' "apertium-eng-spa" 2>/dev/null || true)"
      # Numbered so the parallel calls can be put back in order.
      nl -ba -w1 -s$'\t' "$d.sentences" \
        | xargs -d '\n' -P "${JOBS:-4}" -I{} bash -c '
            number=${1%%$'"'"'\t'"'"'*}; sentence=${1#*$'"'"'\t'"'"'}
            translation=$(printf "%s\n" "$sentence" | apertium -u "$2")
            printf "%s\t%s\t%s\n" "$number" "$sentence" "$translation"' _ {} "$d" \
        | sort -n -k1,1 | cut -f2-
    } > "$d.tsv.new"
    mv "$d.tsv.new" "$d.tsv"
  done
done
