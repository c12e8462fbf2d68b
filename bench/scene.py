#!/usr/bin/env python3
"""Rooms that never fall silent (issue 25, item 3): do turns start and end where people do?

Each scene is a room whose noise bed never stops: 1 s of quiet, then the noise comes on (a TV
switched on, a tap opened) and stays, 4 s of it alone, then 4 English sentences from 4 different
speakers of ../shared/speech/en, each followed by 6 s of the noise alone (the next person waits
for the translation to be spoken: Parley does not listen while it speaks), and 3 s more at the end. The sentences are brought to one level; the noise is
set to 15 or 10 dB below it (SNR over the sentences). Noises: ../shared/noise (8-talker babble,
dishes, a running tap, an exercise bike); "talker", one voice at a time as from a TV across the
room (the Italian recordings of ../shared/speech/it one after another, with their own pauses:
words the sentences do not share); and the same scenes without noise.

Each scene goes through parleyd in file mode (one-way English, Moonshine hearing), once with
`voice_detector = "silero"` (as shipped) and once with "level" (the level alone). A sentence is
"whole" when exactly one turn holds its words and that turn holds no other sentence's (a turn's
words are matched to the sentence they share most words with; a turn sharing none is a turn of
noise alone). WER is over all turns' words joined against all sentences joined. "Wait" is how long after a
sentence's last word (its last 10 ms within 30 dB of its loudest) parleyd decided the end of the
turn that followed it (its debug log, on the recording's own clock): the median over the sentences.

Usage: bench/scene.py BIN_DIR [ENGINES]   (SCENES=N scenes per condition, 3 by default;
NOISES=talker,babble: those noises only, and the quiet scenes; ENDPOINT="key = value; ...":
more [endpoint] settings, e.g. ENDPOINT="background_below_db = 0")
"""
import glob
import os
import random
import re
import sys
import tempfile
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

SNRS = [15, 10]
QUIET, LEAD, GAP, TAIL = 1.0, 4.0, 6.0, 3.0
SENTENCES = 4
DETECTORS = ["silero", "level"]
LEVEL = 0.05 * 32768  # the sentences' RMS (about -26 dBFS)


def samples(path):
    return np.frombuffer(ears.pcm(path), dtype="<i2").astype(np.float64)


def rms(x):
    return float(np.sqrt(np.mean(x * x))) or 1.0


def speaker(wav):
    name = os.path.basename(wav)
    parts = name.split("-")
    return "-".join(parts[:2]) if parts[0] in ("arctic", "vctk") else parts[0]


def scene(recordings, noise, snr, seed):
    """(audio as int16, [reference]) for one scene."""
    rng = random.Random(seed)
    by_speaker = {}
    for _, _, wav, reference in recordings:
        by_speaker.setdefault(speaker(wav), []).append((wav, reference))
    chosen = [rng.choice(by_speaker[s]) for s in rng.sample(sorted(by_speaker), SENTENCES)]
    rate = ears.RATE
    parts = [np.zeros(int((QUIET + LEAD) * rate))]
    spoken = []
    last_words = []
    for wav, _ in chosen:
        x = samples(wav)
        x = x * (LEVEL / rms(x))
        last_words.append((sum(len(p) for p in parts) + last_word(x)) / rate)
        parts += [x, np.zeros(int(GAP * rate))]
        spoken.append(x)
    parts.append(np.zeros(int(TAIL * rate)))
    audio = np.concatenate(parts)
    if noise is not None:
        start = rng.randrange(0, max(1, len(noise) - len(audio)))
        bed = np.resize(noise[start:], len(audio))
        bed = bed * (rms(np.concatenate(spoken)) / rms(bed) / 10 ** (snr / 20))
        bed[:int(QUIET * rate)] = 0  # the room is quiet until the noise comes on
        audio = audio + bed
    return np.clip(np.round(audio), -32768, 32767).astype("<i2"), [reference for _, reference in chosen], last_words


def last_word(x):
    """Where the last 10 ms within 30 dB of the recording's loudest ends, in samples."""
    frames = len(x) // 160
    levels = np.array([10 * np.log10(np.mean(x[i * 160:(i + 1) * 160] ** 2) + 1e-9) for i in range(frames)])
    loud = np.nonzero(levels > np.percentile(levels, 95) - 30)[0]
    return (int(loud[-1]) + 1) * 160 if len(loud) else len(x)


def waits(log, last_words):
    """Per sentence, seconds from its last word to the first end of a turn decided after it."""
    ends = [float(m.group(1)) for m in re.finditer(r"speech ended at ([0-9.]+) s", log)]
    return [min(e for e in ends if e >= word) - word for word in last_words if any(e >= word for e in ends)]


def judge(turns, references):
    """(whole sentences, turns of noise alone, WER tally) of one scene."""
    refs = [set(ears.words(r, "en")) for r in references]
    owners = []
    noise_turns = 0
    for turn in turns:
        heard = set(ears.words(turn["text"], "en"))
        shared = [len(heard & r) for r in refs]
        if not heard or max(shared) == 0:
            noise_turns += 1 if heard else 0
            owners.append(None)
            continue
        # A turn holds every sentence it shares at least half of its words with.
        owners.append({i for i, n in enumerate(shared) if n >= max(1, len(refs[i]) // 2)} or {shared.index(max(shared))})
    whole = 0
    for i in range(len(references)):
        holding = [o for o in owners if o and i in o]
        whole += len(holding) == 1 and holding[0] == {i}
    tally = ears.Tally()
    tally.add(" ".join(references), " ".join(t["text"] for t in turns), "en")
    return whole, noise_turns, tally


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    bin_dir = os.path.abspath(sys.argv[1])
    engines = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else ears.engines_folder()
    count = int(os.environ.get("SCENES", "3"))
    started = time.monotonic()
    recordings = ears.recordings("en")
    noises = {os.path.basename(p)[:-4].replace("speechcommands-", "").replace("-8talker-librispeech", ""): samples(p)
              for p in sorted(glob.glob(f"{ears.NOISE}/*.wav"))}
    noises["talker"] = np.concatenate([samples(p) for p in sorted(glob.glob(f"{ears.SPEECH}/it/*.wav"))])
    if os.environ.get("NOISES"):
        noises = {name: noises[name] for name in os.environ["NOISES"].split(",")}
    conditions = [("quiet", None, None)] + [(name, name, snr) for name in noises for snr in SNRS]
    results = {}
    with tempfile.TemporaryDirectory(prefix="parley-scene-") as work:
        moonshine = ears.engines_variant(work, engines, "moonshine")
        for detector in DETECTORS:
            path = f"{work}/{detector}.toml"
            ears.write_config(path, work, transcriber=(moonshine, ""))
            with open(path) as f:
                text = f.read().replace('level = "info"', 'level = "debug"')  # the ends, for the wait
            with open(path, "w") as f:
                f.write(text)
            with open(path, "a") as f:
                f.write(f'[endpoint]\nvoice_detector = "{detector}"\n' + os.environ.get("ENDPOINT", "").replace(";", "\n") + "\n")
        for label, name, snr in conditions:
            for index in range(count):
                audio, references, last_words = scene(recordings, noises.get(name), snr, seed=index)
                path = f"{work}/scene.raw"
                audio.tofile(path)
                for detector in DETECTORS:
                    turns, log = ears.run_parleyd(bin_dir, f"{work}/{detector}.toml", work, path)
                    whole, noise_turns, tally = judge(turns, references)
                    total = results.setdefault((label, snr, detector), [0, 0, 0, ears.Tally(), []])
                    total[4] += waits(log, last_words)
                    total[0] += whole
                    total[1] += noise_turns
                    total[2] += len(turns)
                    total[3].add(" ".join(references), " ".join(t["text"] for t in turns), "en")
                    print(f"{detector:6} {label:14} {snr or '':>2} dB scene {index}: {whole}/{len(references)} whole, "
                          f"{noise_turns} of noise, {len(turns)} turns: {' | '.join(t['text'] for t in turns)}", file=sys.stderr)
    print(f"bench/scene.py took {time.monotonic() - started:.0f} s\n")
    sentences = count * SENTENCES
    print(f"Scenes: {count} per condition, {SENTENCES} sentences each ({sentences} sentences), parleyd file mode, "
          "one-way English, Moonshine hearing\n")
    print("| noise | SNR | " + " | ".join(f"{d}: whole / noise turns / WER / wait" for d in DETECTORS) + " |")
    print("|---|---|" + "---|" * len(DETECTORS))
    for label, _, snr in conditions:
        cells = []
        for detector in DETECTORS:
            whole, noise_turns, _, tally, waited = results[(label, snr, detector)]
            wait = f"{sorted(waited)[len(waited) // 2]:.2f} s" if waited else "-"
            cells.append(f"{whole}/{sentences} / {noise_turns} / {tally} / {wait}")
        print(f"| {label} | {f'{snr} dB' if snr else '-'} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
