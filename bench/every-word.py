#!/usr/bin/env python3
"""Every word kept (issue 36): parleyd end to end against its engine alone, on every human
recording of /work/shared/speech, each alone and joined in pairs with a pause.

Recordings: English (en: VCTK, CMU ARCTIC, a home reading of ARCTIC prompts, LJ Speech; and
en-nonnative: speechocean762, Mandarin L1), Spanish (FLEURS, VoxForge), French, Portuguese and
Italian (VoxForge). "Joined": each recording of a set with the next one, both trimmed to their
speech, the second after a pause of 200, 400, 600 or 900 ms of the first one's own room tone
(in turn): one person going on after a pause, as in a long sentence.

- The engine alone: the engine parleyd gives that language's turns to, on the whole audio:
  Moonshine tiny for English (a fresh transcriber each time), Whisper base (beam 5, the language
  given) for every other language.
- parleyd: file mode, as shipped (auto mode, speaker A English, speaker B the recording's
  language, or Spanish for English recordings), 0.5 s of silence before and 2 s after; Whisper
  is one `parley-whisper` server every run connects to (the same worker code, loaded once).

Reported per language: WER of each and their ratio (the goal: parleyd <= 1.1 x the engine's),
lost runs (3 or more reference words in a row that parleyd's words lack and the engine's have),
invented openings (1-2 words parleyd starts with that were not said and the engine did not
write), splits (a recording that became more turns than it has sentences: one, or two when
joined), who-spoke errors (a turn given the other language; "long": of 3 words or more), and
voices taken for the background (a second of a person's speech or more discarded by the gate for
voices across the room, `[endpoint] background_below_db`: every recording here is a person).
With two or more of Whisper's languages in the run, their WER is also given together, alone and
joined: one language's 90-300 words from one or two speakers move by a few with the audio's cut
alone (bench/whisper-lead.py). Each recording's line (stderr) also gives each turn's pace, syllables a second of its utterance's
voice (`[endpoint] slow_speech_below`), and what ended it.

Usage: bench/every-word.py BIN_DIR [ENGINES]   (a release build: make release)
Only some languages: LANGUAGES=fr,pt bench/every-word.py ...
Per-recording lines go to stderr.
"""
import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

PAUSES_MS = [200, 400, 600, 900]
ears.SETS.append(("en", "nonnative", "en-nonnative"))


def align(reference, hypothesis):
    """The reference words a word-level alignment leaves unmatched (deleted), as a list of
    booleans over the reference (True: deleted)."""
    n, m = len(reference), len(hypothesis)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i
    for j in range(m + 1):
        d[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]))
    deleted = [False] * n
    i, j = n, m
    while i > 0:
        if j > 0 and d[i][j] == d[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]):
            i, j = i - 1, j - 1
        elif d[i][j] == d[i - 1][j] + 1:
            deleted[i - 1] = True
            i -= 1
        else:
            j -= 1
    return deleted


def lost_runs(reference, product, engine, lang):
    """Runs of 3 or more reference words in a row that the product lacks and the engine has."""
    ref = ears.words(reference, lang)
    gone = align(ref, ears.words(product, lang))
    kept_by_engine = [not x for x in align(ref, ears.words(engine, lang))]
    runs, run = [], []
    for word, lost, heard in zip(ref, gone, kept_by_engine):
        if lost and heard:
            run.append(word)
            continue
        if len(run) >= 3:
            runs.append(" ".join(run))
        run = []
    if len(run) >= 3:
        runs.append(" ".join(run))
    return runs


def trimmed(samples):
    """16-bit samples from 100 ms before the first loud 20 ms period to 150 ms after the last
    (within 35 dB of the loudest), and the first 100 ms as room tone."""
    import array
    import math
    audio = array.array("h", samples)
    period = 320
    levels = []
    for start in range(0, len(audio) - period, period):
        chunk = audio[start:start + period]
        levels.append(10 * math.log10(sum(x * x for x in chunk) / period + 1e-9))
    loudest = max(levels)
    loud = [i for i, level in enumerate(levels) if level > loudest - 35]
    start, end = max(0, loud[0] * period - 1600), min(len(audio), (loud[-1] + 1) * period + 2400)
    return audio[start:end].tobytes(), audio[:1600].tobytes()


def tone(room, ms):
    need = ms * 32
    return (room * (need // max(1, len(room)) + 1))[:need]


def main():
    bin_dir, engines = ears.bin_and_engines(__doc__)
    only = [x for x in os.environ.get("LANGUAGES", "").split(",") if x]
    every = [r for r in ears.recordings() if not only or r[0] in only]
    started = time.monotonic()
    # (lang, kind) -> tallies and counts; kind: "alone" or "joined"
    rows = {}

    def row(lang, kind):
        return rows.setdefault((lang, kind), {"engine": ears.Tally(), "parleyd": ears.Tally(), "lost": [], "openings": [],
                                              "splits": 0, "cases": 0, "turns": 0, "wrong": 0, "wrong_long": 0,
                                              "background": 0})

    cases = []  # (lang, kind, name, audio bytes, reference, sentences)
    by_set = {}
    for lang, source, wav, reference in every:
        cases.append((lang, "alone", os.path.basename(wav)[:-4], ears.pcm(wav), reference, 1))
        by_set.setdefault((lang, source), []).append((wav, reference))
    for (lang, source), items in by_set.items():
        for index in range(len(items) - 1):
            (first, ref1), (second, ref2) = items[index], items[index + 1]
            one, room = trimmed(ears.pcm(first))
            two, _ = trimmed(ears.pcm(second))
            pause = PAUSES_MS[index % len(PAUSES_MS)]
            audio = tone(room, 500) + one + tone(room, pause) + two + tone(room, 2000)
            name = f"{os.path.basename(first)[:-4]}+{pause}ms+{os.path.basename(second)[:-4]}"
            cases.append((lang, "joined", name, audio, f"{ref1} {ref2}", 2))

    whisper = ears.Whisper(engines, threads=2)
    engine_text = []
    for lang, kind, name, audio, reference, _ in cases:
        if lang == "en":
            moonshine = ears.Moonshine(engines)
            engine_text.append(moonshine.transcribe(audio))
            moonshine.close()
        else:
            engine_text.append(whisper.transcribe(audio, language=lang, beam_size=5)["text"])
    whisper.close()

    server = ears.WhisperServer(engines, threads=2)
    try:
        with tempfile.TemporaryDirectory(prefix="parley-every-word-") as work:
            only_moonshine = ears.engines_variant(work, engines, "moonshine")
            configs = {}
            for other in sorted({lang for lang, *_ in cases} | {"es"}):
                if other == "en":
                    continue
                configs[other] = f"{work}/auto-{other}.toml"
                ears.write_config(configs[other], work, mode="auto", speaker_a="en", speaker_b=other,
                                  transcriber=(only_moonshine, server.uri), log_level="debug")
            for (lang, kind, name, audio, reference, sentences), engine in zip(cases, engine_text):
                path = f"{work}/input.raw"
                with open(path, "wb") as f:
                    f.write((b"\0\0" * 8000 if kind == "alone" else b"") + audio + (b"\0\0" * 32000 if kind == "alone" else b""))
                turns, log = ears.run_parleyd(bin_dir, configs["es" if lang == "en" else lang], work, path)
                product = " ".join(t["text"] for t in turns)
                r = row(lang, kind)
                e1, n = r["engine"].add(reference, engine, lang)
                e2, _ = r["parleyd"].add(reference, product, lang)
                r["cases"] += 1
                r["turns"] += len(turns)
                r["splits"] += len(turns) > sentences
                gated = sum(" notice parleyd: " in line and "taken for one across the room" in line for line in log.splitlines())
                r["background"] += gated
                for t in turns:
                    if t["lang"] != lang:
                        r["wrong"] += 1
                        r["wrong_long"] += len(ears.words(t["text"], t["lang"])) >= 3
                runs = lost_runs(reference, product, engine, lang)
                r["lost"] += [(name, x) for x in runs]
                extra = ears.leading_extra(reference, product, lang)
                if extra and ears.leading_extra(reference, engine, lang) != extra:
                    r["openings"].append((name, extra))
                # Each turn's pace (syllables a second of its utterance's voice) and what ended it.
                paces = [f"{ears.syllables(t['text']) / p[0]:.2f} {p[1]}" if p and p[0] else "-"
                         for t, p in zip(turns, ears.turn_paces(log))]
                print(f"{lang} {kind:6} {name[:60]:60} engine {e1:2}/{n:2} parleyd {e2:2}/{n:2} turns {len(turns)} "
                      f"{[t['lang'] + ': ' + t['text'] for t in turns]} paces {paces}" + (f" LOST {runs}" if runs else "")
                      + (f" TAKEN FOR THE BACKGROUND {gated}" if gated else ""), file=sys.stderr)
    finally:
        server.close()
    print(f"{len(every)} human recordings, {len(cases)} cases; bench/every-word.py took {time.monotonic() - started:.0f} s\n")
    print("| language, cases | engine alone WER | parleyd WER | ratio | lost runs | invented openings | splits | turns | "
          "who spoke wrong (of 3+ words) | taken for the background |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (lang, kind), r in sorted(rows.items()):
        ratio = (r["parleyd"].errors / r["engine"].errors) if r["engine"].errors else float("nan")
        print(f"| {lang} {kind}, {r['cases']} ({r['engine'].words} words) | {r['engine']} | {r['parleyd']} | {ratio:.2f} | "
              f"{len(r['lost'])} | {len(r['openings'])} | {r['splits']} | {r['turns']} | {r['wrong']} ({r['wrong_long']}) | "
              f"{r['background']} |")
    # Whisper's languages together: per language, one or two speakers' 90-300 words, on which
    # Whisper's words move by a few with the audio's cut alone (bench/whisper-lead.py).
    for kind in ("alone", "joined"):
        pooled = [(lang, r) for (lang, k), r in sorted(rows.items()) if k == kind and lang != "en"]
        if len(pooled) > 1:
            engine, product = (sum(r[side].errors for _, r in pooled) for side in ("engine", "parleyd"))
            count = sum(r["engine"].words for _, r in pooled)
            print(f"| {'+'.join(lang for lang, _ in pooled)} {kind} ({count} words) | {100 * engine / count:.1f} % | "
                  f"{100 * product / count:.1f} % | {product / engine if engine else float('nan'):.2f} | | | | | | |")
    for (lang, kind), r in sorted(rows.items()):
        for name, run in r["lost"]:
            print(f"- lost, {lang} {kind}: {name}: \"{run}\"")
        for name, words in r["openings"]:
            print(f"- invented opening, {lang} {kind}: {name}: \"{words}\"")


if __name__ == "__main__":
    main()
