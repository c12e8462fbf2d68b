#!/usr/bin/env python3
"""Step 3/4: how well each feature separates END from INTERNAL boundaries. Writes results.md.

Each feature is oriented in its a-priori direction (score = DIRECTION * value, higher = more
END-like; missing value -> 0 = neutral). AUC = Mann-Whitney (ties 1/2); 95% CI by bootstrap
over recordings (2000 resamples). 'catch@5%' / 'catch@1%': share of ENDs whose score is above
the threshold at which at most 5% / 1% of the INTERNAL boundaries are above it (threshold set
on the same data = optimistic). LR = L2-regularised logistic regression (lambda=1 on
standardised features) over the 5 pre-declared features, leave-one-recording-out: every score
comes from a model that never saw that recording.
"""
import csv, glob, json, os, re
import numpy as np
from features import FEATURES, DIRECTION

HERE = os.environ.get("PROSODY_OUT", ".")
LR_FEATS = ["f0_slope", "f0_end", "lengthen", "en_slope", "en_end"]
rng = np.random.default_rng(0)


def load(name="features.csv"):
    rows = list(csv.DictReader(open(os.path.join(HERE, name))))
    for r in rows:
        for f in FEATURES:
            r[f] = float(r[f]) if r[f] not in ("", "nan") else np.nan
        r["y"] = int(r["label"] == "END")
        r["func"] = int(r["func"])
        r["pause_after"] = float(r["pause_after"]) if r["pause_after"] else np.nan
    return rows


def auc(pos, neg):
    if len(pos) == 0 or len(neg) == 0:
        return np.nan
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(np.mean((p > n) + 0.5 * (p == n)))


def catch(pos, neg, alpha):
    neg = np.sort(np.asarray(neg))[::-1]
    k = int(np.floor(alpha * len(neg)))  # at most k internals may be above the threshold
    thr = neg[k] if k < len(neg) else -np.inf  # strictly above the (k+1)-th highest internal
    return float(np.mean(np.asarray(pos) > thr)), thr


def boot_ci(score, y, rec, n=2000):
    recs = sorted(set(rec))
    idx = {r: np.where(rec == r)[0] for r in recs}
    vals = []
    for _ in range(n):
        pick = np.concatenate([idx[r] for r in rng.choice(recs, len(recs))])
        a = auc(score[pick][y[pick] == 1], score[pick][y[pick] == 0])
        if not np.isnan(a):
            vals.append(a)
    return np.percentile(vals, [2.5, 97.5])


def fit_lr(X, y, lam=1.0, iters=50):
    Xb = np.hstack([np.ones((len(X), 1)), X])
    w = np.zeros(Xb.shape[1])
    R = lam * np.eye(Xb.shape[1]); R[0, 0] = 0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-Xb @ w))
        g = Xb.T @ (p - y) + R @ w
        H = Xb.T @ (Xb * (p * (1 - p))[:, None]) + R
        w -= np.linalg.solve(H, g)
    return w


def lr_model(train):
    X = np.array([[r[f] for f in LR_FEATS] for r in train])
    med = np.nanmedian(X, axis=0)
    X = np.where(np.isnan(X), med, X)
    mu, sd = X.mean(0), X.std(0) + 1e-9
    w = fit_lr((X - mu) / sd, np.array([r["y"] for r in train], float))

    def score(r):
        x = np.array([r[f] for f in LR_FEATS])
        x = np.where(np.isnan(x), med, x)
        return float(np.r_[1, (x - mu) / sd] @ w)
    return score, w / np.r_[1, sd]


def loro_scores(rows):
    out = {}
    for rec in sorted(set(r["rec"] for r in rows)):
        score, _ = lr_model([r for r in rows if r["rec"] != rec])
        for r in rows:
            if r["rec"] == rec:
                out[id(r)] = score(r)
    return out


def table(rows, lr, title, neg_filter, lines):
    ends = [r for r in rows if r["y"] == 1]
    negs = [r for r in rows if r["y"] == 0 and neg_filter(r)]
    sel = ends + negs
    lines.append(f"\n**{title}** — END n={len(ends)} ({len(set(r['rec'] for r in ends))} recordings), "
                 f"INTERNAL n={len(negs)}\n")
    lines.append("| feature | AUC | 95% CI (rec. bootstrap) | catch@5% FP | thr@5% | catch@1% FP | thr@1% | END median | INT median |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    y = np.array([r["y"] for r in sel]); rec = np.array([r["rec"] for r in sel])
    for f in FEATURES + ["LR (LORO-CV)"]:
        if f in DIRECTION:
            raw = np.array([r[f] for r in sel])
            s = np.where(np.isnan(raw), 0.0, DIRECTION[f] * raw)
            d = DIRECTION[f]
        else:
            s = np.array([lr[id(r)] for r in sel]); raw = s; d = 1
        a = auc(s[y == 1], s[y == 0])
        lo, hi = boot_ci(s, y, rec)
        c5, t5 = catch(s[y == 1], s[y == 0], 0.05)
        c1, t1 = catch(s[y == 1], s[y == 0], 0.01)
        name = f + ("" if f not in DIRECTION else (" (↓ = end)" if d < 0 else " (↑ = end)"))
        lines.append(f"| {name} | {a:.2f} | {lo:.2f}–{hi:.2f} | {c5*100:.0f}% | {d*t5:.2f} | {c1*100:.0f}% | {d*t1:.2f} | "
                     f"{np.nanmedian(raw[y==1]):.2f} | {np.nanmedian(raw[y==0]):.2f} |")


def compact(rows, lr, lines):
    """one line per feature: AUC [CI] and catch@5/1% for all internal and function-word internal."""
    lines.append("| feature | AUC all-int [95% CI] | catch @5% / @1% FP | AUC func-word-int [95% CI] | catch @5% / @1% FP |")
    lines.append("|---|---|---|---|---|")
    for f in FEATURES + ["LR (LORO-CV)"]:
        cells = []
        for flt in (lambda r: True, lambda r: r["func"] == 1):
            sel = [r for r in rows if r["y"] == 1 or flt(r)]
            y = np.array([r["y"] for r in sel]); rec = np.array([r["rec"] for r in sel])
            if f in DIRECTION:
                s = np.array([0.0 if np.isnan(r[f]) else DIRECTION[f] * r[f] for r in sel])
            else:
                s = np.array([lr[id(r)] for r in sel])
            lo, hi = boot_ci(s, y, rec)
            c5, _ = catch(s[y == 1], s[y == 0], 0.05); c1, _ = catch(s[y == 1], s[y == 0], 0.01)
            cells += [f"{auc(s[y == 1], s[y == 0]):.2f} [{lo:.2f}-{hi:.2f}]",
                      f"{round(c5 * sum(y))}/{sum(y)} / {round(c1 * sum(y))}/{sum(y)}"]
        lines.append(f"| {f} | " + " | ".join(cells) + " |")


def main():
    rows = load()
    comp = []
    for lang, name in (("en", "English"), ("es", "Spanish")):
        sub = [r for r in rows if r["lang"] == lang]
        n_int = sum(1 for r in sub if r["y"] == 0); n_f = sum(1 for r in sub if r["y"] == 0 and r["func"])
        comp.append(f"\n{name}: END {sum(r['y'] for r in sub)}, INTERNAL {n_int} (after function words {n_f})\n")
        compact(sub, loro_scores(sub), comp)
    open(os.path.join(HERE, "compact.md"), "w").write("\n".join(comp) + "\n")
    lines = ["# Results (generated by evaluate.py)",
             "thr = raw feature value of the threshold (END side: below it for ↓ features, above it for ↑ "
             "features; LR: logit). Missing F0 values: "
             + ", ".join(f"{f} {sum(np.isnan(r[f]) for r in rows)}" for f in FEATURES)]
    for lang, name in (("en", "English"), ("es", "Spanish"), (None, "English + Spanish pooled")):
        sub = [r for r in rows if lang is None or r["lang"] == lang]
        lr = loro_scores(sub)
        lines.append(f"\n## {name}")
        table(sub, lr, "All internal boundaries", lambda r: True, lines)
        table(sub, lr, "Internal after function words (thinking-pause places)", lambda r: r["func"] == 1, lines)
        table(sub, lr, "Internal boundaries followed by a real pause >= 100 ms", lambda r: r["pause_after"] >= 0.1, lines)
        _, w = lr_model(sub)
        lines.append("\nLR fitted on all " + name + " data, weights per raw unit: intercept %.2f, " % w[0]
                     + ", ".join(f"{f} {v:+.3f}" for f, v in zip(LR_FEATS, w[1:])))
    # recognition quality of the free LM decode (what Parley sees) vs the transcript
    lines.append("\n## Recognition (free LM decode) vs transcript; forced alignment aligned all words\n")
    lines.append("| language | recordings | words | WER | last word right | last-word end, LM vs FA: median / max abs diff |")
    lines.append("|---|---|---|---|---|---|")
    for lang in ("en", "es"):
        nw = ne = nrec = lastok = 0
        dends = []
        for jp in sorted(glob.glob(os.path.join(HERE, "align", "*.json"))):
            r = json.load(open(jp))
            if r["lang"] != lang:
                continue
            hyp = [re.sub(r"\(\d+\)$", "", w[0]) for w in r["lm"] if w[0][0] not in "<[+"]
            ref = r["transcript"]
            ends = [w[2] for w in r["lm"] if w[0][0] not in "<[+"], [w[2] for w in r["fa"] if w[0][0] not in "<[+"]
            dends.append(abs(ends[0][-1] - ends[1][-1]))
            d = np.arange(len(hyp) + 1)
            for i, rw in enumerate(ref, 1):
                prev, d = d, np.empty_like(d)
                d[0] = i
                for j, hw in enumerate(hyp, 1):
                    d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (rw != hw))
            nw += len(ref); ne += d[-1]; nrec += 1; lastok += int(bool(hyp) and hyp[-1] == ref[-1])
        lines.append(f"| {lang} | {nrec} | {nw} | {ne / nw * 100:.0f}% | {lastok}/{nrec} | {np.median(dends)*1000:.0f} / {max(dends)*1000:.0f} ms |")
    # leakage check: features measured on audio ending 100 ms before the boundary
    sh = load("features_shift.csv")
    lines.append("\n## Check: AUC (all internal) when the features stop 100 ms before the word end\n")
    lines.append("| feature | EN at end | EN -100 ms | ES at end | ES -100 ms |")
    lines.append("|---|---|---|---|---|")
    for f in FEATURES:
        cells = []
        for lang in ("en", "es"):
            for src in (rows, sh):
                sub = [r for r in src if r["lang"] == lang]
                s = np.array([0.0 if np.isnan(r[f]) else DIRECTION[f] * r[f] for r in sub])
                y = np.array([r["y"] for r in sub])
                cells.append(f"{auc(s[y == 1], s[y == 0]):.2f}")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    # boundaries followed by a real pause, with LORO LR scores
    lines.append("\n## Internal boundaries followed by a pause >= 100 ms (FA), LR logit from LORO-CV\n")
    lines.append("| rec | word | pause s | " + " | ".join(FEATURES) + " | LR logit |")
    lines.append("|---|---|---|" + "---|" * (len(FEATURES) + 1))
    for lang in ("en", "es"):
        sub = [r for r in rows if r["lang"] == lang]
        lr = loro_scores(sub)
        for r in sub:
            if r["y"] == 0 and r["pause_after"] >= 0.1:
                lines.append(f"| {r['rec']} | {r['word']} | {r['pause_after']:.2f} | "
                             + " | ".join(f"{r[f]:.2f}" for f in FEATURES) + f" | {lr[id(r)]:.2f} |")
    # step 4: named places, with the LORO LR score of their recording's language model
    ex = list(csv.DictReader(open(os.path.join(HERE, "extra.csv"))))
    en = [r for r in rows if r["lang"] == "en"]
    lines.append("\n## Named places (English LR trained without the place's recording)\n")
    lines.append("| place | " + " | ".join(FEATURES) + " | LR logit |")
    lines.append("|---|" + "---|" * (len(FEATURES) + 1))
    for e in ex:
        for f in FEATURES:
            e[f] = float(e[f]) if e[f] not in ("", "nan") else np.nan
        score, _ = lr_model([r for r in en if r["rec"] != e["rec"]])
        lines.append(f"| {e['place']} | " + " | ".join(f"{e[f]:.2f}" for f in FEATURES) + f" | {score(e):.2f} |")
    open(os.path.join(HERE, "results.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
