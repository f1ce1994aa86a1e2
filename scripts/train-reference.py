#!/usr/bin/env python3
"""Writes lantern-core/src/test/resources/train/torch-optim.safetensors: inputs and PyTorch's
outputs for AdamW, SGD and clip_grad_norm_ on seeded random f32 tensors, for TorchReferenceTest.

The test reads the committed file and never needs torch; run this script again (with torch
installed) only to regenerate it:  python3 scripts/train-reference.py
Every case steps the single-tensor (for-loop) CPU path, foreach=False, which is what Lantern's
CPU optimizers follow operation for operation.
"""
import json
import os
import struct

import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "lantern-core", "src", "test", "resources", "train",
                   "torch-optim.safetensors")
SHAPES = {"w": (37,), "b": (4, 9), "big": (700,)}
M64 = (1 << 64) - 1
STEPS = 6

tensors = {}
meta = {"torch": torch.__version__, "steps": str(STEPS)}


def put(name, t):
    tensors[name] = t.detach().to(torch.float32).contiguous().clone()


class SplitMix64:
    """The generator of dev.lantern.train.data.SplitMix64, so that the test draws the same inputs."""

    def __init__(self, seed):
        self.state = seed & M64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


def draw(rng, shape, lo_exp, hi_exp):
    """Values m * 2^e, m uniform in [-1, 1) on a 2^-23 grid, e uniform in [lo_exp, hi_exp]: exact in f32."""
    n = 1
    for d in shape:
        n *= d
    out = []
    for _ in range(n):
        x = rng.next()
        m = ((x >> 40) - (1 << 23)) * 2.0 ** -23
        e = lo_exp + (x & 0xFF) % (hi_exp - lo_exp + 1)
        out.append(m * 2.0 ** e)
    return torch.tensor(out, dtype=torch.float32).reshape(shape)


def inputs(case, seed):
    rng = SplitMix64(seed)
    params = {}
    for n, s in SHAPES.items():
        params[n] = draw(rng, s, -1, 1).requires_grad_(True)
    grads = []
    for k in range(STEPS):
        # magnitudes from 2^-14 to 2^3 so that every term of the update matters somewhere
        grads.append({n: draw(rng, s, -14, 3) for n, s in SHAPES.items()})
    return params, grads


def run(case, make, state_keys, seed):
    params, grads = inputs(case, seed)
    opt = make(list(params.values()))
    for k in range(STEPS):
        for n, p in params.items():
            p.grad = grads[k][n].clone()
        opt.step()
    for n, p in params.items():
        put(f"{case}.out.{n}", p)
        for key in state_keys:
            put(f"{case}.{key}.{n}", opt.state[p][key])


cases = {
    "adamw": (lambda ps: torch.optim.AdamW(ps, lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1, foreach=False),
              ["exp_avg", "exp_avg_sq"]),
    "adamw_b03": (lambda ps: torch.optim.AdamW(ps, lr=3e-3, betas=(0.3, 0.95), eps=1e-6, weight_decay=0.0, foreach=False),
                  ["exp_avg", "exp_avg_sq"]),
    "sgd": (lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01, foreach=False),
            ["momentum_buffer"]),
    "sgd_nesterov": (lambda ps: torch.optim.SGD(ps, lr=0.02, momentum=0.8, nesterov=True, foreach=False),
                     ["momentum_buffer"]),
    "sgd_damp": (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.5, dampening=0.25, weight_decay=0.001, foreach=False),
                 ["momentum_buffer"]),
    "sgd_plain": (lambda ps: torch.optim.SGD(ps, lr=0.1, foreach=False), []),
}
for i, (case, (make, keys)) in enumerate(cases.items()):
    run(case, make, keys, 1000 + i)

# GradScaler (CPU) over SGD with momentum: a scripted run of injected infs (the script of
# DynamicLossScalerTest, no floor), gradients drawn unscaled and multiplied by the current scale
SCRIPT = [[], [], [], ["b"], [], ["w", "big"], ["big"], ["w"], [], ["b", "big"], ["w"], ["b"]]
params, _ = inputs("scaler", 1006)
ps = {n: p.detach().clone().requires_grad_(True) for n, p in params.items()}
opt = torch.optim.SGD(list(ps.values()), lr=0.05, momentum=0.9, foreach=False)
scaler = torch.amp.GradScaler("cpu", init_scale=8.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
rng = SplitMix64(2006)
scales = []
for inj in SCRIPT:
    scaler.scale(torch.ones(()))  # GradScaler sets up its scale tensor here
    for n, shape in SHAPES.items():
        g = draw(rng, shape, -14, 3) * scaler.get_scale()
        if n in inj:
            g.view(-1)[-1] = float("inf")
        ps[n].grad = g
    scaler.step(opt)
    scaler.update()
    scales.append(scaler.get_scale())
put("scaler.scales", torch.tensor(scales))
for n, p in ps.items():
    put(f"scaler.out.{n}", p)
    put(f"scaler.momentum_buffer.{n}", opt.state[p]["momentum_buffer"])

# clip_grad_norm_: one case that clips, one under the limit
for case, max_norm, seed in (("clip", 0.5, 77), ("noclip", 1e6, 78)):
    rng = SplitMix64(seed)
    ps = []
    for n, s in SHAPES.items():
        p = torch.zeros(s, requires_grad=True)
        p.grad = draw(rng, s, -6, 0)
        ps.append((n, p))
    total = torch.nn.utils.clip_grad_norm_([p for _, p in ps], max_norm, foreach=False)
    put(f"{case}.total", total.reshape(1))
    for n, p in ps:
        put(f"{case}.clipped.{n}", p.grad)

# safetensors by hand (no dependency): 8-byte header length, JSON header, little-endian data
header = {"__metadata__": meta}
blobs = []
offset = 0
for name in sorted(tensors):
    t = tensors[name]
    raw = t.numpy().astype("<f4").tobytes()
    header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
    blobs.append(raw)
    offset += len(raw)
hjson = json.dumps(header, separators=(",", ":")).encode()
hjson += b" " * ((8 - len(hjson) % 8) % 8)
os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "wb") as f:
    f.write(struct.pack("<Q", len(hjson)))
    f.write(hjson)
    for b in blobs:
        f.write(b)
print(f"wrote {OUT}: {len(tensors)} tensors, {offset} bytes of data")
