#!/usr/bin/env python3
"""Silero hears the room before a voice: the voice detector as the capture loop runs it, with and
without the run-up (Sources/Endpoint/SileroDetector.swift: `runUpSamples`).

The capture loop judges only the 20 ms periods loud enough to be speech (over the floor plus the
margin) and skips the rest. Silero VAD is recurrent: given only the loud periods, stitched
together, it may hear no voice at all. With the run-up, it first hears the last skipped audio
(up to the run-up's length) whenever judging starts again.

Every human recording of ../shared/speech, after 0.5 s of its own room tone (its first 100 ms
looped, as bench/every-word.py joins recordings) and followed by 1 s of it; the floor is the room
tone's quietest 20 ms period plus the endpointer's bias (3 dB), the threshold that plus
`margin_db` (12 dB). The
model is the one libmoonshine carries (the engines folder), run by the ONNX Runtime of the Piper
worker's folder, window by window as SileroDetector does (512 samples after 64 of context, state
carried, forgotten after 1 s skipped). Reported per way: the share of the periods judged that
Silero calls speech (probability >= 0.5), and the recordings where it never does so for 100 ms
running (`onset_ms`: no speech would start). The noise beds of ../shared/noise, alone, at their
own floor (their quietest 20 ms period of each 3 s, plus 3 dB): the share of periods called
speech where nobody speaks.

Usage: bench/silero-run-up.py [ENGINES]   (/usr/bin/python3: numpy)
"""
import ctypes
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOISE = os.path.join(os.path.dirname(ROOT), "shared", "noise")
PERIOD, WINDOW, CONTEXT, RATE = 320, 512, 64, 16000
WAYS = [("judged periods only (before)", 0), ("run-up 0.25 s", 4000), ("run-up 0.5 s (shipped)", 8000), ("every period judged", None)]


def silero(engines):
    sys.path.insert(0, f"{engines}/piper/python")
    import onnxruntime
    lib = ctypes.CDLL(f"{engines}/moonshine/moonshine_voice/libmoonshine.so")
    length = ctypes.c_uint32.in_dll(lib, "silero_vad_onnx_len").value
    model = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(lib, "silero_vad_onnx")), length)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def level(frame):
    return 10 * np.log10(np.mean(frame.astype(np.float64) ** 2) + 1e-12)


def judge(session, audio, threshold, run_up):
    """Speech (True/False) for each period over `threshold` (the only ones the endpointer may take
    for speech), judged as the capture loop and SileroDetector do: with `run_up` None, every
    period is judged; else only those, after up to `run_up` samples of the skipped audio."""
    x = audio.astype(np.float32)
    state = np.zeros((2, 1, 128), np.float32)
    window = np.zeros(CONTEXT + WINDOW, np.float32)
    pending, skipped, count, latest, out = [], [], 0, None, []
    for start in range(0, len(x) - PERIOD + 1, PERIOD):
        frame = x[start:start + PERIOD]
        loud = level(frame) > threshold
        if run_up is not None and not loud:
            skipped = (skipped + pending + frame.tolist())[-run_up:] if run_up else []
            pending = []
            count += PERIOD
            if count >= RATE and latest is not None:
                state[:], window[:], latest = 0, 0, None
            continue
        count = 0
        pending, skipped = skipped + pending + frame.tolist(), []
        while len(pending) >= WINDOW:
            window[:CONTEXT] = window[-CONTEXT:].copy()
            window[CONTEXT:] = pending[:WINDOW]
            pending = pending[WINDOW:]
            probability, state = session.run(None, {"input": window[None], "state": state, "sr": np.array(RATE, np.int64)})
            latest = float(probability[0][0])
        if loud:
            out.append(latest is not None and latest >= 0.5)
    return out


def longest_run(flags):
    best = run = 0
    for flag in flags:
        run = run + 1 if flag else 0
        best = max(best, run)
    return best


def main():
    engines = sys.argv[1] if len(sys.argv) > 1 else ears.engines_folder()
    session = silero(engines)
    ears.SETS.append(("en", "nonnative", "en-nonnative"))
    every = list(ears.recordings())
    print(f"{len(every)} human recordings; each way: share of judged periods called speech, recordings with no 100 ms of speech")
    for name, run_up in WAYS:
        speech = judged = unheard = 0
        missed = []
        for lang, _, wav, _ in every:
            samples = np.frombuffer(ears.pcm(wav), dtype="<i2").astype(np.float32) / 32768
            room = samples[:1600]
            tone = np.tile(room, 6)
            audio = np.concatenate([tone[:8000], samples, tone[:16000]])
            threshold = min(level(room[s:s + PERIOD]) for s in range(0, len(room), PERIOD)) + 3 + 12
            # Only the periods over the threshold: those the endpointer could take for speech.
            flags = judge(session, audio, threshold, run_up)
            speech += sum(flags)
            judged += len(flags)
            if longest_run(flags) < 5:
                unheard += 1
                missed.append(os.path.basename(wav)[:-4])
        print(f"- {name}: {100 * speech / max(1, judged):.1f} % of {judged} periods; no speech started in {unheard} of "
              f"{len(every)}{': ' + ', '.join(missed) if missed else ''}", flush=True)
    for bed in sorted(os.listdir(NOISE)):
        samples = np.frombuffer(ears.pcm(os.path.join(NOISE, bed)), dtype="<i2").astype(np.float32)[:60 * RATE] / 32768
        levels = [level(samples[s:s + PERIOD]) for s in range(0, len(samples) - PERIOD + 1, PERIOD)]
        floor = np.median([min(levels[i:i + 150]) for i in range(0, max(1, len(levels) - 150), 150)]) + 3
        line = []
        for name, run_up in WAYS:
            flags = judge(session, samples, floor + 12, run_up)
            line.append(f"{name} {100 * sum(flags) / max(1, len(flags)):.1f} % of {len(flags)}")
        print(f"- {bed[:-4]} alone ({len(samples) / RATE:.0f} s), periods over the threshold called speech: " + "; ".join(line), flush=True)


if __name__ == "__main__":
    main()
