#!/usr/bin/env python3
"""Translation quality of every route between Parley's languages: Debian's Apertium pairs and
Bergamot's models.

For each direction between en, es, fr, pt, it, ca and gl, the routes Parley's RoutePlanner
considers (Sources/Translation/RoutePlanner.swift):
- Apertium: the direct pair when one is installed, and the pivots through Spanish and through
  Catalan when both legs are;
- Bergamot (the models `make engines` installs in .build/engines/bergamot/models: en-pt,
  pt-en): its own model for the direction, and its model at one end joined to an Apertium route
  (direct or through one pivot) for the rest ("bergamot en-pt + apertium pt-es"); no route
  visits a language twice.
Each is scored with sacrebleu (BLEU and chrF) against FLORES-101 devtest (1,012 sentences, the
same sentence in every language) and, for English and another language, Tatoeba (1,000 short
everyday sentences).

Each Apertium leg runs `apertium -u PAIR` on the whole file (one sentence a line; the text format
keeps line breaks), as Parley's warm pipeline translates one turn. Each Bergamot leg sends the
sentences one at a time to the translation worker, libexec/parley-bergamot, as parleyd does.
The next leg of a route translates the previous leg's output.

Usage: bench/routes.py [--text /work/shared/text] [--engines .build/engines] [--out out/routes.json] [--swift]
Needs sacrebleu from PyPI (`make bench` puts it in .build/bench-python). --swift prints the chrF table for
Sources/Translation/RouteMeasurements.swift. Without Bergamot's models, Apertium's routes alone.
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
HERE = os.path.dirname(os.path.abspath(__file__))


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


class Bergamot:
    """The translation worker, started once; a sentence a request."""

    def __init__(self, engines):
        folder = os.path.join(engines, "bergamot")
        self.models = os.path.join(folder, "models")
        self.worker = None
        if os.path.isdir(self.models):
            self.worker = subprocess.Popen(
                ["/usr/bin/python3", os.path.join(HERE, "..", "libexec", "parley-bergamot"), "--models", self.models,
                 "--python-path", os.path.join(folder, "python")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")
            self.pairs = {(p["from"], p["to"]) for p in self.ask({"type": "describe"})["pairs"]}
        else:
            self.pairs = set()

    def ask(self, request):
        self.worker.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        self.worker.stdin.flush()
        return json.loads(self.worker.stdout.readline())

    def has(self, source, target):
        return (source, target) in self.pairs

    def translate(self, source, target, lines):
        out = []
        for line in lines:
            answer = self.ask({"type": "translate", "text": line, "from": source, "to": target})
            if answer["type"] != "translation":
                raise RuntimeError(f"bergamot {source}-{target}: {answer}")
            out.append(answer["text"].replace("\n", " "))
        return out


def apertium_routes(source, target):
    """Apertium's routes, as lists of (engine, source, target) legs: direct, then each pivot."""
    found = []
    if mode(source, target):
        found.append([("apertium", source, target)])
    for pivot in PIVOTS:
        if pivot not in (source, target) and mode(source, pivot) and mode(pivot, target):
            found.append([("apertium", source, pivot), ("apertium", pivot, target)])
    return found


def all_routes(source, target, bergamot):
    """Every route RoutePlanner considers for the direction."""
    found = apertium_routes(source, target)
    if bergamot.has(source, target):
        found.append([("bergamot", source, target)])
    for middle in LANGS:
        if middle in (source, target):
            continue
        if bergamot.has(source, middle):
            found += [[("bergamot", source, middle)] + rest for rest in apertium_routes(middle, target)]
        if bergamot.has(middle, target):
            found += [rest + [("bergamot", middle, target)] for rest in apertium_routes(source, middle)]
    # No language twice.
    return [r for r in found if len({r[0][1]} | {leg[2] for leg in r}) == len(r) + 1]


def name(route):
    """As Parley names it: "direct" or "via es" for Apertium alone, else each leg."""
    if all(leg[0] == "apertium" for leg in route) and len(route) <= 2:
        return "direct" if len(route) == 1 else f"via {route[0][2]}"
    return " + ".join(f"{engine} {s}-{t}" for engine, s, t in route)


def swift(route):
    """The route as RouteMeasurements writes it."""
    if all(leg[0] == "apertium" for leg in route) and len(route) <= 2:
        via = "nil" if len(route) == 1 else f'"{route[0][2]}"'
        return f'.init("{route[0][1]}", "{route[-1][2]}", via: {via})'
    return ".init(" + ", ".join(f'.{engine}("{s}", "{t}")' for engine, s, t in route) + ")"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--text", default="/work/shared/text")
    parser.add_argument("--engines", default=os.path.join(HERE, "..", ".build", "engines"))
    parser.add_argument("--out", default=None)
    parser.add_argument("--swift", action="store_true")
    args = parser.parse_args()
    import sacrebleu  # noqa: PLC0415 (after --help works without it)

    def score(hyp, ref):
        return (round(sacrebleu.corpus_bleu(hyp, [ref]).score, 1), round(sacrebleu.corpus_chrf(hyp, [ref]).score, 1))

    def read(path):
        with open(path, encoding="utf-8") as f:
            return f.read().rstrip("\n").split("\n")

    bergamot = Bergamot(args.engines)
    print(f"Bergamot directions: {sorted(bergamot.pairs) or 'none'}", file=sys.stderr, flush=True)
    corpora = {"flores": {lang: read(f"{args.text}/flores-devtest/{FLORES[lang]}.txt") for lang in LANGS}}
    legs = {}

    def leg(corpus, origin, engine, source, target, text):
        # A leg's output, cached by (corpus, the text's origin, engine, direction).
        key = (corpus, origin, engine, source, target)
        if key not in legs:
            if engine == "apertium":
                legs[key] = apertium(mode(source, target), "\n".join(text) + "\n")
            else:
                legs[key] = bergamot.translate(source, target, text)
        return legs[key]

    def run(corpus, source, target, src, ref):
        results = {}
        for route in all_routes(source, target, bergamot):
            hyp, origin = src, source
            for engine, s, t in route:
                hyp = leg(corpus, origin, engine, s, t, hyp)
                origin = f"{origin}>{engine}:{t}"
            assert len(hyp) == len(ref), f"{corpus} {source}-{target} {name(route)}: {len(hyp)} lines for {len(ref)}"
            results[name(route)] = {"scores": score(hyp, ref), "swift": swift(route)}
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
            print(f"{source}->{target}", json.dumps({k: v["scores"] for k, v in row["flores"].items()}),
                  json.dumps({k: v["scores"] for k, v in row.get("tatoeba", {}).items()}), file=sys.stderr, flush=True)

    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(table, f, indent=1)

    def cell(results, route):
        return "/".join(str(v) for v in results[route]["scores"]) if route in results else ""

    print("| direction | direct | via es | via ca | Tatoeba direct | Tatoeba via es | Tatoeba via ca |")
    print("|---|---|---|---|---|---|---|")
    for row in table:
        f, t = row["flores"], row.get("tatoeba", {})
        if not any(k in f for k in ("direct", "via es", "via ca")):
            continue
        print(f"| {row['source']}->{row['target']} | {cell(f, 'direct')} | {cell(f, 'via es')} | {cell(f, 'via ca')} "
              f"| {cell(t, 'direct')} | {cell(t, 'via es')} | {cell(t, 'via ca')} |")
    print()
    print("| direction | route with Bergamot | FLORES BLEU / chrF | Tatoeba BLEU / chrF |")
    print("|---|---|---|---|")
    for row in table:
        for route, result in row["flores"].items():
            if "bergamot" in route:
                print(f"| {row['source']}->{row['target']} | {route} | {cell(row['flores'], route)} | {cell(row.get('tatoeba', {}), route)} |")
    if args.swift:
        for row in table:
            for route, result in row["flores"].items():
                print(f'        {result["swift"]}: {result["scores"][1]},')
    if bergamot.worker:
        bergamot.worker.stdin.close()
        bergamot.worker.wait()


if __name__ == "__main__":
    main()
