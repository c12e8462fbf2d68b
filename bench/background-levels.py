#!/usr/bin/env python3
"""How far a TV across the room can be told from the people by its level (issue 36, item 4):
the numbers behind `[endpoint] background_below_db` and the endpointer's 300 ms judging window.

The people: the English recordings of ../shared/speech/en, each brought to -26 dBFS as
bench/scene.py does; their level is the median over recordings of the 80th percentile of the
voiced 20 ms periods (those 12 dB over the recording's 5th percentile). The TV: bench/scene.py's
"talker" bed (the Italian recordings one after another), its RMS 10, 15 or 20 dB under the
sentences'. For each judging window and gate (12 or 10 dB under the people's level):
- the share of the TV's periods at or over the gate (they would start or hold speech);
- the share of 1.5 s windows of the TV free of any (the silence limit can end a turn in them);
- the share of the people's voiced periods under the gate, and their longest run under it.

Usage: bench/background-levels.py
"""
import glob
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402
import scene  # noqa: E402


def periods(x):
    k = len(x) // 320
    return 10 * np.log10(np.mean(x[:k * 320].reshape(k, 320) ** 2, axis=1) + 1e-9)


def judged(levels, window):
    power = np.convolve(10 ** (levels / 10), np.ones(window) / window, mode="full")[:len(levels)]
    return 10 * np.log10(power + 1e-20)


def main():
    sentences = []
    for _, _, wav, _ in ears.recordings("en"):
        x = scene.samples(wav)
        sentences.append(x * (scene.LEVEL / scene.rms(x)))
    everything = np.concatenate(sentences)

    def loud(x):
        levels = periods(x)
        return np.percentile(levels[levels > np.percentile(levels, 5) + 12], 80)

    people = np.median([loud(x) for x in sentences])
    bed = np.concatenate([scene.samples(p) for p in sorted(glob.glob(f"{ears.SPEECH}/it/*.wav"))])
    print(f"{len(sentences)} English recordings; the TV: {len(bed) / ears.RATE:.0f} s of Italian\n")
    print("| TV SNR | window | gate | TV periods over the gate | 1.5 s windows free of it |")
    print("|---|---|---|---|---|")
    for snr in (20, 15, 10):
        tv = periods(bed * (scene.rms(everything) / scene.rms(bed) / 10 ** (snr / 20)))
        for window in (5, 15, 25):
            for gate in (12, 10):
                near = judged(tv, window) >= people - gate
                free = np.convolve(near.astype(int), np.ones(75), mode="valid") == 0
                print(f"| {snr} dB | {window * 20} ms | {gate} dB | {100 * near.mean():.1f} % | {100 * free.mean():.1f} % |")
    print("\n| window | gate | people's voiced periods under it | longest run under it in a sentence: median, max |")
    print("|---|---|---|---|")
    for window in (5, 15, 25):
        for gate in (12, 10):
            under, runs = [], []
            for x in sentences:
                levels = periods(x)
                voiced = levels > np.percentile(levels, 5) + 12
                span = np.where(voiced)[0]
                near = judged(levels, window)[span[0]:span[-1] + 1] >= people - gate
                under.append(np.mean(~near[voiced[span[0]:span[-1] + 1]]))
                run = longest = 0
                for n in near:
                    run = 0 if n else run + 1
                    longest = max(longest, run)
                runs.append(longest * 20)
            print(f"| {window * 20} ms | {gate} dB | {100 * np.mean(under):.1f} % | {np.median(runs):.0f} ms, {max(runs)} ms |")


if __name__ == "__main__":
    main()
