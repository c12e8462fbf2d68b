#!/usr/bin/env python3
"""French, Portuguese and Italian through parleyd (issue 26): each recording of ../shared/speech
in file mode, fresh (0.5 s of silence before, 2 s after), with English as the other speaker in
auto mode, as a person would set Parley up: Whisper base tells who spoke (between en and the
language) and hears the words, beam 5 and greedy (a Whisper server of each kind, `[transcriber]
server`, so the model loads once per kind). Prints, per language and beam: WER (bench/ears.py's
normalization), turns given the right language, and the translation route the turns took.

Usage: bench/languages.py BIN_DIR [ENGINES]
"""
import os
import sqlite3
import sys
import tempfile
import time

import ears


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    bin_dir = os.path.abspath(sys.argv[1])
    engines = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else ears.engines_folder()
    started = time.monotonic()
    results = {}  # (lang, beam) -> (Tally, right, turns, recordings, routes)
    with tempfile.TemporaryDirectory(prefix="parley-languages-") as work:
        none = ears.engines_variant(work, engines, "none")
        for beam in (5, 1):
            server = ears.WhisperServer(engines, threads=2, beam_size=beam)
            try:
                for lang in ("fr", "pt", "it"):
                    config = f"{work}/{lang}-{beam}.toml"
                    ears.write_config(config, work, mode="auto", speaker_a="en", speaker_b=lang, transcriber=(none, server.uri))
                    tally, right, count, routes = ears.Tally(), 0, 0, {}
                    recordings = ears.recordings(lang)
                    for _, _, wav, reference in recordings:
                        turns, _ = ears.run_parleyd(bin_dir, config, work, ears.padded(wav, f"{work}/input.raw"))
                        connection = sqlite3.connect(f"{work}/history.sqlite")
                        for (route,) in connection.execute("SELECT route FROM turns"):
                            routes[route] = routes.get(route, 0) + 1
                        connection.close()
                        e, n = tally.add(reference, " ".join(t["text"] for t in turns), lang)
                        right += sum(t["lang"] == lang for t in turns)
                        count += len(turns)
                        print(f"beam {beam} {os.path.basename(wav)[:40]:40} {e:2}/{n:2} "
                              f"{' | '.join(t['lang'] + ': ' + t['text'] for t in turns)}", file=sys.stderr)
                    results[(lang, beam)] = (tally, right, count, len(recordings), routes)
            finally:
                server.close()
    print(f"bench/languages.py took {time.monotonic() - started:.0f} s\n")
    print("| language (recordings, words) | WER, beam 5 | WER, greedy | right language (beam 5) | route of the turns |")
    print("|---|---|---|---|---|")
    for lang in ("fr", "pt", "it"):
        five, greedy = results[(lang, 5)], results[(lang, 1)]
        routes = ", ".join(f"{r} ({n})" for r, n in sorted(five[4].items(), key=lambda kv: str(kv[0])))
        print(f"| {lang} ({five[3]}, {five[0].words}) | {five[0]} | {greedy[0]} | {five[1]}/{five[2]} turns | {routes} |")


if __name__ == "__main__":
    main()
