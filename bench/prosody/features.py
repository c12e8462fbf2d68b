#!/usr/bin/env python3
"""Step 2: prosodic features just before each word boundary (causal: audio before the boundary only).

Pitch: YIN (difference function via FFT, CMND, threshold 0.30 (0.15 lost most voicing in the 64 kb/s LibriVox and cards audio), parabolic interpolation),
30 ms window, 10 ms hop, 60-400 Hz, on a 1 kHz low-passed signal; frames below
(95th-percentile level - 35 dB) are unvoiced; voiced runs < 3 frames dropped; 5-frame median.

Features at boundary time t (word end):
  f0_slope    st/s, least-squares slope of F0 (semitones) over the last 25 voiced frames
              (= 250 ms of voicing) found within [t-1.0 s, t)          END expected: lower
  f0_end      st, median F0 of the last 5 voiced frames before t, minus the recording's
              median F0                                                   END expected: lower
  lengthen    log2( (word duration / phones) / recording mean of (word duration / phones) )
                                                                          END expected: higher
  en_slope    dB/s, slope of frame level (25 ms RMS) over [t-0.2, t)     END expected: lower
  en_end      dB, mean level over [t-0.1, t) minus the recording's median speech level
                                                                          END expected: lower
  vfrac       share of 10 ms frames in [t-0.3, t) that are voiced (exploratory: final creak /
              devoicing)                                                  END expected: lower
Writes features.csv (one row per boundary) and extra.csv (named places, step 4).
"""
import csv, glob, json, os, re
import numpy as np
from scipy.io import wavfile
from scipy.signal import butter, sosfiltfilt
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

HERE = os.environ.get("PROSODY_OUT", ".")
SR = 16000
HOP = 160
SHIFT = 0.1  # features_shift.csv: same features measured on audio ending 100 ms before the boundary
FEATURES = ["f0_slope", "f0_end", "lengthen", "en_slope", "en_end", "vfrac"]
DIRECTION = {"f0_slope": -1, "f0_end": -1, "lengthen": +1, "en_slope": -1, "en_end": -1, "vfrac": -1}
FUNC = {
    "en": set("a an the and or but nor so to of in on at for with from by as than that not have has had "
              "be been is was were am are he she it i we you they his her its their my your there how "
              "might may will would can could should more rather".split()),
    "es": set("a al de del la el los las lo un una unos unas y e o u que en por para con sin sobre "
              "como se su sus mi este esta no".split()),
}


def load(path):
    if path.endswith(".raw"):
        x = np.fromfile(path, dtype="<i2").astype(np.float64)
    else:
        sr, x = wavfile.read(path)
        assert sr == SR, (path, sr)
        x = x.astype(np.float64)
        if x.ndim > 1:
            x = x[:, 0]
    return x / 32768.0


def frames(x, length):
    n = 1 + max(0, (len(x) - length) // HOP)
    x = np.concatenate([x, np.zeros(length)])
    idx = np.arange(length)[None, :] + HOP * np.arange(n)[:, None]
    return x[idx]


def level_db(x):
    """25 ms RMS level, frame i centred at i*10 ms + 12.5 ms."""
    f = frames(x, 400)
    db = 10 * np.log10(np.mean(f ** 2, axis=1) + 1e-10)
    t = np.arange(len(db)) * HOP / SR + 0.0125
    return t, db


def yin(x, fmin=60.0, fmax=400.0, W=480, thr=0.30):
    tmin, tmax = int(SR / fmax), int(SR / fmin) + 1
    xl = sosfiltfilt(butter(4, 1000, fs=SR, output="sos"), x)
    fr = frames(xl, W + tmax)
    N = 1024
    X = np.fft.rfft(fr, N)
    Y = np.fft.rfft(fr[:, :W], N)
    r = np.fft.irfft(X * np.conj(Y), N)[:, :tmax + 1]
    sq = np.cumsum(np.concatenate([np.zeros((len(fr), 1)), fr ** 2], axis=1), axis=1)
    e0 = sq[:, W]
    etau = sq[:, W:W + tmax + 1] - sq[:, :tmax + 1]
    d = e0[:, None] + etau - 2 * r
    d[:, 0] = 0
    cm = np.cumsum(d[:, 1:], axis=1)
    cmnd = np.ones_like(d)
    cmnd[:, 1:] = d[:, 1:] * np.arange(1, tmax + 1) / np.maximum(cm, 1e-12)
    f0 = np.full(len(fr), np.nan)
    for i in range(len(fr)):
        c = cmnd[i]
        below = np.where(c[tmin:tmax] < thr)[0]
        if len(below) == 0:
            continue
        k = below[0] + tmin
        while k + 1 < tmax and c[k + 1] < c[k]:
            k += 1
        a, b, g = c[k - 1], c[k], c[k + 1]
        den = a - 2 * b + g
        off = 0.5 * (a - g) / den if abs(den) > 1e-12 else 0.0
        f0[i] = SR / (k + off)
    # level gate (frame centred like YIN's analysis window start + W/2)
    db = 10 * np.log10(np.mean(fr[:, :W] ** 2, axis=1) + 1e-10)
    f0[db < np.percentile(db, 95) - 35] = np.nan
    # drop voiced runs shorter than 3 frames, 5-frame median filter inside runs
    v = ~np.isnan(f0)
    out = np.full_like(f0, np.nan)
    i = 0
    while i < len(f0):
        if v[i]:
            j = i
            while j < len(f0) and v[j]:
                j += 1
            if j - i >= 3:
                seg = f0[i:j]
                for k in range(i, j):
                    out[k] = np.median(seg[max(0, k - i - 2):k - i + 3])
            i = j
        else:
            i += 1
    t = np.arange(len(f0)) * HOP / SR + W / 2 / SR
    return t, out


def slope(t, y):
    if len(t) < 3 or np.ptp(t) <= 0:
        return np.nan
    return np.polyfit(t, y, 1)[0]


class Rec:
    def __init__(self, path):
        self.x = load(path)
        self.ft, f0 = yin(self.x)
        self.st = 12 * np.log2(f0 / 100.0)  # semitones re 100 Hz
        self.med_st = np.nanmedian(self.st)
        self.lt, self.db = level_db(self.x)
        self.speech_db = np.median(self.db[self.db > np.percentile(self.db, 95) - 35])

    def feats(self, tb):
        m = (self.ft < tb) & (self.ft >= tb - 1.0) & ~np.isnan(self.st)
        tv, sv = self.ft[m][-25:], self.st[m][-25:]
        f = {}
        f["f0_slope"] = slope(tv, sv) if len(tv) >= 8 else np.nan
        f["f0_end"] = np.median(sv[-5:]) - self.med_st if len(sv) >= 3 else np.nan
        m = (self.lt < tb) & (self.lt >= tb - 0.2)
        f["en_slope"] = slope(self.lt[m], self.db[m])
        m = (self.lt < tb) & (self.lt >= tb - 0.1)
        f["en_end"] = np.mean(self.db[m]) - self.speech_db
        m = (self.ft < tb) & (self.ft >= tb - 0.3)
        f["vfrac"] = np.mean(~np.isnan(self.st[m])) if m.any() else np.nan
        return f


def load_dict(rid):
    d = {}
    for line in open(os.path.join(HERE, "align", rid + ".dict"), encoding="utf-8"):
        parts = line.split()
        if parts:
            d[parts[0]] = len(parts) - 1
    return d


def is_word(w):
    return not (w.startswith("<") or w.startswith("[") or w.startswith("++"))


def main():
    rows, extra, shifted = [], [], []
    thinking = [l.split() for l in open(os.path.join(REPO, "Tests/data/thinking-pauses.txt"))
                if l.strip() and not l.startswith("#")]
    for jp in sorted(glob.glob(os.path.join(HERE, "align", "*.json"))):
        r = json.load(open(jp))
        rec = Rec(r["wav"])
        ndict = load_dict(r["id"])
        seq = r["fa"]
        words = [(i, w) for i, w in enumerate(seq) if is_word(w[0])]
        perph = [(e - s) / ndict.get(w, max(1, len(re.sub(r"\(\d+\)", "", w)))) for _, (w, s, e) in words]
        mean_pp = np.mean(perph)
        for k, (i, (w, s, e)) in enumerate(words):
            base = re.sub(r"\(\d+\)$", "", w)
            last = k == len(words) - 1
            nxt = words[k + 1][1][1] if not last else None
            row = dict(rec=r["id"], lang=r["lang"], idx=k, word=base, start=s, end=e,
                       label="END" if last else "INTERNAL",
                       func=int(base in FUNC[r["lang"]]),
                       pause_after=round(nxt - e, 3) if nxt is not None else "",
                       lengthen=np.log2(perph[k] / mean_pp))
            row.update(rec.feats(e))
            rows.append(row)
            srow = dict(row)
            srow.update(rec.feats(e - SHIFT))
            shifted.append(srow)
        # step 4: named places
        rid = r["id"].replace("lv-", "")
        for tr in thinking:
            if tr[0] == rid:
                t = float(tr[1])
                k = min(range(len(words)), key=lambda k: abs(words[k][1][2] - t))
                w_, s_, e_ = words[k][1]
                nph = ndict.get(w_, 1)
                row = dict(place=f"thinking {rid} '{tr[2]}' @{t:.2f}s (bench time)", rec=r["id"],
                           word=tr[2], t=t, lengthen=np.log2(((t - s_) / nph) / mean_pp))
                row.update(rec.feats(t))
                extra.append(row)
                if abs(words[k][1][2] - t) > 0.02:
                    row = dict(place=f"thinking {rid} '{tr[2]}' @{words[k][1][2]:.2f}s (forced-align end)",
                               rec=r["id"], word=tr[2], t=words[k][1][2], lengthen=np.log2(perph[k] / mean_pp))
                    row.update(rec.feats(words[k][1][2]))
                    extra.append(row)
        if rid in ("0870", "0890"):
            lm = [w for w in r["lm"] if is_word(w[0])]
            w, s, e = lm[-1]
            row = dict(place=f"END {rid} (recognized '{lm[-2][0]} {w}', said '{' '.join(r['transcript'][-2:])}') @{e:.2f}s",
                       rec=r["id"], word=w, t=e, lengthen=rows[-1]["lengthen"])
            row.update(rec.feats(e))
            extra.append(row)
    cols = ["rec", "lang", "idx", "word", "start", "end", "label", "func", "pause_after"] + FEATURES
    for name, rr in (("features.csv", rows), ("features_shift.csv", shifted)):
        with open(os.path.join(HERE, name), "w", newline="") as f:
            wr = csv.DictWriter(f, cols, extrasaction="ignore")
            wr.writeheader()
            for row in rr:
                wr.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in row.items()})
    with open(os.path.join(HERE, "extra.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, ["place", "rec", "word", "t"] + FEATURES, extrasaction="ignore")
        wr.writeheader()
        for row in extra:
            wr.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in row.items()})
    print(len(rows), "boundaries;", len(extra), "named places")


if __name__ == "__main__":
    main()
