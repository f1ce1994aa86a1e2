package dev.lantern.frontend.nn;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.ParamInit;
import dev.lantern.frontend.Value;
import dev.lantern.ir.DType;
import dev.lantern.ir.TensorType;

/** y = x · W (+ b), W (in, out), b (out). As torch.nn.Linear, but W stored input-major. */
public record Linear(String name, int in, int out, boolean bias, DType dtype) {
    public Value forward(GraphBuilder g, Value x) {
        Value w = g.param(name + ".weight", TensorType.of(dtype, in, out), ParamInit.normal((float) (1 / Math.sqrt(in))));
        Value y = g.matmul(x, w); // (..., out)
        if (bias) {
            Value b = g.param(name + ".bias", TensorType.of(dtype, out), ParamInit.normal(0.02f));
            y = g.add(y, b);
        }
        return y;
    }
}
