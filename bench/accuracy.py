#!/usr/bin/env python3
"""The accurate pass (issue 25): word error rate per language and engine, and who spoke.

Recordings: /work/shared/speech (human speech only; es/wavenet, synthetic, is left out): English
(25: VCTK, CMU ARCTIC, a home reading of ARCTIC prompts, LJ Speech), Spanish (5 FLEURS, 5
VoxForge), French, Portuguese and Italian (VoxForge, one speaker each). WER against the .txt
beside each recording, after bench/ears.py's normalization.

Engines spoken to directly:
- Whisper base: the parley-whisper worker (--threads 2, int8), the language given, beam 5 and
  greedy (beam 1). Language ID: the worker chooses between en and the recording's language
  (en and es for English recordings), no words decoded.
- Moonshine tiny: libmoonshine through ctypes, the calls parleyd makes, on the whole recording:
  one transcriber for every recording (as parleyd keeps one), and a fresh one per recording.

parleyd's file mode (release build), two ways:
- "fresh": one run per recording (0.5 s of silence before, 2 s after): every turn is the
  first of a run;
- "one run": the recordings of a set joined, 0.5 s of silence before each and 12 s after (Parley
  does not listen while it speaks the translation, and the English of a long FLEURS sentence
  takes more than 6 s to say), one run, as a daemon hears a conversation.
  WER over all turns' words joined against all references joined.
Configurations:
- PocketSphinx: `[transcriber] enabled = false`, one-way, speaker A the recording's language
  (en: Debian's pocketsphinx-en-us; es: models/es). English and Spanish only.
- Moonshine: one-way English, the accurate pass on, an engines folder holding Moonshine only
  (no Whisper worker started).
- auto: speaker A en, B es, auto mode, as shipped (Moonshine in process for English, Whisper for
  Spanish and for telling who spoke). Whisper is one `parley-whisper --uri tcp://127.0.0.1:PORT`
  every run connects to (`[transcriber] server`): the same worker code as the child parleyd
  starts, the model loaded once. The one run alternates English and Spanish recordings (the
  remaining English ones at the end); a turn's truth is known when the run gave exactly one turn
  per recording.
A recording the endpointer cuts into several turns is scored on its turns' words joined.

Usage: bench/accuracy.py BIN_DIR [ENGINES]   (ENGINES: default .build/engines of this checkout)
Per-recording transcripts go to stderr.
"""
import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

ROWS = [("en", "en"), ("es", "fleurs"), ("es", "voxforge"), ("es", None), ("fr", None), ("pt", None), ("it", None)]


GAP = "12"  # seconds of silence after each recording of a one run


def joined(work, recordings, name):
    """The recordings joined, 0.5 s of silence before each and GAP after."""
    out = f"{work}/{name}.raw"
    with open(out, "wb") as f:
        for _, _, wav, _ in recordings:
            f.write(ears.pcm(wav, "pad", "0.5", GAP))
    return out


def name_of(lang, source):
    return f"{lang}{' ' + source if source and source != lang else ' (all)' if lang == 'es' else ''}"


def main():
    bin_dir, engines = ears.bin_and_engines(__doc__)
    every = ears.recordings()
    tallies = {}  # (engine, lang, source) -> Tally
    extras = {}   # engine -> [(recording, words)]
    langid = {}   # lang -> [right, total]
    auto = {"turns": 0, "right": 0, "none": 0, "recordings": 0, "by": {}}
    confidence = []  # (avg_logprob, no_speech_prob, compression ratio) of Whisper beam 5 on clean speech

    def score(engine, lang, source, wav, reference, hypothesis):
        for key in ((engine, lang, source), (engine, lang, None)):
            tallies.setdefault(key, ears.Tally())
        e, n = tallies[(engine, lang, source)].add(reference, hypothesis, lang)
        if source:
            tallies[(engine, lang, None)].add(reference, hypothesis, lang)
        extra = ears.leading_extra(reference, hypothesis, lang)
        if extra:
            extras.setdefault(engine, []).append((os.path.basename(wav), extra))
        print(f"{engine:22} {os.path.basename(wav)[:34]:34} {e:2}/{n:2} {hypothesis}", file=sys.stderr)

    started = time.monotonic()
    # Whisper, directly.
    whisper = ears.Whisper(engines, threads=2)
    for lang, source, wav, reference in every:
        samples = ears.pcm(wav)
        for beam, engine in ((5, "whisper beam 5"), (1, "whisper greedy")):
            result = whisper.transcribe(samples, language=lang, beam_size=beam)
            score(engine, lang, source, wav, reference, result["text"])
            if beam == 5:
                confidence.append((result["avg_logprob"], result["no_speech_prob"], ears.compression_ratio(result["text"])))
                print(f"{'whisper beam 5':22} {os.path.basename(wav)[:34]:34} avg_logprob {result['avg_logprob']:.2f} "
                      f"no_speech_prob {result['no_speech_prob']:.2f}", file=sys.stderr)
        other = "es" if lang == "en" else lang
        result = whisper.transcribe(samples, languages=["en", other], skip=["en", other])
        tally = langid.setdefault(lang, [0, 0])
        tally[0] += result["language"] == lang
        tally[1] += 1
        if result["language"] != lang:
            print(f"{'whisper language ID':22} {os.path.basename(wav)[:34]:34} WRONG {lang}->{result['language']} "
                  f"{result['language_probabilities']}", file=sys.stderr)
    whisper.close()

    # Moonshine, directly: one transcriber for all, then a fresh one per recording.
    english = ears.recordings("en")
    moonshine = ears.Moonshine(engines)
    for lang, source, wav, reference in english:
        score("moonshine kept", lang, source, wav, reference, moonshine.transcribe(ears.pcm(wav)))
    moonshine.close()
    for lang, source, wav, reference in english:
        moonshine = ears.Moonshine(engines)
        score("moonshine fresh", lang, source, wav, reference, moonshine.transcribe(ears.pcm(wav)))
        moonshine.close()

    # parleyd.
    spanish = ears.recordings("es")
    one_run = {}  # (engine, lang) -> (Tally, turns, recordings)
    server = ears.WhisperServer(engines, threads=2)
    try:
        with tempfile.TemporaryDirectory(prefix="parley-accuracy-") as work:
            only_moonshine = ears.engines_variant(work, engines, "moonshine")
            configs = {}
            for name, lang, mode, transcriber in [
                    ("pocketsphinx en", "en", "one-way", None), ("pocketsphinx es", "es", "one-way", None),
                    ("moonshine", "en", "one-way", (only_moonshine, "")), ("auto", "en", "auto", (only_moonshine, server.uri))]:
                configs[name] = f"{work}/{name.replace(' ', '-')}.toml"
                ears.write_config(configs[name], work, mode=mode, speaker_a=lang, speaker_b="es" if lang == "en" else "en",
                                  transcriber=transcriber)
            # Fresh: one run per recording.
            for lang, source, wav, reference in english + spanish:
                audio = ears.padded(wav, f"{work}/input.raw")
                runs = [("pocketsphinx fresh", configs[f"pocketsphinx {lang}"])]
                if lang == "en":
                    runs.append(("moonshine fresh (parleyd)", configs["moonshine"]))
                runs.append(("auto fresh", configs["auto"]))
                for engine, config in runs:
                    turns, _ = ears.run_parleyd(bin_dir, config, work, audio)
                    score(engine, lang, source, wav, reference, " ".join(t["text"] for t in turns))
                    if engine == "auto fresh":
                        auto["recordings"] += 1
                        auto["none"] += not turns
                        for t in turns:
                            auto["turns"] += 1
                            auto["right"] += t["lang"] == lang
                            by = (t["detection"] or {}).get("decided_by", "none")
                            auto["by"][by] = auto["by"].get(by, 0) + 1
                            if t["lang"] != lang:
                                print(f"{'auto fresh':22} {os.path.basename(wav)[:34]:34} WRONG {lang}->{t['lang']} "
                                      f"{t['detection']}", file=sys.stderr)
            # One run per set.
            conversation = [r for pair in zip(english, spanish) for r in pair] + english[len(spanish):]
            for engine, config, recordings in [("pocketsphinx", configs["pocketsphinx en"], english),
                                               ("pocketsphinx", configs["pocketsphinx es"], spanish),
                                               ("moonshine", configs["moonshine"], english),
                                               ("auto", configs["auto"], conversation)]:
                turns, _ = ears.run_parleyd(bin_dir, config, work, joined(work, recordings, "joined"))
                langs = sorted({lang for lang, _, _, _ in recordings})
                print(f"{engine + ' one run':22} {'+'.join(langs)}: {len(turns)} turns for {len(recordings)} recordings",
                      file=sys.stderr)
                for lang in langs:
                    mine = [r for r in recordings if r[0] == lang]
                    if len(turns) == len(recordings):  # one turn per recording: each turn's truth is known
                        texts = [t["text"] for t, r in zip(turns, recordings) if r[0] == lang]
                        right = sum(t["lang"] == r[0] for t, r in zip(turns, recordings) if r[0] == lang)
                        for (_, source, wav, reference), text in zip(mine, texts):
                            score(f"{engine} one run", lang, source, wav, reference, text)
                    else:  # the words of every turn, against every reference of the set
                        texts = [t["text"] for t in turns] if len(langs) == 1 else []
                        right = None
                    tally = ears.Tally()
                    if texts:
                        tally.add(" ".join(r[3] for r in mine), " ".join(texts), lang)
                    one_run[(engine, lang)] = (tally, len(turns), len(recordings), right, len(mine))
    finally:
        server.close()
    elapsed = time.monotonic() - started

    print(f"{len(every)} human recordings ({sum(ears.seconds(w) for _, _, w, _ in every):.0f} s); "
          f"bench/accuracy.py took {elapsed:.0f} s\n")
    print("WER, engines spoken to directly, each recording whole:\n")
    print("| language (recordings, words) | Whisper base, beam 5 | Whisper base, greedy | Moonshine tiny, one transcriber kept "
          "| Moonshine tiny, fresh per recording |")
    print("|---|---|---|---|---|")
    for lang, source in ROWS:
        reference = tallies.get(("whisper beam 5", lang, source))
        if reference:
            cells = [str(tallies.get((e, lang, source), "-"))
                     for e in ("whisper beam 5", "whisper greedy", "moonshine kept", "moonshine fresh")]
            print(f"| {name_of(lang, source)} ({reference.recordings}, {reference.words}) | " + " | ".join(cells) + " |")
    print(f"\nWER through parleyd (file mode); fresh: one run per recording; one run: the set joined, {GAP} s apart:\n")
    print("| language (recordings, words) | PocketSphinx, fresh | PocketSphinx, one run | Moonshine, fresh | Moonshine, one run "
          "| auto en+es, fresh | auto en+es, one run |")
    print("|---|---|---|---|---|---|---|")
    for lang, source in ROWS:
        reference = tallies.get(("whisper beam 5", lang, source))
        if not reference or lang not in ("en", "es"):
            continue
        cells = []
        for engine in ("pocketsphinx", "moonshine", "auto"):
            cells.append(str(tallies.get((f"{engine} fresh (parleyd)" if engine == "moonshine" else f"{engine} fresh", lang, source),
                                         "-")))
            if (f"{engine} one run", lang, source) in tallies:
                cells.append(str(tallies[(f"{engine} one run", lang, source)]))
            elif source is None or lang == "en":
                run = one_run.get((engine, lang))
                cells.append(f"{run[0]} (all turns joined)" if run and run[0].words else "-")
            else:
                cells.append("-")
        print(f"| {name_of(lang, source)} ({reference.recordings}, {reference.words}) | " + " | ".join(cells) + " |")
    print("\nTurns per recording in the one runs: " + "; ".join(
        f"{engine} {lang}: {turns} turns for {count} recordings" for (engine, lang), (_, turns, count, _, _) in one_run.items()
        if engine != "auto" or lang == "en"))
    print("\nWhisper language ID between English and the recording's language (English: en or es):\n")
    print("| language | recordings | right |")
    print("|---|---|---|")
    for lang, (right, total) in langid.items():
        print(f"| {lang} | {total} | {right}/{total} ({100 * right / total:.0f} %) |")
    print(f"\nparleyd auto mode (en+es), fresh: {auto['right']}/{auto['turns']} turns given the right speaker and language "
          f"({100 * auto['right'] / max(1, auto['turns']):.1f} %), {auto['recordings']} recordings, {auto['none']} gave no turn; "
          f"decided by: {auto['by']}")
    for lang in ("en", "es"):
        run = one_run.get(("auto", lang))
        if run and run[3] is not None:
            print(f"parleyd auto mode, one run, {lang}: {run[3]}/{run[4]} turns given the right speaker and language")
        elif run:
            print(f"parleyd auto mode, one run: {run[1]} turns for {run[2]} recordings, so turns could not be matched to recordings")
    for index, name in enumerate(("avg_logprob", "no_speech_prob", "compression ratio of the text")):
        values = sorted(c[index] for c in confidence)
        print(f"{'Whisper beam 5 on clean speech (every language): ' if index == 0 else ''}{name} "
              f"min {values[0]:.2f}, median {values[len(values) // 2]:.2f}, max {values[-1]:.2f}", end="; " if index < 2 else "\n")
    for limit in (-0.7, -1.0):
        print(f"recordings with avg_logprob under {limit}: {sum(c[0] < limit for c in confidence)}/{len(confidence)}")
    print("\nRecordings whose words start with words not said (1-2 leading insertions):")
    for engine in sorted(extras):
        found = extras[engine]
        print(f"- {engine}: {len(found)}: " + ", ".join(f"{name[:-4]}: \"{words}\"" for name, words in found))


if __name__ == "__main__":
    main()
