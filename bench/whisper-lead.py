#!/usr/bin/python3
"""How much of the room before the voice Whisper hears, and how far its words move with that cut
(issue 36: the product's WER against the engine's alone, in the languages Whisper hears).

parleyd gives Whisper the utterance from the start of the endpointer's pre-roll: 500 ms before
the onset that started speech (`preroll_ms`), where Moonshine hears 200 ms before the voice's
soft first sounds (`AccurateHearing.moonshineRoomBeforeVoiceMs`). Here the endpointer's cut is
redone on each recording, by level (20 ms periods; the floor the 10th percentile of their
levels): the onset is 100 ms of periods 12 dB over the floor, the voice's first sounds go back
from it 10 ms at a time while 6 dB over the floor (dips up to 60 ms), and the utterance ends
100 ms after its last period 12 dB over the floor (a pause's pass). Whisper (the worker's own
code, the shipped beam, the language given) then hears it from each of:
- 200, 300 and 400 ms before the first sounds;
- the whole pre-roll (500 ms before the onset), as shipped.

Cases: every human recording of ../shared/speech in es, fr, pt and it alone, and the second
sentence of each pair of consecutive recordings of a folder, after the first (cut at its end)
and a pause of its own room of 200, 400, 600 or 900 ms in turn, as bench/every-word.py joins
them: with a pause under 500 ms, the pre-roll holds the first sentence's last sounds.

Usage: /usr/bin/python3 bench/whisper-lead.py   (LANGUAGES=es,fr: those only). Needs `make
engines`. Per-case errors go to stderr.
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

RATE = 16000
LANGUAGES = os.environ.get("LANGUAGES", "es,fr,pt,it").split(",")
MARGINS = [200, 300, 400, None]  # ms before the first sounds; None: the whole pre-roll
PAUSES = [200, 400, 600, 900]
PERIOD = RATE // 50
STEP = RATE // 100


def level(x):
    return 10 * np.log10(np.mean(x.astype(np.float64) ** 2) / 32768.0 ** 2 + 1e-12)


def cut(samples, after=0):
    """{margin: start} and the end of the utterance that starts after sample `after`, or None."""
    periods = np.array([level(samples[i:i + PERIOD]) for i in range(0, len(samples) - PERIOD + 1, PERIOD)])
    floor = np.percentile(periods, 10)
    voiced = periods > floor + 12
    run, onset = 0, None
    for i in range(after // PERIOD, len(periods)):
        run = run + 1 if voiced[i] else 0
        if run == 5:
            onset = (i - 4) * PERIOD
            break
    if onset is None:
        return None
    first, index, gap = onset, onset, 0
    while index >= STEP and gap < 60 * RATE // 1000:
        index -= STEP
        if level(samples[index:index + STEP]) >= floor + 6:
            first, gap = index, 0
        else:
            gap += STEP
    end = min(len(samples), (np.nonzero(voiced)[0][-1] + 1) * PERIOD + RATE // 10)
    starts = {m: max(after, onset - RATE // 2) if m is None else max(0, first - m * RATE // 1000) for m in MARGINS}
    return starts, end


def cases():
    """(language, kind, name, samples, reference, where the utterance's onset may be found)."""
    found, folders = [], {}
    for lang, source, wav, reference in ears.recordings():
        if lang in LANGUAGES:
            samples = np.frombuffer(ears.pcm(wav), dtype="<i2")
            name = os.path.basename(wav)[:-4]
            found.append((lang, "alone", name, samples, reference, 0))
            folders.setdefault((lang, source), []).append((name, samples, reference))
    for (lang, _), items in folders.items():
        for k, ((a, sa, _), (b, sb, rb)) in enumerate(zip(items, items[1:])):
            ca, cb = cut(sa), cut(sb)
            if not ca or not cb:
                continue
            pause = PAUSES[k % len(PAUSES)]
            first = sa[:ca[1] - RATE // 10]
            room = np.resize(sa[:RATE // 5], pause * RATE // 1000)  # the first's own room tone
            second = sb[max(0, cb[0][None] + RATE // 2 - RATE // 5):]  # from 200 ms before its onset
            found.append((lang, "joined", f"{a}+{pause}ms+{b}", np.concatenate([first, room, second]), rb,
                          len(first) + len(room)))
    return found


def main():
    _, whisper = ears.whisper_in_process(beam_size=ears.shipped_beam_size())
    errors, words = {}, {}
    for lang, kind, name, samples, reference, after in cases():
        found = cut(samples, after)
        if not found:
            continue
        starts, end = found
        line = []
        for margin in MARGINS:
            text = whisper.transcribe(samples[starts[margin]:end].tobytes(), language=lang)["text"]
            wrong, count = ears.edits(ears.words(reference, lang), ears.words(text, lang))
            errors[lang, kind, margin] = errors.get((lang, kind, margin), 0) + wrong
            words[lang, kind] = words.get((lang, kind), 0) + (count if margin is None else 0)
            line.append(wrong)
        print(f"{lang} {kind:6} {name[:60]:60} {line}", file=sys.stderr, flush=True)
    label = {None: "whole pre-roll (shipped)"} | {m: f"{m} ms before the first sounds" for m in MARGINS if m}
    print("| language, cases | words | " + " | ".join(label[m] for m in MARGINS) + " |")
    print("|---|---|" + "---|" * len(MARGINS))
    for kind in ("alone", "joined"):
        for lang in LANGUAGES + ["all"]:
            langs = LANGUAGES if lang == "all" else [lang]
            count = sum(words.get((l, kind), 0) for l in langs)
            if count:
                cells = [str(sum(errors.get((l, kind, m), 0) for l in langs)) for m in MARGINS]
                print(f"| {lang} {kind} | {count} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
