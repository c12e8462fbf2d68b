#!/usr/bin/env python3
"""The Whisper worker's rules for words it does not keep (libexec/parley-whisper: `trusted`,
`cut_repetition`), on texts Whisper wrote here and on the transcripts of every recording in
Tests/data. Run by `make system-checks`; needs no model (the worker's engine is not loaded)."""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workerchecks  # noqa: E402

root = workerchecks.ROOT
worker = workerchecks.load("parley-whisper")
check = workerchecks.Checks("check-whisper-rules")

# What Whisper wrote over babble alone (bench/noise.py --language es): a loop, at a log-probability
# and no-speech probability no other rule catches.
check(not worker.trusted("En el caso de la policía, la policía, la policía, la policía, la policía, la policía.", -0.65, 0.6),
      "a looping text was kept")
# A tap alone: "Thanks for watching!" at -1.27.
check(not worker.trusted("Thanks for watching!", -1.27, 0.3), "a failed decoding was kept")
check(not worker.trusted("you", -1.05, 0.8), "no speech was kept")
check(worker.trusted("you", -0.9, 0.8), "a word heard with a likely log-probability was dropped")
# Dropped for the log-probability alone, Whisper fairly sure someone spoke: a voice it could not make
# out, which another engine may hear (a soft learner over a room tone: -1.24, 0.17). Not a loop,
# not what Whisper says nobody spoke in, not words kept.
check(worker.distrusted("Holy Gospel, Psalm 100.", -1.24, 0.17), "words Whisper would not trust were not told distrusted")
check(not worker.distrusted("you", -1.05, 0.8), "what Whisper says nobody spoke in was told distrusted")
# Babble alone (bench/noise.py: -1.32 at 0.58), a kitchen (-1.60 at 0.39): noise, not a voice to hear again.
check(not worker.distrusted("I'm just going to be trying to find the ideal solution.", -1.32, 0.58), "babble was told distrusted")
check(not worker.distrusted("I'm going to do it right now,", -1.60, 0.39), "a kitchen was told distrusted")
check(not worker.distrusted("la policía, la policía, la policía, la policía, la policía, la policía.", -1.2, 0.3),
      "a loop was told distrusted")
check(not worker.distrusted("I came for information. I came for information", -1.2, 0.3), "a sentence said again was told distrusted")
check(not worker.distrusted("I had hoped to do better.", -0.5, 0.02), "words kept were told distrusted")
check(not worker.distrusted("", -1.3, 0.1), "no words were told distrusted")
# Every transcript of the recordings the tests use is kept at a clean speech's score.
transcripts = glob.glob(os.path.join(root, "Tests", "data", "**", "*.txt"), recursive=True)
kept = 0
for path in transcripts:
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    if not text or "\n" in text or len(text) > 400:
        continue  # notices and licences, not transcripts
    check(worker.trusted(text, -0.4, 0.01), f"the words of {os.path.relpath(path, root)} would be dropped")
    kept += 1
check(kept >= 10, f"only {kept} transcripts found under Tests/data")
check(worker.cut_repetition("I came for information. I came for information") == "I came for information.",
      "a sentence said again was not cut")
check(worker.cut_repetition("No, no, no.") == "No, no, no.", "a word said three times was cut")
check(worker.cut_repetition("la policía, la policía, la policía") == "la policía,", "a loop of two words was not cut")

check.finish(f"the worker keeps the words of {kept} transcripts and drops loops, failed decodings and no speech")
