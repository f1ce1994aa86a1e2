package dev.lantern.frontend.hf;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.weights.JsonValue;

import java.util.Map;
import java.util.Set;

/**
 * LlamaForCausalLM: token embedding, pre-RMSNorm blocks (causal attention with rotate-half RoPE of
 * base rope_theta on q and k, grouped-query when num_key_value_heads < num_attention_heads; the
 * SiLU-gated MLP down(silu(gate(x))·up(x))), the final norm and the LM head (lm_head.weight, or the
 * embedding when tie_word_embeddings). Output: logits (batch, seq, vocab).
 */
record LlamaBuilder(int vocab, int positions, int hidden, int layers, int heads, int kvHeads, int headDim, int inner, double eps,
                    double theta, boolean attnBias, boolean mlpBias, boolean tied) implements HfModel.Builder {
    static LlamaBuilder of(HfConfig c) {
        int hidden = c.positive("hidden_size");
        int heads = c.positive("num_attention_heads");
        int kv = c.positive("num_key_value_heads", heads);
        if (heads % kv != 0) {
            throw c.unsupported("num_key_value_heads", Integer.toString(kv), "a divisor of num_attention_heads " + heads);
        }
        int headDim = c.positive("head_dim", hidden / heads);
        if (headDim % 2 != 0 || (!c.has("head_dim") && hidden % heads != 0)) {
            throw c.unsupported("num_attention_heads", Integer.toString(heads), "an even head size that divides hidden_size " + hidden);
        }
        String act = c.string("hidden_act", "silu");
        if (!act.equals("silu")) {
            throw c.unsupported("hidden_act", HfConfig.quote(act), "silu");
        }
        return new LlamaBuilder(c.positive("vocab_size"), c.positive("max_position_embeddings", Integer.MAX_VALUE), hidden,
                c.positive("num_hidden_layers"), heads, kv, headDim, c.positive("intermediate_size"), c.number("rms_norm_eps", 1e-6),
                theta(c), c.bool("attention_bias", false), c.bool("mlp_bias", false), c.bool("tie_word_embeddings", false));
    }

    /** rope_theta, at the top level (transformers 4) or in rope_parameters (transformers 5); only unscaled RoPE. */
    private static double theta(HfConfig c) {
        for (String field : new String[] {"rope_scaling", "rope_parameters"}) {
            Map<String, JsonValue> rope = c.object(field);
            if (rope == null) {
                continue;
            }
            JsonValue type = rope.getOrDefault("rope_type", rope.get("type"));
            if (type != null && !(type instanceof JsonValue.JsonString s && s.value().equals("default"))) {
                throw c.unsupported(field, "a " + type.kind() + " rope_type other than \"default\"", "unscaled RoPE (rope_type \"default\")");
            }
            if (rope.get("rope_theta") instanceof JsonValue.JsonNumber n && !c.has("rope_theta")) {
                try {
                    return Double.parseDouble(n.literal());
                } catch (NumberFormatException e) {
                    throw c.unsupported(field, "rope_theta " + n.literal(), "a finite rope_theta");
                }
            }
        }
        double theta = c.number("rope_theta", 10000.0);
        if (theta <= 0) {
            throw c.unsupported("rope_theta", Double.toString(theta), "a positive base");
        }
        return theta;
    }

    @Override
    public Graph build(int batch, int seq, Set<String> tensors, String where) {
        HfModel.checkSeq(seq, positions, "max_position_embeddings");
        HfLayers l = new HfLayers(new GraphBuilder("llama"), tensors, where);
        GraphBuilder g = l.g;
        Value ids = g.input("input_ids", TensorType.of(DType.I64, batch, seq));
        Value embed = l.param("model.embed_tokens.weight", vocab, hidden);
        Value x = l.embed(embed, ids);
        double scale = 1 / Math.sqrt(headDim);
        for (int i = 0; i < layers; i++) {
            String n = "model.layers." + i + ".";
            Value h = l.rmsNorm(x, n + "input_layernorm", hidden, eps);
            Value q = l.splitHeads(l.linear(h, n + "self_attn.q_proj", hidden, heads * headDim, attnBias), batch, seq, heads, headDim);
            Value k = l.splitHeads(l.linear(h, n + "self_attn.k_proj", hidden, kvHeads * headDim, attnBias), batch, seq, kvHeads, headDim);
            Value v = l.splitHeads(l.linear(h, n + "self_attn.v_proj", hidden, kvHeads * headDim, attnBias), batch, seq, kvHeads, headDim);
            Value a = l.attention(g.rope(q, theta), g.rope(k, theta), v, heads, kvHeads, true, scale, null);
            x = g.add(x, l.linear(a, n + "self_attn.o_proj", heads * headDim, hidden, attnBias));
            h = l.rmsNorm(x, n + "post_attention_layernorm", hidden, eps);
            Value gate = g.op(Op.SILU, Attrs.EMPTY, l.linear(h, n + "mlp.gate_proj", hidden, inner, mlpBias));
            Value up = l.linear(h, n + "mlp.up_proj", hidden, inner, mlpBias);
            x = g.add(x, l.linear(g.mul(gate, up), n + "mlp.down_proj", inner, hidden, mlpBias));
        }
        x = l.rmsNorm(x, "model.norm", hidden, eps);
        Value head = tied ? embed : l.param("lm_head.weight", vocab, hidden);
        return g.build(g.matmulNT(x, head));
    }
}
