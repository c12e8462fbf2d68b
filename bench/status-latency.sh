#!/usr/bin/env bash
# `status` round trips while 10 subscribers receive level events at 25 Hz, on the real-time
# PulseAudio rig of bench/rig.sh. Prints the median, p99 and max of N requests.
# Usage: bench/status-latency.sh [BIN_DIR] [N]
set -euo pipefail
bin=${1:-$(swift build -c release --show-bin-path)}
count=${2:-2000}
source "$(dirname "$0")/rig.sh"
start_rig "$bin"
start_daemon
python3 - "$work/control.sock" "$count" <<'PY'
import json, socket, statistics, sys, threading, time
path, count = sys.argv[1], int(sys.argv[2])
levels = [0] * 10
stop = threading.Event()

def subscriber(index):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b'{"type":"subscribe"}\n')
    buffer = b""
    s.settimeout(0.5)
    while not stop.is_set():
        try:
            buffer += s.recv(65536)
        except socket.timeout:
            continue
        *lines, buffer = buffer.split(b"\n")
        levels[index] += sum(1 for line in lines if b'"type":"level"' in line)

threads = [threading.Thread(target=subscriber, args=(i,), daemon=True) for i in range(10)]
for t in threads:
    t.start()
time.sleep(2)
before = sum(levels)
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
client.connect(path)
reader = client.makefile("rb")
times = []
started = time.monotonic()
for i in range(count):
    t0 = time.perf_counter()
    client.sendall(b'{"type":"status","id":%d}\n' % i)
    reply = json.loads(reader.readline())
    times.append((time.perf_counter() - t0) * 1000)
    assert reply["type"] == "result" and reply["id"] == i, reply
    time.sleep(0.002)
elapsed = time.monotonic() - started
rate = (sum(levels) - before) / elapsed / 10
stop.set()
times.sort()
p99 = times[int(len(times) * 0.99) - 1]
print(f"status round trip over {count} requests, 10 subscribers at {rate:.1f} level events/s each: "
      f"median {statistics.median(times):.2f} ms, p99 {p99:.2f} ms, max {times[-1]:.2f} ms")
PY
