#!/usr/bin/env python3
"""The streaming decoder's vocabulary: memory and word error rate by how many words it knows.

PocketSphinx's decoder, with the language model whole and the dictionary cut to the N likeliest
words of the language model by unigram probability (ties by spelling), as parleyd's
PrunedDictionary cuts it (`[recognizer.xx] vocabulary`). For each N: the decoder's memory (PSS
of a fresh process after loading it, less the process before) and the word error rate of
whole-file decoding on every recording of ../shared/speech/LANG (the decoder options parleyd
uses: no fwdflat, bestpath, maxhmmpf 4000, maxwpf 10).

Usage: bench/vocabulary.py en|es [N ...]   (SPEECH=DIR: another speech folder; default Ns:
10000 15000 20000 30000 and every word)
"""
import ctypes
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
SPEECH = os.environ.get("SPEECH", os.path.join(HERE, "..", "..", "shared", "speech"))
EN = "/usr/share/pocketsphinx/model/en-us"
MODELS = {
    "en": (EN + "/en-us", EN + "/en-us.lm.bin", EN + "/cmudict-en-us.dict", ["en/*.wav"]),
    "es": (os.path.join(HERE, "..", "models", "es", "acoustic"), os.path.join(HERE, "..", "models", "es", "es.lm.bin"),
           os.path.join(HERE, "..", "models", "es", "es.dict"), ["es/fleurs/*.wav", "es/voxforge/*.wav"]),
}

sb = ctypes.CDLL("libsphinxbase.so.3")
ps = ctypes.CDLL("libpocketsphinx.so.3")
sb.err_set_logfp.argtypes = [ctypes.c_void_p]
sb.err_set_logfp(None)  # sphinxbase's log lines otherwise go to standard error
sb.logmath_init.restype = ctypes.c_void_p
sb.logmath_init.argtypes = [ctypes.c_double, ctypes.c_int, ctypes.c_int]
sb.ngram_model_read.restype = ctypes.c_void_p
sb.ngram_model_read.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
sb.ngram_model_get_counts.restype = ctypes.POINTER(ctypes.c_uint32)
sb.ngram_model_get_counts.argtypes = [ctypes.c_void_p]
sb.ngram_word.restype = ctypes.c_char_p
sb.ngram_word.argtypes = [ctypes.c_void_p, ctypes.c_int32]
sb.ngram_ng_prob.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32)]
sb.cmd_ln_parse_r.restype = ctypes.c_void_p
sb.cmd_ln_parse_r.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
ps.ps_args.restype = ctypes.c_void_p
ps.ps_init.restype = ctypes.c_void_p
ps.ps_init.argtypes = [ctypes.c_void_p]
ps.ps_start_utt.argtypes = [ctypes.c_void_p]
ps.ps_end_utt.argtypes = [ctypes.c_void_p]
ps.ps_process_raw.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
ps.ps_get_hyp.restype = ctypes.c_char_p
ps.ps_get_hyp.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)]


def likeliest(language_model):
    """The language model's words, likeliest first (unigram probability, ties by spelling)."""
    model = sb.ngram_model_read(None, language_model.encode(), 0, sb.logmath_init(1.0001, 0, 0))
    used = ctypes.c_int32()
    words = []
    for wid in range(sb.ngram_model_get_counts(model)[0]):
        word = sb.ngram_word(model, wid)
        if word is not None:
            words.append((-sb.ngram_ng_prob(model, wid, None, 0, ctypes.byref(used)), word.decode("utf-8", "replace")))
    return [word for _, word in sorted(words)]


def cut(dictionary, keep, path):
    with open(dictionary, encoding="utf-8") as source, open(path, "w", encoding="utf-8") as out:
        for line in source:
            fields = line.split()
            if fields and fields[0].split("(")[0] in keep:
                out.write(line)


def decoder(acoustic, language_model, dictionary):
    args = ["-hmm", acoustic, "-lm", language_model, "-dict", dictionary, "-logfn", "/dev/null", "-fwdflat", "no",
            "-bestpath", "yes", "-maxhmmpf", "4000", "-maxwpf", "10"]
    argv = (ctypes.c_char_p * (len(args) + 1))(b"bench", *[a.encode() for a in args])
    return ps.ps_init(sb.cmd_ln_parse_r(None, ps.ps_args(), len(args) + 1, argv, 0))


def pss():
    with open("/proc/self/smaps_rollup") as rollup:
        return sum(int(line.split()[1]) for line in rollup if line.startswith("Pss:")) / 1024


def words(text):
    return re.sub(r"[^\w' ]", " ", text.lower().replace("-", " ")).split()


def distance(a, b):
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def measure(language, dictionary):
    """In this process (a fresh one): the decoder's memory, then its word error rate."""
    acoustic, language_model, _, sets = MODELS[language]
    before = pss()
    engine = decoder(acoustic, language_model, dictionary)
    memory = pss() - before
    errors = total = 0
    for path in sorted(p for pattern in sets for p in glob.glob(os.path.join(SPEECH, pattern))):
        with open(path[:-4] + ".txt", encoding="utf-8") as truth:
            reference = words(truth.read())
        with wave.open(path) as recording:
            pcm = recording.readframes(recording.getnframes())
        ps.ps_start_utt(engine)
        ps.ps_process_raw(engine, pcm, len(pcm) // 2, 0, 1)
        ps.ps_end_utt(engine)
        hypothesis = words((ps.ps_get_hyp(engine, None) or b"").decode("utf-8", "replace"))
        errors += distance(reference, hypothesis)
        total += len(reference)
    print(json.dumps({"memory": memory, "errors": errors, "words": total}))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--measure":
        measure(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) < 2 or sys.argv[1] not in MODELS:
        sys.exit(__doc__)
    language = sys.argv[1]
    _, language_model, dictionary, _ = MODELS[language]
    ranked = likeliest(language_model)
    sizes = [int(n) for n in sys.argv[2:]] or [10000, 15000, 20000, 30000, len(ranked)]
    print(f"{language}: {len(ranked)} words in the language model")
    print("| vocabulary | dictionary entries | decoder memory (MiB) | WER |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            path = os.path.join(folder, f"{size}.dict")
            cut(dictionary, set(ranked[:size]), path)
            with open(path, encoding="utf-8") as entries:
                count = sum(1 for _ in entries)
            result = json.loads(subprocess.run([sys.executable, __file__, "--measure", language, path],
                                               check=True, capture_output=True, text=True).stdout)
            label = f"{size}" if size < len(ranked) else f"all ({size})"
            print(f"| {label} | {count} | {result['memory']:.1f} | "
                  f"{100 * result['errors'] / result['words']:.1f} % of {result['words']} |", flush=True)


if __name__ == "__main__":
    main()
