#!/usr/bin/env python3
"""PyTorch CPU beside `lantern bench cpu --torch`: one warm process the benchmark drives over stdin.

  python scripts/bench/torch_peer.py SPEC THREADS
SPEC: a block, as export_block.py takes it (a config name or B,S,H,N,M[,encoder]: the same module,
random weights), or gpt2:BxS (transformers' GPT2LMHeadModel at the GPT-2-small shape that
make_gpt2_small.py exports: 12 layers, hidden 768, vocab 50257; random weights, random token ids).
Timing only: the output is not compared with Lantern's (the weights differ).

Protocol: prints "ready <torch version>" once the model is built, then for each line "run" on stdin
runs one forward under inference_mode and prints "<wall ms> <thread cpu ms>" measured around the
forward alone (so the pipe costs nothing); "quit" or end of input ends it. torch.set_num_threads
(THREADS) and one inter-op thread, as ONNX Runtime's session is set up beside it.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(spec):
    import torch
    torch.manual_seed(0)
    if spec.startswith("gpt2:"):
        import transformers
        batch, seq = map(int, spec[5:].split("x"))
        cfg = transformers.GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12)
        model = transformers.GPT2LMHeadModel(cfg).eval()
        ids = torch.randint(0, cfg.vocab_size, (batch, seq))
        return lambda: model(input_ids=ids, use_cache=False).logits
    from export_block import Block, parse
    batch, seq, hidden, heads, mlp, decoder = parse(spec)
    block = Block(seq, hidden, heads, mlp, decoder).eval()
    x = torch.randn(batch, seq, hidden)
    return lambda: block(x)


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: torch_peer.py SPEC THREADS")
    import torch
    threads = int(sys.argv[2])
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set: only possible before the first parallel op
    forward = build(sys.argv[1])
    print("ready", torch.__version__, flush=True)
    with torch.inference_mode():
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "quit":
                break
            if cmd != "run":
                raise SystemExit(f"torch_peer: unknown request '{cmd}'")
            c0, t0 = time.thread_time(), time.perf_counter()
            forward()
            t1, c1 = time.perf_counter(), time.thread_time()
            print(f"{(t1 - t0) * 1e3:.6f} {(c1 - c0) * 1e3:.6f}", flush=True)


if __name__ == "__main__":
    main()
