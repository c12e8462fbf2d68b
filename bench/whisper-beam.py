#!/usr/bin/python3
"""Whisper base's beam width: words against time, on every human recording Whisper hears for Parley.

Whisper gives the words of every language but English (Moonshine's), so its decoding is most of
what a Spanish, French, Portuguese or Italian speaker waits for after the last word. The shipped
beam is 5 (`[transcriber] beam_size`); greedy (1) was measured 1-2 points worse. This measures the
widths between, and each one's cost split into the encoder's part (the same for every width) and
the decoder's.

For every human recording of ../shared/speech in es (FLEURS, VoxForge), fr, pt and it, and for
each recording joined with the next of its folder after 600 ms of silence (a long utterance, as
a person who pauses gives the accurate pass), the worker's own code (libexec/parley-whisper's
Whisper class, loaded as a module, as parleyd runs it: the built int8 model, one thread per core
but one; WHISPER_THREADS=N: N) hears the audio with the language given:
- once with the language skipped (the encoder alone: features and encoder, the decoder not run);
- once per beam width in BEAMS (default 5,3,2,1), decoding.
WER is scored as bench/ears.py scores it (its normalisation), summed over the recordings of a
language. Times are the worker's own `seconds` (from the encoder's start to the decoder's end),
medians per language and per length; CPU time of the process per call beside them.

Usage: /usr/bin/python3 bench/whisper-beam.py [OUT.json]   (default /tmp/whisper-beam.json;
BEAMS=5,2 measures only those; LANGUAGES=es only Spanish; PAD_FRAMES=50 gives the encoder 0.5 s
of silence after the audio instead of the worker's 2 s). Needs `make engines`.
"""
import json
import os
import statistics
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import ears  # noqa: E402

RATE = 16000
BEAMS = [int(b) for b in os.environ.get("BEAMS", "5,3,2,1").split(",")]
LANGUAGES = os.environ.get("LANGUAGES", "es,fr,pt,it").split(",")
JOIN_PAUSE = 0.6


def cases():
    """(language, name, samples, reference): every recording alone, then joined with the next of
    its folder."""
    found = []
    by_folder = {}
    for lang, source, wav, reference in ears.recordings():
        if lang not in LANGUAGES:
            continue
        samples = np.frombuffer(ears.pcm(wav), dtype="<i2")
        name = os.path.basename(wav)[:-4]
        found.append((lang, name, samples, reference))
        by_folder.setdefault((lang, source), []).append((name, samples, reference))
    for (lang, _), items in by_folder.items():
        for (a, sa, ra), (b, sb, rb) in zip(items, items[1:]):
            silence = np.zeros(int(JOIN_PAUSE * RATE), dtype="<i2")
            found.append((lang, f"{a}+{b}", np.concatenate([sa, silence, sb]), f"{ra} {rb}"))
    return found


def timed(whisper, samples, language, **options):
    cpu = time.process_time()
    result = whisper.transcribe(samples.tobytes(), language=language, **options)
    return result, time.process_time() - cpu


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/whisper-beam.json"
    worker, whisper = ears.whisper_in_process()

    records = []
    for lang, name, samples, reference in cases():
        encoded, encode_cpu = timed(whisper, samples, lang, skip={lang})
        record = {"language": lang, "name": name, "seconds": len(samples) / RATE, "joined": "+" in name,
                  "encoder": encoded["seconds"], "encoder_cpu": encode_cpu, "beams": {}}
        for beam in BEAMS:
            result, cpu = timed(whisper, samples, lang, beam_size=beam)
            errors, count = ears.edits(ears.words(reference, lang), ears.words(result["text"], lang))
            record["beams"][str(beam)] = {"text": result["text"], "errors": errors, "words": count,
                                          "seconds": result["seconds"], "cpu": cpu}
        worker.release_memory()
        records.append(record)
        summary = " ".join(f"b{b} {r['errors']}/{r['words']} {1000 * r['seconds']:.0f} ms" for b, r in record["beams"].items())
        print(f"{lang} {name[:44]:44} {record['seconds']:5.1f} s  encoder {1000 * record['encoder']:.0f} ms  {summary}",
              file=sys.stderr, flush=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(records, f, ensure_ascii=False, indent=1)

    print(f"Whisper base (int8, {os.environ.get('WHISPER_THREADS', ears.shipped_whisper_threads())} thread(s)), the language given, {worker.PAD_FRAMES * 10} ms of silence after "
          f"the audio; {len(records)} cases; {out}")
    print("| language, cases | beam | WER | decoding, median ms (alone / joined) | of which the encoder | CPU s per s of audio |")
    print("|---|---|---|---|---|---|")
    for lang in LANGUAGES:
        for joined in (False, True):
            group = [r for r in records if r["language"] == lang and r["joined"] == joined]
            if not group:
                continue
            for beam in map(str, BEAMS):
                errors = sum(r["beams"][beam]["errors"] for r in group)
                count = sum(r["beams"][beam]["words"] for r in group)
                wall = median([1000 * r["beams"][beam]["seconds"] for r in group])
                encoder = median([1000 * r["encoder"] for r in group])
                cpu = sum(r["beams"][beam]["cpu"] for r in group) / sum(r["seconds"] for r in group)
                label = f"{lang} {'joined' if joined else 'alone'}, {len(group)}"
                print(f"| {label} | {beam} | {100 * errors / max(1, count):.1f} % | {wall:.0f} | {encoder:.0f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
