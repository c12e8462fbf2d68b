#!/usr/bin/env python3
"""What a person waits, live: the pause before Parley decides a turn has ended, and the work after.

The rig is one room: a private PulseAudio server with one null sink (16 kHz mono). The
recordings are played into it, parleyd captures its monitor and plays its replies into it (so
the microphone also hears the loudspeaker), and pink noise plays all along as the room's
background. For every turn parleyd stores `pause_ms` (silence after the last voiced period
until the end was decided) and `response_ms` (from that decision to the first sample of the
translation handed to playback); their sum is what a person waits, less the audio path.

Mouth-to-ear, the audio path included: one recorder records the room's monitor all along, so
the person's speech and Parley's reply share its clock. Each recording is found in the room by
its waveform: where the normalized cross-correlation of the file's speech with the room peaks,
within 3 s of when it was started (the fit, reported, is that peak: 1 is the same samples;
the room adds only its tone while a person speaks). The person's last word ends at the
distance it has in the file (the last run of 80 ms or more over a fixed level, -38 dBFS, with
the runs that follow it less than 150 ms apart: a soft ending, not a breath or a click
further on), and the reply is the room's first voiced run after it where the file itself is
not voiced. The method is checked first on a recording played twice with a known gap
(`calibrate`). KEEP=DIR keeps the room's recording and what was played into it, and
`bench/turn-end.py --again DIR` measures them again.

Sets:
- whole sentences: pocketsphinx-testdata's LibriVox sentences and goforward, then Tests/data's
  English and Spanish recordings (or, with PARLEY_SET=shared, ../shared/speech's);
- thinking pauses: the LibriVox sentences, and the set's Spanish recordings, with a pause of
  0.6, 0.8 or 1.0 s inserted after a word where the sentence cannot end
  (Tests/data/thinking-pauses.txt, thinking-pauses-es.txt).

Usage: bench/turn-end.py BIN_DIR   (PARLEY_SET=shared: every English and Spanish recording of
../shared/speech (SPEECH=DIR: another folder) instead of Tests/data's; PARLEY_OTHER=pt: English against Portuguese, English sentences
only: en->pt goes through Spanish, so this is a pivot pair's mouth-to-ear; PARLEY_PAUSES=0: the whole
sentences only, PARLEY_PAUSES=en or es: one language's thinking pauses; PARLEY_LIKELY_END=MS: another likely_end_ms; PARLEY_SLOW_SPEECH=X: another slow_speech_below (0: off); PARLEY_MOONSHINE_ONE_THREAD=false: Moonshine on one thread per core; PARLEY_WHISPER_THREADS=N: Whisper's threads (as shipped, 0: one per core but one); PARLEY_VOCABULARY=N: the words English's streaming decoder knows (0: all); PARLEY_POLL=S: how often the bench asks for the turns stored (0.5 s; it costs the engines CPU); VERBOSE=1: each turn's words and stage timings, and the daemon's debug lines on where the time went)
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("SPEECH", os.path.join(os.path.dirname(ROOT), "shared", "speech"))
DATA = "/usr/share/pocketsphinx/test/data"
LIBRIVOX = ears.LIBRIVOX
RATE = 16000
# How often (s) the bench asks the daemon for the turns stored (`turns`).
POLL = float(os.environ.get("PARLEY_POLL", "0.5"))
# The calibration's "person" and "reply" (`calibrate`).
CALIBRATION = (f"{LIBRIVOX}0880.wav", f"{LIBRIVOX}0920.wav")


def sox(*args):
    subprocess.run(["sox", *args], check=True)


def clips(work):
    """(name, path, set): whole sentences, then the thinking-pause variants."""
    out = []
    reference = {ident: text.split() for ident, text in ears.librivox_transcripts().items()}
    for name, source in [("goforward", f"{DATA}/goforward.raw")] + [
            (i, f"{LIBRIVOX}{i}.wav") for i in ("0870", "0880", "0890", "0920", "0930")]:
        path = f"{work}/{name}.wav"
        raw = ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1"] if source.endswith(".raw") else []
        sox(*raw, source, "-r", "16000", "-c", "1", "-b", "16", path)
        out.append((name, path, "whole", reference.get(name, [])))
    # Speakers Parley was never tuned to (Tests/data/SPEECH-NOTICE.md): English, and Spanish ("es:");
    # PARLEY_SET=shared: every English and Spanish recording of ../shared/speech instead (25 and 10).
    folders = (((f"{SHARED}/en", ""), (f"{SHARED}/es/fleurs", "es:"), (f"{SHARED}/es/voxforge", "es:"))
               if os.environ.get("PARLEY_SET") == "shared" else
               ((f"{ROOT}/Tests/data/en", ""), (f"{ROOT}/Tests/data/es/fleurs", "es:")))
    for folder, prefix in (f for f in folders if OTHER == "es" or not f[1]):
        for file in sorted(os.listdir(folder)):
            if file.endswith(".wav"):
                with open(f"{folder}/{file[:-4]}.txt") as f:
                    words = f.read().split()
                out.append((prefix + file[:-4], f"{folder}/{file}", "whole", words))
    wanted = os.environ.get("PARLEY_PAUSES", "en,es").split(",")
    if OTHER != "es" or wanted == ["0"]:
        return out  # another pair: the English sentences only, for the route's time (or asked for)
    # (name, source, seconds, word, reference words): English's LibriVox cuts, then Spanish's in
    # the set's own Spanish folders (a recording the set lacks is left out).
    cuts = []
    if "en" in wanted:
        for ident, cut, word in ears.thinking_pause_cuts("thinking-pauses.txt"):
            cuts.append((ident, f"{LIBRIVOX}{ident}.wav", cut, word, reference[ident]))
    if "es" in wanted:
        # The set's Spanish folders, and Tests/data's VoxForge (the default set hears FLEURS only).
        spanish = [folder for folder, prefix in folders if prefix == "es:"] + [f"{ROOT}/Tests/data/es/voxforge"]
        for ident, cut, word in ears.thinking_pause_cuts("thinking-pauses-es.txt"):
            for folder in spanish:
                if os.path.exists(f"{folder}/{ident}.wav"):
                    with open(f"{folder}/{ident}.txt") as f:
                        cuts.append((f"es:{ident}", f"{folder}/{ident}.wav", cut, word, f.read().split()))
                    break
    # By pause length, then recording: a turn identical to the one before it is stored once,
    # so the same sentence never comes twice in a row.
    for pause in ("0.6", "0.8", "1.0"):
        for name, source, cut, word, words in cuts:
            sox(source, f"{work}/a.wav", "trim", "0", cut)
            sox(source, f"{work}/b.wav", "trim", cut)
            sox(source, f"{work}/tone.wav", "trim", "0", "0.1", "repeat", "20")
            sox(f"{work}/tone.wav", f"{work}/pause.wav", "trim", "0", pause)
            path = f"{work}/{name.replace(':', '-')}-{word}-{pause}.wav"
            sox(f"{work}/a.wav", f"{work}/pause.wav", f"{work}/b.wav", path)
            out.append((f"{name} {pause} s after \"{word}\"", path, "pause", words))
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
                f'[log]\nlevel = "{"debug" if os.environ.get("VERBOSE") else "warning"}"\n[conversation]\nspeaker_b = "{OTHER}"\n'
                f'[recognizer.es]\nacoustic_model = "{ROOT}/models/es/acoustic"\n'
                f'language_model = "{ROOT}/models/es/es.lm.bin"\ndictionary = "{ROOT}/models/es/es.dict"\n')
        # The accurate pass (Moonshine, Whisper) as `make engines` installed it; PARLEY_ACCURATE=0
        # measures PocketSphinx's words alone.
        accurate = os.environ.get("PARLEY_ACCURATE", "1") != "0" and os.path.exists(f"{ROOT}/.build/engines/.complete")
        f.write(f'[transcriber]\nenabled = {"true" if accurate else "false"}\nengines = "{ROOT}/.build/engines"\n')
        if os.environ.get("PARLEY_MOONSHINE_ONE_THREAD"):
            # false: Moonshine's ONNX Runtime takes one thread per core (as shipped: one thread).
            f.write(f'moonshine_one_thread = {os.environ["PARLEY_MOONSHINE_ONE_THREAD"]}\n')
        if os.environ.get("PARLEY_WHISPER_THREADS"):
            # How many threads Whisper's worker takes (as shipped: [transcriber] threads).
            f.write(f'threads = {int(os.environ["PARLEY_WHISPER_THREADS"])}\n')
        if os.environ.get("PARLEY_VOCABULARY"):
            # How many words English's streaming decoder knows (0: every word of its language model).
            f.write(f'[recognizer.en]\nvocabulary = {int(os.environ["PARLEY_VOCABULARY"])}\n')
        if os.environ.get("PARLEY_VOICE_EN"):
            # Another engine for English replies ("festival", "espeak-ng"; as shipped: Piper).
            f.write(f'[voice.en]\nengine = "{os.environ["PARLEY_VOICE_EN"]}"\n')
        endpoint = []
        if os.environ.get("PARLEY_LIKELY_END"):
            # Another likely_end_ms, to weigh a shorter wait against sentences cut at a comma.
            endpoint.append(f'likely_end_ms = {int(os.environ["PARLEY_LIKELY_END"])}\n')
        if os.environ.get("PARLEY_SLOW_SPEECH"):
            # Another slow_speech_below (0: slow speech is answered as any other).
            endpoint.append(f'slow_speech_below = {float(os.environ["PARLEY_SLOW_SPEECH"])}\n')
        if endpoint:
            f.write("[endpoint]\n" + "".join(endpoint))
        print(f"accurate pass: {'on' if accurate else 'off'}; likely_end_ms {os.environ.get('PARLEY_LIKELY_END', 'as shipped')}; "
              f"English spoken by {os.environ.get('PARLEY_VOICE_EN', 'the engine shipped')}; "
              f"English vocabulary {os.environ.get('PARLEY_VOCABULARY', 'as shipped')}; "
              f"Moonshine on one thread: {os.environ.get('PARLEY_MOONSHINE_ONE_THREAD', 'as shipped')}; "
              f"slow_speech_below {os.environ.get('PARLEY_SLOW_SPEECH', 'as shipped')}")
    return env


# PARLEY_OTHER=pt: the other speaker's language (English sentences only; en-pt translates through
# a pivot, so this measures what the pivot adds).
OTHER = os.environ.get("PARLEY_OTHER", "es")
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


def locate(room, own, started):
    """(sample offset, fit) of recording `own` in the room's samples, searched within 3 s of
    `started` (the recorder's own start lags by up to a second or more): where the normalized
    cross-correlation of the two waveforms peaks. The room gives the recording back at its
    rate and gain with the room tone (and nothing else while a person speaks) added, so the
    peak is sharp; the fit is its value (1: the same samples)."""
    nominal = int(started * RATE)
    lo, hi = max(0, nominal - 3 * RATE), min(len(room) - len(own), nominal + 3 * RATE)
    if hi <= lo:
        return None
    segment = room[lo:hi + len(own)].astype(np.float64)
    own = own.astype(np.float64)
    size = 1 << int(np.ceil(np.log2(len(segment) + len(own))))
    # corr[k] = sum_i segment[k + i] * own[i], for k = 0 ... hi - lo
    corr = np.fft.irfft(np.fft.rfft(segment, size) * np.conj(np.fft.rfft(own, size)), size)[:hi - lo + 1]
    energy = np.concatenate([[0.0], np.cumsum(segment ** 2)])
    window = energy[len(own):len(own) + hi - lo + 1] - energy[:hi - lo + 1]
    fit = corr / (np.linalg.norm(own) * np.sqrt(np.maximum(window, 1e-9)))
    k = int(np.argmax(fit))
    return lo + k, float(fit[k])


def speech_end(voiced, word=8, gap=15):
    """The frame after the person's last word: the end of the last run of at least `word`
    voiced frames (80 ms), and of the voiced runs that follow it with less than `gap` frames
    (150 ms) between them (a soft ending: a fricative, a fading vowel). A breath or a click
    further on (VCTK's and FLEURS' files have them, a few frames over the level) is not
    the mouth's end."""
    runs, start = [], None
    for i, v in enumerate(list(voiced) + [False]):
        if v and start is None:
            start = i
        elif not v and start is not None:
            runs.append((start, i))
            start = None
    words = [i for i, (a, b) in enumerate(runs) if b - a >= word]
    if not words:
        return None
    end = runs[words[-1]][1]
    for a, b in runs[words[-1] + 1:]:
        if a - end >= gap:
            break
        end = b
    return end


def mouth_to_ear(room, path, started):
    """(ms from the end of the recording's speech to the reply's first voiced frame, fit) or
    None; (OVERLAP, fit) when Parley began speaking before the person's last word.

    The recording is found in the room's samples by the first half of its speech (`locate`;
    a reply may overlap the rest); its speech ends at the distance it has in the file
    (`speech_end`). What the room holds beyond the recording (the room less the recording,
    scaled as it came back) is voiced before that end when Parley spoke over the person.
    Otherwise the reply is the room's first run of voiced frames after the end where the file
    itself is not voiced (so the file's own breath or click after its last word is not taken
    for Parley's reply)."""
    own = wav_samples(path)
    voiced = envelope(own) > VOICED_DB
    end = speech_end(voiced)
    found = None if end is None else locate(room, own[:end * FRAME // 2], started)
    if end is None or found is None:
        return None
    offset, fit = found
    speech = own[:end * FRAME].astype(np.float64)
    heard = room[offset:offset + len(speech)].astype(np.float64)
    if len(heard) < len(speech):
        return None
    beyond = heard - (heard @ speech) / (speech @ speech) * speech
    if next(voiced_runs(envelope(beyond) > VOICED_DB), None) is not None:
        return OVERLAP, fit
    # The room's 10 ms frames from the end of speech on, at the recording's own frame phase.
    after = envelope(room[offset + end * FRAME:offset + end * FRAME + 3 * RATE]) > VOICED_DB
    rest = voiced[end:end + len(after)]
    after[:len(rest)] &= ~rest
    reply = next(voiced_runs(after), None)
    return None if reply is None else (reply * 10, fit)


OVERLAP = -1

LENGTHS = [(0, 4, "under 4 s"), (4, 8, "4-8 s"), (8, 1e9, "over 8 s")]


def speech_length(path):
    """Seconds from the recording's first word (its first run of 80 ms voiced) to its last
    (`speech_end`): the sentence's length, the pauses in it included."""
    voiced = envelope(wav_samples(path)) > VOICED_DB
    end = speech_end(voiced)
    first = next(voiced_runs(voiced, minimum=8), None)
    return None if end is None or first is None else (end - first) * FRAME / RATE


def record_room(env, work, name):
    """Starts recording the room's monitor into WORK/NAME; its first second is lost to start-up."""
    recorder = subprocess.Popen(["parec", "-d", "room.monitor", "--rate=16000", "--channels=1", "--format=s16le",
                                 "--raw", "--latency-msec=100"], env=env, stdout=open(f"{work}/{name}", "wb"))
    time.sleep(2)
    return recorder


def calibrate(env, work):
    """The method on a known answer: a "person" (0880) and, 300 ms of digital silence later, a
    "reply" (0920) in one file, played into the room and measured as a turn would be."""
    person, reply = CALIBRATION
    sox("-n", "-r", "16000", "-c", "1", "-b", "16", f"{work}/gap.wav", "trim", "0", "0.3")
    sox(person, f"{work}/gap.wav", reply, f"{work}/calibration.wav")
    recorder = record_room(env, work, "calibration.raw")
    begun = time.monotonic() - 2
    measured = []
    for _ in range(3):
        started = time.monotonic() - begun
        subprocess.run(["paplay", "-d", "room", f"{work}/calibration.wav"], env=env, check=True)
        time.sleep(1)
        measured.append(started)
    recorder.terminate()
    recorder.wait()
    return calibration_result(np.fromfile(f"{work}/calibration.raw", dtype=np.int16), measured)


def calibration_result(room, measured):
    """What the calibration's reply should measure, and what it measured each time."""
    person, reply = CALIBRATION
    own = envelope(wav_samples(person)) > VOICED_DB
    theirs = envelope(wav_samples(reply)) > VOICED_DB
    expected = len(wav_samples(person)) * 1000 // RATE - speech_end(own) * 10 + 300 + next(voiced_runs(theirs)) * 10
    got = [mouth_to_ear(room, person, started) for started in measured]
    return expected, [f"{g[0]} ms (fit {g[1]:.2f})" if g else "-" for g in got], measured


def turns(work, bin_dir, env, after=0):
    """(id, words, pause_ms, ended_by, response_ms, turn) of the turns stored after turn `after`, asked
    of the daemon (it holds the history file exclusively)."""
    out = subprocess.run([f"{bin_dir}/parley", "history", "--json", "--limit", "10", "--socket", f"{work}/control.sock"],
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return []
    stored = [(t["id"], t["source_text"], t["timings"].get("pause_ms"), t["timings"].get("ended_by"),
               t["timings"].get("response_ms"), t) for t in json.loads(out.stdout)]
    return sorted((t for t in stored if t[0] > after), key=lambda t: t[0])


def again(keep):
    """Measures a kept run again (KEEP=DIR bench/turn-end.py BIN, then --again DIR)."""
    kept = json.load(open(f"{keep}/played.json"))
    print("calibration: a reply %d ms after the person's last word is measured as %s" % calibration_result(
        np.fromfile(f"{keep}/calibration.raw", dtype=np.int16), kept["calibration"])[:2])
    report([tuple(p) for p in kept["played"]], np.fromfile(f"{keep}/room.raw", dtype=np.int16))


def main():
    if sys.argv[1] == "--again":
        return again(sys.argv[2])
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="parley-mouth-") as work:
        env = start_room(work)
        # A room is never digitally silent: 10 minutes of pink noise at about -50 dBFS play all
        # along, so the endpointer's noise floor is a room's, not the recordings' own background.
        sox("-n", "-r", "16000", "-c", "1", "-b", "16", f"{work}/room-tone.wav", "synth", "600", "pinknoise", "vol", "0.015")
        tone = subprocess.Popen(["paplay", "-d", "room", f"{work}/room-tone.wav"], env=env)
        time.sleep(0.5)
        calibration = calibrate(env, work)
        daemon = subprocess.Popen([f"{bin_dir}/parleyd", "--config", f"{work}/parley.toml"], env=env,
                                  stderr=open(f"{work}/parleyd.log", "w"))
        try:
            while subprocess.run([f"{bin_dir}/parley", "status", "--socket", f"{work}/control.sock"], env=env,
                                 capture_output=True).returncode != 0:
                time.sleep(0.05)
            recorder = record_room(env, work, "room.raw")
            begun = time.monotonic() - 2
            played = []
            last = 0
            for name, path, kind, reference in clips(work):
                started = time.monotonic() - begun
                subprocess.run(["paplay", "-d", "room", path], env=env, check=True)
                # Wait for the reply to be spoken and stored, then for the room to settle. Asked
                # for twice a second: each look starts the CLI and has the daemon read its
                # history (the CLI's start alone is about 10 ms of CPU): looking every 50 ms took
                # a fifth of a core or more from the engines while they heard the sentence (what
                # is measured is in the room's recording and the stored turn, not when the bench
                # sees it).
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and not turns(work, bin_dir, env, last):
                    time.sleep(POLL)
                # A sentence cut in two gives its second turn after the first reply is spoken.
                quiet = time.monotonic()
                count = len(turns(work, bin_dir, env, last))
                while time.monotonic() < deadline + 10 and time.monotonic() - quiet < 6:
                    time.sleep(POLL)
                    now = len(turns(work, bin_dir, env, last))
                    if now != count:
                        count, quiet = now, time.monotonic()
                stored = turns(work, bin_dir, env, last)
                played.append((name, path, kind, reference, stored, started))
                last = max([last] + [t[0] for t in stored])
            time.sleep(0.5)
            recorder.terminate()
            recorder.wait()
            room = np.fromfile(f"{work}/room.raw", dtype=np.int16)
        finally:
            tone.terminate()
            daemon.terminate()
            daemon.wait()
            subprocess.run(["pulseaudio", "--kill"], env=env)
        if os.environ.get("KEEP"):
            # The room and what was played into it, to measure again offline (`--again KEEP`).
            import shutil
            keep = os.environ["KEEP"]
            os.makedirs(keep, exist_ok=True)
            for name in ("room.raw", "calibration.raw"):
                shutil.copy(f"{work}/{name}", keep)
            kept = []
            for i, (name, path, kind, reference, stored, started) in enumerate(played):
                shutil.copy(path, f"{keep}/{i}.wav")
                kept.append([name, f"{keep}/{i}.wav", kind, reference, stored, started])
            with open(f"{keep}/played.json", "w") as f:
                json.dump({"played": kept, "calibration": calibration[2]}, f)
        report(played, room)
        if os.environ.get("VERBOSE"):
            # Where the time went, by the daemon's own debug lines (no words in them).
            with open(f"{work}/parleyd.log") as log:
                lines = log.read().splitlines()
            for line in lines:
                if any(k in line for k in ("accurate pass", "streaming lanes", "speech started", "speech ended", "speech resumed", "state", "discarded", "heard after", "quieter person", "nothing recognized")):
                    print(line)
            engines_time(lines)
        print(f"calibration: a reply {calibration[0]} ms after the person's last word is measured as {', '.join(calibration[1])}")


def engines_time(lines):
    """How much of the wait is the accurate engine's own time, from the daemon's debug lines: for
    each turn, when its words were known after the person's last voiced period (the pause at
    which the pass that gave them was asked for, plus the time until it answered, a wait in the
    queue included), and how long the engine took; per language, medians. A reply cannot come
    before its words: the rest of mouth-to-ear is the translation, the first piece of the voice
    and the audio path."""
    asked_at = {"a pause": None, "the end": None}  # the pause (ms) at which the latest pass of each kind was asked for
    last = None  # the latest pass heard whole: (language, engine, audio ms, engine ms, words known ms)
    known = {}
    speed = {}
    for line in lines:
        if m := re.search(r"the accurate pass starts at a pause of (\d+) ms", line):
            asked_at["a pause"] = int(m.group(1))
        elif m := re.search(r"speech ended at [0-9.]+ s \(\w+, after ([0-9.]+) s of pause", line):
            asked_at["the end"] = round(float(m.group(1)) * 1000)  # the end's own pass, if any, is asked for
        elif (m := re.search(r"the streaming lanes finished (\d+) ms after the end of the turn", line)) and asked_at["the end"] is not None:
            asked_at["the end"] += int(m.group(1))  # ... once the lanes have finished
        elif m := re.search(r"at (a pause|the end), (\d+) ms of audio heard in (\d+) ms by (\S+) \((\w+)\).* (\d+) ms after it was asked for", line):
            audio, took, engine, language, after = int(m.group(2)), int(m.group(3)), m.group(4), m.group(5), int(m.group(6))
            speed.setdefault(engine, []).append(took / audio * 1000)
            at = asked_at[m.group(1)]
            last = (language, engine, audio, took, None if at is None else at + after)
            if m.group(1) == "the end" and last[4] is not None:
                known.setdefault(language, []).append(last)
        elif "answered from the pause's pass" in line and last and last[4] is not None:
            known.setdefault(last[0], []).append(last)
    for engine, values in sorted(speed.items()):
        print(f"{engine}: {statistics.median(values):.0f} ms per second of audio in the room (median of {len(values)} passes heard whole)")
    for language, heard in sorted(known.items()):
        print(f"{language}: words known {statistics.median(t[4] for t in heard):.0f} ms after the last voiced period (median of {len(heard)} turns), "
              f"of which the engine {statistics.median(t[3] for t in heard):.0f} ms on {statistics.median(t[2] for t in heard):.0f} ms of audio")


def report(played, room):
    whole, natural, ears = [], 0, []
    pauses = {"English": [0, 0], "Spanish": [0, 0]}  # whole, of
    english_ears, spanish_ears, spoke_over = [], [], []
    print("| recording | turns | pause_ms | ended by | response_ms | pause + response | mouth-to-ear (fit) |")
    print("|---|---|---|---|---|---|---|")
    for name, path, kind, reference, stored, started in played:
        pause_ms = [t[2] for t in stored]
        ended = [t[3] or "-" for t in stored]
        response = [t[4] for t in stored]
        waited = [p + r for p, r in zip(pause_ms, response) if p is not None and r is not None]
        ear = mouth_to_ear(room, path, started) if kind == "whole" else None
        if ear and ear[1] < 0.95:
            ear = None  # the recording was not found in the room with confidence
        if ear and ear[0] == OVERLAP:
            spoke_over.append(name)
            shown = f"spoke before the last word ({ear[1]:.2f})"
        elif ear and len(stored) == 1:
            ears.append(ear[0])
            (spanish_ears if name.startswith("es:") else english_ears).append((ear[0], speech_length(path)))
            shown = f"{ear[0]} ms ({ear[1]:.2f})"
        else:
            shown = "-"  # not found, or two turns (the first one's reply is not the sentence's)
        print(f"| {name} | {len(stored)} | {pause_ms} | {', '.join(ended)} | {response} | {waited} | {shown} |")
        if os.environ.get("VERBOSE"):
            # Where each turn's time went: its words, the engine, and the stage timings.
            for t in stored:
                timings = {k: v for k, v in t[5]["timings"].items() if k not in ("pause_ms", "response_ms", "ended_by")}
                print(f"|   | {t[1]!r} | {t[5].get('engine')} | {timings} |")
        if kind == "whole" and len(waited) == 1:
            whole.append(waited[0])
            natural += waited[0] <= 350
        if kind == "pause":
            # Whole: one turn that heard (nearly) all of the sentence; a turn cut at the pause
            # whose rest was lost under Parley's reply is not whole either.
            heard = sum(len(t[1].split()) for t in stored)
            tally = pauses["Spanish" if name.startswith("es:") else "English"]
            tally[0] += len(stored) == 1 and heard >= 0.7 * len(reference)
            tally[1] += 1
    if whole:
        print(f"\nwhole sentences: pause + response median {statistics.median(whole):.0f} ms, p95 {np.percentile(whole, 95):.0f} ms; "
              f"{natural} of {len(whole)} within 350 ms (the audio path comes on top)")
    if ears:
        print(f"whole sentences, mouth-to-ear in the room: median {statistics.median(ears):.0f} ms, p95 {np.percentile(ears, 95):.0f} ms; "
              f"{sum(e <= 350 for e in ears)} of {len(ears)} within 350 ms")
    for language, measured in (("English", english_ears), ("Spanish", spanish_ears)):
        values = [ear for ear, _ in measured]
        if values:
            print(f"{language}: mouth-to-ear median {statistics.median(values):.0f} ms over {len(values)} ({values})")
    # By the sentence's length (issue 36): long sentences count.
    print("\n| language | " + " | ".join(label for _, _, label in LENGTHS) + " |")
    print("|---|" + "---|" * len(LENGTHS))
    for language, measured in (("English", english_ears), ("Spanish", spanish_ears)):
        cells = []
        for low, high, _ in LENGTHS:
            values = [ear for ear, length in measured if length is not None and low <= length < high]
            cells.append(f"{statistics.median(values):.0f} ms ({len(values)})" if values else "-")
        print(f"| {language} | " + " | ".join(cells) + " |")
    print(f"Parley spoke before the person's last word: {len(spoke_over)} of the whole sentences ({', '.join(spoke_over) or 'none'})")
    for language, (kept, of) in pauses.items():
        if of:
            print(f"thinking pauses, {language}: {kept} of {of} sentences stay whole")


if __name__ == "__main__":
    main()
