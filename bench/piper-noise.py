#!/usr/bin/env python3
"""Piper's English voice heard back by Whisper base, per synthesis setting (issue 37).

Piper's VITS model draws random noise for each sentence: `noise_scale` (the generator's noise,
the voice's own 0.667) and `noise_w` (the durations' noise, 0.8); `length_scale` is the pace (1:
the voice's own, 1.1: a tenth slower). Each variant says the same sentences as bench/voices.py
(VOICES_SENTENCES of Tatoeba's eng-spa.eng), ROUNDS times, in this process (whole sentences, one
thread: the words, not the timing, are measured), heard back as bench/voices.py hears them
(the parley-whisper worker, beam 5, English given). Sentences with errors go to stderr.

Usage: VOICES_SENTENCES=40 ROUNDS=3 VARIANTS="0.667:0.8:1,0.333:0.333:1" bench/piper-noise.py [ENGINES]
       (a variant: NOISE_SCALE:NOISE_W:LENGTH_SCALE)
"""
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402
import voices  # noqa: E402


def main():
    engines = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ears.engines_folder()
    sys.path.insert(0, f"{engines}/piper/python")
    import onnxruntime
    from piper import PiperConfig, PiperVoice, SynthesisConfig

    model = f"{engines}/piper/voices/{voices.PIPER_VOICES['en']}"
    with open(model + ".json", encoding="utf-8") as f:
        config = PiperConfig.from_dict(json.load(f))
    if config.sample_rate != voices.RATE:
        sys.exit(f"{model}: {config.sample_rate} Hz, this bench hears {voices.RATE} Hz voices only")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    voice = PiperVoice(session=session, config=config)
    variants = [v.split(":") for v in os.environ.get("VARIANTS", "0.667:0.8:1,0.333:0.333:1,0:0:1,0.333:0.333:1.1").split(",")]
    rounds = int(os.environ.get("ROUNDS", "1"))
    sentences = voices.sentences("en")
    whisper = ears.Whisper(engines, threads=2)
    print(f"Piper {voices.PIPER_VOICES['en'][:-5]} heard back by Whisper base, {len(sentences)} sentences, "
          f"{rounds} round(s):\n\n| noise_scale | noise_w | length_scale | WER per round |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="parley-piper-noise-") as work:
        for noise, noise_w, length in variants:
            setting = SynthesisConfig(noise_scale=float(noise), noise_w_scale=float(noise_w), length_scale=float(length),
                                      normalize_audio=True, volume=0.8)
            figures = []
            for _ in range(rounds):
                tally = ears.Tally()
                for text in sentences:
                    audio = b"".join(chunk.audio_int16_bytes for chunk in voice.synthesize(text, syn_config=setting))
                    hypothesis = voices.heard(whisper, work, audio, "en")
                    errors, words = tally.add(text, hypothesis, "en")
                    if errors:
                        print(f"{noise}/{noise_w}/{length} {errors}/{words} {text} -> {hypothesis}", file=sys.stderr)
                figures.append(str(tally))
            print(f"| {noise} | {noise_w} | {length} | {', '.join(figures)} |", flush=True)
    whisper.close()


if __name__ == "__main__":
    main()
