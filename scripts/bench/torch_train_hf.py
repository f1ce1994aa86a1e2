#!/usr/bin/env python3
"""PyTorch's training step on a LLaMA-shaped transformers model, beside `lantern bench train --model`
on the same architecture exported to ONNX (scripts/gpu-train-model runs both in one device call).

The model: transformers' LlamaForCausalLM with random weights (seed 0) in the shape of a 1B LLaMA
(hidden 2048, 16 heads, 8 key/value heads, MLP 8192, vocabulary 32000), cut to --layers layers.
First it is exported (f32, eager attention, dynamo, opset 18, weights as external data), as
scripts/gpu-models exports its models, to --export FILE.onnx: the file Lantern trains. Then a
step is timed as Lantern's is: zero_grad, forward and backward under bf16 autocast (f32 master
weights), the mean cross-entropy of the logits against random next tokens, clip_grad_norm_(1.0),
AdamW (lr 1e-3, weight decay 0.01, fused on CUDA). Impls: eager, compile (torch.compile), and
compile-cudagraphs (mode reduce-overhead). One JSON line per impl, as torch_train.py writes them:
{"case", "impl", "step_ms", "step_ms_min", "tokens_per_s", "peak_mib", "first_loss", "last_loss"}.

    python3 torch_train_hf.py --layers 4 --batch 4 --seq 512 --export /tmp/llama-1b-L4.onnx [--device cuda]
        [--steps 10] [--warmups 3] [--impls eager,compile,compile-cudagraphs] [--tiny]

--tiny: hidden 64, 4 heads, 2 key/value heads, MLP 128, vocabulary 97 (the tests' size, on the CPU).
"""
import argparse, json, os, sys, time
import torch, torch.nn.functional as F, transformers

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=4)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--seq", type=int, default=512)
p.add_argument("--export", required=True)
p.add_argument("--device", default="cuda")
p.add_argument("--steps", type=int, default=10)
p.add_argument("--warmups", type=int, default=3)
p.add_argument("--impls", default="eager,compile,compile-cudagraphs")
p.add_argument("--tiny", action="store_true")
a = p.parse_args()

if a.tiny:
    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=128, num_hidden_layers=a.layers,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096)
else:
    cfg = transformers.LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=8192, num_hidden_layers=a.layers,
                                   num_attention_heads=16, num_key_value_heads=8, max_position_embeddings=4096)
cfg._attn_implementation = "eager"  # the exporter writes attention as MatMul/Softmax, which Lantern's importer fuses
case = os.path.basename(a.export)


class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        return self.m(input_ids=input_ids, use_cache=False).logits


torch.manual_seed(0)
model = transformers.LlamaForCausalLM(cfg).float().eval()
t0 = time.time()
os.makedirs(os.path.dirname(os.path.abspath(a.export)), exist_ok=True)
ids = torch.randint(0, cfg.vocab_size, (2, 16))
dyn = ({0: torch.export.Dim("batch", max=64), 1: torch.export.Dim("sequence", max=4096)},)
with torch.no_grad():
    torch.onnx.export(Logits(model), (ids,), a.export, input_names=["input_ids"], output_names=["logits"],
                      dynamic_shapes=dyn, opset_version=18, dynamo=True, external_data=True, optimize=True)
print(f"exported {a.export} in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
print(json.dumps({"torch": torch.__version__, "device": a.device, "case": case, "layers": a.layers}), flush=True)

dev = torch.device(a.device)
cuda = dev.type == "cuda"
cfg._attn_implementation = "sdpa"  # PyTorch's own best attention for its side
for impl in a.impls.split(","):
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(cfg).float().to(dev).train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01, fused=cuda)
    fwd = m
    if impl == "compile":
        fwd = torch.compile(m)
    elif impl == "compile-cudagraphs":
        fwd = torch.compile(m, mode="reduce-overhead")
    x = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device=dev)
    y = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            logits = fwd(input_ids=x, use_cache=False).logits
            loss = F.cross_entropy(logits.float().view(-1, cfg.vocab_size), y.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        return loss

    if cuda:
        torch.cuda.reset_peak_memory_stats()
    t_first = time.time()
    first = step().item()
    first_s = time.time() - t_first
    for _ in range(max(0, a.warmups - 1)):
        step()
    ts = []
    last = first
    for _ in range(a.steps):
        if cuda:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            loss = step()
            e1.record()
            torch.cuda.synchronize()
            ts.append(e0.elapsed_time(e1))
        else:
            t = time.perf_counter()
            loss = step()
            ts.append((time.perf_counter() - t) * 1e3)
        last = loss.item()
    ts.sort()
    ms = ts[len(ts) // 2]
    print(json.dumps({"case": case, "impl": impl, "step_ms": round(ms, 4), "step_ms_min": round(ts[0], 4),
                      "tokens_per_s": round(a.batch * a.seq / ms * 1e3), "peak_mib": round(torch.cuda.max_memory_allocated() / 2**20) if cuda else None,
                      "first_loss": round(first, 5), "last_loss": round(last, 5), "first_call_s": round(first_s, 2)}), flush=True)
    del m, opt, fwd
    if cuda:
        torch.cuda.empty_cache()
