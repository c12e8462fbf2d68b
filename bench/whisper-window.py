#!/usr/bin/env python3
"""Whisper's 30 s window against the utterance alone (docs/benchmarks.md, "Whisper's window").

Whisper's encoder is trained on 30 s windows; CTranslate2 also takes fewer frames, which costs
far less on a short utterance, but the decoder then repeats itself. This measures, per
language, WER and seconds per utterance (2 threads) for:
  full      the 30 s window (faster-whisper's way)
  padNNN    the utterance and NNN frames (10 ms) of silence, no timestamps
  padNNNr   the same, a sentence that starts over cut
  padNNNt   decoded with timestamps: text whose segment starts past the audio's end is cut,
            and a sentence that starts over (what libexec/parley-whisper does, with pad200)
Also the share of recordings whose language Whisper tells right between it and en/es.

Usage: bench/whisper-window.py LANGS VARIANTS [BEAM] [v]   e.g. en,es full,pad200t 5
Needs `make engines`, the recordings of ../shared/speech (SPEECH=... to point elsewhere), and
two PyPI packages for scoring only: pip install jiwer num2words.
"""
import os, sys, time, wave, re, glob, unicodedata
import numpy as np
SPEECH = os.environ.get("SPEECH", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "speech"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES = f"{ROOT}/.build/engines/whisper"
sys.path.insert(0, f"{ENGINES}/python")
import ctranslate2, jiwer
from num2words import num2words
import faster_whisper_features as fe
from tokenizers import Tokenizer
tok = Tokenizer.from_file(f"{ENGINES}/base/tokenizer.json")
m = ctranslate2.models.Whisper(f"{ENGINES}/base", device="cpu", compute_type="int8", intra_threads=2)
ext = fe.FeatureExtractor(feature_size=80)
def norm(s, lang):
    s = s.lower()
    s = re.sub(r"\d+", lambda mm: " "+num2words(int(mm.group()), lang=lang)+" ", s)
    s = "".join(c for c in s if unicodedata.category(c)[0] in "LNZ" or c in "'")
    s = s.replace("-", " ")
    return " ".join(s.split())
def load(p):
    w = wave.open(p); return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32)/32768
sets = {"en": glob.glob(f"{SPEECH}/en/*.wav"), "es": glob.glob(f"{SPEECH}/es/fleurs/*.wav")+glob.glob(f"{SPEECH}/es/voxforge/*.wav"),
        "fr": glob.glob(f"{SPEECH}/fr/*.wav"), "pt": glob.glob(f"{SPEECH}/pt/*.wav"), "it": glob.glob(f"{SPEECH}/it/*.wav")}
langs = sys.argv[1].split(",")
variants = sys.argv[2].split(",")  # full, pad50, pad100, pad200
beam = int(sys.argv[3]) if len(sys.argv)>3 else 5
for lang in langs:
    for v in variants:
        refs, hyps, t_all, dets = [], [], 0, 0
        for p in sorted(sets[lang]):
            a = load(p); feats = ext(a, padding=160); n = feats.shape[-1]
            if v == "full": L = 3000
            else: L = min(3000, n + int(v[3:].rstrip("rt")))
            L -= L % 2
            f = np.full((80, L), feats.min() if v=="full" else feats.min(), np.float32)
            # padding: features of silence -> compute from zeros
            f = ext(np.concatenate([a, np.zeros(max(0,(L*160)-len(a)), np.float32)]), padding=0)[:, :L] if v!="full" else ext(a, padding=480000)[:, :3000]
            sv = ctranslate2.StorageView.from_array(np.ascontiguousarray(f[None].astype(np.float32)))
            t = time.time()
            enc = m.encode(sv, to_cpu=False)
            d = dict(m.detect_language(enc)[0])
            other = "en" if lang != "en" else "es"
            dets += d.get(f"<|{lang}|>",0) > d.get(f"<|{other}|>",0)
            maxlen = 448 if v=="full" else min(448, int(len(a)/16000*10)+16)
            ts = v.endswith("t")
            prompt = ["<|startoftranscript|>", f"<|{lang}|>", "<|transcribe|>"] + ([] if ts else ["<|notimestamps|>"])
            r = m.generate(enc, [prompt], beam_size=beam, max_length=maxlen, return_scores=True, return_no_speech_prob=True)
            t_all += time.time()-t
            ids = r[0].sequences_ids[0]
            if ts:
                dur = len(a)/16000; keep=[]; tb = 50364
                for i in ids:
                    if i >= tb:
                        if (i-tb)*0.02 > dur - 0.3 and keep: break
                        continue
                    keep.append(i)
                ids = keep
            text = tok.decode(ids)
            if v.endswith("r") or v.endswith("t"):
                w = text.split()
                for s in range(1, len(w)):
                    k = min(3, len(w)-s)
                    if k >= 2 and [x.lower().strip(".,?!") for x in w[s:s+k]] == [x.lower().strip(".,?!") for x in w[:k]]:
                        w = w[:s]; break
                text = " ".join(w)
            ref = open(p[:-4]+".txt").read()
            refs.append(norm(ref, lang)); hyps.append(norm(text, lang))
            if len(sys.argv)>4: print(" ", os.path.basename(p), "|", text, "|", ref.strip())
        print(lang, v, "beam", beam, "WER %.1f%%" % (100*jiwer.wer(refs, hyps)), "time %.2fs/utt" % (t_all/len(refs)), "det %d/%d" % (dets, len(refs)), flush=True)
