#!/usr/bin/env python3
"""The kernels of a Lantern trace (`--trace FILE.json`) by total time: one line per kernel or GEMM
name (StepProfiler's description), its count, total ms, mean ms and share of all kernel time.

    python3 scripts/bench/trace_top.py TRACE.json [--top N] [--steps S]

--steps S divides totals by S (the traced steps), so the figures read per step."""
import argparse, collections, json

p = argparse.ArgumentParser()
p.add_argument("trace")
p.add_argument("--top", type=int, default=25)
p.add_argument("--steps", type=float, default=1.0)
p.add_argument("--cats", default="kernel,gemm", help="the categories to count (host,step: the host's phases of a step)")
a = p.parse_args()
d = json.load(open(a.trace))
events = d["traceEvents"] if isinstance(d, dict) else d
total = collections.Counter()
count = collections.Counter()
for e in events:
    if e.get("ph") == "X" and e.get("cat") in a.cats.split(","):
        total[e["name"]] += e.get("dur", 0) / 1000.0
        count[e["name"]] += 1
all_ms = sum(total.values())
print(f"{a.cats} time {all_ms / a.steps:.3f} ms per step over {sum(count.values()) / a.steps:.0f} events per step")
for name, ms in total.most_common(a.top):
    print(f"{ms / a.steps:9.3f} ms  {100 * ms / all_ms:5.1f} %  x{count[name] / a.steps:5.1f}  {name[:110]}")
