package dev.lantern.frontend.nn;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.DType;

/** up-projection, GELU (tanh form), down-projection: (..., hidden) -> (..., mlp) -> (..., hidden). */
public record Mlp(String name, int hidden, int mlp, boolean bias, DType dtype) {
    public Value forward(GraphBuilder g, Value x) {
        Value h = new Linear(name + ".up", hidden, mlp, bias, dtype).forward(g, x);
        h = g.gelu(h, true);
        return new Linear(name + ".down", mlp, hidden, bias, dtype).forward(g, h);
    }
}
