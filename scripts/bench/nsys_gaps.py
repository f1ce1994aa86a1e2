#!/usr/bin/env python3
"""The GPU timeline of a training step from an nsys cuda_gpu_trace CSV (nsys stats -r cuda_gpu_trace -f csv):
steps cut at each launch of FIRST (a kernel name prefix, the step's first kernel), and for the last full
step every kernel or copy with the idle gap before it, so the time between kernels (host work, syncs,
copies) shows beside the kernels' own.

    python3 nsys_gaps.py TRACE.csv [--first lt_gather] [--gap-us 5]
"""
import argparse, csv
p = argparse.ArgumentParser()
p.add_argument("csv")
p.add_argument("--first", default="lt_gather")
p.add_argument("--gap-us", type=float, default=5.0)
a = p.parse_args()
rows = []
with open(a.csv) as f:
    r = csv.DictReader(f)
    for x in r:
        start = float(x.get("Start (ns)") or x.get("Start"))
        dur = float(x.get("Duration (ns)") or x.get("Duration"))
        rows.append((start, dur, x.get("Name", "")))
rows.sort()
cuts = [i for i, x in enumerate(rows) if x[2].startswith(a.first)]
print(f"{len(rows)} GPU events, {len(cuts)} steps")
for s, e in zip(cuts, cuts[1:]):
    seg = rows[s:e]
    busy = sum(d for _, d, _ in seg)
    span = rows[e][0] - seg[0][0]
    print(f"step: {len(seg)} events, start-to-next-start {span / 1e6:.3f} ms, busy {busy / 1e6:.3f} ms, idle {(span - busy) / 1e6:.3f} ms")
if len(cuts) >= 2:
    seg = rows[cuts[-2]:cuts[-1] + 1]
    t = seg[0][0]
    for i, (st, d, n) in enumerate(seg):
        gap = st - (seg[i - 1][0] + seg[i - 1][1]) if i else 0
        if gap / 1e3 >= a.gap_us or d / 1e3 >= 50 or i < 3 or i > len(seg) - 8:
            print(f"{(st - t) / 1e3:10.1f} us  gap {gap / 1e3:8.1f}  dur {d / 1e3:8.1f}  {n[:90]}")
