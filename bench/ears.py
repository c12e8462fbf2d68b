"""Shared by the accurate-pass benches (accuracy.py, noise.py, engine-cost.py): the recordings,
word error rate with its normalization, the Whisper worker spoken to directly, Moonshine through
ctypes, parleyd runs in file mode, and /proc readings. Standard library only.

Normalization before WER (both sides): lowercase (NFC), curly quotes made straight, hyphens made
spaces, every character that is not a letter, digit, space or apostrophe dropped, then the
apostrophes (so "I'm" and "Im", "l'espace" and "l’espace" agree), numbers 0-9999 written as words
in the recording's language (cardinals, as a table and a few rules; in English 1100-1999 are read
as years, "1813" is "eighteen thirteen", and ordinals are spelled, "20th" is "twentieth"; no
other language's ordinals or years: "1950" in Spanish is "mil novecientos cincuenta"), and spaces
collapsed. No other rewriting (no spelling variants, no contractions expanded).
"""
import ctypes
import glob
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import tomllib
import unicodedata
import zlib

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
SPEECH = "/work/shared/speech"
NOISE = "/work/shared/noise"
RATE = 16000
RAW = ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1"]
# Human recordings: (language, source label, folder). es/wavenet (synthetic) is left out.
SETS = [("en", "en", "en"), ("es", "fleurs", "es/fleurs"), ("es", "voxforge", "es/voxforge"),
        ("fr", "voxforge", "fr"), ("pt", "voxforge", "pt"), ("it", "voxforge", "it")]
SPANISH_MODEL = f"""[recognizer.es]
acoustic_model = "{REPO}/models/es/acoustic"
language_model = "{REPO}/models/es/es.lm.bin"
dictionary = "{REPO}/models/es/es.dict"
"""


def recordings(language=None, speech=SPEECH):
    """[(language, source, wav path, reference text)], sorted by folder then name."""
    out = []
    for lang, source, folder in SETS:
        if language and lang != language:
            continue
        limit = int(os.environ.get("BENCH_LIMIT", "0")) or None  # a quick try: the first N of each folder
        for wav in sorted(glob.glob(f"{speech}/{folder}/*.wav"))[:limit]:
            with open(wav[:-4] + ".txt", encoding="utf-8") as f:
                out.append((lang, source, wav, f.read().strip()))
    return out


def seconds(wav):
    return (os.path.getsize(wav) - 44) / (2 * RATE)


def pcm(path, *effects):
    """16 kHz s16le mono samples of a recording (through sox, with optional effects)."""
    source = [*RAW, path] if path.endswith(".raw") else [path]
    return subprocess.run(["sox", *source, *RAW, "-", *effects], check=True, capture_output=True).stdout


# ---------------------------------------------------------------- numbers as words (0-9999)

EN = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen " \
     "eighteen nineteen".split()
EN_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
ES = ("cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis diecisiete "
      "dieciocho diecinueve veinte veintiuno veintidós veintitrés veinticuatro veinticinco veintiséis veintisiete "
      "veintiocho veintinueve").split()
ES_TENS = "_ _ veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa".split()
ES_HUNDREDS = "_ ciento doscientos trescientos cuatrocientos quinientos seiscientos setecientos ochocientos novecientos".split()
PT = ("zero um dois três quatro cinco seis sete oito nove dez onze doze treze catorze quinze dezesseis dezessete dezoito "
      "dezenove").split()
PT_TENS = "_ _ vinte trinta quarenta cinquenta sessenta setenta oitenta noventa".split()
PT_HUNDREDS = "_ cento duzentos trezentos quatrocentos quinhentos seiscentos setecentos oitocentos novecentos".split()
FR = ("zéro un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize dix-sept dix-huit "
      "dix-neuf").split()
FR_TENS = "_ _ vingt trente quarante cinquante soixante".split()
IT = ("zero uno due tre quattro cinque sei sette otto nove dieci undici dodici tredici quattordici quindici sedici "
      "diciassette diciotto diciannove").split()
IT_TENS = "_ _ venti trenta quaranta cinquanta sessanta settanta ottanta novanta".split()


def spell(n, lang):
    """n (0-9999) as words; other numbers stay digits."""
    if not 0 <= n <= 9999:
        return str(n)
    if lang == "en":
        def below_100(k):
            return EN[k] if k < 20 else EN_TENS[k // 10] + ("" if k % 10 == 0 else " " + EN[k % 10])
        if 1100 <= n <= 1999:  # read as a year: "eighteen thirteen", "nineteen hundred", "nineteen oh five"
            rest = n % 100
            return below_100(n // 100) + (" hundred" if rest == 0 else " oh " + EN[rest] if rest < 10 else " " + below_100(rest))
        parts = []
        if n >= 1000:
            parts.append(EN[n // 1000] + " thousand")
        if n % 1000 >= 100:
            parts.append(EN[n % 1000 // 100] + " hundred")
        if n % 100 or not parts:
            parts.append(below_100(n % 100))
        return " ".join(parts)
    if lang in ("es", "pt"):
        units, tens, hundreds, joiner = (ES, ES_TENS, ES_HUNDREDS, " y ") if lang == "es" else (PT, PT_TENS, PT_HUNDREDS, " e ")
        limit = 30 if lang == "es" else 20

        def below_100(k):
            return units[k] if k < limit else tens[k // 10] + ("" if k % 10 == 0 else joiner + units[k % 10])
        thousands = "" if n < 1000 else ("" if n // 1000 == 1 else below_100(n // 1000) + " ") + "mil"
        rest = n % 1000
        hundred = "" if rest < 100 else (("cien" if lang == "es" else "cem") if rest == 100 else hundreds[rest // 100])
        small = below_100(rest % 100) if rest % 100 or n == 0 else ""
        if lang == "es":
            return " ".join(p for p in (thousands, hundred, small) if p)
        # Portuguese joins with "e": "cento e vinte", "mil e vinte", "mil novecentos e cinquenta".
        tail = " e ".join(p for p in (hundred, small) if p)
        if thousands and tail:
            return thousands + (" " if hundred and small else " e ") + tail
        return thousands or tail
    if lang == "fr":
        def below_100(k):
            if k < 20:
                return FR[k]
            if k < 70:
                t, u = divmod(k, 10)
                return FR_TENS[t] + ("" if u == 0 else " et un" if u == 1 else " " + FR[u])
            if k < 80:
                return "soixante " + ("et " if k == 71 else "") + FR[k - 60]
            return "quatre vingt" + ("s" if k == 80 else " " + FR[k - 80])
        parts = []
        if n >= 1000:
            parts.append(("" if n // 1000 == 1 else FR[n // 1000] + " ") + "mille")
        rest = n % 1000
        if rest >= 100:
            parts.append(("" if rest // 100 == 1 else FR[rest // 100] + " ") + "cent" + ("s" if rest // 100 > 1 and rest % 100 == 0 else ""))
        if rest % 100 or not parts:
            parts.append(below_100(rest % 100))
        return " ".join(parts).replace("-", " ")
    if lang == "it":
        def below_100(k):
            if k < 20:
                return IT[k]
            t, u = divmod(k, 10)
            word = IT_TENS[t]
            if u in (1, 8):
                word = word[:-1]
            return word + ("" if u == 0 else "tré" if u == 3 else IT[u])
        word = ""
        if n >= 1000:
            word += "mille" if n // 1000 == 1 else IT[n // 1000] + "mila"
        rest = n % 1000
        if rest >= 100:
            word += ("" if rest // 100 == 1 else IT[rest // 100]) + "cento"
        if rest % 100 or not word:
            word += below_100(rest % 100)
        return word
    return str(n)


ORDINALS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth",
            "twelve": "twelfth"}


def ordinal(n):
    """An English ordinal ("20th": "twentieth")."""
    *head, last = spell(n, "en").split()
    last = ORDINALS.get(last) or (last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return " ".join([*head, last])


def words(text, lang):
    """Normalized words (see the module's docstring)."""
    text = unicodedata.normalize("NFC", text).lower().replace("’", "'").replace("‘", "'").replace("`", "'")
    text = re.sub(r"[-‐–—]", " ", text)
    text = "".join(c if c.isalnum() or c.isspace() or c == "'" else " " if c in "/" else "" for c in text)
    text = text.replace("'", "")
    if lang == "en":
        text = re.sub(r"\b(\d+)(st|nd|rd|th)\b", lambda m: " " + ordinal(int(m.group(1))) + " ", text)
    text = re.sub(r"\d+", lambda m: " " + spell(int(m.group()), lang) + " ", text)
    return text.split()


def edits(reference, hypothesis):
    """Word-level edit distance (substitutions, insertions, deletions) and the reference's length."""
    d = list(range(len(hypothesis) + 1))
    for i, r in enumerate(reference, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hypothesis, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[len(hypothesis)], len(reference)


def leading_extra(reference, hypothesis, lang):
    """Words the hypothesis starts with that were not said (1 or 2 words whose removal lowers
    the edit distance by as many), e.g. "You" or "Thank you"."""
    ref, hyp = words(reference, lang), words(hypothesis, lang)
    base = edits(ref, hyp)[0]
    for k in (2, 1):
        if len(hyp) > k and edits(ref, hyp[k:])[0] <= base - k:
            return " ".join(hyp[:k])
    return None


def compression_ratio(text):
    """Bytes of the text over bytes of it compressed (zlib), as Whisper's own transcribe checks
    (it retries above 2.4): a text that loops compresses well."""
    data = text.encode()
    return len(data) / len(zlib.compress(data)) if data else 0.0


class Tally:
    """Errors and reference words summed over recordings."""

    def __init__(self):
        self.errors = self.words = self.recordings = 0

    def add(self, reference, hypothesis, lang):
        e, n = edits(words(reference, lang), words(hypothesis, lang))
        self.errors += e
        self.words += n
        self.recordings += 1
        return e, n

    def __str__(self):
        return f"{100 * self.errors / self.words:.1f} %" if self.words else "-"


# ---------------------------------------------------------------- /proc

def cpu_seconds(pid):
    """utime + stime of a process (and of its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status(pid):
    """Threads, VmRSS and VmHWM (MiB) of a process."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key == "Threads":
                out["threads"] = int(value)
            elif key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out


def children(pid):
    """Process ids of a process's children (started by any of its threads)."""
    out = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(task) as f:
                out += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return out


# ---------------------------------------------------------------- Whisper, spoken to directly

def engines_folder():
    return os.environ.get("PARLEY_ENGINES", f"{REPO}/.build/engines")


def whisper_command(engines, threads=2, beam_size=5, uri=None):
    command = ["/usr/bin/python3", f"{engines}/whisper/parley-whisper", "--model", f"{engines}/whisper/base",
               "--python-path", f"{engines}/whisper/python", "--threads", str(threads), "--beam-size", str(beam_size)]
    return command + (["--uri", uri] if uri else [])


class Whisper:
    """The parley-whisper worker as parleyd starts it (a child on stdin/stdout), under `nice`. Beam
    5 unless told: the benches' "engine alone" is Whisper at its best, not at the shipped beam."""

    def __init__(self, engines, threads=2, beam_size=5, nice=5):
        self.process = subprocess.Popen(["nice", "-n", str(nice), *whisper_command(engines, threads, beam_size)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.pid = self.process.pid  # nice execs the worker: same pid
        self._send("describe", {})
        kind, self.info = self._read()
        assert kind == "info", kind

    def _send(self, kind, data, payload=b""):
        body = json.dumps(data).encode()
        header = {"type": kind, "data_length": len(body)}
        if payload:
            header["payload_length"] = len(payload)
        self.process.stdin.write(json.dumps(header).encode() + b"\n" + body + payload)
        self.process.stdin.flush()

    def _read(self):
        header = json.loads(self.process.stdout.readline())
        data = header.get("data") or {}
        if header.get("data_length"):
            data.update(json.loads(self.process.stdout.read(header["data_length"])))
        if header.get("payload_length"):
            self.process.stdout.read(header["payload_length"])
        return header["type"], data

    def transcribe(self, samples, language=None, languages=None, skip=None, beam_size=None):
        request = {}
        if language:
            request["language"] = language
        if languages:
            request["languages"] = languages
        if skip:
            request["skip_languages"] = skip
        if beam_size:
            request["beam_size"] = beam_size
        self._send("transcribe", request)
        self._send("audio-start", {"rate": RATE, "width": 2, "channels": 1})
        for start in range(0, len(samples), 32000):
            self._send("audio-chunk", {"rate": RATE, "width": 2, "channels": 1}, samples[start:start + 32000])
        self._send("audio-stop", {})
        kind, data = self._read()
        if kind != "transcript":
            raise RuntimeError(f"parley-whisper answered {kind}: {data}")
        return data

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def whisper_in_process(beam_size=5):
    """The Whisper worker's own code in this process: libexec/parley-whisper loaded as a module (its
    main() is not run), its Whisper class set up and warmed as main() does for parleyd (the built
    int8 model, the threads parleyd gives it: `shipped_whisper_threads`; WHISPER_THREADS=N in the
    environment: N). Returns (module, whisper). PAD_FRAMES=N in the
    environment gives the encoder N frames (10 ms) of silence after the audio instead of the
    worker's own; DETECT_PAD_FRAMES=N the same for audio whose language alone is asked for.
    Needs the Python that runs the worker (/usr/bin/python3) and `make engines`."""
    import importlib.machinery
    import importlib.util
    folder = f"{REPO}/.build/engines/whisper"
    sys.path.insert(0, f"{folder}/python")
    loader = importlib.machinery.SourceFileLoader("parley_whisper", f"{REPO}/libexec/parley-whisper")
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("parley_whisper", loader))
    loader.exec_module(module)
    for name in ("PAD_FRAMES", "DETECT_PAD_FRAMES"):
        if name in os.environ:
            setattr(module, name, int(os.environ[name]))
    threads = int(os.environ.get("WHISPER_THREADS", shipped_whisper_threads()))
    whisper = module.Whisper(f"{folder}/base", threads, beam_size, "int8")
    whisper.transcribe(bytes(RATE), language="en")
    module.release_memory()
    module.release_code()
    return module, whisper


def shipped_whisper_threads():
    """The threads parleyd gives its Whisper worker as shipped (`[transcriber] threads` 0,
    `TranscriberConfig.whisperThreads`): one per core but one, at least one."""
    return max(1, len(os.sched_getaffinity(0)) - 1)


def shipped_beam_size():
    """`[transcriber] beam_size` as config/parley.toml ships it: what parleyd's own worker uses."""
    with open(f"{REPO}/config/parley.toml", "rb") as f:
        return tomllib.load(f)["transcriber"]["beam_size"]


class WhisperServer:
    """parley-whisper serving on 127.0.0.1 (`--uri tcp://`), for parleyd's `[transcriber] server`:
    one warm model for many parleyd runs, with the beam parleyd's own worker would use."""

    def __init__(self, engines, threads=2, beam_size=None, nice=5):
        beam_size = beam_size or shipped_beam_size()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.uri = f"tcp://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(["nice", "-n", str(nice), *whisper_command(engines, threads, beam_size, self.uri)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pid = self.process.pid
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("parley-whisper --uri did not start")
                time.sleep(0.2)
        raise RuntimeError("parley-whisper --uri did not answer in 120 s")

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=30)


# ---------------------------------------------------------------- Moonshine, through ctypes

class Moonshine:
    """Moonshine tiny through libmoonshine's C API, the calls MoonshineTranscriber.swift makes."""

    def __init__(self, engines):
        self.lib = ctypes.CDLL(f"{engines}/moonshine/moonshine_voice/libmoonshine.so")
        self.lib.moonshine_load_transcriber_from_files.restype = ctypes.c_int32
        self.lib.moonshine_load_transcriber_from_files.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_void_p,
                                                                   ctypes.c_uint64, ctypes.c_int32]
        self.lib.moonshine_transcribe_without_streaming.restype = ctypes.c_int32
        self.lib.moonshine_transcribe_without_streaming.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_float), ctypes.c_uint64,
                                                                    ctypes.c_int32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p)]
        # MoonshineTranscriber.options: the library's own voice detection off, an utterance heard whole.
        options = [(b"vad_threshold", b"0.0"), (b"vad_max_segment_duration", b"30")]
        table = (ctypes.c_char_p * (2 * len(options)))(*[x for pair in options for x in pair])
        self.handle = self.lib.moonshine_load_transcriber_from_files(f"{engines}/moonshine/tiny-en".encode(), 0,
                                                                     ctypes.cast(table, ctypes.c_void_p), len(options), 30000)
        if self.handle < 0:
            raise RuntimeError(f"Moonshine did not load: {self.handle}")

    def close(self):
        self.lib.moonshine_free_transcriber.argtypes = [ctypes.c_int32]
        self.lib.moonshine_free_transcriber(self.handle)

    def transcribe(self, samples):
        count = len(samples) // 2
        shorts = (ctypes.c_int16 * count).from_buffer_copy(samples[:count * 2])
        audio = (ctypes.c_float * count)(*[s / 32768 for s in shorts])
        out = ctypes.c_void_p()
        code = self.lib.moonshine_transcribe_without_streaming(self.handle, audio, count, RATE, 0, ctypes.byref(out))
        if code != 0:
            raise RuntimeError(f"Moonshine failed: {code}")
        if not out.value:
            return ""
        lines, line_count = ctypes.cast(out.value, ctypes.POINTER(ctypes.c_void_p * 2)).contents
        texts = []
        for index in range(line_count or 0):
            text = ctypes.cast(lines + 88 * index, ctypes.POINTER(ctypes.c_char_p)).contents.value
            if text:
                texts.append(text.decode("utf-8", "replace"))
        return " ".join(" ".join(texts).split())



# ---------------------------------------------------------------- thinking pauses

LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-"


def librivox_transcripts():
    """{id: words} of pocketsphinx-testdata's LibriVox sentences ("0880": "he was not ...")."""
    found = {}
    with open("/usr/share/pocketsphinx/test/data/librivox/transcription") as f:
        for line in f:
            words, _, ident = line.rpartition("(")
            found[ident.strip(" )\n").rsplit("-", 1)[-1]] = " ".join(words.replace("<s>", "").replace("</s>", "").split())
    return found


def thinking_pause_cuts(name):
    """(recording, seconds, word) of a Tests/data list of thinking-pause cuts
    (thinking-pauses.txt: LibriVox; thinking-pauses-es.txt: Spanish)."""
    with open(f"{REPO}/Tests/data/{name}") as f:
        return [line.split() for line in f if line.strip() and not line.startswith("#")]


# ---------------------------------------------------------------- parleyd in file mode

def bin_and_engines(usage):
    """A bench's arguments, BIN_DIR [ENGINES]: parleyd's folder and the engines folder (this
    checkout's .build/engines unless given); `usage` is said and the bench stops otherwise."""
    import sys
    if len(sys.argv) not in (2, 3):
        sys.exit(usage)
    return os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else engines_folder()


def engines_variant(work, engines, which):
    """An engines folder holding only `which` ("moonshine", "none"): parleyd then has that
    engine alone (plus the Whisper server when the config names one). "silero": Moonshine's
    library without its model, so parleyd has the Silero voice detector (which comes with that
    library) and no Moonshine."""
    folder = f"{work}/engines-{which}"
    if not os.path.isdir(folder):
        os.makedirs(folder)
        if which == "moonshine":
            os.symlink(f"{engines}/moonshine", f"{folder}/moonshine")
        elif which == "silero":
            os.makedirs(f"{folder}/moonshine")
            os.symlink(f"{engines}/moonshine/moonshine_voice", f"{folder}/moonshine/moonshine_voice")
    return folder


def write_config(path, work, mode="one-way", speaker_a="en", speaker_b="es", transcriber=None, detector=None, log_level="info"):
    """A bench config: absolute paths, history in `work`. transcriber: None (PocketSphinx
    only) or (engines folder, server uri or ""). detector: with transcriber None, an engines
    folder whose Moonshine library gives the Silero voice detector (without it, the level alone
    finds speech unless an engines folder is installed system-wide). log_level "debug" gives
    each utterance's end and voice (`turn_paces`)."""
    with open(path, "w") as f:
        f.write(f'[conversation]\nspeaker_a = "{speaker_a}"\nspeaker_b = "{speaker_b}"\nmode = "{mode}"\n')
        f.write(SPANISH_MODEL)
        if transcriber:
            folder, server = transcriber
            f.write(f'[transcriber]\nenabled = true\nengines = "{folder}"\nserver = "{server}"\nthreads = 2\n')
        else:
            f.write("[transcriber]\nenabled = false\n" + (f'engines = "{detector}"\n' if detector else ""))
        f.write(f'[translator]\nfailure_notice = false\n[history]\npath = "{work}/history.sqlite"\n'
                f'[control]\nsocket = "{work}/control.sock"\n[log]\nlevel = "{log_level}"\n')


def syllables(text):
    """About how many syllables `text` has, as parleyd counts them (`SlowSpeech.syllables`):
    runs of vowels, accents folded, and one per digit."""
    folded = "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))
    return len(re.findall(r"[aeiouy]+", folded)) + sum(c.isdigit() for c in folded)


def turn_paces(log):
    """Per turn parleyd stored, in order, from its debug log: (the voice of its utterance in
    seconds, what ended it), read from the last utterance end before the turn's line (None
    before any)."""
    paces, last = [], None
    for line in log.splitlines():
        ended = re.search(r"speech ended at [\d.]+ s \((\w+), after [\d.]+ s of pause.*; ([\d.]+) s of voice\)", line)
        if ended:
            last = (float(ended.group(2)), ended.group(1))
        elif " parleyd: turn " in line:
            paces.append(last)
    return paces


def run_parleyd(bin_dir, config, work, audio, nice=5):
    """parleyd file mode on `audio` (a .raw or .wav); the turns it stored, oldest first:
    [{lang, text, detection, asr_ms}], and its log."""
    db = f"{work}/history.sqlite"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    done = subprocess.run(["nice", "-n", str(nice), f"{bin_dir}/parleyd", "--config", config, "--input", audio, "--output",
                           f"{work}/out.wav"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"parleyd failed on {audio}: {done.stderr[-2000:]}")
    connection = sqlite3.connect(db)
    rows = connection.execute("SELECT source_lang, source_text, detection, asr_ms FROM turns ORDER BY id").fetchall()
    connection.close()
    return [{"lang": r[0], "text": r[1], "detection": json.loads(r[2]) if r[2] else None, "asr_ms": r[3]} for r in rows], done.stderr


def padded(wav, out, before=0.5, after=2.0):
    """The recording as raw audio with silence before and after, as a microphone delivers it."""
    subprocess.run(["sox", wav, *RAW, out, "pad", str(before), str(after)], check=True)
    return out
