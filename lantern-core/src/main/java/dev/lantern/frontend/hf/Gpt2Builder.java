package dev.lantern.frontend.hf;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.TensorType;

import java.util.Set;

/**
 * GPT2LMHeadModel: learned token and position embeddings, pre-LN blocks (ln_1, causal attention
 * through one fused q|k|v Conv1D, ln_2, Conv1D MLP), ln_f, and the LM head tied to wte unless the
 * config unties it. Output: logits (batch, seq, vocab).
 */
record Gpt2Builder(int vocab, int positions, int hidden, int layers, int heads, int inner, double eps, boolean tanhGelu,
                   boolean scaleAttn, boolean tied) implements HfModel.Builder {
    static Gpt2Builder of(HfConfig c) {
        int hidden = c.positive("n_embd");
        int heads = c.positive("n_head");
        if (hidden % heads != 0) {
            throw c.unsupported("n_head", Integer.toString(heads), "a head count that divides n_embd " + hidden);
        }
        String act = c.string("activation_function", "gelu_new");
        boolean tanh = switch (act) {
            case "gelu_new", "gelu_pytorch_tanh", "gelu_fast" -> true;
            case "gelu" -> false;
            default -> throw c.unsupported("activation_function", HfConfig.quote(act), "gelu_new, gelu_pytorch_tanh or gelu");
        };
        if (c.bool("scale_attn_by_inverse_layer_idx", false)) {
            throw c.unsupported("scale_attn_by_inverse_layer_idx", "true", "false");
        }
        return new Gpt2Builder(c.positive("vocab_size"), c.positive("n_positions"), hidden, c.positive("n_layer"), heads,
                c.positive("n_inner", 4 * hidden), c.number("layer_norm_epsilon", 1e-5), tanh,
                c.bool("scale_attn_weights", true), c.bool("tie_word_embeddings", true));
    }

    /** GPT2LMHeadModel's tensors sit under "transformer."; the original checkpoints have none. */
    static String prefix(Set<String> tensors) {
        return tensors.contains("transformer.wte.weight") ? "transformer." : "";
    }

    @Override
    public Graph build(int batch, int seq, Set<String> tensors, String where) {
        HfModel.checkSeq(seq, positions, "n_positions");
        String p = prefix(tensors);
        HfLayers l = new HfLayers(new GraphBuilder("gpt2"), tensors, where);
        GraphBuilder g = l.g;
        Value ids = g.input("input_ids", TensorType.of(DType.I64, batch, seq));
        Value wte = l.param(p + "wte.weight", vocab, hidden);
        Value pos = l.slice(l.param(p + "wpe.weight", positions, hidden), 0, 0, seq);
        Value x = g.add(l.embed(wte, ids), pos);
        int d = hidden / heads;
        for (int i = 0; i < layers; i++) {
            String n = p + "h." + i + ".";
            Value h = l.layerNorm(x, n + "ln_1", hidden, eps);
            Value qkv = l.conv1d(h, n + "attn.c_attn", hidden, 3 * hidden);
            Value q = l.splitHeads(l.slice(qkv, 2, 0, hidden), batch, seq, heads, d);
            Value k = l.splitHeads(l.slice(qkv, 2, hidden, 2 * hidden), batch, seq, heads, d);
            Value v = l.splitHeads(l.slice(qkv, 2, 2 * hidden, 3 * hidden), batch, seq, heads, d);
            Value a = l.attention(q, k, v, heads, heads, true, scaleAttn ? 1 / Math.sqrt(d) : 1.0, null);
            x = g.add(x, l.conv1d(a, n + "attn.c_proj", hidden, hidden));
            h = l.layerNorm(x, n + "ln_2", hidden, eps);
            h = g.gelu(l.conv1d(h, n + "mlp.c_fc", hidden, inner), tanhGelu);
            x = g.add(x, l.conv1d(h, n + "mlp.c_proj", inner, hidden));
        }
        x = l.layerNorm(x, p + "ln_f", hidden, eps);
        Value head = tied ? wte : l.param("lm_head.weight", vocab, hidden);
        return g.build(g.matmulNT(x, head));
    }
}
