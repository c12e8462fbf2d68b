#!/usr/bin/env python3
"""What a person waits, live: the pause before Parley decides a turn has ended, and the work after.

The rig is one room: a private PulseAudio server with one null sink (16 kHz mono). The
recordings are played into it, parleyd captures its monitor and plays its replies into it (so
the microphone also hears the loudspeaker), and pink noise plays all along as the room's
background. For every turn parleyd stores `pause_ms` (silence after the last voiced period
until the end was decided) and `response_ms` (from that decision to the first sample of the
translation handed to playback); their sum is what a person waits, less the audio path.

Measuring the audio path too, by recording the room and finding each recording in it, is not
done here yet: this sound server does not give the recordings back sample for sample (their
correlation with the room recording is under 0.1), so the alignment was not trustworthy.

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
                played.append((name, path, kind, reference, turns(work)))
                # The same words twice in a row are stored once: start each recording afresh.
                with sqlite3.connect(f"{work}/history.sqlite") as db:
                    db.execute("DELETE FROM turns")
            time.sleep(0.5)
        finally:
            tone.terminate()
            daemon.terminate()
            daemon.wait()
            subprocess.run(["pulseaudio", "--kill"], env=env)
        report(played)


def report(played):
    whole, natural, pauses_whole, pauses = [], 0, 0, 0
    print("| recording | turns | pause_ms | ended by | response_ms | pause + response |")
    print("|---|---|---|---|---|---|")
    for name, path, kind, reference, stored in played:
        pause_ms = [t[2] for t in stored]
        ended = [t[3] or "-" for t in stored]
        response = [t[4] for t in stored]
        waited = [p + r for p, r in zip(pause_ms, response) if p is not None and r is not None]
        print(f"| {name} | {len(stored)} | {pause_ms} | {', '.join(ended)} | {response} | {waited} |")
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
    print(f"thinking pauses: {pauses_whole} of {pauses} sentences stay whole")


if __name__ == "__main__":
    main()
