#!/usr/bin/env python3
"""What Bergamot's translation worker costs: memory and CPU per sentence, beside Apertium's.

Starts libexec/parley-bergamot on the models `make engines` installed (.build/engines/bergamot),
as parleyd does, and reports:
- memory (VmRSS, VmHWM and PSS from /proc) when started, with English->Portuguese loaded, with
  both directions loaded, and after translating the sentences below;
- CPU per sentence (the worker's utime + stime from /proc/PID/stat, over every sentence) and the
  median wall time per request, for FLORES-101 devtest (1,012 sentences, 21 words on average)
  and Tatoeba (1,000 short everyday sentences), each direction, one sentence a request;
- for comparison, Apertium's CPU per sentence for the same files (`apertium -u` on the whole
  file, its children's CPU time over the sentences: its start-up is spread over them).

Usage: bench/bergamot-cost.py [--engines .build/engines] [--text /work/shared/text]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TICK = os.sysconf("SC_CLK_TCK")


def memory(pid):
    status = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            status[key] = value.strip()
    with open(f"/proc/{pid}/smaps_rollup") as f:
        pss = next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
    mib = lambda kb: int(kb.split()[0]) / 1024  # noqa: E731
    return f"RSS {mib(status['VmRSS']):.1f} MiB, PSS {pss / 1024:.1f} MiB, VmHWM {mib(status['VmHWM']):.1f} MiB, {status['Threads']} threads"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().rstrip("\n").split("\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engines", default=os.path.join(HERE, "..", ".build", "engines"))
    parser.add_argument("--text", default="/work/shared/text")
    args = parser.parse_args()
    folder = os.path.join(args.engines, "bergamot")
    worker = subprocess.Popen(
        ["/usr/bin/python3", os.path.join(HERE, "..", "libexec", "parley-bergamot"), "--models", os.path.join(folder, "models"),
         "--python-path", os.path.join(folder, "python")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def ask(request):
        worker.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        worker.stdin.flush()
        answer = json.loads(worker.stdout.readline())
        if answer["type"] == "error":
            raise RuntimeError(answer["error"])
        return answer

    started = time.monotonic()
    ask({"type": "describe"})
    print(f"started ({(time.monotonic() - started) * 1000:.0f} ms to answer describe): {memory(worker.pid)}")
    for source, target in (("en", "pt"), ("pt", "en")):
        started = time.monotonic()
        ask({"type": "translate", "text": "hello", "from": source, "to": target})
        print(f"{source}->{target} loaded ({(time.monotonic() - started) * 1000:.0f} ms for its first word): {memory(worker.pid)}")

    corpora = {
        "FLORES devtest": (read(f"{args.text}/flores-devtest/eng.txt"), read(f"{args.text}/flores-devtest/por.txt")),
        "Tatoeba": (read(f"{args.text}/tatoeba/eng-por.eng"), read(f"{args.text}/tatoeba/eng-por.por")),
    }
    print()
    print("| sentences | direction | words a sentence | Bergamot CPU ms a sentence | Bergamot wall ms a request (median, p95) | Apertium CPU ms a sentence (route) |")
    print("|---|---|---|---|---|---|")
    for corpus, (english, portuguese) in corpora.items():
        for source, target, lines, apertium in (("en", "pt", english, ["eng-spa", "es-pt"]), ("pt", "en", portuguese, ["pt-es", "spa-eng"])):
            before = cpu_seconds(worker.pid)
            walls = []
            for line in lines:
                started = time.monotonic()
                ask({"type": "translate", "text": line, "from": source, "to": target})
                walls.append((time.monotonic() - started) * 1000)
            cpu = (cpu_seconds(worker.pid) - before) * 1000 / len(lines)
            # Apertium's route through Spanish, both legs, on the whole file.
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            text = "\n".join(lines) + "\n"
            for mode in apertium:
                text = subprocess.run(["apertium", "-u", mode], input=text, capture_output=True, text=True, check=True).stdout
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            apertium_ms = ((after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)) * 1000 / len(lines)
            words = sum(len(line.split()) for line in lines) / len(lines)
            walls.sort()
            print(f"| {corpus} | {source}->{target} | {words:.1f} | {cpu:.1f} | {statistics.median(walls):.1f}, {walls[int(len(walls) * 0.95)]:.1f} "
                  f"| {apertium_ms:.1f} (apertium {' + '.join(apertium)}) |")
    print()
    print(f"after {sum(len(e) + len(p) for e, p in corpora.values())} sentences: {memory(worker.pid)}")
    worker.stdin.close()
    worker.wait()


if __name__ == "__main__":
    main()
