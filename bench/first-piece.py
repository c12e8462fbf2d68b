#!/usr/bin/env python3
"""The first words of a long reply (issue 36, item 6): how soon Piper's first sound comes, and
whether a listener still understands the sentence, with a long first clause cut before a word
that opens a clause (libexec/parley-piper: `first_cut`, shipped) and without (`pieces` given no
language: after clause marks only, as before).

The sentences are what a translation into English of a long spoken sentence looks like: the
FLORES devtest English lines of ../shared/text (eng.txt) whose long first clause the worker cuts,
spread over the file (the others are said the same way both ways). Each is said by the worker's
own code in this process (its Voice and its `pieces`, the threads parleyd gives it), piece by
piece as the worker answers them; the first sound is the time to the first piece made. The
listener is Whisper base as Parley runs it (the parley-whisper worker, beam 5, English given), on
the pieces joined as they are played, resampled to 16 kHz.

Piper's voice draws its noise at random, so each sentence sounds a little different each time,
and the listener's errors move by several words between two runs of the same pieces: both ways
are run FIRST_PIECE_ROUNDS times (4 unless told), one after the other; each run's line is printed,
then the total over the runs.

Usage: bench/first-piece.py [ENGINES]   (FIRST_PIECE_SENTENCES=N: how many, 40 unless told;
FIRST_PIECE_OPENERS=phrases: prepositions too ("in", "with", "by"...), within 60 characters:
measured, not adopted)
"""
import importlib.machinery
import importlib.util
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = os.path.join(os.path.dirname(ROOT), "shared", "text", "flores-devtest", "eng.txt")
# What FIRST_PIECE_OPENERS=phrases adds to the worker's English openers.
PHRASE_OPENERS = {"as", "than", "with", "without", "for", "from", "in", "on", "at", "into", "about", "above", "around",
                  "after", "before", "during", "through", "throughout", "over", "under", "between", "against", "like",
                  "along", "within", "across", "toward", "towards", "despite", "by"}


def worker_module():
    loader = importlib.machinery.SourceFileLoader("parley_piper", os.path.join(ROOT, "libexec", "parley-piper"))
    spec = importlib.util.spec_from_loader("parley_piper", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def main():
    engines = sys.argv[1] if len(sys.argv) > 1 else ears.engines_folder()
    count = int(os.environ.get("FIRST_PIECE_SENTENCES", "40"))
    sys.path.insert(0, f"{engines}/piper/python")
    piper = worker_module()
    import numpy as np
    voices = f"{engines}/piper/voices"
    model = next(f"{voices}/{f}" for f in sorted(os.listdir(voices)) if f.startswith("en_") and f.endswith(".onnx"))
    voice = piper.Voice("en", model, 2, 22050)
    voice.say("Hello there.")  # warm
    with open(TEXT, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    if os.environ.get("FIRST_PIECE_OPENERS") == "phrases":
        piper.OPENERS["en"] = piper.OPENERS["en"] | PHRASE_OPENERS
        piper.FIRST_CUT = (15, 60)
    cut_lines = [line for line in lines if piper.pieces(line, "en") != piper.pieces(line)]
    step = max(1, len(cut_lines) // count)
    chosen = cut_lines[::step][:count]
    whisper = ears.Whisper(engines, threads=2, beam_size=5)
    rounds = int(os.environ.get("FIRST_PIECE_ROUNDS", "4"))
    totals = {}
    for name, language in [("before: after clause marks only", None), ("a long first clause cut", "en")] * rounds:
        tally, firsts = ears.Tally(), []
        for sentence in chosen:
            said = piper.pieces(sentence, language)
            started = time.monotonic()
            audio = b""
            for index, piece in enumerate(said):
                audio += voice.say(piece)
                if index == 0:
                    firsts.append(time.monotonic() - started)
            samples = np.frombuffer(audio, dtype="<i2").astype(np.float32)
            count16 = int(len(samples) * 16000 / 22050)
            resampled = np.interp(np.arange(count16) * (22050 / 16000), np.arange(len(samples)), samples)
            heard = whisper.transcribe(resampled.astype("<i2").tobytes(), language="en")["text"]
            tally.add(sentence, heard, "en")
        total = totals.setdefault(name, [0, 0, []])
        total[0] += tally.errors
        total[1] += tally.words
        total[2] += firsts
        print(f"{name}: {len(chosen)} sentences, WER {tally} ({tally.errors}/{tally.words}), first sound "
              f"median {1000 * statistics.median(firsts):.0f} ms", flush=True)
    for name, (errors, words, firsts) in totals.items():
        print(f"over {rounds} runs, {name}: WER {100 * errors / words:.1f} % ({errors}/{words}), first sound median "
              f"{1000 * statistics.median(firsts):.0f} ms, p90 {1000 * sorted(firsts)[int(0.9 * len(firsts))]:.0f} ms")
    whisper.close()


if __name__ == "__main__":
    main()
