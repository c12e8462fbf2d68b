#!/usr/bin/env python3
"""How much of the room before the voice the accurate engine should hear (TurnLogic.accurateLeadMs).

Usage: bench/accurate-lead.py [ENGINES]   (ENGINES: .build/engines, from `make engines`)
       LEADS=500,250,200,150,100 NOISES=-55,-45,-35 bench/accurate-lead.py

Live, the endpointer keeps `preroll_ms` (500) of audio before the voice it detected, and a room is
never digitally silent. This gives Moonshine tiny each English recording of ../shared/speech (en and
en-nonnative) as the accurate pass would get it: LEAD ms before the voice's onset (the first 20 ms
period within 25 dB of the recording's loud periods), the voice, and 80 ms after it (`keptPauseMs`),
with pink noise at NOISE dBFS (RMS) over all of it. It prints, per noise level and lead, the word
error rate and the invented openings (one or two words first that were never said, as
bench/every-word.py counts them), and each invented opening as it comes.
numpy only (the room's pink noise is shaped in the frequency domain); seeded, so runs repeat.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

ears.SETS.append(("en", "nonnative", "en-nonnative"))


def pink(count, rng):
    """Pink noise (power falling as 1/f) of unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(count))
    frequencies = np.fft.rfftfreq(count)
    frequencies[0] = frequencies[1]
    noise = np.fft.irfft(spectrum / np.sqrt(frequencies), count)
    return noise / np.sqrt((noise ** 2).mean())


def voice_span(samples):
    """(onset, end) in samples: the first and last 20 ms periods within 25 dB of the loud ones."""
    frame = ears.RATE // 50
    count = len(samples) // frame
    levels = 20 * np.log10(np.sqrt((samples[:count * frame].reshape(count, frame) ** 2).mean(1)) + 1)
    loud = levels > np.percentile(levels, 95) - 25
    return int(np.argmax(loud)) * frame, (count - int(np.argmax(loud[::-1]))) * frame


def main():
    engines = sys.argv[1] if len(sys.argv) > 1 else ears.engines_folder()
    leads = [int(x) for x in os.environ.get("LEADS", "500,250,200,150,100").split(",")]
    noises = [float(x) for x in os.environ.get("NOISES", "-55,-45,-35").split(",")]
    moonshine = ears.Moonshine(engines)
    recordings = ears.recordings("en")
    print(f"{len(recordings)} English recordings; Moonshine tiny from {engines}")
    rows = []
    for noise_db in noises:
        rng = np.random.default_rng(7)
        for lead in leads:
            errors = words = invented = 0
            for _, source, wav, reference in recordings:
                samples = np.frombuffer(ears.pcm(wav), np.int16).astype(np.float64)
                onset, end = voice_span(samples)
                start = onset - lead * ears.RATE // 1000
                piece = np.concatenate([np.zeros(max(0, -start)), samples[max(0, start):end + 80 * ears.RATE // 1000]])
                room = pink(len(piece), rng) * 32768 * 10 ** (noise_db / 20)
                text = moonshine.transcribe(np.clip(piece + room, -32768, 32767).astype(np.int16).tobytes())
                wrong, length = ears.edits(ears.words(reference, "en"), ears.words(text, "en"))
                errors += wrong
                words += length
                opening = ears.leading_extra(reference, text, "en")
                if opening:
                    invented += 1
                    print(f"  noise {noise_db:g} dBFS, lead {lead} ms, {os.path.basename(wav)}: {text[:90]!r}", flush=True)
            rows.append((noise_db, lead, 100 * errors / max(1, words), invented, len(recordings)))
    moonshine.close()
    print("\n| room noise (RMS) | lead before the voice | WER | invented openings |\n|---|---|---|---|")
    for noise_db, lead, wer, invented, count in rows:
        print(f"| {noise_db:g} dBFS | {lead} ms | {wer:.1f} % | {invented} of {count} |")


if __name__ == "__main__":
    main()
