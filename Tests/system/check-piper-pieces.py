#!/usr/bin/env python3
"""The Piper worker's pieces (libexec/parley-piper: `pieces`, `first_cut`): every word said once,
in order; a long first clause cut before a word that opens a clause, so the first sound of a long
reply does not wait for the whole clause; short sentences and other languages as before. Run by
`make system-checks`; needs no voice (the worker's engine is not loaded)."""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workerchecks  # noqa: E402

root = workerchecks.ROOT
worker = workerchecks.load("parley-piper")
check = workerchecks.Checks("check-piper-pieces")


def joined(pieces):
    return " ".join(pieces)


# A translation of a long Spanish sentence (es-0028 in the live bench): one clause of 111
# characters, which Piper took 700 ms to make before its first sound.
long = "His blond heads of Germans and the bows of his violins stood out above the luminous rectangles of four windows."
said = worker.pieces(long, "en")
check(said == ["His blond heads of Germans", "and the bows of his violins stood out above the luminous rectangles of four windows."],
      f"the long first clause was not cut before 'and': {said}")
check(worker.pieces(long) == [long], "a text with no language was cut (as before: only after clause marks)")
check(worker.pieces(long, "xx") == [long], "a language without openers was cut")
# Short sentences and sentences with commas are said as before.
for text in ["Yes, I think so.", "The fighters of Luna also paid tribute to him.", "Half a dozen musicians, uniformed, just like the waiters."]:
    check(worker.pieces(text, "en") == worker.pieces(text), f"a sentence that needs no cut was said otherwise: {text!r}")
# Spanish, French, Portuguese and Italian voices a user installs are cut the same way.
check(worker.pieces("El director del museo dijo que la nueva exposición de arte moderno abrirá sus puertas en marzo.", "es")[0]
      == "El director del museo dijo", "a long Spanish first clause was not cut before a word that opens a clause")
# Never leaving the clause's last words alone ("…like | that?"), nor before "so" ("never been | so happy").
check(worker.pieces("Why would anyone really want to do something quite like that?", "en")
      == ["Why would anyone really want to do something quite like that?"], "a clause's last word was left alone")
check(worker.first_cut("I had never been so happy in all the years of my long and quiet life", "en") != 15,
      "a clause was cut before 'so'")
# Never before a preposition: a piece that starts with one is heard as "and ..." by a listener.
check(worker.first_cut("Some patients might have contracted the bug in the hospital", "en") is None,
      "a clause was cut before a preposition")
# Every word is said once, in order, and no first piece is longer than the cut allows, on the
# transcripts of every recording the tests use, in their own language and in English.
transcripts = glob.glob(os.path.join(root, "Tests", "data", "**", "*.txt"), recursive=True)
checked = 0
for path in transcripts:
    with open(path, encoding="utf-8") as f:
        text = " ".join(f.read().split())
    if not text or len(text) > 400:
        continue
    checked += 1
    for language in ("en", "es", "fr", "pt", "it"):
        said = worker.pieces(text, language)
        check(joined(said) == text, f"{os.path.relpath(path, root)} ({language}): words lost or moved: {said}")
        first_clause = worker.re.split(r"(?<=[,;:.?!…])\s+", text)[0]
        cut = worker.first_cut(first_clause, language)
        if cut is not None:
            check(worker.FIRST_CUT[0] <= len(said[0]) <= worker.FIRST_CUT[1],
                  f"{os.path.relpath(path, root)} ({language}): a first piece of {len(said[0])} characters")
            check(len(first_clause) - cut - 1 >= worker.FIRST_CUT[0],
                  f"{os.path.relpath(path, root)} ({language}): the clause's last words left alone")
check(checked >= 10, f"only {checked} transcripts found under Tests/data")

check.finish(f"ok ({checked} transcripts, every word said once and in order)")
