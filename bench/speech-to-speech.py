#!/usr/bin/env python3
"""Speech in, speech out (issue 37): what reaches the other person, scored against human
translations.

The recordings: ../shared/speech/es/fleurs, Google FLEURS readings of FLORES-101 sentences (each
is a line of ../shared/text/flores-devtest; found here by its words). Each goes through parleyd's
file mode as shipped (one-way: speaker A Spanish, speaker B the target; Moonshine and Whisper,
Bergamot from the engines folder, the voices parleyd chooses under `auto`), into every target
language that has a FLORES line: English, French, Portuguese, Italian, Catalan.

Reported per direction, over the recordings (corpus BLEU and chrF, sacrebleu defaults):
- words: WER of what parleyd heard (the turns' source text) against the FLEURS transcript;
- text: BLEU / chrF of the translation stored in the history against FLORES's human translation;
- ASR-BLEU: what parleyd played (its --output) heard back by Whisper base (the parley-whisper
  worker, beam 5, the target language given), against the same human translation. The gap
  between text and ASR-BLEU is what the voice loses.

Usage: bench/speech-to-speech.py BIN_DIR [ENGINES]   (a release build: make release; needs
sacrebleu: PYTHONPATH=.build/bench-python, as `make bench` sets up)
Per-recording lines go to stderr.
"""
import glob
import os
import re
import sqlite3
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

TEXT = os.environ.get("PARLEY_TEXT", os.path.join(os.path.dirname(ears.SPEECH), "text"))
TARGETS = {"en": "eng", "fr": "fra", "pt": "por", "it": "ita", "ca": "cat"}


def words(text):
    return re.sub(r"[^\w ]", " ", text.lower()).split()


def flores_line(transcript, spanish):
    """The index of the FLORES line whose words are the transcript's (Jaccard of word sets)."""
    heard = set(words(transcript))

    def overlap(index):
        line = set(words(spanish[index]))
        return len(heard & line) / max(1, len(heard | line))

    best = max(range(len(spanish)), key=overlap)
    if overlap(best) < 0.8:
        raise RuntimeError(f"no FLORES line has the words of \"{transcript}\"")
    return best


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().rstrip("\n").split("\n")


def main():
    bin_dir, engines = ears.bin_and_engines(__doc__)
    import sacrebleu  # noqa: PLC0415 (after the usage works without it)

    started = time.monotonic()
    spanish = read_lines(f"{TEXT}/flores-devtest/spa.txt")
    recordings = []
    for wav in sorted(glob.glob(f"{ears.SPEECH}/es/fleurs/*.wav")):
        with open(wav[:-4] + ".txt", encoding="utf-8") as f:
            transcript = f.read().strip()
        recordings.append((wav, transcript, flores_line(transcript, spanish)))
    server = ears.WhisperServer(engines, threads=2)
    listener = ears.Whisper(engines, threads=2)
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="parley-s2s-") as work:
            for target, flores in TARGETS.items():
                references = read_lines(f"{TEXT}/flores-devtest/{flores}.txt")
                config = f"{work}/{target}.toml"
                ears.write_config(config, work, mode="one-way", speaker_a="es", speaker_b=target, transcriber=(engines, server.uri))
                with open(config, encoding="utf-8") as f:
                    text = f.read()
                # Bergamot from the engines folder, as `make run` finds it.
                text = text.replace("[translator]\n", f'[translator]\nengines = "{engines}"\n')
                with open(config, "w", encoding="utf-8") as f:
                    f.write(text)
                heard_words, word_errors = 0, 0
                translations, heard_back, refs = [], [], []
                for wav, transcript, line in recordings:
                    audio = ears.padded(wav, f"{work}/input.raw")
                    turns, _ = ears.run_parleyd(bin_dir, config, work, audio)
                    connection = sqlite3.connect(f"{work}/history.sqlite")
                    stored = connection.execute("SELECT translated_text FROM turns ORDER BY id").fetchall()
                    connection.close()
                    source = " ".join(t["text"] for t in turns)
                    translation = " ".join(r[0] or "" for r in stored).strip()
                    played = ears.pcm(f"{work}/out.wav") if os.path.exists(f"{work}/out.wav") else b""
                    back = listener.transcribe(played, language=target, beam_size=5)["text"].strip() if played else ""
                    errors, count = ears.Tally().add(transcript, source, "es")
                    word_errors, heard_words = word_errors + errors, heard_words + count
                    translations.append(translation)
                    heard_back.append(back)
                    refs.append(references[line])
                    print(f"es->{target} {os.path.basename(wav)[:-4]} (FLORES {line + 1}) turns {len(turns)} words {errors}/{count}\n"
                          f"  heard:      {source}\n  translated: {translation}\n  heard back: {back}\n  reference:  {references[line]}",
                          file=sys.stderr, flush=True)
                text_bleu = sacrebleu.corpus_bleu(translations, [refs])
                text_chrf = sacrebleu.corpus_chrf(translations, [refs])
                asr_bleu = sacrebleu.corpus_bleu(heard_back, [refs])
                asr_chrf = sacrebleu.corpus_chrf(heard_back, [refs])
                rows.append((target, len(recordings), 100 * word_errors / max(1, heard_words), text_bleu.score, text_chrf.score,
                             asr_bleu.score, asr_chrf.score))
    finally:
        listener.close()
        server.close()
    print(f"{len(recordings)} FLEURS recordings; bench/speech-to-speech.py took {time.monotonic() - started:.0f} s\n")
    print("| direction | recordings | words heard, WER | text BLEU / chrF | ASR-BLEU / chrF (heard back) |")
    print("|---|---|---|---|---|")
    for target, n, wer, tb, tc, ab, ac in rows:
        print(f"| es -> {target} | {n} | {wer:.1f} % | {tb:.1f} / {tc:.1f} | **{ab:.1f}** / {ac:.1f} |")


if __name__ == "__main__":
    main()
