#!/usr/bin/python3
"""Whisper base's language identification on the first seconds of an utterance, against the whole.

For every human recording of ../shared/speech (en, en-nonnative, es/fleurs, es/voxforge, fr, pt,
it; synthetic voices such as es/wavenet are skipped) and every window W in 1.0, 1.5, 2.0, 3.0,
4.0 s and the whole recording, the detector hears only the first W seconds, counted from 0.2 s
before speech starts, and chooses between the two languages of the conversation: English
recordings against Spanish, every other language against English. It is the worker's own code:
libexec/parley-whisper's Whisper class, loaded as a module, set up as its main() sets it up for
parleyd (the built model .build/engines/whisper/base, int8, the threads parleyd gives it: one per core but one, beam 5),
warmed the same way, and asked with language=None, candidates=[right, other] and skip={both},
so it encodes and detects but does not decode.

Speech start: 20 ms frames (320 samples), each frame's energy in dB (10 log10 of its mean
square); the floor is the 10th percentile of those; speech starts at the first frame more than
20 dB above the floor. A recording whose speech after that start is shorter than W is given
all of it (counted as shorter than the window).

Per recording and window it records whether the likeliest candidate is right, the probability
of the right language (normalised over the two candidates, as the worker reports it) and the
wall time of the transcribe call (time.monotonic around it: features, encoder and detection),
with the process's CPU time for the call and the 1-minute load average beside it (another build
on the machine makes the wall times noisy; the CPU time much less so).

Usage: /usr/bin/python3 bench/detection-window.py [OUT.json]   (default /tmp/detection-window.json;
SPEECH=... points at another speech folder; WINDOWS=3.0,whole measures only those windows;
DETECT_PAD_FRAMES=200 gives the encoder 2 s of silence after the audio, as the worker did before
session 44; it now adds none to audio whose language alone is asked for). Needs `make engines`.
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import time
import wave

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEECH = os.path.normpath(os.environ.get("SPEECH", f"{ROOT}/../shared/speech"))
RATE = 16000
WINDOWS = [None if w == "whole" else float(w) for w in os.environ.get("WINDOWS", "1.0,1.5,2.0,3.0,4.0,whole").split(",")]
# None: the whole recording (from the same start).
LEAD = 0.2                                        # seconds kept before speech starts
FRAME = 320                                       # 20 ms
ABOVE_FLOOR_DB = 20.0
SYNTHETIC = ("wavenet", "espeak", "piper", "tts")
OTHER = {"en": "es"}                              # the other language of the conversation; else "en"


def recordings():
    """(group, language, path) of every human recording: the first folder under SPEECH names the
    language (en-nonnative is English), deeper folders are sources."""
    found = []
    for path in sorted(glob.glob(f"{SPEECH}/**/*", recursive=True)):
        if not path.endswith((".wav", ".raw")):
            continue
        relative = os.path.relpath(path, SPEECH)
        if any(word in relative.lower() for word in SYNTHETIC):
            continue
        parts = relative.split(os.sep)
        group = "/".join(parts[:-1])
        found.append((group, parts[0].split("-")[0], path))
    return found


def pcm16k(path):
    """16 kHz mono int16 samples; anything else is converted with sox (.raw is taken as 16 kHz
    mono int16)."""
    if path.endswith(".wav"):
        with wave.open(path) as w:
            if (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (RATE, 1, 2):
                return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").copy()
        source = [path]
    else:
        source = ["-t", "raw", "-r", str(RATE), "-e", "signed", "-b", "16", "-c", "1", path]
    out = subprocess.run(["sox", *source, "-t", "raw", "-r", str(RATE), "-e", "signed", "-b", "16", "-c", "1", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(out, dtype="<i2").copy()


def speech_start(samples):
    """Seconds to the first 20 ms frame more than 20 dB above the 10th percentile of frame energies."""
    count = len(samples) // FRAME
    frames = samples[: count * FRAME].astype(np.float64).reshape(count, FRAME) / 32768.0
    energy = 10 * np.log10(np.mean(frames ** 2, axis=1) + 1e-10)
    floor = float(np.percentile(energy, 10))
    loud = np.nonzero(energy > floor + ABOVE_FLOOR_DB)[0]
    return (int(loud[0]) * FRAME / RATE if len(loud) else 0.0), floor


def percentile(values, q):
    return float(np.percentile(values, q)) if values else float("nan")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/detection-window.json"
    # As parleyd's defaults give it ([transcriber] threads = 0); the beam plays no part.
    worker, whisper = ears.whisper_in_process()

    results = []
    for group, language, path in recordings():
        samples = pcm16k(path)
        onset, floor = speech_start(samples)
        start = max(0.0, onset - LEAD)
        first = int(round(start * RATE))
        other = OTHER.get(language, "en")
        available = (len(samples) - first) / RATE
        record = {"file": os.path.relpath(path, SPEECH), "group": group, "language": language, "other": other,
                  "duration": len(samples) / RATE, "speech_start": onset, "window_start": start,
                  "floor_db": floor, "load_average": os.getloadavg()[0], "windows": {}}
        for window in WINDOWS:
            clip = samples[first:] if window is None else samples[first: first + int(round(window * RATE))]
            began, cpu = time.monotonic(), time.process_time()
            result = whisper.transcribe(clip.tobytes(), language=None, candidates=[language, other], skip={language, other})
            wall, cpu = time.monotonic() - began, time.process_time() - cpu
            probabilities = result["language_probabilities"]
            record["windows"]["whole" if window is None else f"{window:.1f}"] = {
                "seconds_heard": len(clip) / RATE, "shorter": window is not None and available < window,
                "detected": result["language"], "right": result["language"] == language,
                "p_right": probabilities.get(language, 0.0), "wall": wall, "cpu": cpu, "decoded": result["decoded"]}
        worker.release_memory()
        results.append(record)
        print(f"{record['file']:55s} start {start:4.2f}s " + " ".join(
            f"{k}:{v['p_right']:.2f}{'' if v['right'] else '!'}" for k, v in record["windows"].items()), file=sys.stderr, flush=True)

    with open(out, "w", encoding="utf-8") as f:
        json.dump({"speech": SPEECH, "lead": LEAD, "frame": FRAME, "above_floor_db": ABOVE_FLOOR_DB,
                   "threads": os.environ.get("WHISPER_THREADS", ears.shipped_whisper_threads()), "compute_type": "int8", "recordings": results},
                  f, indent=1, ensure_ascii=False)

    groups = sorted({r["group"] for r in results})
    for key in ["%.1f" % w if w else "whole" for w in WINDOWS]:
        rows = [(r, r["windows"][key]) for r in results]
        walls = [w["wall"] for _, w in rows]
        wrong = [(r["file"], w["p_right"]) for r, w in rows if not w["right"]]
        shorter = sum(w["shorter"] for _, w in rows)
        print(f"\nwindow {key}: {len(rows)} recordings ({shorter} shorter than it), {len(wrong)} wrong, "
              f"wall median {statistics.median(walls) * 1000:.0f} ms p90 {percentile(walls, 90) * 1000:.0f} ms, "
              f"cpu median {statistics.median(w['cpu'] for _, w in rows) * 1000:.0f} ms")
        for file, p in wrong:
            print(f"  wrong: {file} p(right) {p:.3f}")
        for group in groups:
            sub = [w for r, w in rows if r["group"] == group]
            gw = [w["wall"] for w in sub]
            print(f"  {group:14s} {len(sub):3d} recs, {sum(not w['right'] for w in sub):2d} wrong, "
                  f"min p(right) {min(w['p_right'] for w in sub):.3f}, "
                  f"wall median {statistics.median(gw) * 1000:.0f} ms p90 {percentile(gw, 90) * 1000:.0f} ms, "
                  f"{sum(w['shorter'] for w in sub)} shorter")


if __name__ == "__main__":
    main()
