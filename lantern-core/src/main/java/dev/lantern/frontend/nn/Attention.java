package dev.lantern.frontend.nn;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.DType;

/**
 * Multi-head self-attention: q, k, v projections, optional RoPE on q and k, scaled (and optionally
 * causal) softmax of q·kᵀ, then ·v and the output projection. Emitted as primitive ops; fusion
 * recognises the pattern and makes it one attention kernel.
 */
public record Attention(String name, int hidden, int heads, boolean causal, boolean rope, boolean bias, DType dtype) {
    public Value forward(GraphBuilder g, Value x) {
        int b = x.shape().dim(0);
        int s = x.shape().dim(1);
        int hd = hidden / heads;
        Value q = heads(g, new Linear(name + ".q", hidden, hidden, bias, dtype).forward(g, x), b, s, hd);
        Value k = heads(g, new Linear(name + ".k", hidden, hidden, bias, dtype).forward(g, x), b, s, hd);
        Value v = heads(g, new Linear(name + ".v", hidden, hidden, bias, dtype).forward(g, x), b, s, hd);
        if (rope) {
            q = g.rope(q, 10000.0);
            k = g.rope(k, 10000.0);
        }
        Value scores = g.matmulNT(q, k); // (b, heads, s, s)
        Value p = g.softmax(scores, causal, 1 / Math.sqrt(hd));
        Value o = g.matmul(p, v); // (b, heads, s, hd)
        o = g.permute(o, 0, 2, 1, 3); // (b, s, heads, hd)
        o = g.reshape(o, b, s, hidden);
        return new Linear(name + ".o", hidden, hidden, bias, dtype).forward(g, o);
    }

    /** (b, s, hidden) -> (b, heads, s, hd). */
    private Value heads(GraphBuilder g, Value t, int b, int s, int hd) {
        return g.permute(g.reshape(t, b, s, heads, hd), 0, 2, 1, 3);
    }
}
