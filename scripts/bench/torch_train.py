#!/usr/bin/env python3
"""PyTorch's training step for `lantern bench train`'s blocks, on the GPU machine, in the same device
call as Lantern's figures (scripts/gpu-train runs both).

The model is Lantern's LanguageModel (lantern-core dev.lantern.train.run.LanguageModel): a token
embedding, one pre-norm transformer block (RMSNorm, fused QKV without bias, interleaved RoPE, causal
SDPA, output projection, RMSNorm, fc1, tanh GELU, fc2), a final RMSNorm, an LM head and the mean
cross-entropy. A step: zero_grad, forward and backward under bf16 autocast (f32 master weights),
clip_grad_norm_(1.0), AdamW (lr 1e-3, weight decay 0.01, fused=True: PyTorch's fastest CUDA AdamW).
Impls: eager; compile (torch.compile of the model, default mode); compile-cudagraphs (mode
"reduce-overhead": forward and backward replayed as CUDA graphs). Each result is one JSON line:
{"case", "impl", "step_ms" (median of CUDA-event timings of whole steps after warm-up), "step_ms_min",
"tokens_per_s", "peak_mib" (torch.cuda.max_memory_allocated), "first_loss", "last_loss"}.

    python3 torch_train.py decoder decoder-small [--steps N] [--warmups W] [--vocab V]
"""
import argparse, json, math, time
import torch, torch.nn as nn, torch.nn.functional as F

BLOCKS = {  # name: (batch, seq, hidden, heads, mlp)
    "decoder": (16, 1024, 4096, 32, 16384),
    "decoder-small": (1, 128, 1024, 16, 4096),
    "cpu-small": (2, 128, 256, 4, 1024),
}


class LM(nn.Module):
    def __init__(self, vocab, hidden, heads, mlp):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, hidden)
        self.n1, self.n2, self.norm = nn.RMSNorm(hidden, eps=1e-6), nn.RMSNorm(hidden, eps=1e-6), nn.RMSNorm(hidden, eps=1e-6)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.o = nn.Linear(hidden, hidden, bias=False)
        self.fc1, self.fc2 = nn.Linear(hidden, mlp, bias=False), nn.Linear(mlp, hidden, bias=False)
        self.head = nn.Linear(hidden, vocab, bias=False)
        nn.init.normal_(self.head.weight, std=0.02)

    @staticmethod
    def rope(x, cos, sin):
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    def forward(self, ids, targets, cos, sin):
        x = self.embed(ids)
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.n1(x)).view(b, s, 3, self.heads, d).permute(2, 0, 3, 1, 4)
        q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, h))
        x = x + self.fc2(F.gelu(self.fc1(self.n2(x)), approximate="tanh"))
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def make_step(name, impl, vocab, device="cuda"):
    """The training step of case `name` on `device` (the model, fused AdamW, the RoPE tables and a seeded
    batch generator): returns (step, model, optimizer, tokens per step); step() runs one step (forward
    under bf16 autocast, backward, clip 1.0, AdamW) and returns the loss. torch_train_trace.py profiles it."""
    b, s, h, heads, mlp = BLOCKS[name]
    torch.manual_seed(0)
    m = LM(vocab, h, heads, mlp).to(device)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01, fused=True)
    d = h // heads
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, device=device).float() / d))
    ang = torch.arange(s, device=device).float()[:, None] * inv[None]
    cos, sin = ang.cos(), ang.sin()
    fwd = m if impl == "eager" else torch.compile(m, mode="reduce-overhead" if impl == "compile-cudagraphs" else None)
    g = torch.Generator(device=device).manual_seed(0)

    def step():
        ids = torch.randint(0, vocab, (b, s), device=device, generator=g)
        targets = torch.roll(ids, -1, 1)
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = fwd(ids, targets, cos, sin)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        return loss

    return step, m, opt, b * s


def median(xs):
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def run(name, impl, steps, warmups, vocab):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    step, m, opt, tokens = make_step(name, impl, vocab)

    t0 = time.time()
    first = step().item()
    torch.cuda.synchronize()
    first_call = time.time() - t0
    for _ in range(warmups):
        step()
    times, walls, last = [], [], first
    for _ in range(steps):
        a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        w0 = time.perf_counter()
        a.record(); loss = step(); e.record(); e.synchronize()
        walls.append((time.perf_counter() - w0) * 1e3)  # the host's wall time of the step, as Lantern's step_ms
        times.append(a.elapsed_time(e))
        last = loss.item()
    times.sort()
    walls.sort()
    med = median(times)
    print(json.dumps({"case": name, "impl": impl, "step_ms": round(med, 4), "step_ms_min": round(times[0], 4),
                      "wall_ms": round(median(walls), 4), "wall_ms_min": round(walls[0], 4),
                      "tokens_per_s": round(tokens / (med / 1e3)), "peak_mib": round(torch.cuda.max_memory_allocated() / 2**20),
                      "first_loss": round(first, 5), "last_loss": round(last, 5), "first_call_s": round(first_call, 2)}), flush=True)
    del m, opt, step


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("cases", nargs="*", default=["decoder-small", "decoder"])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmups", type=int, default=3)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--impls", default="eager,compile,compile-cudagraphs")
    a = p.parse_args()
    print(json.dumps({"torch": torch.__version__, "gpu": torch.cuda.get_device_name()}), flush=True)
    for c in a.cases:
        for impl in a.impls.split(","):
            try:
                run(c, impl, a.steps, a.warmups, a.vocab)
            except Exception as e:  # one impl failing (a compile error) must not hide the others
                print(json.dumps({"case": c, "impl": impl, "error": f"{type(e).__name__}: {e}"[:400]}), flush=True)
