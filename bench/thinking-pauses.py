#!/usr/bin/env python3
"""Thinking pauses in file mode: does a sentence stay one turn when its speaker stops to think?

Each recording of a thinking-pause list (Tests/data/thinking-pauses.txt: LibriVox, English;
thinking-pauses-es.txt: the Spanish recordings of ../shared/speech) gets a pause of 0.6, 0.8 or
1.0 s of its own room tone (its first 100 ms, repeated) inserted after a word where the sentence
cannot end, 0.5 s of room tone before it and 2 s after it, and goes through parleyd's file mode
as shipped: auto mode, English and Spanish, the accurate engines (Whisper from one
`parley-whisper` server every run connects to). A recording is whole when it gives one turn.
File mode holds a turn's answer as a live Parley would (`TurnLogic.answerHold`, `answerWait`):
the turns are the same on any machine. bench/turn-end.py measures the same pauses live.

Usage: bench/thinking-pauses.py BIN_DIR [ENGINES]   (a release build: make release;
LANGUAGES=es only Spanish; PAUSES=1.0 only that pause). Per-recording lines go to stderr.
"""
import os
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

PAUSES = os.environ.get("PAUSES", "0.6,0.8,1.0").split(",")
LANGUAGES = os.environ.get("LANGUAGES", "en,es").split(",")


def recordings():
    """(language, name, wav, seconds, word, reference) for every cut of the lists."""
    found = []
    if "en" in LANGUAGES:
        reference = ears.librivox_transcripts()
        for ident, cut, word in ears.thinking_pause_cuts("thinking-pauses.txt"):
            found.append(("en", ident, f"{ears.LIBRIVOX}{ident}.wav", float(cut), word, reference[ident]))
    if "es" in LANGUAGES:
        for ident, cut, word in ears.thinking_pause_cuts("thinking-pauses-es.txt"):
            # ../shared/speech's, else Tests/data's copy (which lacks fleurs-es-005).
            folder = f"es/{'fleurs' if ident.startswith('fleurs') else 'voxforge'}"
            wav = next((w for w in (f"{ears.SPEECH}/{folder}/{ident}.wav", f"{ears.REPO}/Tests/data/{folder}/{ident}.wav")
                        if os.path.exists(w)), None)
            if wav:
                with open(wav[:-4] + ".txt") as f:
                    found.append(("es", ident, wav, float(cut), word, f.read().strip()))
    return found


def main():
    bin_dir, engines = ears.bin_and_engines(__doc__)
    cases = recordings()
    tally = {}  # (language, pause) -> [whole, of]
    server = ears.WhisperServer(engines, threads=ears.shipped_whisper_threads())
    try:
        with tempfile.TemporaryDirectory(prefix="parley-thinking-") as work:
            config = f"{work}/auto.toml"
            ears.write_config(config, work, mode="auto", speaker_a="en", speaker_b="es",
                              transcriber=(ears.engines_variant(work, engines, "moonshine"), server.uri))
            for pause in PAUSES:
                for lang, name, wav, cut, word, reference in cases:
                    samples = np.frombuffer(ears.pcm(wav), dtype="<i2")
                    at = int(cut * ears.RATE)
                    tone = np.tile(samples[:1600], int(max(2.0, float(pause)) * 10) + 1)
                    audio = np.concatenate([tone[:8000], samples[:at], tone[:int(float(pause) * ears.RATE)], samples[at:], tone[:32000]])
                    path = f"{work}/input.raw"
                    audio.astype("<i2").tofile(path)
                    turns, _ = ears.run_parleyd(bin_dir, config, work, path)
                    errors, count = ears.edits(ears.words(reference, lang), ears.words(" ".join(t["text"] for t in turns), lang))
                    counted = tally.setdefault((lang, pause), [0, 0])
                    counted[0] += len(turns) == 1
                    counted[1] += 1
                    print(f"{lang} {pause} s after {name} \"{word}\": {len(turns)} turn(s), {errors}/{count} errors "
                          f"{[t['text'] for t in turns]}", file=sys.stderr, flush=True)
    finally:
        server.close()
    print("| language | pause | sentences whole (one turn) |")
    print("|---|---|---|")
    for (lang, pause), (whole, of) in sorted(tally.items()):
        print(f"| {lang} | {pause} s | {whole} of {of} |")
    for lang in LANGUAGES:
        whole = sum(w for (l, _), (w, _) in tally.items() if l == lang)
        of = sum(n for (l, _), (_, n) in tally.items() if l == lang)
        if of:
            print(f"{lang}: {whole} of {of} whole")


if __name__ == "__main__":
    main()
