package dev.lantern.autodiff;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;

import java.util.Map;

/**
 * softmax, the norms and rope. Why dedicated ops for the norms' dx (rms_norm_grad,
 * layer_norm_grad) rather than a composition: the IR has no sqrt, and a composition would need
 * three row reductions (mean, mean of g·x̂, mean of g) each a kernel and a pass over memory; the
 * dedicated op recomputes the row statistics in f32 and reads x and dy once, the shape of the
 * forward norm kernel. The weight and bias gradients are compositions: x̂ is the forward norm
 * itself with a weight of ones (no new op), then dw = Σ_rows dy·x̂ and db = Σ_rows dy. Fused
 * compilation makes dw one norm_weight_grad (fuse-norm), so x̂ is never written there.
 * rope's transpose is rope by −angle ({@code inverse=true}).
 */
final class RowwiseVjp {
    private RowwiseVjp() {}

    static void register(Map<Op, VjpRule> t) {
        t.put(Op.SOFTMAX, (n, dy, need, b) -> new String[] {b.op(Op.SOFTMAX_GRAD,
                Attrs.of("scale", n.op().withDefaults(n.attrs()).getDouble("scale", 1.0)), n.name(), dy)});
        t.put(Op.RMS_NORM, (n, dy, need, b) -> norm(n, dy, need, b, Op.RMS_NORM_GRAD));
        t.put(Op.LAYER_NORM, (n, dy, need, b) -> norm(n, dy, need, b, Op.LAYER_NORM_GRAD));
        t.put(Op.ROPE, (n, dy, need, b) -> {
            Attrs a = n.op().withDefaults(n.attrs());
            boolean inverse = a.getBool("inverse", false);
            Attrs back = Attrs.of("base", a.getDouble("base", 10000.0));
            if (a.getLong("offset", 0) != 0) {
                back = back.with("offset", a.getLong("offset", 0));
            }
            return new String[] {b.op(Op.ROPE, inverse ? back : back.with("inverse", true), dy)};
        });
    }

    private static String[] norm(Node n, String dy, boolean[] need, GradientBuilder b, Op gradOp) {
        Attrs eps = Attrs.of("eps", n.op().withDefaults(n.attrs()).getDouble("eps", 0));
        String x = n.input(0);
        String w = n.input(1);
        String[] out = new String[n.inputs().size()];
        Shape d = b.shape(w);
        if (need[1]) {
            // x̂ = the same norm with weight 1 (and no bias)
            TensorType wt = b.type(w);
            String xhat = b.op(n.op(), eps, x, b.constant(1.0, wt));
            out[1] = b.sumTo(b.mul(dy, xhat), d);
        }
        if (n.inputs().size() > 2 && need[2]) {
            out[2] = b.sumTo(dy, d);
        }
        // dx last, as LinearVjp's: x̂ (as large as x) is dead before dx is written, so the two are
        // never held at once (256 MiB of the 16x1024x4096 decoder step's peak, StepMemoryTest)
        if (need[0]) {
            out[0] = b.op(gradOp, eps, x, w, dy);
        }
        return out;
    }
}
