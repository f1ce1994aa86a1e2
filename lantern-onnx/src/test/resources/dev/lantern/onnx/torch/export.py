# Writes the torch.onnx.export fixtures beside this script (torch 2.13.0+cpu, onnxscript 0.7.2, onnx 1.23.1):
# a Linear-LayerNorm-GELU-Linear-Softmax MLP and a LLaMA-style block (RMSNorm, causal attention with
# masked_fill, SiLU-gated MLP), each through the TorchScript exporter (opset 14 / 17) and the dynamo exporter
# (opset 18, weights in external data). Seeded; run: python export.py (the dynamo exporter records the
# script's path in node metadata, so its files differ by that alone when run from another folder).
import math
import os

import torch
import torch.nn as nn

OUT = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)

class Mlp(nn.Module):
    def __init__(s):
        super().__init__()
        s.l1 = nn.Linear(16, 32); s.ln = nn.LayerNorm(32); s.act = nn.GELU(); s.l2 = nn.Linear(32, 10)
    def forward(s, x):
        return torch.softmax(s.l2(s.act(s.ln(s.l1(x)))), dim=-1)

class RMSNorm(nn.Module):
    def __init__(s, d, eps=1e-6):
        super().__init__(); s.w = nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d)); s.eps = eps
    def forward(s, x):
        v = x.pow(2).mean(-1, keepdim=True)
        return s.w * (x * torch.rsqrt(v + s.eps))

class Block(nn.Module):
    def __init__(s, d=32, h=4):
        super().__init__()
        s.h = h; s.n1 = RMSNorm(d); s.qkv = nn.Linear(d, 3 * d, bias=False); s.o = nn.Linear(d, d, bias=False)
        s.n2 = RMSNorm(d); s.g = nn.Linear(d, 64, bias=False); s.u = nn.Linear(d, 64, bias=False); s.dn = nn.Linear(64, d, bias=False)
    def forward(s, x):
        b, t, d = x.shape
        q, k, v = s.qkv(s.n1(x)).split(d, dim=-1)
        q = q.view(b, t, s.h, d // s.h).transpose(1, 2)
        k = k.view(b, t, s.h, d // s.h).transpose(1, 2)
        v = v.view(b, t, s.h, d // s.h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // s.h)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = att.masked_fill(~mask, float('-inf')).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + s.o(y)
        hdn = s.n2(x)
        return x + s.dn(nn.functional.silu(s.g(hdn)) * s.u(hdn))

CASES = {"mlp": [(False, 14), (True, 18)], "block": [(False, 17), (True, 18)]}
for name, mod, shape, dyn in [("mlp", Mlp(), (3, 16), {0: "batch"}), ("block", Block(), (2, 8, 32), {0: "batch", 1: "seq"})]:
    mod.eval()
    x = torch.randn(*shape)
    for dynamo, opset in CASES[name]:
        f = os.path.join(OUT, f"{name}-{'dynamo' if dynamo else 'legacy'}-op{opset}.onnx")
        try:
            kw = dict(input_names=["x"], output_names=["y"], opset_version=opset, dynamo=dynamo)
            if dynamo:
                kw["dynamic_shapes"] = ({k: torch.export.Dim(v) for k, v in dyn.items()},)
            else:
                kw["dynamic_axes"] = {"x": dyn}
            torch.onnx.export(mod, (x,), f, **kw)
            print("ok", f)
        except Exception as e:
            print("FAIL", f, type(e).__name__, str(e)[:200])
