#!/usr/bin/env python3
"""Smart Turn v3.2, an audio end-of-turn model, on every recording here (issue 36, item 2): does
it tell the end of a sentence from a pause inside one?

For every human recording of ../shared/speech (English, native and not, Spanish, French, Italian,
Portuguese):
- its end: the audio from the start to the last loud 20 ms period, then 200, 300 or 500 ms of
  what follows (the recording's own tail, then its room tone);
- every pause inside it (a run of quiet periods of 200 ms or more, 10 dB or more under the
  recording's loud level, between its first and last loud periods): the audio from the start
  to 200, 300 or 500 ms into that pause (as long as the pause lasts);
- and the LibriVox thinking pauses of Tests/data/thinking-pauses.txt (a pause of 300, 500 or 800
  ms of room tone inserted after a word where the sentence cannot end), beside each sentence's
  end.
Each is given to the model as pipecat does (the last 8 s, zeros before; its Whisper-style
features, normalized), and its P(end) is read. An end cue is useful when it says "end" at ends
and not inside: reported is the share of each over 0.3, 0.5 and 0.7.

The model and its feature code come from PyPI's pipecat-ai 1.14.0 wheel (BSD-2-Clause; `make
bench` fetches it, checks its sha256 and unpacks that folder into .build/bench-python/smartturn);
ONNX Runtime from the engines folder (Piper's, `make engines`).

Usage: bench/smart-turn.py [SMARTTURN_DIR] [ENGINES]
"""
import glob
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEECH = os.environ.get("SPEECH", os.path.join(os.path.dirname(ROOT), "shared", "speech"))
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-{}.wav"
FOLDERS = ["en", "en-nonnative", "es/fleurs", "es/voxforge", "fr", "it", "pt"]
AFTER_MS = [200, 300, 500]
RATE = 16000
PERIOD = RATE // 50


def load(path):
    raw = subprocess.run(["sox", path, "-t", "raw", "-r", str(RATE), "-c", "1", "-b", "16", "-e", "signed", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype=np.int16).astype(np.float32) / 32768


def levels(audio):
    n = len(audio) // PERIOD
    frames = audio[:n * PERIOD].reshape(n, PERIOD)
    return 10 * np.log10((frames ** 2).mean(1) + 1e-12)


class SmartTurn:
    def __init__(self, folder, engines):
        sys.path.insert(0, f"{engines}/piper/python")
        sys.path.insert(0, folder)
        import onnxruntime  # noqa: PLC0415 (from the engines folder)
        from _whisper_features import compute_whisper_log_mel_features  # noqa: PLC0415 (from the wheel)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(f"{folder}/data/smart-turn-v3.2-cpu.onnx", sess_options=options)
        self.features = compute_whisper_log_mel_features

    def probability(self, audio):
        """P(the turn is over) for audio that ends now (pipecat's LocalSmartTurnAnalyzerV3)."""
        window = 8 * RATE
        audio = audio[-window:]
        if len(audio) < window:
            audio = np.pad(audio, (window - len(audio), 0))
        features = self.features(audio, do_normalize=True)[None]
        return float(self.session.run(None, {"input_features": features})[0][0].item())


def recordings(model):
    """(kind, pause ms, {after: P}) for every recording's end and inside pauses."""
    out = []
    for folder in FOLDERS:
        for path in sorted(glob.glob(f"{SPEECH}/{folder}/*.wav")):
            audio = load(path)
            level = levels(audio)
            loud = level > max(np.percentile(level, 10) + 12, level.max() - 35)
            voiced = np.where(loud)[0]
            if len(voiced) == 0:
                continue
            first, last = voiced[0], voiced[-1]
            end = (last + 1) * PERIOD
            after = np.concatenate([audio[end:], np.tile(audio[:1600], 40)])
            out.append(("end", None, {ms: model.probability(np.concatenate([audio[:end], after[:ms * 16]])) for ms in AFTER_MS}))
            index = first
            while index < last:
                if loud[index]:
                    index += 1
                    continue
                stop = index
                while stop < last and not loud[stop]:
                    stop += 1
                pause = (stop - index) * 20
                if pause >= 200:
                    start = index * PERIOD
                    out.append(("inside", pause, {ms: model.probability(audio[:start + ms * 16]) for ms in AFTER_MS if ms <= pause}))
                index = stop
        print(f"{folder}: {len(out)} so far", file=sys.stderr, flush=True)
    return out


def thinking_pauses(model):
    """(pause ms, P) for each inserted thinking pause, and each sentence's P at its end."""
    inside, ends = [], []
    with open(f"{ROOT}/Tests/data/thinking-pauses.txt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, seconds, _ = line.split()
            audio = load(LIBRIVOX.format(name))
            tone = np.tile(audio[:1600], 10)
            cut = int(float(seconds) * RATE)
            for ms in (300, 500, 800):
                inside.append((ms, model.probability(np.concatenate([audio[:cut], tone[:ms * 16]]))))
            voiced = np.where(levels(audio) > levels(audio).max() - 35)[0]
            end = (voiced[-1] + 1) * PERIOD
            ends.append(model.probability(np.concatenate([audio[:end], tone[:4800]])))
    return inside, ends


def share(values, threshold):
    return f"{np.mean(np.array(values) >= threshold):.2f}" if values else "-"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else f"{ROOT}/.build/bench-python/smartturn"
    engines = sys.argv[2] if len(sys.argv) > 2 else f"{ROOT}/.build/engines"
    model = SmartTurn(folder, engines)
    rows = recordings(model)
    ends = [r for r in rows if r[0] == "end"]
    inside = [r for r in rows if r[0] == "inside"]
    print(f"{len(ends)} recordings, {len(inside)} pauses of 200 ms or more inside them\n")
    print("| heard after | at the ends: P >= 0.3 / 0.5 / 0.7 | at pauses inside (n): P >= 0.3 / 0.5 / 0.7 |")
    print("|---|---|---|")
    for ms in AFTER_MS:
        at_end = [r[2][ms] for r in ends]
        at_pause = [r[2][ms] for r in inside if ms in r[2]]
        print(f"| {ms} ms of pause | {share(at_end, 0.3)} / {share(at_end, 0.5)} / {share(at_end, 0.7)} | "
              f"({len(at_pause)}) {share(at_pause, 0.3)} / {share(at_pause, 0.5)} / {share(at_pause, 0.7)} |")
    pauses, sentence_ends = thinking_pauses(model)
    print(f"\nLibriVox thinking pauses ({len(sentence_ends)} sentences): P >= 0.5 at the inserted pause after "
          + ", ".join(f"{ms} ms: {sum(p >= 0.5 for m, p in pauses if m == ms)} of {len(sentence_ends)}" for ms in (300, 500, 800))
          + f"; at the sentences' ends: {sum(p >= 0.5 for p in sentence_ends)} of {len(sentence_ends)}")


if __name__ == "__main__":
    main()
