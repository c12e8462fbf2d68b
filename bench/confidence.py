#!/usr/bin/env python3
"""How well a turn's confidence separates clean speech from noise and the other language.

Every recording goes through parleyd's file mode in one-way mode (only speaker A talks), with
speaker A's language set to the model under test and `min_confidence` at its default:

- clean: pocketsphinx-testdata's English recordings to the English model, Spanish recordings
  (Tests/data/es/voxforge and any folder given) to the Spanish model;
- wrong language: the same recordings to the other language's model;
- noise: pink, white and brown noise, babble (four or two recordings mixed), mumbling
  (speech low-passed at 300 Hz), made with sox, and alsa-utils' Noise.wav, to both models;
- held out (not used to choose the calibration): alsa-utils' test voice ("Front Left", ...),
  clean to the English model and as the other language to the Spanish one.

A recording may give several turns (the endpointer cuts at pauses) or none (nothing heard or
recognized). Reported: turns, the share of turns flagged (confidence under min_confidence); for
noise and the other language the recordings that got through (gave a turn that was not
flagged); for clean speech the word error rate of the recordings that were not flagged and of
those that were (transcripts: pocketsphinx-testdata's, and a .txt beside each Spanish .wav).

Usage: bench/confidence.py BIN_DIR [SPANISH_FOLDER...]   (folders of 16 kHz .wav recordings)
"""
import glob
import hashlib
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from latency import clips, wer  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RAW = ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1"]
SPANISH_MODEL = f"""[recognizer.es]
acoustic_model = "{REPO}/models/es/acoustic"
language_model = "{REPO}/models/es/es.lm.bin"
dictionary = "{REPO}/models/es/es.dict"
"""


def english():
    return [path for path, _ in clips()]


def words(text):
    return re.findall(r"[\w']+", text.lower())


# Held out: not used to choose the calibration. alsa-utils' test voice ("Front Left", ...) and
# its noise.
ALSA_SOUNDS = "/usr/share/sounds/alsa"


def alsa_voice():
    return sorted(p for p in glob.glob(f"{ALSA_SOUNDS}/*.wav") if not p.endswith("/Noise.wav"))


def reference(path):
    """The recording's transcript as words, or None."""
    if path.startswith(ALSA_SOUNDS):
        return words(os.path.basename(path)[:-4].replace("_", " "))
    for known, ref in clips():
        if known == path:
            return ref
    text = os.path.splitext(path)[0] + ".txt"
    return words(open(text, encoding="utf-8").read()) if os.path.exists(text) else None


def spanish(folders):
    """Distinct recordings (by content) of the folders, as (source, path); the source is the
    recording's folder name (voxforge, wavenet...)."""
    seen, out = set(), []
    for folder in [f"{REPO}/Tests/data/es/voxforge", *folders]:
        for path in sorted(glob.glob(f"{folder}/**/*.wav", recursive=True)):
            digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                out.append((os.path.basename(os.path.dirname(path)), path))
    return out


def as_raw(path, work, extra=()):
    """The recording as raw 16 kHz mono with 0.5 s of silence before and 1.5 s after, as a
    microphone would keep delivering."""
    out = f"{work}/{hashlib.sha1((path + repr(extra)).encode()).hexdigest()[:12]}.raw"
    source = [*RAW, path] if path.endswith(".raw") else [path]
    subprocess.run(["sox", *source, *RAW, out, *extra, "pad", "0.5", "1.5"], check=True)
    return out


def noises(english_paths, spanish_paths, work):
    """(name, raw path) of generated noise, babble and mumbling."""
    out = []
    for kind in ["pinknoise", "whitenoise", "brownnoise"]:
        for volume in ["0.05", "0.3"]:
            path = f"{work}/{kind}-{volume}.raw"
            subprocess.run(["sox", "-R", "-n", *RAW, path, "synth", "2.5", kind, "vol", volume, "pad", "0.5", "1.5"], check=True)
            out.append((f"{kind} {volume}", path))
    librivox = [p for p in english_paths if "librivox" in p]
    mixes = [("babble: 4 English", librivox[:4]), ("babble: 3 English", librivox[1:4]),
             ("babble: 4 Spanish", spanish_paths[:4]), ("babble: 2 English + 2 Spanish", librivox[:2] + spanish_paths[:2]),
             ("babble: 1 English + 1 Spanish", librivox[2:3] + spanish_paths[2:3])]
    for name, paths in mixes:
        if len(paths) < 2:
            continue
        raws = [as_raw(p, work) for p in paths]
        path = f"{work}/babble-{len(out)}.raw"
        subprocess.run(["sox", "-m", *[a for r in raws for a in (*RAW, r)], *RAW, path, "trim", "0", "4.5"], check=True)
        out.append((name, path))
    for source in [english_paths[0], *librivox[1:3], *spanish_paths[:2]]:
        out.append((f"mumble: {os.path.basename(source)}", as_raw(source, work, ("lowpass", "300", "lowpass", "300", "gain", "6"))))
    if os.path.exists(f"{ALSA_SOUNDS}/Noise.wav"):
        out.append(("alsa-utils' Noise.wav", as_raw(f"{ALSA_SOUNDS}/Noise.wav", work)))
    return out


def run(bin_dir, work, language, raw):
    """parleyd on one recording, with `language` as the only speaker; the turns it stored."""
    other = "es" if language == "en" else "en"
    db = f"{work}/history.sqlite"
    config = f"{work}/parley.toml"
    with open(config, "w") as f:
        f.write(f'[conversation]\nspeaker_a = "{language}"\nspeaker_b = "{other}"\nmode = "one-way"\n'
                f'{SPANISH_MODEL}[history]\npath = "{db}"\n[control]\nsocket = "{work}/control.sock"\n[log]\nlevel = "warning"\n')
    subprocess.run([f"{bin_dir}/parleyd", "--config", config, "--input", raw, "--output", f"{work}/out.wav"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    connection = sqlite3.connect(db)
    rows = connection.execute("SELECT source_text, confidence, low_confidence, word_confidence FROM turns ORDER BY id").fetchall()
    connection.execute("DELETE FROM turns")
    connection.commit()
    connection.close()
    return [{"text": r[0], "confidence": r[1], "flagged": bool(r[2]), "words": json.loads(r[3]) if r[3] else []} for r in rows]


def errors(results, flagged):
    """Word error rate of the recordings with a reference whose turns were (not) flagged."""
    e = n = 0
    for _, turns, ref in results:
        if ref and turns and any(t["flagged"] for t in turns) == flagged:
            d, m = wer(ref, words(" ".join(t["text"] for t in turns)))
            e, n = e + d, n + m
    return f"{100 * e / n:.0f} %" if n else "-"


def report(name, results, good):
    """One table row: results are (recording name, turns, reference)."""
    turns = [t for _, ts, _ in results for t in ts]
    flagged = sum(t["flagged"] for t in turns)
    confidences = [t["confidence"] for t in turns if t["confidence"] is not None]
    median = f"{statistics.median(confidences):.2f}" if confidences else "-"
    through = sum(any(not t["flagged"] for t in ts) for _, ts, _ in results)
    share = f"{100 * flagged / len(turns):.0f} % ({flagged}/{len(turns)})" if turns else "-"
    passed = "" if good else f"{through}/{len(results)}"
    accuracy = f"{errors(results, False)} / {errors(results, True)}" if good else ""
    print(f"| {name} | {len(results)} | {len(turns)} | {median} | {share} | {passed} | {accuracy} |")


def main():
    bin_dir = sys.argv[1]
    verbose = os.environ.get("VERBOSE")
    with tempfile.TemporaryDirectory(prefix="parley-confidence-") as work:
        en, es_sources = english(), spanish(sys.argv[2:])
        es = [p for _, p in es_sources]
        en_raw = [(os.path.basename(p), as_raw(p, work), reference(p)) for p in en]
        sources = sorted({s for s, _ in es_sources}, key=lambda s: (s != "voxforge", s))
        es_raw = {s: [(os.path.basename(p), as_raw(p, work), reference(p)) for source, p in es_sources if source == s] for s in sources}
        noise = [(label, raw, None) for label, raw in noises(en, es, work)]
        held_out = [(os.path.basename(p), as_raw(p, work), reference(p)) for p in alsa_voice()]
        sets = [("clean English (pocketsphinx-testdata), English model", "en", en_raw, True)]
        if held_out:
            sets.append(("clean English (alsa-utils' test voice, held out), English model", "en", held_out, True))
        sets += [(f"clean Spanish ({s}), Spanish model", "es", es_raw[s], True) for s in sources]
        sets += [(f"Spanish ({s}) to the English model", "en", es_raw[s], False) for s in sources]
        sets += [
            ("English (pocketsphinx-testdata) to the Spanish model", "es", en_raw, False),
            *([("English (alsa-utils' test voice, held out) to the Spanish model", "es", held_out, False)] if held_out else []),
            ("noise, babble, mumbling: English model", "en", noise, False),
            ("noise, babble, mumbling: Spanish model", "es", noise, False),
        ]
        print(f"{len(en)} + {len(held_out)} English and {len(es)} Spanish recordings, {len(noise)} noises; parleyd file mode, one-way, "
              "min_confidence at its default\n")
        print("| input | recordings | turns | median confidence | turns flagged | recordings that got through unflagged "
              "| WER of recordings not flagged / flagged |")
        print("|---|---|---|---|---|---|---|")
        for name, language, recordings, good in sets:
            results = []
            for label, raw, ref in recordings:
                results.append((label, run(bin_dir, work, language, raw), ref))
            report(name, results, good)
            if verbose:
                for label, turns, _ in results:
                    for t in turns:
                        words = " ".join(f"{w['text']}:{w['confidence']:.2f}" for w in t["words"])
                        print(f"    {label[:40]:40} {t['confidence'] or 0:.2f} {'FLAG' if t['flagged'] else '    '} {words}",
                              file=sys.stderr)


if __name__ == "__main__":
    main()
