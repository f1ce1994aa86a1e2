#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention backward at the issue's shape, for comparison with
Lantern's FlashAttentionBackwardGpuTest ([flash-bwd] lines).

Times only the backward: the forward runs once per case (outside the timed region), then
`out.backward(dy, retain_graph=True)` is timed with CUDA events after warm-up; the median is
reported. bf16, q/k/v (batch, heads, seq, head_dim), causal and not. Prints one JSON object.

  python3 scripts/bench/torch_sdpa_bwd.py [--batch 16 --heads 32 --seq 1024 --head-dim 128 --iters 20]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def time_backward(b, h, s, d, causal, warmup, iters):
    torch.manual_seed(0)
    dev = "cuda"
    q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    dy = torch.randn_like(out)
    for _ in range(warmup):
        q.grad = k.grad = v.grad = None
        out.backward(dy, retain_graph=True)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        q.grad = k.grad = v.grad = None
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        out.backward(dy, retain_graph=True)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    flops = 10.0 * b * h * s * s * d * (0.5 if causal else 1.0)  # 2.5x the forward's 4·b·h·s²·d
    ms = statistics.median(times)
    return {"causal": causal, "median_ms": ms, "min_ms": min(times), "tflops": flops / ms / 1e9}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    a = p.parse_args()
    cases = [time_backward(a.batch, a.heads, a.seq, a.head_dim, c, a.warmup, a.iters) for c in (True, False)]
    print(json.dumps({"shape": [a.batch, a.heads, a.seq, a.head_dim], "dtype": "bf16", "torch": torch.__version__,
                      "device": torch.cuda.get_device_name(), "sdpa_backward": cases}))


if __name__ == "__main__":
    main()
