#!/bin/sh
# Can prosody (F0, lengthening, energy) tell a sentence end from a word boundary inside it?
# Forced alignment of pocketsphinx-testdata and the repository's VoxForge recordings, features
# before every word end, and their separation (AUC, ends caught at 5 % / 1 % false ends).
# Output (alignments cached; add -f to redo them) goes to $PROSODY_OUT, by default out/prosody.
# Summary and conclusion: docs/benchmarks.md, "Prosody as an end-of-turn cue".
# Needs python3-numpy and python3-scipy (apt), besides pocketsphinx and sox.
set -e
here=$(cd "$(dirname "$0")" && pwd)
export PROSODY_OUT="${PROSODY_OUT:-$here/../../out/prosody}"
mkdir -p "$PROSODY_OUT"
python3 "$here/align.py" "$@"
python3 "$here/features.py"
python3 "$here/evaluate.py" > /dev/null
echo "wrote features.csv features_shift.csv extra.csv results.md compact.md in $PROSODY_OUT"
