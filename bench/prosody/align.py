#!/usr/bin/env python3
"""Step 1: word boundaries for every recording.

For each recording runs pocketsphinx_continuous -time yes twice:
  * 'lm'  : free recognition with the normal LM (what Parley sees),
  * 'fa'  : forced alignment = a linear FSG built from the transcript (fillers/silence
            allowed between words by pocketsphinx), with a small dict of the transcript words.
Writes align/<id>.json  {id, lang, wav, transcript, lm:[[w,s,e]], fa:[[w,s,e]]}
Times: pocketsphinx prints the start of the last frame; word end = printed end + 0.01 s.
"""
import json, os, re, subprocess, sys
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

OUT = os.path.join(os.environ.get("PROSODY_OUT", "."), "align")
PS = "/usr/share/pocketsphinx/test/data"
ENM = "/usr/share/pocketsphinx/model/en-us"
ESM = os.path.join(REPO, "models/es")
EN = dict(hmm=f"{ENM}/en-us", lm=f"{ENM}/en-us.lm.bin", dict=f"{ENM}/cmudict-en-us.dict")
ES = dict(hmm=f"{ESM}/acoustic", lm=f"{ESM}/es.lm.bin", dict=f"{ESM}/es.dict")
# pronunciations for Spanish transcript words missing from es.dict (letter-like phone set)
ES_EXTRA = {
    "uniformados": "u n i f o r m a d o s", "agrupábanse": "a g r u p a b a n s e",
    "germanos": "j e r m a n o s", "rectángulos": "rr e k t a n g u l o s",
    "movíase": "m o b i a s e", "balanceo": "b a l a n z e o",
    "acompañándola": "a k o m p a gn a n d o l a",
}


def recordings():
    recs = []
    # LibriVox: transcript has no punctuation -> only last word is END
    for line in open(f"{PS}/librivox/transcription"):
        m = re.match(r"<s>(.*)</s>\s*\((\S+)\)", line.strip())
        rid = m.group(2)
        recs.append(dict(id="lv-" + rid[-4:], lang="en", wav=f"{PS}/librivox/{rid}.wav",
                         transcript=m.group(1).split()))
    recs.append(dict(id="goforward", lang="en", wav=f"{PS}/goforward.raw",
                     transcript="go forward ten meters".split()))
    for line in open(f"{PS}/cards/cards.transcription"):
        m = re.match(r"<s>(.*)</s>\s*\((\S+)\)", line.strip())
        recs.append(dict(id="cards-" + m.group(2), lang="en", wav=f"{PS}/cards/{m.group(2)}.wav",
                         transcript=m.group(1).split()))
    # transcript from the file name (tidigits 2934z)
    recs.append(dict(id="tidigits-2934z", lang="en", wav=f"{PS}/tidigits/dhd.2934z.raw",
                     transcript="two nine three four zero".split()))
    # no transcript file: the recognizer output, which is plausible
    recs.append(dict(id="something", lang="en", wav=f"{PS}/something.raw",
                     transcript="go somewhere and do something".split(),
                     note="transcript = recognizer output"))
    vf = os.path.join(REPO, "Tests/data/es/voxforge")
    for f in sorted(os.listdir(vf)):
        if f.startswith("es-") and f.endswith(".txt"):
            words = open(f"{vf}/{f}").read().split()
            words = " ".join(words).replace("ventanacon", "ventana con").split()  # typo
            recs.append(dict(id=f[:-4], lang="es", wav=f"{vf}/{f[:-4]}.wav", transcript=words))
    return recs


def parse_time(out):
    words = []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4:
            try:
                s, e = float(p[1]), float(p[2])
            except ValueError:
                continue
            words.append([p[0], s, round(e + 0.01, 3)])
    return words


def run(args):
    r = subprocess.run(["pocketsphinx_continuous", "-logfn", "/dev/null", "-time", "yes"] + args,
                       capture_output=True, text=True)
    return parse_time(r.stdout)


def small_dict(words, full, extra, path):
    need = set(words)
    with open(path, "w") as out:
        for line in open(full, encoding="utf-8", errors="replace"):
            w = line.split(" ", 1)[0].split("\t", 1)[0]
            base = re.sub(r"\(\d+\)$", "", w)
            if base in need:
                out.write(line)
        for w, pron in extra.items():
            if w in words:
                out.write(f"{w} {pron}\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    for r in recordings():
        dst = f"{OUT}/{r['id']}.json"
        if os.path.exists(dst) and "-f" not in sys.argv:
            continue
        m = EN if r["lang"] == "en" else ES
        r["lm"] = run(["-hmm", m["hmm"], "-lm", m["lm"], "-dict", m["dict"], "-infile", r["wav"]])
        tw = r["transcript"]
        fsg, dic = f"{OUT}/{r['id']}.fsg", f"{OUT}/{r['id']}.dict"
        with open(fsg, "w") as f:
            f.write(f"FSG_BEGIN g\nNUM_STATES {len(tw)+1}\nSTART_STATE 0\nFINAL_STATE {len(tw)}\n")
            for i, w in enumerate(tw):
                f.write(f"TRANSITION {i} {i+1} 1.0 {w}\n")
            f.write("FSG_END\n")
        small_dict(tw, m["dict"], ES_EXTRA if r["lang"] == "es" else {}, dic)
        r["fa"] = run(["-hmm", m["hmm"], "-fsg", fsg, "-dict", dic, "-infile", r["wav"]])
        json.dump(r, open(dst, "w"), ensure_ascii=False, indent=0)
        fa = [w for w in r["fa"] if not w[0].startswith(("<", "["))]
        print(r["id"], "lm:", " ".join(w[0] for w in r["lm"] if not w[0].startswith(("<", "["))))
        print(r["id"], "fa: %d/%d words" % (len(fa), len(tw)), flush=True)


if __name__ == "__main__":
    main()
