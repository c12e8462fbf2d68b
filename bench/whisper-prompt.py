#!/usr/bin/env python3
"""Whisper given the previous sentence's words as its prompt (issue 36, "fr joined"): does it
hear a sentence better?

Whisper can be given text said before (`<|startofprev|>` then its tokens, before
`<|startoftranscript|>`); parleyd gives none, each turn is decoded alone. Here each recording of
a language (in ../shared/speech's order: a speaker's sentences in a row) is decoded alone (plain)
and with the previous recording's plain words as the prompt (prompted), by the parley-whisper
worker's own model code (beam 5, the language given; Whisper base int8). The prompt's tokens come
from a greedy longest match over Whisper's vocabulary, not its BPE merges: close to, not the
same as, what Whisper's tokenizer gives. The worker's trust rules and repetition cut are not
applied to either. Recordings whose errors differ go to stdout.

Usage: LANGS=fr,it,es,pt bench/whisper-prompt.py [ENGINES]
"""
import importlib.machinery
import importlib.util
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "libexec", "parley-whisper")


def main():
    engines = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ears.engines_folder()
    sys.path.insert(0, f"{engines}/whisper/python")
    loader = importlib.machinery.SourceFileLoader("parley_whisper", WORKER)
    spec = importlib.util.spec_from_loader("parley_whisper", loader)
    worker = importlib.util.module_from_spec(spec)
    loader.exec_module(worker)
    model = f"{engines}/whisper/base"
    whisper = worker.Whisper(model, 2, 5, "int8")
    np = whisper.np
    with open(f"{model}/tokenizer.json", encoding="utf-8") as f:
        special = {token["content"]: token["id"] for token in json.load(f)["added_tokens"]}
    lookup = {}
    for index, token in enumerate(whisper.tokenizer.tokens):
        lookup.setdefault(token, index)

    def encode(text):
        data = (" " + text.strip()).encode()
        ids, i = [], 0
        while i < len(data):
            for j in range(min(len(data), i + 24), i, -1):
                if data[i:j] in lookup:
                    ids.append(lookup[data[i:j]])
                    i = j
                    break
            else:
                i += 1
        return ids

    def decode(pcm, language, previous):
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        duration = len(audio) / 16000
        frames = min(worker.FRAMES_MAX, len(audio) // 160 + worker.PAD_FRAMES)
        frames -= frames % 2
        padded = np.concatenate([audio, np.zeros(frames * 160 - len(audio) + 160, np.float32)])
        mel = whisper.features(padded, padding=0)[:, :frames]
        encoded = whisper.model.encode(whisper.ct2.StorageView.from_array(np.ascontiguousarray(mel[None])), to_cpu=False)
        prompt = [special["<|startoftranscript|>"], special[f"<|{language}|>"], special["<|transcribe|>"]]
        if previous:
            prompt = [special["<|startofprev|>"], *encode(previous)[-100:], *prompt]
        generated = whisper.model.generate(encoded, [prompt], beam_size=5,
                                           max_length=min(448, int(duration * 12) + 24) + len(prompt))[0]
        return whisper.tokenizer.decode([t for t in generated.sequences_ids[0] if t < worker.TIMESTAMP_BEGIN]).strip()

    print("| language | plain | prompted |\n|---|---|---|")
    for lang in os.environ.get("LANGS", "fr,it,es,pt").split(","):
        plain_tally, prompted_tally, previous, notes = ears.Tally(), ears.Tally(), None, []
        for _, _, wav, reference in ears.recordings(lang):
            pcm = ears.pcm(wav)
            plain = decode(pcm, lang, None)
            prompted = decode(pcm, lang, previous) if previous else plain
            a, _ = plain_tally.add(reference, plain, lang)
            b, _ = prompted_tally.add(reference, prompted, lang)
            if a != b:
                notes.append(f"  {lang} {os.path.basename(wav)} {a} -> {b}: {plain!r} | {prompted!r}")
            previous = plain
        print(f"| {lang} | {plain_tally} | {prompted_tally} |")
        print("\n".join(notes), file=sys.stderr)


if __name__ == "__main__":
    main()
