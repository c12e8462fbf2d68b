#!/usr/bin/env python3
"""espeak-ng's speaking rate against how well a listener understands it (issue 37).

The listener is Whisper base as Parley runs it (the parley-whisper worker, beam 5, the language
given; a decoding Whisper itself calls failed, average log-probability under -1, gives no words,
so speech Parley cannot understand counts as all words missed): each language's espeak-ng voice says 20 everyday sentences (Tatoeba, lines
N*25 of ../shared/text/tatoeba/eng-XXX.XXX, English from eng-spa.eng) at each rate, and WER
of what Whisper hears is reported per language and rate, with how long the speech takes.

Usage: bench/voice-rate.py [ENGINES]   (ENGINES: default .build/engines of this checkout)
"""
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

TEXT = "/work/shared/text/tatoeba"
RATES = [175, 160, 140, 125]
FILES = {"en": "eng-spa.eng", "es": "eng-spa.spa", "fr": "eng-fra.fra", "pt": "eng-por.por", "it": "eng-ita.ita"}
VOICES = {"en": "en", "es": "es", "fr": "fr", "pt": "pt", "it": "it"}


def sentences(lang, count=20, step=25):
    with open(f"{TEXT}/{FILES[lang]}", encoding="utf-8") as f:
        lines = [line.strip() for line in f]
    return [lines[i * step] for i in range(count)]


def main():
    engines = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ears.engines_folder()
    whisper = ears.Whisper(engines, threads=2)
    results = {}
    with tempfile.TemporaryDirectory(prefix="parley-voice-rate-") as work:
        for lang in FILES:
            for text in sentences(lang):
                for rate in RATES:
                    wav = f"{work}/say.wav"
                    subprocess.run(["espeak-ng", "-v", VOICES[lang], "-s", str(rate), "-w", wav, text], check=True)
                    # Half a second of silence each side, as a microphone gives an utterance.
                    samples = ears.pcm(wav, "pad", "0.5", "0.5")
                    heard = whisper.transcribe(samples, language=lang, beam_size=5)["text"]
                    tally, seconds = results.setdefault((lang, rate), (ears.Tally(), [0.0]))
                    e, n = tally.add(text, heard, lang)
                    seconds[0] += len(samples) / 2 / 16000
                    print(f"{lang} {rate} {e}/{n} {text} -> {heard}", file=sys.stderr)
    whisper.close()
    print("WER of espeak-ng heard back by Whisper base, 20 Tatoeba sentences per language (seconds of speech):\n")
    print("| language | " + " | ".join(f"{rate} wpm" for rate in RATES) + " |")
    print("|---|" + "---|" * len(RATES))
    for lang in FILES:
        cells = [f"{results[(lang, rate)][0]} ({results[(lang, rate)][1][0]:.0f} s)" for rate in RATES]
        print(f"| {lang} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
