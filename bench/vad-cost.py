#!/usr/bin/env python3
"""What Silero VAD costs (issue 25, item 3): parleyd's CPU per second of audio with
`voice_detector = "silero"` and with "level", on audio that holds no speech (so no recognizer
runs): a kitchen (../shared/noise, Speech Commands' doing_the_dishes) and digital silence, 60 s
each, in file mode (as fast as it goes; the CPU per second of audio is what a live room costs).
The difference is the detector's cost. CPU is the user + system time of the finished parleyd
(getrusage of children), start-up included: each run is also made on 1 s of audio, and that is
subtracted.

Usage: bench/vad-cost.py BIN_DIR [ENGINES]
"""
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

SECONDS = 60
RUNS = 3


def cpu_of(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    bin_dir = os.path.abspath(sys.argv[1])
    engines = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else ears.engines_folder()
    rate = ears.RATE
    kitchen = np.frombuffer(ears.pcm(f"{ears.NOISE}/speechcommands-doing_the_dishes.wav"), dtype="<i2")
    sounds = {"kitchen": np.resize(kitchen, SECONDS * rate), "silence": np.zeros(SECONDS * rate, dtype="<i2")}
    with tempfile.TemporaryDirectory(prefix="parley-vad-") as work:
        configs = {}
        for detector in ("silero", "level"):
            path = f"{work}/{detector}.toml"
            with open(path, "w") as f:
                f.write(f'[transcriber]\nenabled = false\nengines = "{engines}"\n[endpoint]\nvoice_detector = "{detector}"\n'
                        f'[history]\npath = "{work}/history.sqlite"\n[control]\nsocket = "{work}/control.sock"\n')
            configs[detector] = path
        print(f"parleyd in file mode, {SECONDS} s of audio with no speech, best of {RUNS} runs, start-up (1 s of audio) taken off\n")
        print("| audio | level alone: CPU s | Silero: CPU s | Silero's cost, CPU s per s of audio |")
        print("|---|---|---|---|")
        for name, audio in sounds.items():
            long_path, short_path = f"{work}/{name}.raw", f"{work}/{name}-1s.raw"
            audio.astype("<i2").tofile(long_path)
            audio[:rate].astype("<i2").tofile(short_path)
            cost = {}
            for detector, config in configs.items():
                def run(path):
                    return min(cpu_of([f"{bin_dir}/parleyd", "--config", config, "--input", path, "--output", f"{work}/out.wav"])
                               for _ in range(RUNS))
                cost[detector] = run(long_path) - run(short_path)
            per_second = (cost["silero"] - cost["level"]) / (SECONDS - 1)
            print(f"| {name} | {cost['level']:.2f} | {cost['silero']:.2f} | {per_second:.4f} ({100 * per_second:.1f} % of a core) |")


if __name__ == "__main__":
    main()
