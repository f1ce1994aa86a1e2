#!/usr/bin/env python3
"""Export Lantern's benchmark block to ONNX, for `lantern bench cpu --onnx FILE` (the ONNX Runtime peer).

The block is TransformerBlock (lantern-core frontend/nn) written in PyTorch op for op:
  decoder: x + attn(rms_norm(x)) with RoPE (rotate-half) and a causal mask, then + mlp(rms_norm(.)), no biases
  encoder: x + attn(layer_norm(x)), then + mlp(layer_norm(.)), biases everywhere
  attention: q, k, v, o projections (hidden x hidden); softmax(q k^T / sqrt(head_dim)) v
  mlp: up (hidden x mlp), GELU (tanh form), down (mlp x hidden)
f32, random weights (timing only: the peer's output is not compared with Lantern's, whose weights differ),
one input "x" of the fixed shape (batch, seq, hidden), opset 17 (the TorchScript exporter: no onnxscript needed).

  python scripts/bench/export_block.py cpu-small /tmp/lantern-bench/cpu-small.onnx
  python scripts/bench/export_block.py 2,128,256,4,1024,encoder /tmp/lantern-bench/enc.onnx
  ./lantern bench cpu --config cpu-small --onnx /tmp/lantern-bench/cpu-small.onnx --threads 2
"""
import math
import sys
import warnings

import torch
from torch import nn

# BlockConfig.ALL: name -> (batch, seq, hidden, heads, mlp, decoder)
CONFIGS = {
    "decoder": (16, 1024, 4096, 32, 16384, True),
    "encoder": (16, 1024, 4096, 32, 16384, False),
    "decoder-small": (1, 128, 1024, 16, 4096, True),
    "cpu-small": (2, 128, 256, 4, 1024, True),
    "encoder-small": (2, 128, 256, 4, 1024, False),
}


def parse(text):
    if text in CONFIGS:
        return CONFIGS[text]
    f = text.split(",")
    if len(f) not in (5, 6) or (len(f) == 6 and f[5] not in ("decoder", "encoder")):
        raise SystemExit(f"export_block: '{text}' is neither a config {sorted(CONFIGS)} nor batch,seq,hidden,heads,mlp[,decoder|encoder]")
    return (*map(int, f[:5]), len(f) == 5 or f[5] == "decoder")


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    def __init__(self, seq, hidden, heads, mlp, decoder):
        super().__init__()
        self.heads, self.hd, self.decoder = heads, hidden // heads, decoder
        bias = not decoder
        norm = (lambda: RMSNorm(hidden)) if decoder else (lambda: nn.LayerNorm(hidden, eps=1e-5))
        self.attn_norm, self.mlp_norm = norm(), norm()
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden, bias=bias) for _ in range(4))
        self.up, self.down = nn.Linear(hidden, mlp, bias=bias), nn.Linear(mlp, hidden, bias=bias)
        half = self.hd // 2
        inv = 1.0 / (10000.0 ** (torch.arange(half, dtype=torch.float32) / half))
        ang = torch.arange(seq, dtype=torch.float32)[:, None] * inv[None, :]
        self.register_buffer("cos", torch.cat([ang.cos(), ang.cos()], -1), persistent=False)
        self.register_buffer("sin", torch.cat([ang.sin(), ang.sin()], -1), persistent=False)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), 1), persistent=False)

    def rope(self, t):
        a, b = t.chunk(2, -1)
        return t * self.cos + torch.cat([-b, a], -1) * self.sin

    def split(self, t, b, s):
        return t.view(b, s, self.heads, self.hd).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        y = self.attn_norm(x)
        q, k, v = self.split(self.q(y), b, s), self.split(self.k(y), b, s), self.split(self.v(y), b, s)
        if self.decoder:
            q, k = self.rope(q), self.rope(k)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        if self.decoder:
            scores = scores + self.mask
        a = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.o(a)
        return x + self.down(nn.functional.gelu(self.up(self.mlp_norm(x)), approximate="tanh"))


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: export_block.py CONFIG|B,S,H,N,M[,encoder] OUT.onnx")
    batch, seq, hidden, heads, mlp, decoder = parse(sys.argv[1])
    torch.manual_seed(0)
    block = Block(seq, hidden, heads, mlp, decoder).eval()
    x = torch.randn(batch, seq, hidden)
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # the TorchScript exporter, chosen on purpose
    kwargs = dict(input_names=["x"], output_names=["y"], opset_version=17)
    try:
        torch.onnx.export(block, (x,), sys.argv[2], dynamo=False, **kwargs)
    except TypeError:  # a torch without the dynamo switch exports with TorchScript anyway
        torch.onnx.export(block, (x,), sys.argv[2], **kwargs)
    print(f"wrote {sys.argv[2]}: {'decoder' if decoder else 'encoder'} block {batch}x{seq}x{hidden}, {heads} heads, mlp {mlp}")


if __name__ == "__main__":
    main()
