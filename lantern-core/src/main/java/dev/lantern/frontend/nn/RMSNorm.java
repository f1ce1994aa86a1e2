package dev.lantern.frontend.nn;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.ParamInit;
import dev.lantern.frontend.Value;
import dev.lantern.ir.DType;
import dev.lantern.ir.TensorType;

/** Root-mean-square normalisation over the last axis with a weight, as torch.nn.RMSNorm. */
public record RMSNorm(String name, int dim, double eps, DType dtype) {
    public Value forward(GraphBuilder g, Value x) {
        Value w = g.param(name + ".weight", TensorType.of(dtype, dim), ParamInit.around(1f, 0.1f));
        return g.rmsNorm(x, w, eps);
    }
}
