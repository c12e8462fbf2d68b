#!/usr/bin/env python3
"""What the accurate engines cost (issue 25): CPU seconds per second of audio, threads, memory.

- Whisper base: the parley-whisper worker as parleyd starts it (a child on stdin/stdout, int8,
  the threads parleyd gives it, `ears.shipped_whisper_threads`: one per core but one, 1 here; until
  session 56 this bench ran it on 2, one per core). Its CPU (utime +
  stime of every thread, /proc/PID/stat) before and after each pass over the recordings,
  divided by the recordings' length; Threads, VmRSS and VmHWM from /proc/PID/status once
  loaded and warm (the worker decodes one second of silence before answering) and after the
  passes. Passes: English (25 recordings) and Spanish (10), beam 5 and greedy, with the
  language given; and language ID alone (en or es, no words decoded).
- Moonshine tiny: libmoonshine through ctypes in a child Python process (the calls parleyd
  makes), its CPU over the English recordings, its threads and memory (the Python interpreter's
  own memory, measured before the library is loaded, is given apart). And inside parleyd: the
  CPU of parleyd's file mode, one-way English on the 25 recordings joined (6 s of silence
  between), with Moonshine as the accurate pass, minus the same run with PocketSphinx alone.
- parleyd with English and Spanish loaded, auto mode, the accurate engines on as shipped
  (Moonshine in process, the Whisper worker as its child, `threads = 0`, beam 5): Threads,
  VmRSS and VmHWM of parleyd and of its worker, polled every 50 ms through a run on 4 English
  and 4 Spanish recordings (6 s apart), next to parleyd with `[transcriber] enabled = false`.
  Also that run's CPU (parleyd and every child) per second of recorded speech.

CPU is process time, so it holds when other work shares the cores; wall-clock times are given
too, but on a shared machine they are upper bounds.

Usage: bench/engine-cost.py BIN_DIR [ENGINES]
"""
import json
import os
import resource
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ears  # noqa: E402


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def whisper_cost(engines, sets):
    rows = []
    whisper = ears.Whisper(engines, threads=ears.shipped_whisper_threads())
    loaded_cpu = ears.cpu_seconds(whisper.pid)
    warm = ears.status(whisper.pid)
    for label, request, recordings in sets:
        audio = sum(ears.seconds(wav) for _, _, wav, _ in recordings)
        before, wall, reported = ears.cpu_seconds(whisper.pid), time.monotonic(), []
        for lang, _, wav, _ in recordings:
            result = whisper.transcribe(ears.pcm(wav), **request(lang))
            reported.append(result["seconds"] / ears.seconds(wav))
        rows.append((label, len(recordings), audio, (ears.cpu_seconds(whisper.pid) - before) / audio,
                     (time.monotonic() - wall) / audio, statistics.median(reported)))
    after = ears.status(whisper.pid)
    whisper.close()
    return loaded_cpu, warm, after, rows


MOONSHINE_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import ears
def cpu():
    return ears.cpu_seconds("self")
python = ears.status("self")
start = cpu()
m = ears.Moonshine(sys.argv[2])
load = cpu() - start
m.transcribe(bytes(32000))
loaded = ears.status("self")
wavs = sys.argv[3:]
samples = [ears.pcm(w) for w in wavs]
before, wall, peak_threads = cpu(), time.monotonic(), 0
for s in samples:
    m.transcribe(s)
    peak_threads = max(peak_threads, ears.status("self")["threads"])
print(json.dumps({"python": python, "load_cpu": load, "loaded": loaded, "cpu": cpu() - before, "wall": time.monotonic() - wall,
                  "after": ears.status("self"), "audio": sum(ears.seconds(w) for w in wavs)}))
"""


def moonshine_cost(engines, wavs):
    done = subprocess.run(["nice", "-n", "5", sys.executable, "-c", MOONSHINE_CHILD, ears.BENCH, engines, *wavs],
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def joined(work, recordings, name):
    """The recordings joined, 0.5 s of silence before each and 6 s after."""
    parts = []
    for index, (_, _, wav, _) in enumerate(recordings):
        parts.append(f"{work}/{name}-{index}.raw")
        subprocess.run(["sox", wav, *ears.RAW, parts[-1], "pad", "0.5", "6"], check=True)
    out = f"{work}/{name}.raw"
    with open(out, "wb") as f:
        for part in parts:
            with open(part, "rb") as p:
                f.write(p.read())
    return out


def parleyd_cpu(bin_dir, config, work, audio):
    before = children_cpu()
    turns, log = ears.run_parleyd(bin_dir, config, work, audio)
    used = re.search(r"recognition used ([0-9.]+) s of CPU for ([0-9.]+) s of speech", log)
    return children_cpu() - before, turns, (float(used.group(1)), float(used.group(2))) if used else None


def watched(bin_dir, config, work, audio):
    """Runs parleyd, polling it and its children every 50 ms: the last status of each, by name
    (with its CPU time as last seen: up to 50 ms of a process's end is missed), and the CPU of
    parleyd and the children it waited for (getrusage)."""
    db = f"{work}/history.sqlite"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    before = children_cpu()
    process = subprocess.Popen(["nice", "-n", "5", f"{bin_dir}/parleyd", "--config", config, "--input", audio,
                                "--output", f"{work}/out.wav"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = {}

    def poll():
        while process.poll() is None:
            for pid, name in [(process.pid, "parleyd")] + [(c, None) for c in ears.children(process.pid)]:
                try:
                    if name is None:
                        with open(f"/proc/{pid}/cmdline", "rb") as f:
                            arguments = f.read().split(b"\0")
                        name = "whisper worker" if any(b"parley-whisper" in a for a in arguments) else \
                            f"{os.path.basename(arguments[0].decode())} [{pid}]"
                    stats = ears.status(pid)
                    if "VmRSS" not in stats:  # exiting
                        continue
                    old = seen.get(name, {})
                    stats["peak_threads"] = max(stats["threads"], old.get("peak_threads", 0))
                    stats["peak_rss"] = max(stats.get("VmRSS", 0), old.get("peak_rss", 0))
                    stats["cpu"] = ears.cpu_seconds(pid)
                    seen[name] = stats
                except (OSError, KeyError, IndexError):
                    pass
            time.sleep(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    process.wait()
    poller.join()
    return seen, children_cpu() - before


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    bin_dir = os.path.abspath(sys.argv[1])
    engines = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else ears.engines_folder()
    english, spanish = ears.recordings("en"), ears.recordings("es")
    started = time.monotonic()

    sets = [("English, beam 5", lambda lang: {"language": lang}, english),
            ("English, greedy", lambda lang: {"language": lang, "beam_size": 1}, english),
            ("Spanish, beam 5", lambda lang: {"language": lang}, spanish),
            ("Spanish, greedy", lambda lang: {"language": lang, "beam_size": 1}, spanish),
            ("language ID alone (en or es), English and Spanish", lambda lang: {"languages": ["en", "es"], "skip": ["en", "es"]},
             english + spanish)]
    loaded_cpu, warm, after, rows = whisper_cost(engines, sets)
    moon = moonshine_cost(engines, [wav for _, _, wav, _ in english])

    with tempfile.TemporaryDirectory(prefix="parley-cost-") as work:
        ps_config, moon_config, shipped, off = (f"{work}/{n}.toml" for n in ("ps", "moon", "shipped", "off"))
        ears.write_config(ps_config, work)
        ears.write_config(moon_config, work, transcriber=(ears.engines_variant(work, engines, "moonshine"), ""))
        english_audio = joined(work, english, "english")
        speech = sum(ears.seconds(wav) for _, _, wav, _ in english)
        ps_cpu, _, ps_recognition = parleyd_cpu(bin_dir, ps_config, work, english_audio)
        moon_cpu, _, _ = parleyd_cpu(bin_dir, moon_config, work, english_audio)

        ears.write_config(shipped, work, mode="auto", transcriber=(engines, ""))
        with open(shipped) as f:
            text = f.read().replace("threads = 2\n", "threads = 0\n")
        with open(shipped, "w") as f:
            f.write(text)
        ears.write_config(off, work, mode="auto")
        mixed = english[:4] + spanish[:4]
        mixed_audio = joined(work, [r for pair in zip(english[:4], spanish[:4]) for r in pair], "mixed")
        mixed_speech = sum(ears.seconds(wav) for _, _, wav, _ in mixed)
        on_stats, on_cpu = watched(bin_dir, shipped, work, mixed_audio)
        off_stats, off_cpu = watched(bin_dir, off, work, mixed_audio)
    elapsed = time.monotonic() - started

    print(f"bench/engine-cost.py took {elapsed:.0f} s\n")
    print(f"Whisper base worker (int8, --threads {ears.shipped_whisper_threads()}): CPU per second of audio\n")
    print("| pass | recordings | audio | CPU s per s of audio | wall s per s of audio | median worker-reported s per s |")
    print("|---|---|---|---|---|---|")
    for label, count, audio, cpu, wall, reported in rows:
        print(f"| {label} | {count} | {audio:.0f} s | {cpu:.3f} | {wall:.3f} | {reported:.3f} |")
    print(f"\nWhisper worker: loading and warming took {loaded_cpu:.1f} s of CPU; loaded and warm: {warm['threads']} threads, "
          f"VmRSS {warm['VmRSS']:.0f} MiB, VmHWM {warm['VmHWM']:.0f} MiB; after the passes: {after['threads']} threads, "
          f"VmRSS {after['VmRSS']:.0f} MiB, VmHWM {after['VmHWM']:.0f} MiB")
    print(f"\nMoonshine tiny (ctypes, child Python): {moon['cpu'] / moon['audio']:.3f} CPU s per s of audio "
          f"(wall {moon['wall'] / moon['audio']:.3f}) over {moon['audio']:.0f} s of English; loading {moon['load_cpu']:.2f} s CPU; "
          f"{moon['loaded']['threads']} threads loaded, {moon['after']['threads']} after; VmRSS {moon['loaded']['VmRSS']:.0f} MiB "
          f"loaded ({moon['python']['VmRSS']:.0f} MiB of it the interpreter before loading), VmHWM {moon['after']['VmHWM']:.0f} MiB "
          f"after the run")
    print(f"\nparleyd one-way English on the 25 recordings joined ({speech:.0f} s of recordings): PocketSphinx alone "
          f"{ps_cpu:.2f} s CPU, with Moonshine {moon_cpu:.2f} s: Moonshine in parleyd {(moon_cpu - ps_cpu) / speech:.3f} CPU s per s "
          f"of recording" + (f"; PocketSphinx's own recognizer thread: {ps_recognition[0] / ps_recognition[1]:.3f} of a core "
                             f"over {ps_recognition[1]:.0f} s of speech" if ps_recognition else ""))
    print(f"\nparleyd auto mode, English + Spanish, 4 + 4 recordings ({mixed_speech:.0f} s of recordings):\n")
    print("| accurate pass | process | threads (peak) | VmRSS peak seen | VmHWM | CPU s per s of recording (as last seen in /proc) |")
    print("|---|---|---|---|---|---|")
    for label, stats, cpu in (("on (shipped)", on_stats, on_cpu), ("off", off_stats, off_cpu)):
        for name in ("parleyd", "whisper worker"):
            if name in stats:
                s = stats[name]
                print(f"| {label} | {name} | {s['peak_threads']} | {s['peak_rss']:.0f} MiB | {s['VmHWM']:.0f} MiB "
                      f"| {s['cpu'] / mixed_speech:.3f} |")
        # Apertium's pipelines (one process per stage, two directions); a child seen between
        # fork and exec (named parleyd) is left out.
        others = [s for name, s in stats.items() if name not in ("parleyd", "whisper worker") and not name.startswith(("parleyd", " "))]
        print(f"| {label} | Apertium pipelines ({len(others)} processes, summed; shared pages counted in each) "
              f"| {sum(s['peak_threads'] for s in others)} | {sum(s['peak_rss'] for s in others):.0f} MiB "
              f"| {sum(s['VmHWM'] for s in others):.0f} MiB | {sum(s['cpu'] for s in others) / mixed_speech:.3f} |")
        print(f"| {label} | parleyd and the children it waited for (getrusage) | | | | {cpu / mixed_speech:.3f} |")

if __name__ == "__main__":
    main()
