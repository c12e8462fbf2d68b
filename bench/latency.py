#!/usr/bin/env python3
"""Latency, cost and accuracy of parleyd on pocketsphinx-testdata's human recordings.

Each recording goes through parleyd's file mode with --pace, so audio arrives at the speed of
a microphone and the timings are those of a live conversation. The same recordings go through
the stock pipeline a user would otherwise script, and both transcripts are scored against the
shipped references.

Usage: bench/latency.py BIN_DIR
"""
import os
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

DATA = "/usr/share/pocketsphinx/test/data"
LIBRIVOX = f"{DATA}/librivox"


def clips():
    """(path, reference transcript or None)."""
    refs = {}
    with open(f"{LIBRIVOX}/transcription") as f:
        for line in f:
            words, _, ident = line.rpartition("(")
            refs[ident.strip(" )\n")] = words.replace("<s>", "").replace("</s>", "").split()
    cards = {}
    with open(f"{DATA}/cards/cards.transcription") as f:
        for line in f:
            words, _, ident = line.rpartition("(")
            cards[ident.strip(" )\n")] = words.replace("<s>", "").replace("</s>", "").split()
    out = [(f"{DATA}/goforward.raw", "go forward ten meters".split()), (f"{DATA}/numbers.raw", None), (f"{DATA}/something.raw", None)]
    for ident, words in sorted(refs.items()):
        out.append((f"{LIBRIVOX}/{ident}.wav", words))
    for ident, words in sorted(cards.items()):
        out.append((f"{DATA}/cards/{ident}.wav", words))
    return out


# The recognizer settings compared: (name, [recognizer] keys, whether it is parleyd's default).
VARIANTS = [
    ("first pass (maxhmmpf 4000) + bestpath (default)", "", True),
    ("first pass (maxhmmpf 30000, PocketSphinx's own) + bestpath", "maxhmmpf = 30000\n", False),
    ("first pass (maxhmmpf 4000) + fwdflat + bestpath", "fwdflat = true\n", False),
]


# Word error rate by edit distance: the one in bench/ears.py.
from ears import edits as wer  # noqa: E402


def seconds_of(path):
    return os.path.getsize(path) / 32000 if path.endswith(".raw") else (os.path.getsize(path) - 44) / 32000


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_parley(bin_dir, work, variant, recognizer):
    """Runs every clip through parleyd; returns per-turn timings, transcripts and costs."""
    config = f"{work}/parley-{variant}.toml"
    with open(config, "w") as f:
        f.write(f'[recognizer]\n{recognizer}'
                f'[history]\npath = "{work}/history-{variant}.sqlite"\n[log]\nlevel = "notice"\n')
    # Start-up cost: a second of silence.
    silence = f"{work}/silence.raw"
    with open(silence, "wb") as f:
        f.write(bytes(32000))
    # Twice: the first start may also make the cut-down dictionary, which later starts load.
    for _ in range(2):
        before = children_cpu()
        subprocess.run([f"{bin_dir}/parleyd", "--config", config, "--input", silence, "--output", f"{work}/s.wav", "--pace"],
                       check=True, stderr=subprocess.DEVNULL)
        startup_cpu = children_cpu() - before
    results = []
    for original, reference in clips():
        # A microphone keeps delivering after the speaker stops: 1.5 s of silence follows each
        # recording, so the endpoint is decided as it would be live.
        path = f"{work}/{os.path.basename(original)}.raw"
        raw_input = ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1"] if original.endswith(".raw") else []
        subprocess.run(["sox", *raw_input, original, "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", path,
                        "pad", "0", "1.5"], check=True)
        db = f"{work}/history-{variant}.sqlite"
        before = children_cpu()
        log = subprocess.run([f"{bin_dir}/parleyd", "--config", config, "--input", path, "--output", f"{work}/o.wav", "--pace"],
                             check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
        cpu = children_cpu() - before - startup_cpu
        used = re.search(r"recognition used ([0-9.]+) s of CPU for ([0-9.]+) s of speech", log)
        recognition = (float(used.group(1)), float(used.group(2))) if used else (0.0, 0.0)
        rows = sqlite3.connect(db).execute(
            "SELECT source_text, asr_ms, mt_ms, tts_ms, response_ms FROM turns ORDER BY id DESC").fetchall()
        sqlite3.connect(db).execute("DELETE FROM turns").connection.commit()
        results.append({"path": original, "reference": reference, "turns": rows, "cpu": cpu, "seconds": seconds_of(original),
                        "recognition": recognition})
    return results


def stock(path):
    """The stock pipeline on one clip: wall time and transcript."""
    start = time.monotonic()
    recognized = subprocess.run(["pocketsphinx_continuous", "-infile", path, "-logfn", "/dev/null"],
                                capture_output=True, text=True).stdout
    translated = subprocess.run(["apertium", "eng-spa"], input=recognized, capture_output=True, text=True).stdout
    subprocess.run(["espeak-ng", "-v", "es", "--stdout"], input=translated.encode(), capture_output=True)
    return time.monotonic() - start, recognized.split()


def summary(results):
    response = [r[4] for res in results for r in res["turns"] if r[4] is not None]
    asr = [r[1] for res in results for r in res["turns"] if r[1] is not None]
    mt = [r[2] for res in results for r in res["turns"] if r[2] is not None]
    tts = [r[3] for res in results for r in res["turns"] if r[3] is not None]
    errors = words = 0
    for res in results:
        if res["reference"]:
            hypothesis = " ".join(t[0] for t in reversed(res["turns"])).split()
            e, n = wer(res["reference"], hypothesis)
            errors, words = errors + e, words + n
    cpu_per_second = sum(r["cpu"] for r in results) / sum(r["seconds"] for r in results)
    recognition = sum(r["recognition"][0] for r in results) / max(1e-9, sum(r["recognition"][1] for r in results))
    return response, asr, mt, tts, errors / words, cpu_per_second, recognition


def p95(values):
    return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]


def main():
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="parley-latency-") as work:
        print(f"{len(clips())} recordings from pocketsphinx-testdata, paced at microphone speed\n")
        print("| recognizer | response median | response p95 | recognition finalize median | translation median | TTS first sample median | recognition CPU per second of speech | parleyd CPU per second of audio | WER |")
        print("|---|---|---|---|---|---|---|---|---|")
        default_median = None
        for variant, (name, recognizer, default) in enumerate(VARIANTS):
            response, asr, mt, tts, word_error, cpu, recognition = summary(run_parley(bin_dir, work, variant, recognizer))
            if default:
                default_median = statistics.median(response)
                # The default runs first, so the children's peak so far is its own.
                default_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(f"| {name} | {statistics.median(response):.0f} ms | {p95(response):.0f} ms | {statistics.median(asr):.0f} ms "
                  f"| {statistics.median(mt):.0f} ms | {statistics.median(tts):.0f} ms | {recognition:.3f} core | {cpu:.3f} core | {100 * word_error:.1f} % |")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"\npeak resident memory of parleyd: {default_peak:.1f} MiB with the default recognizer, {peak:.1f} MiB over all three")
        stock_times, errors, words = [], 0, 0
        for path, reference in clips():
            elapsed, hypothesis = stock(path)
            stock_times.append(elapsed * 1000)
            if reference:
                e, n = wer(reference, hypothesis)
                errors, words = errors + e, words + n
        print(f"stock pipeline (pocketsphinx_continuous -infile | apertium eng-spa | espeak-ng): median {statistics.median(stock_times):.0f} ms "
              f"per recording after it is complete, WER {100 * errors / words:.1f} %")
        print(f"Parley's median response is {statistics.median(stock_times) / default_median:.0f}x faster")


if __name__ == "__main__":
    main()
