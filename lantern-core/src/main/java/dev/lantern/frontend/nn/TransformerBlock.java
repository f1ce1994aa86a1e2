package dev.lantern.frontend.nn;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.Value;
import dev.lantern.ir.DType;
import dev.lantern.ir.TensorType;

/**
 * A pre-norm transformer block.
 * decoder: x + attn(rms_norm(x)) with RoPE and a causal mask, then + mlp(rms_norm(.)), no biases.
 * encoder: x + attn(layer_norm(x)), then + mlp(layer_norm(.)), with biases everywhere.
 */
public record TransformerBlock(BlockConfig cfg, DType dtype) {
    public Value forward(GraphBuilder g, Value x) {
        boolean dec = cfg.decoder();
        Value h = dec ? new RMSNorm("attn_norm", cfg.hidden(), 1e-6, dtype).forward(g, x)
                : new LayerNorm("attn_norm", cfg.hidden(), 1e-5, dtype).forward(g, x);
        Value a = new Attention("attn", cfg.hidden(), cfg.heads(), dec, dec, !dec, dtype).forward(g, h);
        Value x1 = g.add(x, a);
        Value h2 = dec ? new RMSNorm("mlp_norm", cfg.hidden(), 1e-6, dtype).forward(g, x1)
                : new LayerNorm("mlp_norm", cfg.hidden(), 1e-5, dtype).forward(g, x1);
        Value m = new Mlp("mlp", cfg.hidden(), cfg.mlp(), !dec, dtype).forward(g, h2);
        return g.add(x1, m);
    }

    /** The whole block as a model with one input "x" of shape (batch, seq, hidden). */
    public static Model build(BlockConfig cfg, DType dtype) {
        GraphBuilder g = new GraphBuilder(cfg.name().replace('-', '_') + "_block");
        Value x = g.input("x", TensorType.of(dtype, cfg.batch(), cfg.seq(), cfg.hidden()));
        Value y = new TransformerBlock(cfg, dtype).forward(g, x);
        return g.buildModel(y);
    }
}
