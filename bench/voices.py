#!/usr/bin/env python3
"""Which voice a listener understands, per language (issue 37): espeak-ng, Festival and Piper.

Each language's voices say the same everyday sentences; the listener is Whisper base as Parley
runs it (the parley-whisper worker, beam 5, the language given; a decoding Whisper itself calls
failed gives no words, so speech it cannot understand counts as all words missed). Reported per
language and voice: WER of what Whisper heard, the real-time factor (CPU seconds of synthesis
per second of speech) and the first-sound latency of a typical sentence (the median over the
sentences: from the request to the first audio; Festival gives a sentence's audio at once, so
for it that is the whole sentence).

The sentences: 16 per language, Tatoeba (lines N*25 of ../shared/text/tatoeba/eng-XXX.XXX; N*8
for 120; English from eng-spa.eng, as bench/voice-rate.py); Catalan has no Tatoeba file here, so
its 16 are the first FLORES devtest lines of 40-90 characters (longer, news-like: not comparable
with the other languages, only between Catalan's voices).

espeak-ng runs as its command line (`--stdout`, the rate given); Festival as parleyd runs it: one
warm `festival --pipe --heap 1000000` process with every voice loaded once, asked sentence by
sentence with the Scheme Parley sends (Sources/Synthesis/FestivalSynthesizer.swift), audio
resampled to espeak-ng's 22,050 Hz in Festival. A sentence Festival refuses counts as silence. RSS of that process is reported at the end.

Piper (for the languages it has a voice for in PIPER_VOICES) runs as parleyd runs it too: one warm
libexec/parley-piper worker (its JSON-lines protocol, one sentence a request, its threads as parleyd
starts it, or VOICES_PIPER_THREADS), from the engines folder's piper/ (VOICES_PIPER: another
folder laid out the same way); its first sound is the first piece it answers (a long sentence is
said in pieces, cut after its commas). Its RSS and PSS after loading and after the first 10
sentences, and its peak, are reported at the end.

Usage: bench/voices.py [ENGINES]   (ENGINES: default .build/engines of this checkout)
       VOICES_SENTENCES=40 VOICES_LANGUAGES=en bench/voices.py   (more sentences, fewer languages)
"""
import os
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

TEXT = "/work/shared/text"
COUNT = int(os.environ.get("VOICES_SENTENCES", "16"))
TATOEBA = {"en": "eng-spa.eng", "es": "eng-spa.spa", "fr": "eng-fra.fra", "pt": "eng-por.por", "it": "eng-ita.ita"}
LANGUAGES = os.environ.get("VOICES_LANGUAGES", "en es fr pt it ca").split()
# Festival's voices in Debian, per language (the same table as FestivalVoice.table in Swift).
FESTIVAL = {"en": "cmu_us_slt_arctic_hts", "it": "lp_diphone", "ca": "upc_ca_ona_hts"}
ESPEAK_RATES = [175, 140]
HTS = ["cmu_us_slt_arctic_hts", "upc_ca_ona_hts"]
# VOICES_SLOWER=0.85: the HTS voices also at this speed rate (1: their own), as a variant.
SLOWER = float(os.environ.get("VOICES_SLOWER", "1"))
RATE = 22050
# Piper's voices, per language: the model file in the piper folder's voices/ (engines/fetch.sh).
PIPER_VOICES = {"en": "en_US-joe-medium.onnx"}
PIPER_THREADS = os.environ.get("VOICES_PIPER_THREADS")


def sentences(lang):
    if lang in TATOEBA:
        with open(f"{TEXT}/tatoeba/{TATOEBA[lang]}", encoding="utf-8") as f:
            lines = [line.strip() for line in f]
        step = len(lines) // COUNT  # 25 for 40 of eng-spa's 1,000 lines, 8 for 120
        return [lines[i * step] for i in range(COUNT)]
    with open(f"{TEXT}/flores-devtest/cat.txt", encoding="utf-8") as f:
        lines = [line.strip() for line in f if 40 <= len(line.strip()) <= 90]
    return lines[:COUNT]


def children_cpu():
    usage = os.times()
    return usage.children_user + usage.children_system


def espeak(lang, text, rate):
    """(16-bit samples at 22,050 Hz, first-sound seconds, CPU seconds)."""
    cpu = children_cpu()
    start = time.monotonic()
    process = subprocess.Popen(["espeak-ng", "-v", lang, "-s", str(rate), "--stdout", text], stdout=subprocess.PIPE)
    data = process.stdout.read(44 + 2)  # the header, then the first sample
    first = time.monotonic() - start
    data += process.stdout.read()
    process.wait()
    return data[44:], first, children_cpu() - cpu


class Festival:
    """One warm festival process, spoken to as parleyd speaks to it."""

    SETUP = b"""(define (parley.answer line) (let ((f (fopen "/dev/stdout" "w"))) (format f "%s\\n" line) (fclose f)))
(set! parley.voice nil)
(define (parley.say voice text)
  (unwind-protect
    (begin
      (if (not (equal? voice parley.voice)) (begin (eval (list voice)) (set! parley.voice voice)))
      (let ((u (utt.synth (eval (list (quote Utterance) (quote Text) text)))))
        (utt.wave.resample u RATE)
        (utt.wave.rescale u 0.8 t)
        (utt.save.wave u "/dev/stdout" (quote riff))))
    (parley.answer "ERROR")))
""".replace(b"RATE", str(RATE).encode())

    def __init__(self):
        self.process = subprocess.Popen(["festival", "--pipe", "--heap", "1000000"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self.process.stdin.write(self.SETUP)
        # The HTS voices a little slower (hts_engine's speed rate), as a variant to compare.
        for voice in HTS:
            self.process.stdin.write(f"""(define (voice_{voice}_slower) (voice_{voice})
  (set! hts_engine_params (append hts_engine_params (list (list "-r" {SLOWER})))))\n""".encode())
        for voice in FESTIVAL.values():  # warm: each voice loaded once
            self.say(voice, "ok")

    def _read(self, count, deadline):
        out = b""
        while len(out) < count:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("festival did not answer")
            chunk = os.read(self.process.stdout.fileno(), count - len(out))
            if not chunk:
                raise EOFError("festival exited")
            out += chunk
        return out

    def say(self, voice, text, latin1=False):
        """(samples, seconds to the audio, CPU seconds)."""
        quoted = text.replace("\\", "\\\\").replace('"', '\\"')
        request = f'(parley.say (quote voice_{voice}) "{quoted}")\n'
        cpu = ears.cpu_seconds(self.process.pid)
        start = time.monotonic()
        self.process.stdin.write(request.encode("latin-1", "replace") if latin1 else request.encode())
        deadline = start + 120
        head = self._read(4, deadline)
        if head != b"RIFF":  # a line: ERROR (a Scheme error), said as silence here
            while not head.endswith(b"\n"):
                head += self._read(1, deadline)
            print(f"festival refused {text!r}", file=sys.stderr)
            return b"", time.monotonic() - start, ears.cpu_seconds(self.process.pid) - cpu
        head += self._read(4, deadline)
        body = self._read(struct.unpack("<I", head[4:])[0], deadline)
        seconds = time.monotonic() - start
        data = body[body.index(b"data") + 8:]
        return data, seconds, ears.cpu_seconds(self.process.pid) - cpu

    def close(self):
        rss = ears.status(self.process.pid)
        self.process.kill()
        self.process.wait()
        return rss


def memory(pid):
    """RSS and PSS of a process, in MiB."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Rss", "Pss"):
                out[key] = int(value.split()[0]) / 1024
    return out


class Piper:
    """One warm parley-piper worker, spoken to as parleyd speaks to it."""

    def __init__(self, folder, languages):
        voices = [f"--voice={lang}={folder}/voices/{PIPER_VOICES[lang]}" for lang in languages]
        self.process = subprocess.Popen(["/usr/bin/python3", f"{folder}/parley-piper", *voices, "--python-path",
                                         f"{folder}/python", "--rate", str(RATE)] + (["--threads", PIPER_THREADS] if PIPER_THREADS else []),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.ident = 0
        self.said = 0
        self.process.stdin.write(b'{"type": "describe"}\n')
        self.process.stdout.readline()  # once the voices are loaded
        self.loaded = memory(self.process.pid)
        self.after10 = None

    def say(self, lang, text):
        """(samples, seconds to the audio, CPU seconds)."""
        import json
        self.ident += 1
        cpu = ears.cpu_seconds(self.process.pid)
        start = time.monotonic()
        self.process.stdin.write(json.dumps({"type": "say", "id": self.ident, "language": lang, "text": text}).encode() + b"\n")
        data, seconds = b"", None
        while True:  # its pieces, until the last
            answer = json.loads(self.process.stdout.readline())
            if answer["type"] != "audio":
                print(f"piper refused {text!r}: {answer}", file=sys.stderr)
                break
            end = len(data) + 2 * answer["samples"]
            while len(data) < end:
                data += self.process.stdout.read(end - len(data))
            seconds = seconds if seconds is not None else time.monotonic() - start
            if answer["last"]:
                break
        seconds = seconds if seconds is not None else time.monotonic() - start
        self.said += 1
        if self.said == 10:
            self.after10 = memory(self.process.pid)
        return data, seconds, ears.cpu_seconds(self.process.pid) - cpu

    def close(self):
        peak = ears.status(self.process.pid)["VmHWM"]
        self.process.stdin.close()
        self.process.wait()
        return peak


def heard(whisper, work, data, lang):
    """What Whisper hears of 16-bit 22,050 Hz audio, with half a second of silence each side."""
    raw = f"{work}/say.raw"
    with open(raw, "wb") as f:
        f.write(data)
    samples = subprocess.run(["sox", "-t", "raw", "-r", str(RATE), "-e", "signed", "-b", "16", "-c", "1", raw,
                              *ears.RAW, "-", "pad", "0.5", "0.5"], check=True, capture_output=True).stdout
    return whisper.transcribe(samples, language=lang, beam_size=5)["text"]


def main():
    engines = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ears.engines_folder()
    whisper = ears.Whisper(engines, threads=2)
    festival = Festival()
    piper_folder = os.environ.get("VOICES_PIPER", f"{engines}/piper")
    piper_languages = [lang for lang in LANGUAGES if lang in PIPER_VOICES]
    piper = Piper(piper_folder, piper_languages) if piper_languages and os.path.exists(f"{piper_folder}/parley-piper") else None
    if piper_languages and piper is None:
        print(f"Piper is not installed (no {piper_folder}/parley-piper): not measured", file=sys.stderr)
    results = {}  # (lang, voice) -> [Tally, audio seconds, cpu seconds, [first-sound seconds]]
    with tempfile.TemporaryDirectory(prefix="parley-voices-") as work:
        for lang in LANGUAGES:
            voices = [(f"espeak-ng {rate} wpm", lambda t, r=rate: espeak(lang, t, r)) for rate in ESPEAK_RATES]
            if lang in FESTIVAL:
                # The Italian and Catalan voices read Latin-1, as Parley sends it to them: in
                # UTF-8 an accented word is an error in the Italian letter-to-sound rules (the
                # sentence is refused), and the Catalan voice spells it out letter by letter.
                latin1 = lang in ("it", "ca")
                voices.append((f"festival {FESTIVAL[lang]}", lambda t, l=latin1: festival.say(FESTIVAL[lang], t, latin1=l)))
                if latin1:
                    voices.append((f"festival {FESTIVAL[lang]} (UTF-8)", lambda t: festival.say(FESTIVAL[lang], t)))
                if SLOWER != 1 and FESTIVAL[lang] in HTS:
                    voices.append((f"festival {FESTIVAL[lang]} at speed {SLOWER}",
                                   lambda t, l=latin1: festival.say(FESTIVAL[lang] + "_slower", t, latin1=l)))
            if piper is not None and lang in PIPER_VOICES:
                voices.append((f"piper {PIPER_VOICES[lang][:-5]}", lambda t, l=lang: piper.say(l, t)))
            for text in sentences(lang):
                for name, speak in voices:
                    data, first, cpu = speak(text)
                    hypothesis = heard(whisper, work, data, lang)
                    entry = results.setdefault((lang, name), [ears.Tally(), 0.0, 0.0, []])
                    e, n = entry[0].add(text, hypothesis, lang)
                    entry[1] += len(data) / 2 / RATE
                    entry[2] += cpu
                    entry[3].append(first)
                    print(f"{lang} {name}: {e}/{n} {text} -> {hypothesis}", file=sys.stderr)
    rss = festival.close()
    whisper.close()
    print(f"Voices heard back by Whisper base, {COUNT} sentences per language:\n")
    print("| language | voice | WER | speech | real-time factor | first sound (median) |")
    print("|---|---|---|---|---|---|")
    for (lang, name), (tally, audio, cpu, firsts) in results.items():
        print(f"| {lang} | {name} | {tally} | {audio:.0f} s | {cpu / audio:.3f} | {1000 * statistics.median(firsts):.0f} ms |")
    print(f"\nFestival, every voice loaded: RSS {rss['VmRSS']:.0f} MiB (peak {rss['VmHWM']:.0f} MiB)")
    if piper is not None:
        peak = piper.close()
        after = piper.after10 or {"Rss": 0, "Pss": 0}
        print(f"Piper ({PIPER_THREADS or 'default'} threads), {', '.join(piper_languages)} loaded: "
              f"RSS {piper.loaded['Rss']:.0f} MiB, PSS {piper.loaded['Pss']:.0f} MiB; after 10 sentences "
              f"RSS {after['Rss']:.0f} MiB, PSS {after['Pss']:.0f} MiB; peak {peak:.0f} MiB")


if __name__ == "__main__":
    main()
