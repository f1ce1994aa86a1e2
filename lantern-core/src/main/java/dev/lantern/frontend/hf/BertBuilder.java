package dev.lantern.frontend.hf;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;

import java.util.Set;

/**
 * BertModel's encoder: LayerNorm(word + position + token type embeddings), post-LN blocks
 * (LN(x + dense(attention(x))), then LN(h + dense(gelu(dense(h))))), attention masked by
 * attention_mask as an additive mask on the scores, as transformers does. Output:
 * last_hidden_state (batch, seq, hidden); the pooler is not built.
 */
record BertBuilder(int vocab, int positions, int types, int hidden, int layers, int heads, int inner, double eps,
                   boolean tanhGelu) implements HfModel.Builder {
    /**
     * What a masked key adds to its score before the softmax: far below any real score, so its
     * weight is exactly 0 in f32, as with transformers' finfo.min, but finite, so no kernel meets
     * inf − inf.
     */
    static final double MASKED = -1e30;

    static BertBuilder of(HfConfig c) {
        int hidden = c.positive("hidden_size");
        int heads = c.positive("num_attention_heads");
        if (hidden % heads != 0) {
            throw c.unsupported("num_attention_heads", Integer.toString(heads), "a head count that divides hidden_size " + hidden);
        }
        String act = c.string("hidden_act", "gelu");
        boolean tanh = switch (act) {
            case "gelu" -> false;
            case "gelu_new", "gelu_pytorch_tanh" -> true;
            default -> throw c.unsupported("hidden_act", HfConfig.quote(act), "gelu, gelu_new or gelu_pytorch_tanh");
        };
        String posType = c.string("position_embedding_type", "absolute");
        if (!posType.equals("absolute")) {
            throw c.unsupported("position_embedding_type", HfConfig.quote(posType), "\"absolute\"");
        }
        return new BertBuilder(c.positive("vocab_size"), c.positive("max_position_embeddings"), c.positive("type_vocab_size", 2),
                hidden, c.positive("num_hidden_layers"), heads, c.positive("intermediate_size"), c.number("layer_norm_eps", 1e-12), tanh);
    }

    /** BertForMaskedLM and the other heads keep the encoder under "bert."; BertModel has no prefix. */
    static String prefix(Set<String> tensors) {
        return tensors.contains("bert.embeddings.word_embeddings.weight") ? "bert." : "";
    }

    @Override
    public Graph build(int batch, int seq, Set<String> tensors, String where) {
        HfModel.checkSeq(seq, positions, "max_position_embeddings");
        String p = prefix(tensors);
        HfLayers l = new HfLayers(new GraphBuilder("bert"), tensors, where);
        GraphBuilder g = l.g;
        Value ids = g.input("input_ids", TensorType.of(DType.I64, batch, seq));
        Value mask = g.input("attention_mask", TensorType.of(DType.I64, batch, seq));
        Value typeIds = g.input("token_type_ids", TensorType.of(DType.I64, batch, seq));
        String e = p + "embeddings.";
        Value x = l.embed(l.param(e + "word_embeddings.weight", vocab, hidden), ids);
        x = g.add(x, l.slice(l.param(e + "position_embeddings.weight", positions, hidden), 0, 0, seq));
        x = g.add(x, l.embed(l.param(e + "token_type_embeddings.weight", types, hidden), typeIds));
        x = l.layerNorm(x, e + "LayerNorm", hidden, eps);
        // (1 − mask)·MASKED as a lookup of each mask id in the table [MASKED, 0] (kernels compute float dtypes
        // only, so the i64 mask is not cast), shaped (b, 1, 1, s) to broadcast over heads and queries.
        // A mask entry other than 0 or 1 is a gather out of range: a run-time error, never a read.
        Value table = g.op(Op.CONCAT, Attrs.of("axis", 0),
                g.reshape(g.constant(MASKED, DType.F32), 1), g.reshape(g.constant(0, DType.F32), 1));
        Value additive = g.reshape(l.embed(table, mask), batch, 1, 1, seq);
        int d = hidden / heads;
        for (int i = 0; i < layers; i++) {
            String n = p + "encoder.layer." + i + ".";
            String s = n + "attention.self.";
            Value q = l.splitHeads(l.linear(x, s + "query", hidden, hidden, true), batch, seq, heads, d);
            Value k = l.splitHeads(l.linear(x, s + "key", hidden, hidden, true), batch, seq, heads, d);
            Value v = l.splitHeads(l.linear(x, s + "value", hidden, hidden, true), batch, seq, heads, d);
            Value a = l.attention(q, k, v, heads, heads, false, 1 / Math.sqrt(d), additive);
            x = l.layerNorm(g.add(x, l.linear(a, n + "attention.output.dense", hidden, hidden, true)),
                    n + "attention.output.LayerNorm", hidden, eps);
            Value h = g.gelu(l.linear(x, n + "intermediate.dense", hidden, inner, true), tanhGelu);
            x = l.layerNorm(g.add(x, l.linear(h, n + "output.dense", inner, hidden, true)), n + "output.LayerNorm", hidden, eps);
        }
        return g.build(x);
    }
}
