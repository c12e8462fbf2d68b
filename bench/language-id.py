#!/usr/bin/env python3
"""Who is speaking, told by what is heard (auto mode): how often the language decision is right.

Every recording goes through parleyd's file mode with both speakers' models (English: Debian's
pocketsphinx-en-us; Spanish: models/es), in auto mode, each as a fresh start (the hardest case:
the decoders' cepstral means have seen nothing yet), followed by 1.5 s of silence. Each turn in
history says which language won, both per-frame scores and the loser's words; the truth is the
recording's language. Human speech: pocketsphinx-testdata (13 English recordings) and VoxForge
(Tests/data/es/voxforge, 5 Spanish speakers' sentences). Synthetic WaveNet commands
(../shared/speech/es/wavenet, when present) are reported apart: they are not people.

Also the Spanish word error rate, streamed live by parleyd, next to pocketsphinx_batch and
pocketsphinx_continuous on the same VoxForge files.

Usage: bench/language-id.py BIN_DIR
"""
import glob
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from latency import wer  # noqa: E402  (word error rate by edit distance, shared with latency.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/pocketsphinx/test/data"
VOXFORGE = f"{ROOT}/Tests/data/es/voxforge"
WAVENET = os.path.normpath(f"{ROOT}/../shared/speech/es/wavenet")
MODEL = f"{ROOT}/models/es"


def english():
    clips = [f"{DATA}/{name}.raw" for name in ("goforward", "numbers", "something")]
    clips += sorted(glob.glob(f"{DATA}/librivox/*.wav")) + sorted(glob.glob(f"{DATA}/cards/*.wav"))
    return clips


def transcript(wav):
    with open(wav[:-4] + ".txt", encoding="utf-8") as f:
        return f.read().split()


def run(bin_dir, work, clip):
    """The turns parleyd makes of one recording: (speaker language, text, detection)."""
    path = f"{work}/input.raw"
    raw = ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1"] if clip.endswith(".raw") else []
    subprocess.run(["sox", *raw, clip, "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", path, "pad", "0", "1.5"],
                   check=True)
    db = f"{work}/history.sqlite"
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([f"{bin_dir}/parleyd", "--config", f"{work}/parley.toml", "--input", path, "--output", f"{work}/o.wav"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = sqlite3.connect(db).execute("SELECT source_lang, source_text, detection FROM turns ORDER BY id").fetchall()
    return [(lang, text, json.loads(detection) if detection else None) for lang, text, detection in rows]


def batch_wer(clips, work):
    """pocketsphinx_batch (whole utterances) and pocketsphinx_continuous (streamed, cold) WER."""
    ctl = f"{work}/ctl"
    with open(ctl, "w") as f:
        for clip in clips:
            f.write(os.path.basename(clip)[:-4] + "\n")
    hyp = f"{work}/batch.hyp"
    model = ["-hmm", f"{MODEL}/acoustic", "-lm", f"{MODEL}/es.lm.bin", "-dict", f"{MODEL}/es.dict"]
    subprocess.run(["pocketsphinx_batch", *model, "-adcin", "yes", "-cepdir", os.path.dirname(clips[0]), "-cepext", ".wav",
                    "-ctl", ctl, "-hyp", hyp, "-logfn", "/dev/null"], check=True)
    batch = {}
    with open(hyp) as f:
        for line in f:
            words, _, ident = line.rpartition("(")
            batch[ident.split()[0]] = words.split()
    errors = [0, 0, 0, 0]
    for clip in clips:
        ident = os.path.basename(clip)[:-4]
        e, n = wer(transcript(clip), batch.get(ident, []))
        errors[0] += e
        errors[1] += n
        streamed = subprocess.run(["pocketsphinx_continuous", *model, "-infile", clip, "-logfn", "/dev/null"],
                                  capture_output=True, text=True).stdout.split()
        e, n = wer(transcript(clip), streamed)
        errors[2] += e
        errors[3] += n
    return errors[0] / errors[1], errors[2] / errors[3]


def first_and_later(bin_dir, work, clips):
    """Spanish WER of the first turn after a start against the later turns of one conversation:
    every VoxForge file goes first once (the files rotated), 12 s apart. Both sides speak
    Spanish here (both on models/es, taking turns), so every turn is decoded in Spanish."""
    config = f"{work}/rotation.toml"
    with open(config, "w") as f:
        f.write('[conversation]\nmode = "alternate"\nspeaker_a = "es"\nspeaker_b = "en"\n')
        for lang in ("es", "en"):
            f.write(f'[recognizer.{lang}]\nacoustic_model = "{MODEL}/acoustic"\nlanguage_model = "{MODEL}/es.lm.bin"\n'
                    f'dictionary = "{MODEL}/es.dict"\n')
        f.write(f'[translator]\nfailure_notice = false\n[history]\npath = "{work}/rotation.sqlite"\n[log]\nlevel = "error"\n')
    first, later = [0, 0], [0, 0]
    for rotation in range(len(clips)):
        order = clips[rotation:] + clips[:rotation]
        parts = []
        for index, clip in enumerate(order):
            parts.append(f"{work}/part{index}.wav")
            subprocess.run(["sox", clip, parts[-1], "pad", "0", "12"], check=True)
        subprocess.run(["sox", *parts, f"{work}/rotation.wav"], check=True)
        if os.path.exists(f"{work}/rotation.sqlite"):
            os.remove(f"{work}/rotation.sqlite")
        subprocess.run([f"{bin_dir}/parleyd", "--config", config, "--input", f"{work}/rotation.wav", "--output", f"{work}/o.wav"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows = [r[0] for r in sqlite3.connect(f"{work}/rotation.sqlite").execute("SELECT source_text FROM turns ORDER BY id")]
        for index, (clip, text) in enumerate(zip(order, rows)):
            e, n = wer(transcript(clip), text.split())
            tally = first if index == 0 else later
            tally[0] += e
            tally[1] += n
    return first[0] / first[1], later[0] / later[1]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="parley-langid-") as work:
        with open(f"{work}/parley.toml", "w") as f:
            f.write('[conversation]\nmode = "auto"\n'
                    f'[recognizer.es]\nacoustic_model = "{MODEL}/acoustic"\nlanguage_model = "{MODEL}/es.lm.bin"\n'
                    f'dictionary = "{MODEL}/es.dict"\n[translator]\nfailure_notice = false\n'
                    f'[history]\npath = "{work}/history.sqlite"\n[log]\nlevel = "error"\n')
        sets = [("human", "en", english()), ("human", "es", sorted(glob.glob(f"{VOXFORGE}/*.wav")))]
        if os.path.isdir(WAVENET):
            sets.append(("synthetic", "es", sorted(glob.glob(f"{WAVENET}/*.wav"))))
        totals = {}
        spanish_errors = [0, 0]
        for kind, truth, clips in sets:
            for clip in clips:
                for lang, text, detection in run(bin_dir, work, clip):
                    by = detection["decided_by"] if detection else "none"
                    scores = detection["scores"] if detection else {}
                    right = lang == truth
                    words = len(text.split())
                    tally = totals.setdefault((kind, truth), {"turns": 0, "wrong": 0, "turn_order": 0, "wrong_3words": 0})
                    tally["turns"] += 1
                    tally["wrong"] += 0 if right else 1
                    tally["turn_order"] += 1 if by == "turn_order" else 0
                    tally["wrong_3words"] += 0 if right or words < 3 else 1
                    margin = scores.get(truth, 0) - max([v for k, v in scores.items() if k != truth] or [0])
                    print(f"{'ok   ' if right else 'WRONG'} {truth}->{lang} by {by:10} margin {margin * 1000:+.2f}/kframe "
                          f"{os.path.basename(clip)[:34]:34} {text[:50]}")
                    if kind == "human" and truth == "es" and lang == "es":
                        e, n = wer(transcript(clip), text.split())
                        spanish_errors[0] += e
                        spanish_errors[1] += n
        print()
        print("| recordings | language | turns | wrong decisions | of them, 3+ words | told by turn order |")
        print("|---|---|---|---|---|---|")
        for (kind, truth), t in totals.items():
            print(f"| {kind} | {truth} | {t['turns']} | {t['wrong']} | {t['wrong_3words']} | {t['turn_order']} |")
        human = [t for (kind, _), t in totals.items() if kind == "human"]
        print(f"\nhuman speech: {sum(t['wrong'] for t in human)} wrong in {sum(t['turns'] for t in human)} turns")
        voxforge = sorted(glob.glob(f"{VOXFORGE}/*.wav"))
        batch, continuous = batch_wer(voxforge, work)
        live = spanish_errors[0] / max(1, spanish_errors[1])
        print(f"Spanish WER on VoxForge: parleyd (streamed, each file a cold start) {live:.1%}, "
              f"pocketsphinx_batch {batch:.1%}, pocketsphinx_continuous {continuous:.1%}")
        first, later = first_and_later(bin_dir, work, voxforge)
        print(f"Spanish WER of the first turn after a start {first:.1%}, of later turns {later:.1%}")


if __name__ == "__main__":
    main()
