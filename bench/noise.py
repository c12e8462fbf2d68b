#!/usr/bin/env python3
"""The accurate pass in noise (issue 25): word error rate with background noise, and turns made
of noise alone, in English (the default) or Spanish (`--language es`).

Speech: ears.recordings(LANGUAGE): English, the 25 recordings of /work/shared/speech/en;
Spanish, the 10 of es/fleurs (5) and es/voxforge (5, one speaker; the synthetic es/wavenet is
left out). Noise: /work/shared/noise (an eight-talker babble mixed from LibriSpeech, and Google
Speech Commands' doing_the_dishes, exercise_bike and running_tap, recorded in real rooms).

Mixing: each recording gets 0.5 s of silence before and 2 s after; the noise covers that whole
segment, taken from the noise file at a fixed offset (10 s), scaled so that the recording's RMS
(over the whole recording as given, its own short silences included) is 20 or 10 dB above the
noise's RMS over the same stretch. The segments of a condition are joined, one run per set of
recordings (English: one; Spanish: FLEURS, then VoxForge), with silence after each (Parley is
half-duplex: it does not listen while it speaks the translation): 6 s after English, 12 s after
Spanish (the English of a long FLEURS sentence takes more than 6 s to say). Each run goes through
parleyd's file mode once per engine, one-way in the language (speaker B the other of English and
Spanish):
- PocketSphinx: `[transcriber] enabled = false` (Spanish: models/es);
- Moonshine tiny (English only: it hears no other language): the accurate pass on, an engines
  folder holding Moonshine only;
- Whisper base: the accurate pass on, no Moonshine, so Whisper hears the language (the shipped
  beam, one `parley-whisper --uri tcp://127.0.0.1:PORT` that parleyd connects to).
The Silero voice detector comes with Moonshine's library: the Moonshine runs (and auto mode,
below) have it beside the level, as shipped; the PocketSphinx and Whisper runs find speech by
the level alone, unless `--silero`: then they get an engines folder holding Moonshine's library
without its model, so Silero as shipped and still no Moonshine.
WER is that of all turns' words joined against all references joined, summed over the sets (a
recording cut in two turns, or a turn of noise alone, counts as it would in a conversation);
with more than one set, each set's WER is printed as well.

Noise alone: each noise at three offsets (20, 35, 50 s), 4 s long, with 0.5 s of silence before
and 2 s after, at the level it had in the 20 dB and 10 dB mixtures of the median-level recording
of the language: 24 clips, each through parleyd as a fresh start (per engine above, one-way in
the language), and through the Whisper worker directly (beam 5, told the language), whose
avg_logprob and no_speech_prob are reported. A clip "made a turn" when parleyd stored a turn
with words. The clips also go through parleyd in auto mode as shipped (English and Spanish;
Whisper tells who spoke, Moonshine hears English, Whisper Spanish).

Usage: bench/noise.py BIN_DIR [ENGINES] [--language en|es] [--silero] [--only wer|alone]
  ENGINES: default .build/engines of this checkout (or $PARLEY_ENGINES).
  --only wer: the mixtures only; --only alone: the noise-alone clips only.
BENCH_LIMIT=N takes the first N recordings of each set only (a quicker look).
Each run's words go to stderr; the tables to stdout.
"""
import glob
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

OFFSET = 10.0
SNRS = [20, 10]
ALONE_OFFSETS = [20.0, 35.0, 50.0]
ALONE_SECONDS = 4.0
BEFORE, AFTER = 0.5, 2.0
NAMES = {"en": "English", "es": "Spanish", "pocketsphinx": "PocketSphinx", "moonshine": "Moonshine tiny",
         "whisper": "Whisper base (beam 5)"}
# Per language: the other side of the one-way conversation (speaker B), the engines that hear it
# (Moonshine hears English only), and the silence after each recording (Parley does not listen
# while it speaks the translation; the English of a long FLEURS sentence takes more than 6 s).
LANGUAGES = {"en": {"other": "es", "engines": ["pocketsphinx", "moonshine", "whisper"], "gap": 6.0},
             "es": {"other": "en", "engines": ["pocketsphinx", "whisper"], "gap": 12.0}}


def option(arguments, name, choices, default):
    """Takes `name VALUE` out of arguments; the usage when VALUE is not one of choices."""
    if name not in arguments:
        return default
    index = arguments.index(name)
    value = arguments[index + 1] if index + 1 < len(arguments) else None
    del arguments[index:index + 2]
    if value not in choices:
        sys.exit(__doc__)
    return value


def samples(path):
    return np.frombuffer(ears.pcm(path), dtype="<i2").astype(np.float64)


def rms(x):
    return float(np.sqrt(np.mean(x * x))) or 1.0


def as_int16(x):
    return np.clip(np.round(x), -32768, 32767).astype("<i2")


def noise_name(path):
    return os.path.basename(path)[:-4].replace("speechcommands-", "").replace("-8talker-librispeech", "")


def combined(runs):
    """One Tally, and the turns, of several runs' (Tally, turns)."""
    tally = ears.Tally()
    for one, _ in runs:
        tally.errors += one.errors
        tally.words += one.words
        tally.recordings += one.recordings
    return tally, sum(turns for _, turns in runs)


def main():
    arguments = sys.argv[1:]
    only = option(arguments, "--only", ("wer", "alone"), None)
    language = option(arguments, "--language", tuple(LANGUAGES), "en")
    silero = "--silero" in arguments
    arguments = [a for a in arguments if a != "--silero"]
    if len(arguments) not in (1, 2):
        sys.exit(__doc__)
    bin_dir = os.path.abspath(arguments[0])
    engines = os.path.abspath(arguments[1]) if len(arguments) == 2 else ears.engines_folder()
    heard_by = LANGUAGES[language]["engines"]
    alone_by = [*heard_by, "auto"]
    gap = LANGUAGES[language]["gap"]
    started = time.monotonic()
    speech = [(source, wav, reference, samples(wav)) for _, source, wav, reference in ears.recordings(language)]
    sources = list(dict.fromkeys(source for source, _, _, _ in speech))  # each set goes through parleyd on its own
    noises = {noise_name(p): samples(p) for p in sorted(glob.glob(f"{ears.NOISE}/*.wav"))}
    rate = ears.RATE
    wer = {}  # (label, snr, engine, source) -> (Tally, turns)
    server = ears.WhisperServer(engines, threads=2)
    try:
        with tempfile.TemporaryDirectory(prefix="parley-noise-") as work:
            detector = ears.engines_variant(work, engines, "silero") if silero else None
            configs = {"pocketsphinx": None, "moonshine": (ears.engines_variant(work, engines, "moonshine"), ""),
                       "whisper": (detector or ears.engines_variant(work, engines, "none"), server.uri)}
            for engine in heard_by:
                ears.write_config(f"{work}/{engine}.toml", work, speaker_a=language,
                                  speaker_b=LANGUAGES[language]["other"], transcriber=configs[engine], detector=detector)
            ears.write_config(f"{work}/auto.toml", work, mode="auto", transcriber=(configs["moonshine"][0], server.uri))

            conditions = [("clean", None, None)] + [(name, name, snr) for name in noises for snr in SNRS]
            if only == "alone":
                conditions = []
            for label, name, snr in conditions:
                for source in sources:
                    parts, references = [], []
                    for _, _, reference, x in (r for r in speech if r[0] == source):
                        segment = np.concatenate([np.zeros(int(BEFORE * rate)), x, np.zeros(int(AFTER * rate))])
                        if name:
                            start = int(OFFSET * rate)
                            n = noises[name][start:start + len(segment)]
                            gain = rms(x) / rms(n[int(BEFORE * rate):int(BEFORE * rate) + len(x)]) / 10 ** (snr / 20)
                            segment = segment + gain * n
                        parts += [segment, np.zeros(int(gap * rate))]
                        references.append(reference)
                    audio = f"{work}/condition.raw"
                    as_int16(np.concatenate(parts)).tofile(audio)
                    for engine in heard_by:
                        turns, _ = ears.run_parleyd(bin_dir, f"{work}/{engine}.toml", work, audio)
                        text = " ".join(t["text"] for t in turns)
                        tally = ears.Tally()
                        tally.add(" ".join(references), text, language)
                        wer[(label, snr, engine, source)] = (tally, len(turns))
                        print(f"{engine:12} {source:8} {label:16} {snr or '':>2} dB: {tally} WER, {len(turns)} turns: {text}",
                              file=sys.stderr)

            # Noise alone.
            levels = sorted(rms(x) for _, _, _, x in speech)
            median = levels[len(levels) // 2]
            alone = {engine: [] for engine in [*alone_by, "whisper direct"]}
            stats = []
            if only != "wer":
                whisper = ears.Whisper(engines, threads=2)
                for name, n in noises.items():
                    for snr in SNRS:
                        for offset in ALONE_OFFSETS:
                            clip = n[int(offset * rate):int((offset + ALONE_SECONDS) * rate)]
                            clip = clip * (median / 10 ** (snr / 20) / rms(clip))
                            clip = np.concatenate([np.zeros(int(BEFORE * rate)), clip, np.zeros(int(AFTER * rate))])
                            audio = f"{work}/alone.raw"
                            as_int16(clip).tofile(audio)
                            label = f"{name} @{offset:.0f}s, level of {snr} dB SNR"
                            for engine in alone_by:
                                turns, _ = ears.run_parleyd(bin_dir, f"{work}/{engine}.toml", work, audio)
                                said = [(f"[{t['lang']}] " if engine == "auto" else "") + t["text"] for t in turns if t["text"].strip()]
                                alone[engine].append((label, said))
                            result = whisper.transcribe(as_int16(clip).tobytes(), language=language)
                            said = [result["text"]] if result["text"].strip() else []
                            alone["whisper direct"].append((label, said))
                            stats.append((label, result.get("avg_logprob"), result.get("no_speech_prob"), result["text"]))
                whisper.close()
    finally:
        server.close()
    elapsed = time.monotonic() - started
    print(f"bench/noise.py --language {language}{' --silero' if silero else ''} took {elapsed:.0f} s; speech found by "
          + ("Silero beside the level in every run\n" if silero else
             "the level alone for PocketSphinx and Whisper, Silero beside it for Moonshine and auto\n"))
    if wer:
        words = sum(len(ears.words(reference, language)) for _, _, reference, _ in speech)
        print(f"{NAMES[language]} WER in noise: {len(speech)} recordings ({sum(ears.seconds(w) for _, w, _, _ in speech):.0f} s, "
              f"{words} words; {', '.join(sources)}: each set joined, {gap:.0f} s of silence after each recording), "
              f"parleyd file mode, one-way {NAMES[language]}\n")
        for shown in ([None] if len(sources) == 1 else [None, *sources]):
            if shown:
                print(f"\n{shown} alone:\n")
            print("| noise | SNR | " + " | ".join(NAMES[e] for e in heard_by) + " |")
            print("|---|---|" + "---|" * len(heard_by))
            for label, name, snr in conditions:
                cells = []
                for engine in heard_by:
                    tally, turns = combined([wer[(label, snr, engine, source)] for source in sources if shown in (None, source)])
                    cells.append(f"{tally} ({turns} turns)")
                print(f"| {label} | {f'{snr} dB' if snr else '-'} | " + " | ".join(cells) + " |")
    if not stats:
        return
    clips = len(alone["whisper direct"])
    print(f"\nNoise alone: {clips} clips ({len(noises)} noises x 3 offsets x 2 levels), 4 s each, at the level the noise had "
          f"in the mixtures of the median {NAMES[language]} recording ({20 * np.log10(median / 32768):.1f} dBFS RMS); "
          f"one-way {NAMES[language]} per engine, auto mode (English and Spanish), and the Whisper worker directly "
          f"(language {language}); clips that made a turn with words:\n")
    print("| engine | " + " | ".join(f"{name}" for name in noises) + " | all |")
    print("|---|" + "---|" * (len(noises) + 1))
    for engine, results in alone.items():
        cells = []
        for name in noises:
            mine = [said for label, said in results if label.startswith(name + " ")]
            cells.append(f"{sum(bool(s) for s in mine)}/{len(mine)}")
        print(f"| {engine} | " + " | ".join(cells) + f" | {sum(bool(s) for _, s in results)}/{len(results)} |")
    print("\nWhat was heard in noise alone:")
    for engine, results in alone.items():
        for label, said in results:
            if said:
                print(f"- {engine}, {label}: {' / '.join(said)!r}")
    logprobs = [s[1] for s in stats if s[1] is not None]
    no_speech = [s[2] for s in stats if s[2] is not None]
    print(f"\nWhisper (direct) on noise alone: avg_logprob median {statistics.median(logprobs):.2f} "
          f"(range {min(logprobs):.2f} to {max(logprobs):.2f}), no_speech_prob median {statistics.median(no_speech):.2f} "
          f"(range {min(no_speech):.2f} to {max(no_speech):.2f}); the worker drops words when no_speech_prob > 0.6 and "
          f"avg_logprob < -1.0")
    for label, logprob, nsp, text in stats:
        print(f"  {label:45} avg_logprob {logprob:6.2f} no_speech_prob {nsp:.2f} "
              f"compression {ears.compression_ratio(text):4.2f} {text!r}")

if __name__ == "__main__":
    main()
