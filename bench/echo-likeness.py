#!/usr/bin/env python3
"""How well what is left after the echo canceller can be told to be Parley's own voice by its
likeness to what was played (`EchoDelay.likeness`, `DoubleTalk.Settings.echoLikeness`): the
numbers behind the 0.5 threshold, the pre-emphasis and the 60 ms searched.

Pairs of recordings of ../shared/speech (English and Spanish, every speaker), drawn at random
(seed 1). For each pair, 310 ms of one recording is "what was played" (the 250 ms the daemon
searches around a period: EchoHearing.likenessLateMs + likenessEarlyMs, and the 60 ms stretch);
- Parley's voice let through: 60 ms of that same stretch, 62 ms in, at half its level;
- a person's voice: 60 ms of the other recording where it is voiced;
each with 60 ms of a real noise (../shared/noise) 50 dB under full scale on it, as a room's.
The likeness is the best normalized correlation of the stretch against every 60 ms of what was
played, both pre-emphasized (each sample less EMPHASIS of the one before). Printed: the
percentiles of each, for the emphasis shipped (0.9) and none.

Usage: bench/echo-likeness.py   (PAIRS=N: how many draws, 1000)
"""
import glob
import os
import random
import wave

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared")
STRETCH = 960      # 60 ms at 16 kHz
SEARCHED = 4000    # 250 ms
PAIRS = int(os.environ.get("PAIRS", "1000"))


def load(path):
    with wave.open(path) as w:
        audio = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)
        if w.getnchannels() > 1:
            audio = audio.reshape(-1, w.getnchannels())[:, 0]
        rate = w.getframerate()
    if rate != 16000:
        count = int(len(audio) * 16000 / rate)
        audio = np.interp(np.linspace(0, len(audio) - 1, count), np.arange(len(audio)), audio)
    return audio


def likeness(heard, played, emphasis):
    heard = heard[1:] - emphasis * heard[:-1]
    played = played[1:] - emphasis * played[:-1]
    energy = np.sqrt(np.sum(heard * heard))
    if energy == 0:
        return 0.0
    products = np.correlate(played, heard, "valid")
    windows = np.sqrt(np.convolve(played * played, np.ones(len(heard)), "valid"))
    return float(np.max(np.abs(products) / (energy * np.maximum(windows, 1))))


def rms_db(x):
    return 20 * np.log10(np.sqrt(np.mean(x * x)) / 32768 + 1e-12)


def main():
    files = sorted(glob.glob(f"{SHARED}/speech/en/*.wav")) + sorted(glob.glob(f"{SHARED}/speech/es/*/*.wav"))
    noises = sorted(glob.glob(f"{SHARED}/noise/**/*.wav", recursive=True))
    cache = {}

    def get(path):
        if path not in cache:
            cache[path] = load(path)
        return cache[path]

    rng = random.Random(1)
    results = {0.9: ([], []), 0.0: ([], [])}
    for _ in range(PAIRS):
        first, second = rng.sample(files, 2)
        played_voice, other, noise = get(first), get(second), get(rng.choice(noises))
        if len(played_voice) < STRETCH + SEARCHED + 2 or len(other) < STRETCH + 2 or len(noise) < STRETCH + 2:
            continue
        start = rng.randrange(0, len(played_voice) - STRETCH - SEARCHED - 1)
        played = played_voice[start:start + STRETCH + SEARCHED + 1]
        if rms_db(played) < -50:
            continue
        echo = played[1000:1000 + STRETCH + 1] * 0.5
        if rms_db(echo) < -40:
            continue
        begin = rng.randrange(0, len(noise) - STRETCH - 2)
        room = noise[begin:begin + STRETCH + 1]
        room = room / (np.sqrt(np.mean(room * room)) + 1e-9) * 32768 * 10 ** (-50 / 20)
        for _ in range(20):
            at = rng.randrange(0, len(other) - STRETCH - 1)
            voice = other[at:at + STRETCH + 1]
            if rms_db(voice) > -40:
                break
        for emphasis, (echoes, people) in results.items():
            echoes.append(likeness(echo + room, played, emphasis))
            people.append(likeness(voice + room, played, emphasis))
    for emphasis, (echoes, people) in results.items():
        echoes, people = np.array(echoes), np.array(people)
        print(f"emphasis {emphasis}: {len(echoes)} pairs; Parley's voice let through: 1st/5th/50th percentile "
              f"{np.percentile(echoes, 1):.2f}/{np.percentile(echoes, 5):.2f}/{np.median(echoes):.2f}, "
              f"under 0.5 {np.mean(echoes <= 0.5):.1%}; a person's voice: 50th/95th/99th "
              f"{np.median(people):.2f}/{np.percentile(people, 95):.2f}/{np.percentile(people, 99):.2f}, "
              f"over 0.5 {np.mean(people > 0.5):.1%}")


if __name__ == "__main__":
    main()
