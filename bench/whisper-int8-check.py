#!/usr/bin/env python3
"""Whisper base from the float16 model.bin quantized at load against the int8 model.bin that
`make engines` writes (engines/whisper-int8.py): tokens, scores and language probabilities on
every English and Spanish recording of ../shared/speech, beam 5 (docs/benchmarks.md).

Usage: bench/whisper-int8-check.py FLOAT16_FOLDER INT8_FOLDER
(FLOAT16_FOLDER: a model folder whose model.bin is the two wheel halves joined by cat.)
"""
import glob
import os
import sys
import wave

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEECH = os.environ.get("SPEECH", os.path.join(ROOT, "..", "shared", "speech"))
sys.path.insert(0, os.path.join(ROOT, ".build/engines/whisper/python"))
import ctranslate2  # noqa: E402
import faster_whisper_features  # noqa: E402

models = [ctranslate2.models.Whisper(folder, device="cpu", compute_type="int8", intra_threads=2) for folder in sys.argv[1:3]]
features = faster_whisper_features.FeatureExtractor(feature_size=80)
same = different = 0
largest = 0.0
for path in sorted(glob.glob(f"{SPEECH}/en/*.wav")) + sorted(glob.glob(f"{SPEECH}/es/*/*.wav")):
    with wave.open(path) as w:
        audio = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
    frames = min(3000, len(audio) // 160 + 200)
    frames -= frames % 2
    mel = features(np.concatenate([audio, np.zeros(frames * 160 - len(audio) + 160, np.float32)]), padding=0)[:, :frames]
    language = "<|en|>" if "/en/" in path else "<|es|>"
    results = []
    for model in models:
        encoded = model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(mel[None])), to_cpu=False)
        detected = dict(model.detect_language(encoded)[0])
        result = model.generate(encoded, [["<|startoftranscript|>", language, "<|transcribe|>"]], beam_size=5,
                                 return_scores=True, return_no_speech_prob=True)[0]
        results.append((result.sequences_ids[0], result.scores[0], result.no_speech_prob, detected["<|en|>"], detected["<|es|>"]))
    if results[0][0] == results[1][0]:
        same += 1
    else:
        different += 1
        print("different:", path)
    largest = max(largest, *(abs(a - b) for a, b in zip(results[0][1:], results[1][1:])))
print(f"{same} recordings with identical tokens, {different} different; largest score or probability difference {largest:.2e}")
