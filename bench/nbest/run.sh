#!/bin/sh
# The n-best probe (docs/benchmarks.md, "The n-best list as an end cue"): for each of
# pocketsphinx-testdata's LibriVox sentences, the end judged 200 ms after the whole sentence, and
# the thinking pause of Tests/data/thinking-pauses.txt (0.8 s) judged 200 ms into it.
set -e
here=$(cd "$(dirname "$0")" && pwd)
out="${NBEST_OUT:-$here/../../out/nbest}"  # where the probe is compiled
mkdir -p "$out"
cc -O2 -o "$out/probe" "$here/probe.c" $(pkg-config --cflags --libs pocketsphinx)
models=/usr/share/pocketsphinx/model/en-us
data=/usr/share/pocketsphinx/test/data/librivox
grep -v '^#' "$here/../../Tests/data/thinking-pauses.txt" | while read -r id at word; do
  wav="$data/sense_and_sensibility_01_austen_64kb-$id.wav"
  printf '%s whole     ' "$id"; "$out/probe" "$models" "$wav" 0 0
  printf '%s "%s" 0.8 s ' "$id" "$word"; "$out/probe" "$models" "$wav" "$at" 0.8
done
