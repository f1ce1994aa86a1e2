# Writes the GPT-2-small-shaped model of the CPU benchmark (issue 14, deliverable 7) to a folder outside git:
# 12 layers, hidden 768, 12 heads, MLP 3072, vocab 50257, 1024 positions, seeded random weights (nothing is
# downloaded), eval mode, f32, exported as scripts/fixtures/make_model_fixtures.py exports its fixtures:
#   model.onnx (+ model.onnx.data)  torch.onnx.export, dynamo exporter, opset 18, batch and sequence dynamic,
#                                   weights as external data beside the file (about 500 MB, the head tied to the embedding: too big for git)
#   input_ids_b1.npy, input_ids_b8.npy  fixed int64 token ids [1, 128] and [8, 128]
#   model_head_t.onnx (+ .data)     the same graph with the tied head's Transpose(model.lm_head.weight) replaced
#                                   by a pre-transposed initializer: Lantern's importer folds a Transpose of an
#                                   initializer on the host and refuses one past 16 Mi elements (the head is
#                                   50257 x 768), so until that is fixed the benchmark runs both sides on this file
# The benchmark (lantern-bench dev.lantern.bench.Gpt2CpuBench, scripts/bench/gpt2-cpu) reads this folder.
# Usage: python scripts/bench/make_gpt2_small.py [OUT_DIR]   (default /tmp/lantern-bench/gpt2-small)
import json
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import transformers
from transformers import GPT2Config, GPT2LMHeadModel

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/lantern-bench/gpt2-small"
OPSET = 18
SEED = 14
SEQ = 128
BATCHES = (1, 8)
VOCAB = 50257


class Logits(torch.nn.Module):
    """input_ids in, logits out (no cache, no dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, return_dict=True).logits


def head_transposed(src, dst):
    """src with each Transpose of an initializer replaced by the transposed initializer (the same function)."""
    m = onnx.load(src)  # external data loaded: the initializers hold their values
    inits = {t.name: t for t in m.graph.initializer}
    keep = []
    for node in m.graph.node:
        if node.op_type == "Transpose" and node.input[0] in inits:
            perm = [a.ints for a in node.attribute if a.name == "perm"]
            w = onnx.numpy_helper.to_array(inits[node.input[0]])
            t = np.ascontiguousarray(np.transpose(w, perm[0] if perm else None))
            m.graph.initializer.append(onnx.numpy_helper.from_array(t, node.output[0]))
        else:
            keep.append(node)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    data = os.path.basename(dst) + ".data"
    if os.path.exists(os.path.join(OUT, data)):
        os.remove(os.path.join(OUT, data))  # save_model appends to an existing data file
    onnx.save_model(m, dst, save_as_external_data=True, all_tensors_to_one_file=True, location=data)
    onnx.checker.check_model(dst)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(SEED)
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=1024, n_embd=768, n_layer=12, n_head=12, n_inner=3072,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
    model = GPT2LMHeadModel(cfg)
    model.config._attn_implementation = "eager"  # plain MatMul/Softmax attention, as in the fixtures
    model = Logits(model.float().eval()).eval()

    rng = np.random.default_rng(SEED)
    feeds = {b: rng.integers(0, VOCAB, size=(b, SEQ), dtype=np.int64) for b in BATCHES}
    for b, ids in feeds.items():
        np.save(os.path.join(OUT, f"input_ids_b{b}.npy"), ids)

    path = os.path.join(OUT, "model.onnx")
    batch, seq = torch.export.Dim("batch", max=64), torch.export.Dim("sequence", max=1024)
    example = torch.from_numpy(feeds[BATCHES[-1]])  # batch 8: torch.export specialises a dim of size 1 to a constant
    with torch.no_grad():
        torch.onnx.export(model, (example,), path, input_names=["input_ids"], output_names=["logits"],
                          dynamic_shapes=({0: batch, 1: seq},), opset_version=OPSET, dynamo=True,
                          external_data=True, optimize=True)
    onnx.checker.check_model(path)  # by path: the checker reads external data itself
    head_transposed(path, os.path.join(OUT, "model_head_t.onnx"))
    print(json.dumps({"out": OUT, "files": sorted(os.listdir(OUT)), "seed": SEED, "seq": SEQ,
                      "torch": torch.__version__, "transformers": transformers.__version__,
                      "onnx": onnx.__version__, "numpy": np.__version__}))


if __name__ == "__main__":
    main()
