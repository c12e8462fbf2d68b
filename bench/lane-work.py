#!/usr/bin/env python3
"""How much audio the streaming lanes decode, against the audio there is (issue 36, session 51).

When the person goes on after a pause whose end was decided, the end is withdrawn and the
utterance goes on. Until session 51 the lanes (PocketSphinx, one per language in auto mode) were
then fed the whole utterance again from its start; since, they go on from where they were. What
they decode twice is work a slow processor (a Pi) does while the person speaks on, and a lane that
falls behind holds the next end back.

Every recording of ../shared/speech in English (native and non-native) and Spanish goes through
parleyd's file mode as shipped (auto mode, English and Spanish, the accurate engines), 0.5 s of
silence before and 2 s after. From parleyd's own log ("recognition used X s of CPU for Y s of
speech", one line per lane at exit) it reports, per language of the recording: the audio each
lane was fed against the recording's length with its padding, the lanes' CPU, and the turns'
first words.

Usage: bench/lane-work.py BIN_DIR [ENGINES]   (a release build: make release)
Only some languages: LANGUAGES=es bench/lane-work.py ...; per-recording lines go to stderr.
"""
import os
import re
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

ears.SETS.append(("en", "nonnative", "en-nonnative"))
LANGUAGES = os.environ.get("LANGUAGES", "en,es").split(",")
BEFORE, AFTER = 0.5, 2.0
COST = re.compile(r"recognition used ([0-9.]+) s of CPU for ([0-9.]+) s of speech")


def main():
    bin_dir, engines = ears.bin_and_engines(__doc__)
    work = tempfile.mkdtemp(prefix="lane-work-")
    config = f"{work}/parley.toml"
    ears.write_config(config, work, mode="auto", transcriber=(engines, ""))
    totals = {}
    for lang, source, wav, _ in ears.recordings():
        if lang not in LANGUAGES:
            continue
        audio = ears.seconds(wav) + BEFORE + AFTER
        turns, log = ears.run_parleyd(bin_dir, config, work, ears.padded(wav, f"{work}/in.raw", BEFORE, AFTER))
        lanes = [(float(cpu), float(fed)) for cpu, fed in COST.findall(log)]
        fed = max((f for _, f in lanes), default=0.0)
        cpu = sum(c for c, _ in lanes)
        total = totals.setdefault(f"{lang} {source}", {"recordings": 0, "audio": 0.0, "fed": 0.0, "cpu": 0.0, "twice": 0})
        total["recordings"] += 1
        total["audio"] += audio
        total["fed"] += fed
        total["cpu"] += cpu
        total["twice"] += fed > audio + 0.05
        print(f"{lang} {os.path.basename(wav)[:-4]:40} {audio:5.1f} s, each lane fed {fed:5.1f} s, lanes' CPU {cpu:.2f} s, "
              f"turns {len(turns)}", file=sys.stderr, flush=True)
    print(f"parleyd file mode, auto mode (en, es), accurate engines; {BEFORE} s before and {AFTER} s after each recording")
    print("| recordings | audio | each lane fed | fed / audio | recordings fed more than their audio | the lanes' CPU |")
    print("|---|---|---|---|---|---|")
    for name, t in totals.items():
        print(f"| {name}, {t['recordings']} | {t['audio']:.1f} s | {t['fed']:.1f} s | {t['fed'] / t['audio']:.2f} | "
              f"{t['twice']} | {t['cpu']:.2f} s |")


if __name__ == "__main__":
    main()
