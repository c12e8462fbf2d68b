#!/usr/bin/env python3
"""Speech said while Parley speaks, in the live room (issue 36, item 5).

One PulseAudio null sink is the room, as in bench/turn-end.py: recordings are played into it,
parleyd captures its monitor and plays its replies into it, with a room tone under everything.
Each trial plays a sentence, waits for Parley to start speaking its reply, waits OVERLAP s more,
and plays a second sentence over the reply (another person answering early, in the other
language, or the same person going on). What is measured:
- the second sentence's words that reached a turn (recall against its transcript), and whether
  it became a turn at all: a sentence lost without a trace is a 0;
- turns of Parley's own words (its reply heard back as a person): must be none;
- the daemon's own account ("someone spoke while Parley was speaking").

A first sentence, not counted, lets the echo canceller learn the room before the trials.

Usage: bench/over-playback.py BIN_DIR   (SPEECH=DIR: another ../shared/speech; OVERLAP=S: how long
after Parley starts speaking the second sentence starts, 0.5 by default; TRIALS=N: how many, 10;
PARLEY_ECHO_CANCEL=false: the daemon without its echo canceller, to compare)
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("turn_end", f"{HERE}/turn-end.py")
room = importlib.util.module_from_spec(spec)
spec.loader.exec_module(room)

OVERLAP = float(os.environ.get("OVERLAP", "0.5"))
TRIALS = int(os.environ.get("TRIALS", "10"))


def words(text):
    return re.sub(r"[^\w' ]", " ", text.lower()).split()


def recall(heard, reference):
    """The share of the reference's words found in `heard`, in order (a longest common subsequence)."""
    a, b = words(heard), words(reference)
    if not b:
        return 0.0
    row = [0] * (len(a) + 1)
    for y in b:
        previous = 0
        for i, x in enumerate(a):
            current = row[i + 1]
            row[i + 1] = previous + 1 if x == y else max(row[i + 1], row[i])
            previous = current
    return row[len(a)] / len(b)


def recordings(folder):
    out = []
    for file in sorted(os.listdir(folder)):
        if file.endswith(".wav"):
            with open(f"{folder}/{file[:-4]}.txt") as f:
                out.append((file[:-4], f"{folder}/{file}", f.read().strip()))
    return out


def status(bin_dir, work, env):
    out = subprocess.run([f"{bin_dir}/parley", "status", "--json", "--socket", f"{work}/control.sock"],
                         env=env, capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {}


def wait_for(bin_dir, work, env, condition, timeout=30, every=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition(status(bin_dir, work, env)):
            return True
        time.sleep(every)
    return False


def settle(bin_dir, work, env, after):
    """Waits until no turn was added for 6 s (and Parley listens), then returns the turns after `after`."""
    quiet, count = time.monotonic(), len(room.turns(work, bin_dir, env, after))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = len(room.turns(work, bin_dir, env, after))
        if now != count:
            count, quiet = now, time.monotonic()
        elif time.monotonic() - quiet > 6 and status(bin_dir, work, env).get("state") == "listening":
            break
    return room.turns(work, bin_dir, env, after)


def main():
    bin_dir = sys.argv[1]
    english = recordings(f"{room.SHARED}/en")
    spanish = recordings(f"{room.SHARED}/es/fleurs") + recordings(f"{room.SHARED}/es/voxforge")
    # Alternately: a Spanish speaker answering over the Spanish reply to an English sentence, and
    # an English speaker going on over the reply to their own first sentence.
    trials = []
    for i in range(TRIALS):
        first = english[(2 * i) % len(english)]
        second = spanish[i % len(spanish)] if i % 2 == 0 else english[(2 * i + 1) % len(english)]
        trials.append((first, second))
    os.environ.setdefault("VERBOSE", "1")
    with tempfile.TemporaryDirectory(prefix="parley-over-") as work:
        env = room.start_room(work)
        if os.environ.get("PARLEY_ECHO_CANCEL"):
            with open(f"{work}/parley.toml") as f:
                config = f.read()
            with open(f"{work}/parley.toml", "w") as f:
                f.write(config.replace("[audio]\n", f'[audio]\necho_cancel = {os.environ["PARLEY_ECHO_CANCEL"]}\n', 1))
        room.sox("-n", "-r", "16000", "-c", "1", "-b", "16", f"{work}/room-tone.wav", "synth", "900", "pinknoise", "vol", "0.015")
        tone = subprocess.Popen(["paplay", "-d", "room", f"{work}/room-tone.wav"], env=env)
        daemon = subprocess.Popen([f"{bin_dir}/parleyd", "--config", f"{work}/parley.toml"], env=env,
                                  stderr=open(f"{work}/parleyd.log", "w"))
        results = []
        try:
            if not wait_for(bin_dir, work, env, lambda s: s.get("state") == "listening", timeout=120):
                sys.exit("parleyd did not start listening: " + open(f"{work}/parleyd.log").read()[-2000:])
            # The room is learnt while Parley speaks its first reply (not counted).
            warm = english[-1]
            subprocess.run(["paplay", "-d", "room", warm[1]], env=env, check=True)
            last = max([0] + [t[0] for t in settle(bin_dir, work, env, 0)])
            for (first, second) in trials:
                subprocess.run(["paplay", "-d", "room", first[1]], env=env, check=True)
                spoke = wait_for(bin_dir, work, env, lambda s: s.get("state") == "speaking", timeout=30, every=0.05)
                time.sleep(OVERLAP)
                subprocess.run(["paplay", "-d", "room", second[1]], env=env, check=True)
                stored = settle(bin_dir, work, env, last)
                last = max([last] + [t[0] for t in stored])
                texts = [t[1] for t in stored]
                replies = [t[5].get("translated_text") or "" for t in stored]
                first_recall = max([recall(t, first[2]) for t in texts] + [0])
                second_recall = max([recall(t, second[2]) for t in texts] + [0])
                # A turn of Parley's own words: its source is the reply to the first sentence.
                own = sum(1 for t in texts[1:] for r in replies[:1] if r and recall(t, r) >= 0.5 and recall(t, second[2]) < 0.3)
                results.append((first[0], second[0], spoke, len(stored), first_recall, second_recall, own))
                print(f"{first[0]} then {second[0]} over the reply{'' if spoke else ' (Parley never spoke)'}: "
                      f"{len(stored)} turns; first {first_recall:.0%}, second {second_recall:.0%} of its words; "
                      f"{own} turns of Parley's own words", flush=True)
                for t in stored:
                    print(f"    #{t[0]} {t[5].get('speaker')} {t[5].get('source_lang')}: {t[1]}")
        finally:
            tone.terminate()
            daemon.terminate()
            daemon.wait()
            subprocess.run(["pulseaudio", "--kill"], env=env)
        with open(f"{work}/parleyd.log") as log:
            lines = log.read().splitlines()
            notices = [line for line in lines if "while Parley was speaking" in line]
            debug = [line for line in lines if "while Parley spoke:" in line]
    heard = [r for r in results if r[5] >= 0.5]
    lost = [r for r in results if r[5] < 0.3]
    print(f"\n{len(results)} sentences said {OVERLAP} s after Parley started its reply: {len(heard)} heard "
          f"(half their words or more), {len(lost)} lost (under 30 %); mean recall of the second sentence "
          f"{sum(r[5] for r in results) / max(1, len(results)):.0%}, of the first {sum(r[4] for r in results) / max(1, len(results)):.0%}; "
          f"{sum(r[6] for r in results)} turns of Parley's own words; the daemon told of speech over its voice {len(notices)} times")
    for line in notices + (debug if os.environ.get("VERBOSE") != "0" else []):
        print("   ", line.strip()[-160:])


if __name__ == "__main__":
    main()
