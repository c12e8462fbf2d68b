#!/usr/bin/env python3
"""Memory of the Whisper worker alone: PSS, RSS and VmHWM once loaded and after each utterance,
with the words and seconds of each (docs/benchmarks.md, "Memory after turns").

It starts libexec/parley-whisper (or $WORKER) over stdio as parleyd does, then sends N English
and N Spanish recordings of ../shared/speech, alternating, languages undetermined (en or es).
Extra NAME=VALUE arguments go into the worker's environment (MALLOC_ARENA_MAX=2 ...).

Usage: bench/worker-memory.py MODEL_FOLDER N [NAME=VALUE ...]   e.g. .build/engines/whisper/base 6
"""
import glob
import json
import os
import subprocess
import sys
import time
import wave

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEECH = os.environ.get("SPEECH", os.path.join(ROOT, "..", "shared", "speech"))
WORKER = os.environ.get("WORKER", os.path.join(ROOT, "libexec", "parley-whisper"))
model, count = sys.argv[1], int(sys.argv[2])
env = dict(os.environ)
env.update(kv.split("=", 1) for kv in sys.argv[3:])
started = time.time()
worker = subprocess.Popen(
    ["/usr/bin/python3", WORKER, "--model", model, "--python-path", os.path.join(ROOT, ".build/engines/whisper/python"),
     "--threads", "0", "--beam-size", "5"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)


def send(kind, data, payload=b""):
    body = json.dumps(data).encode()
    header = {"type": kind, "data_length": len(body), "payload_length": len(payload)}
    worker.stdin.write(json.dumps(header).encode() + b"\n" + body + payload)
    worker.stdin.flush()


def read():
    header = json.loads(worker.stdout.readline())
    return header["type"], json.loads(worker.stdout.read(header["data_length"])) if header.get("data_length") else {}


def memory():
    found = {}
    with open(f"/proc/{worker.pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                found[line.split(":")[0]] = int(line.split()[1]) // 1024
    with open(f"/proc/{worker.pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                found["Pss"] = int(line.split()[1]) // 1024
    return " ".join(f"{k} {v} MiB" for k, v in sorted(found.items()))


send("describe", {})
read()
print(f"loaded in {time.time() - started:.1f} s: {memory()}", flush=True)
english = sorted(glob.glob(f"{SPEECH}/en/*.wav"))[:count]
spanish = (sorted(glob.glob(f"{SPEECH}/es/fleurs/*.wav")) + sorted(glob.glob(f"{SPEECH}/es/voxforge/*.wav")))[:count]
total = 0.0
for path in [p for pair in zip(english, spanish) for p in pair]:
    with wave.open(path) as w:
        pcm = w.readframes(w.getnframes())
    send("transcribe", {"languages": ["en", "es"]})
    send("audio-start", {"rate": 16000, "width": 2, "channels": 1})
    send("audio-chunk", {"rate": 16000, "width": 2, "channels": 1}, pcm)
    send("audio-stop", {})
    begun = time.time()
    _, answer = read()
    total += time.time() - begun
    print(f"{os.path.basename(path)} {answer.get('language')} {time.time() - begun:.2f} s, {memory()} | {answer.get('text')}", flush=True)
time.sleep(1)
print(f"after the utterances: {memory()}; {total:.1f} s answering in all", flush=True)
worker.stdin.close()
worker.wait()
