#!/usr/bin/env python3
"""Translation quality of every route between Parley's languages, with Debian's Apertium pairs.

For each direction between en, es, fr, pt, it, ca and gl: the direct pair when one is installed,
and the pivots through Spanish and through Catalan when both legs are, scored with sacrebleu
(BLEU and chrF) against FLORES-101 devtest (1,012 sentences, the same sentence in every
language) and, for English and another language, Tatoeba (1,000 short everyday sentences).

Each leg runs `apertium -u PAIR` on the whole file (one sentence a line; the text format keeps
line breaks), as Parley's warm pipeline translates one turn. The second leg of a pivot
translates the first leg's output.

Usage: bench/routes.py [--text /work/shared/text] [--out out/routes.json] [--swift]
Needs sacrebleu from PyPI (`make bench` puts it in .build/bench-python). --swift prints the chrF table for
Sources/Translation/RouteMeasurements.swift.
"""
import argparse
import json
import os
import subprocess
import sys

LANGS = ["en", "es", "fr", "pt", "it", "ca", "gl"]
FLORES = {"en": "eng", "es": "spa", "fr": "fra", "pt": "por", "it": "ita", "ca": "cat", "gl": "glg"}
THREE = {"en": "eng", "es": "spa", "fr": "fra", "pt": "por", "it": "ita", "ca": "cat", "gl": "glg"}
TATOEBA = {"fr": "fra", "it": "ita", "pt": "por", "es": "spa"}
PIVOTS = ["es", "ca"]
MODES = "/usr/share/apertium/modes"


def mode(source, target):
    """The installed mode's name for a direction, as Parley finds it (three-letter codes first)."""
    for name in (f"{THREE[source]}-{THREE[target]}", f"{source}-{target}"):
        if os.path.exists(f"{MODES}/{name}.mode"):
            return name
    return None


def apertium(name, text):
    out = subprocess.run(["apertium", "-u", name], input=text, capture_output=True, text=True, check=True).stdout
    lines = out.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--text", default="/work/shared/text")
    parser.add_argument("--out", default=None)
    parser.add_argument("--swift", action="store_true")
    args = parser.parse_args()
    import sacrebleu  # noqa: PLC0415 (after --help works without it)

    def score(hyp, ref):
        return (round(sacrebleu.corpus_bleu(hyp, [ref]).score, 1), round(sacrebleu.corpus_chrf(hyp, [ref]).score, 1))

    def read(path):
        with open(path, encoding="utf-8") as f:
            return f.read().rstrip("\n").split("\n")

    corpora = {"flores": {lang: read(f"{args.text}/flores-devtest/{FLORES[lang]}.txt") for lang in LANGS}}
    legs = {}

    def leg(corpus, origin, source, target, text):
        # A leg's output, cached by (corpus, the text's origin, direction).
        key = (corpus, origin, source, target)
        if key not in legs:
            legs[key] = apertium(mode(source, target), "\n".join(text) + "\n")
        return legs[key]

    def routes(source, target):
        found = []
        if mode(source, target):
            found.append("direct")
        for pivot in PIVOTS:
            if pivot not in (source, target) and mode(source, pivot) and mode(pivot, target):
                found.append(f"via {pivot}")
        return found

    def run(corpus, source, target, src, ref):
        results = {}
        for route in routes(source, target):
            if route == "direct":
                hyp = leg(corpus, source, source, target, src)
            else:
                pivot = route.split()[1]
                middle = leg(corpus, source, source, pivot, src)
                hyp = leg(corpus, f"{source}>{pivot}", pivot, target, middle)
            assert len(hyp) == len(ref), f"{corpus} {source}-{target} {route}: {len(hyp)} lines for {len(ref)}"
            results[route] = score(hyp, ref)
        return results

    table = []
    for source in LANGS:
        for target in LANGS:
            if source == target:
                continue
            flores = run("flores", source, target, corpora["flores"][source], corpora["flores"][target])
            row = {"source": source, "target": target, "flores": flores}
            other = target if source == "en" else source if target == "en" else None
            if other in TATOEBA:
                code = TATOEBA[other]
                en = read(f"{args.text}/tatoeba/eng-{code}.eng")
                xx = read(f"{args.text}/tatoeba/eng-{code}.{code}")
                src, ref = (en, xx) if source == "en" else (xx, en)
                row["tatoeba"] = run(f"tatoeba-{code}", source, target, src, ref)
            table.append(row)
            print(f"{source}->{target}", json.dumps(row["flores"]), json.dumps(row.get("tatoeba", {})), file=sys.stderr, flush=True)

    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(table, f, indent=1)

    def cell(results, route):
        return "/".join(str(v) for v in results[route]) if route in results else ""

    print("| direction | direct | via es | via ca | Tatoeba direct | Tatoeba via es | Tatoeba via ca |")
    print("|---|---|---|---|---|---|---|")
    for row in table:
        f, t = row["flores"], row.get("tatoeba", {})
        if not f:
            continue
        print(f"| {row['source']}->{row['target']} | {cell(f, 'direct')} | {cell(f, 'via es')} | {cell(f, 'via ca')} "
              f"| {cell(t, 'direct')} | {cell(t, 'via es')} | {cell(t, 'via ca')} |")
    if args.swift:
        for row in table:
            for route, (_, chrf) in row["flores"].items():
                via = "nil" if route == "direct" else f'"{route.split()[1]}"'
                print(f'        .init("{row["source"]}", "{row["target"]}", via: {via}): {chrf},')


if __name__ == "__main__":
    main()
