#!/usr/bin/env python3
"""Where PyTorch's training step spends its GPU time, kernel by kernel: the same step as
torch_train.py (same model, autocast bf16, clip, fused AdamW), profiled with torch.profiler over a
few steps after warm-up, printed as the kernels by total CUDA time per step (the same columns as
trace_top.py prints for a Lantern trace), so the two can be read side by side.

    python3 torch_train_trace.py [CASE] [--impl eager|compile|compile-cudagraphs] [--steps N] [--top N]
"""
import argparse, collections, os, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_train as tt

p = argparse.ArgumentParser()
p.add_argument("case", nargs="?", default="decoder")
p.add_argument("--impl", default="compile")
p.add_argument("--steps", type=int, default=5)
p.add_argument("--warmups", type=int, default=4)
p.add_argument("--top", type=int, default=30)
p.add_argument("--vocab", type=int, default=64)
a = p.parse_args()

step, _, _, _ = tt.make_step(a.case, a.impl, a.vocab)

for _ in range(a.warmups):
    step()
torch.cuda.synchronize()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(a.steps):
        step()
    torch.cuda.synchronize()
total, count = collections.Counter(), collections.Counter()
for e in prof.events():
    if e.device_type == torch.autograd.DeviceType.CUDA:
        total[e.name] += e.device_time_total / 1000.0 if hasattr(e, "device_time_total") else e.cuda_time_total / 1000.0
        count[e.name] += 1
all_ms = sum(total.values())
print(f"{a.case} {a.impl}: kernel time {all_ms / a.steps:.3f} ms per step over {sum(count.values()) / a.steps:.0f} launches per step")
for name, ms in total.most_common(a.top):
    print(f"{ms / a.steps:9.3f} ms  {100 * ms / all_ms:5.1f} %  x{count[name] / a.steps:5.1f}  {name[:110]}")
