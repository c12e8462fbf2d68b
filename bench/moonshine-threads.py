#!/usr/bin/python3
"""Moonshine tiny on one thread or one per core: its time and its CPU, on every English recording.

libmoonshine makes its ONNX Runtime sessions with one intra-op thread per core, unless
MOONSHINE_ORT_SINGLE_THREAD is set (`[transcriber] moonshine_one_thread`, which parleyd's
Moonshine worker sets). The extra threads spin while they wait for work, so they cost CPU that
the streaming lanes and Whisper need in the room. This hears every English recording of
../shared/speech once per way, each in a fresh child Python (the variable is read as the sessions
are made), through the C API calls MoonshineTranscriber.swift makes (bench/ears.py's Moonshine),
and reports per way: the median wall time per recording, and wall and CPU seconds per second of
audio. The time in the room is bench/turn-end.py's ("moonshine-tiny: N ms per second of audio in
the room", and the words known after the last voice); run it with
MOONSHINE_ORT_SINGLE_THREAD unset and parleyd's `moonshine_one_thread = false` to compare.

Usage: /usr/bin/python3 bench/moonshine-threads.py   (needs `make engines` and ../shared/speech)
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in bench/
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, statistics, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import ears
moonshine = ears.Moonshine(sys.argv[2])
wavs = [wav for lang, _, wav, _ in ears.recordings() if lang == "en"]
moonshine.transcribe(ears.pcm(wavs[0]))  # warm
walls, cpus, audio = [], [], 0.0
for wav in wavs:
    pcm = ears.pcm(wav)
    cpu, wall = time.process_time(), time.perf_counter()
    moonshine.transcribe(pcm)
    walls.append(time.perf_counter() - wall)
    cpus.append(time.process_time() - cpu)
    audio += len(pcm) / 32000
print(json.dumps({"n": len(wavs), "median": statistics.median(walls), "wall": sum(walls), "cpu": sum(cpus), "audio": audio}))
"""


def measure(single):
    env = dict(os.environ)
    env.pop("MOONSHINE_ORT_SINGLE_THREAD", None)
    if single:
        env["MOONSHINE_ORT_SINGLE_THREAD"] = "1"
    done = subprocess.run([sys.executable, "-c", CHILD, os.path.join(ROOT, "bench"), os.path.join(ROOT, ".build", "engines")],
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    print(f"Moonshine tiny, {os.cpu_count()} cores: each English recording of ../shared/speech heard once per way")
    print("| threads | recordings | wall, median per recording | wall s per s of audio | CPU s per s of audio |")
    print("|---|---|---|---|---|")
    for single, label in ((False, "one per core (the library's own)"), (True, "one (`moonshine_one_thread`, shipped)")):
        r = measure(single)
        print(f"| {label} | {r['n']} | {1000 * r['median']:.0f} ms | {r['wall'] / r['audio']:.3f} | {r['cpu'] / r['audio']:.3f} |")


if __name__ == "__main__":
    main()
