#!/usr/bin/env python3
"""What a person waits, live: the pause before Parley decides a turn has ended, and the work after.

The rig is one room: a private PulseAudio server with one null sink (16 kHz mono). The
recordings are played into it, parleyd captures its monitor and plays its replies into it (so
the microphone also hears the loudspeaker), and pink noise plays all along as the room's
background. For every turn parleyd stores `pause_ms` (silence after the last voiced period
until the end was decided) and `response_ms` (from that decision to the first sample of the
translation handed to playback); their sum is what a person waits, less the audio path.

Mouth-to-ear, the audio path included: one recorder records the room's monitor all along, so
the person's speech and Parley's reply share its clock. This sound server does not give the
recordings back sample for sample, so each recording is found in the room by its loudness
instead: the room's first voiced 10 ms frame after the recording was started is the
recording's own first voiced frame, and its last voiced frame follows at the distance it has in
the file. The first voiced frame after that is the reply. "Voiced" is a fixed level (-38 dBFS:
the recordings' speech is around -28 dBFS, their background and the room tone -45 to -50 dBFS);
the share of frames on which the file and the room agree on voiced is reported as a check.

Sets:
- whole sentences: pocketsphinx-testdata's LibriVox sentences and goforward;
- thinking pauses: the LibriVox sentences with a pause of 0.6, 0.8 or 1.0 s inserted after a
  word where the sentence cannot end (Tests/data/thinking-pauses.txt).

Usage: bench/turn-end.py BIN_DIR
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/pocketsphinx/test/data"
LIBRIVOX = f"{DATA}/librivox/sense_and_sensibility_01_austen_64kb-"
RATE = 16000


def sox(*args):
    subprocess.run(["sox", *args], check=True)


def clips(work):
    """(name, path, set): whole sentences, then the thinking-pause variants."""
    out = []
    reference = {}
    with open(f"{DATA}/librivox/transcription") as f:
        for line in f:
            words, _, ident = line.rpartition("(")
            reference[ident.strip(" )\n").rsplit("-", 1)[-1]] = words.replace("<s>", "").replace("</s>", "").split()
    for name, source in [("goforward", f"{DATA}/goforward.raw")] + [
            (i, f"{LIBRIVOX}{i}.wav") for i in ("0870", "0880", "0890", "0920", "0930")]:
        path = f"{work}/{name}.wav"
        raw = ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1"] if source.endswith(".raw") else []
        sox(*raw, source, "-r", "16000", "-c", "1", "-b", "16", path)
        out.append((name, path, "whole", reference.get(name, [])))
    with open(f"{ROOT}/Tests/data/thinking-pauses.txt") as f:
        cuts = [line.split() for line in f if line.strip() and not line.startswith("#")]
    for ident, cut, word in cuts:
        source = f"{LIBRIVOX}{ident}.wav"
        sox(source, f"{work}/a.wav", "trim", "0", cut)
        sox(source, f"{work}/b.wav", "trim", cut)
        sox(source, f"{work}/tone.wav", "trim", "0", "0.1", "repeat", "20")
        for pause in ("0.6", "0.8", "1.0"):
            sox(f"{work}/tone.wav", f"{work}/pause.wav", "trim", "0", pause)
            path = f"{work}/{ident}-{word}-{pause}.wav"
            sox(f"{work}/a.wav", f"{work}/pause.wav", f"{work}/b.wav", path)
            out.append((f"{ident} {pause} s after \"{word}\"", path, "pause", reference[ident]))
    return out


def start_room(work):
    env = dict(os.environ, XDG_RUNTIME_DIR=f"{work}/run", HOME=work, PULSE_SERVER=f"unix:{work}/pulse.sock",
               XDG_CACHE_HOME=f"{work}/cache")
    os.makedirs(f"{work}/run", mode=0o700)
    subprocess.run(["pulseaudio", "-n", "--daemonize=yes", "--exit-idle-time=-1", f"--log-target=file:{work}/pulse.log",
                    "-L", f"module-native-protocol-unix socket={work}/pulse.sock auth-anonymous=1",
                    "-L", "module-null-sink sink_name=room rate=16000 channels=1 format=s16le"], check=True, env=env)
    with open(f"{work}/.asoundrc", "w") as f:
        f.write('pcm.roommic { type pulse; device "room.monitor" }\npcm.roomspeaker { type pulse; device "room" }\n')
    with open(f"{work}/parley.toml", "w") as f:
        f.write(f'[audio]\ncapture_device = "roommic"\nplayback_device = "roomspeaker"\n'
                f'[history]\npath = "{work}/history.sqlite"\n[control]\nsocket = "{work}/control.sock"\n'
                f'[log]\nlevel = "warning"\n'
                f'[recognizer.es]\nacoustic_model = "{ROOT}/models/es/acoustic"\n'
                f'language_model = "{ROOT}/models/es/es.lm.bin"\ndictionary = "{ROOT}/models/es/es.dict"\n')
    return env


VOICED_DB = -38.0
FRAME = RATE // 100


def envelope(samples):
    """The level of each 10 ms frame, in dBFS."""
    frames = len(samples) // FRAME
    power = (samples[:frames * FRAME].astype(np.float64).reshape(frames, FRAME) ** 2).mean(axis=1)
    return 10 * np.log10(power / 32768.0 ** 2 + 1e-12)


def voiced_runs(mask, start=0, minimum=3):
    """Frame indexes from `start` on where a run of at least `minimum` voiced frames begins."""
    run = 0
    for i in range(start, len(mask)):
        run = run + 1 if mask[i] else 0
        if run == minimum:
            yield i - minimum + 1


def wav_samples(path):
    import wave
    with wave.open(path) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)


def mouth_to_ear(room, path, started):
    """(ms from the recording's last voiced frame to the reply's first, agreement) or None."""
    own = envelope(wav_samples(path)) > VOICED_DB
    first = next(voiced_runs(own), None)
    last = len(own) - 1 - int(np.argmax(own[::-1]))
    if first is None:
        return None
    begin = max(0, int(started * 100) - 30)
    onset = next((i for i in voiced_runs(room, begin) if i <= begin + 200), None)
    if onset is None:
        return None
    offset = onset - first
    span = room[offset:offset + len(own)]
    agreement = float(np.mean(span == own[:len(span)])) if len(span) else 0.0
    end = offset + last
    reply = next((i for i in voiced_runs(room, end + 5) if i <= end + 300), None)
    return None if reply is None else ((reply - end) * 10, agreement)


def turns(work):
    try:
        return sqlite3.connect(f"{work}/history.sqlite").execute(
            "SELECT id, source_text, pause_ms, ended_by, response_ms FROM turns ORDER BY id").fetchall()
    except sqlite3.Error:
        return []


def main():
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="parley-mouth-") as work:
        env = start_room(work)
        # A room is never digitally silent: 10 minutes of pink noise at about -50 dBFS play all
        # along, so the endpointer's noise floor is a room's, not the recordings' own background.
        sox("-n", "-r", "16000", "-c", "1", "-b", "16", f"{work}/room-tone.wav", "synth", "600", "pinknoise", "vol", "0.015")
        tone = subprocess.Popen(["paplay", "-d", "room", f"{work}/room-tone.wav"], env=env)
        time.sleep(0.5)
        daemon = subprocess.Popen([f"{bin_dir}/parleyd", "--config", f"{work}/parley.toml"], env=env,
                                  stderr=open(f"{work}/parleyd.log", "w"))
        try:
            while subprocess.run([f"{bin_dir}/parley", "status", "--socket", f"{work}/control.sock"], env=env,
                                 capture_output=True).returncode != 0:
                time.sleep(0.05)
            recorder = subprocess.Popen(["parec", "-d", "room.monitor", "--rate=16000", "--channels=1", "--format=s16le",
                                         "--raw", "--latency-msec=10"], env=env, stdout=open(f"{work}/room.raw", "wb"))
            begun = time.monotonic()
            played = []
            for name, path, kind, reference in clips(work):
                started = time.monotonic() - begun
                subprocess.run(["paplay", "-d", "room", path], env=env, check=True)
                # Wait for the reply to be spoken and stored, then for the room to settle.
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and not turns(work):
                    time.sleep(0.05)
                # A sentence cut in two gives its second turn after the first reply is spoken.
                quiet = time.monotonic()
                while time.monotonic() < deadline + 10 and time.monotonic() - quiet < 6:
                    count = len(turns(work))
                    time.sleep(0.1)
                    if len(turns(work)) != count:
                        quiet = time.monotonic()
                played.append((name, path, kind, reference, turns(work), started))
                # The same words twice in a row are stored once: start each recording afresh.
                with sqlite3.connect(f"{work}/history.sqlite") as db:
                    db.execute("DELETE FROM turns")
            time.sleep(0.5)
            recorder.terminate()
            recorder.wait()
            room = envelope(np.fromfile(f"{work}/room.raw", dtype=np.int16)) > VOICED_DB
            if os.environ.get("KEEP"):
                subprocess.run(["cp", "-r", work, os.environ["KEEP"]])
        finally:
            tone.terminate()
            daemon.terminate()
            daemon.wait()
            subprocess.run(["pulseaudio", "--kill"], env=env)
        report(played, room)


def report(played, room):
    whole, natural, pauses_whole, pauses, ears = [], 0, 0, 0, []
    print("| recording | turns | pause_ms | ended by | response_ms | pause + response | mouth-to-ear (agreement) |")
    print("|---|---|---|---|---|---|---|")
    for name, path, kind, reference, stored, started in played:
        pause_ms = [t[2] for t in stored]
        ended = [t[3] or "-" for t in stored]
        response = [t[4] for t in stored]
        waited = [p + r for p, r in zip(pause_ms, response) if p is not None and r is not None]
        ear = mouth_to_ear(room, path, started) if kind == "whole" and len(stored) == 1 else None
        if ear:
            ears.append(ear[0])
        shown = f"{ear[0]} ms ({ear[1]:.2f})" if ear else "-"
        print(f"| {name} | {len(stored)} | {pause_ms} | {', '.join(ended)} | {response} | {waited} | {shown} |")
        if os.environ.get("VERBOSE"):
            print(f"|   | {[t[1] for t in stored]} |")
        if kind == "whole" and len(waited) == 1:
            whole.append(waited[0])
            natural += waited[0] <= 350
        if kind == "pause":
            # Whole: one turn that heard (nearly) all of the sentence; a turn cut at the pause
            # whose rest was lost under Parley's reply is not whole either.
            pauses += 1
            heard = sum(len(t[1].split()) for t in stored)
            pauses_whole += len(stored) == 1 and heard >= 0.7 * len(reference)
    if whole:
        print(f"\nwhole sentences: pause + response median {statistics.median(whole):.0f} ms, p95 {np.percentile(whole, 95):.0f} ms; "
              f"{natural} of {len(whole)} within 350 ms (the audio path comes on top)")
    if ears:
        print(f"whole sentences, mouth-to-ear in the room: median {statistics.median(ears):.0f} ms, p95 {np.percentile(ears, 95):.0f} ms; "
              f"{sum(e <= 350 for e in ears)} of {len(ears)} within 350 ms")
    print(f"thinking pauses: {pauses_whole} of {pauses} sentences stay whole")


if __name__ == "__main__":
    main()
