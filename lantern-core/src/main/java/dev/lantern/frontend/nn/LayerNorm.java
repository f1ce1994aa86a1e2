package dev.lantern.frontend.nn;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.ParamInit;
import dev.lantern.frontend.Value;
import dev.lantern.ir.DType;
import dev.lantern.ir.TensorType;

/** Layer normalisation over the last axis with weight and bias, as torch.nn.LayerNorm. */
public record LayerNorm(String name, int dim, double eps, DType dtype) {
    public Value forward(GraphBuilder g, Value x) {
        Value w = g.param(name + ".weight", TensorType.of(dtype, dim), ParamInit.around(1f, 0.1f));
        Value b = g.param(name + ".bias", TensorType.of(dtype, dim), ParamInit.normal(0.02f));
        return g.layerNorm(x, w, b, eps);
    }
}
