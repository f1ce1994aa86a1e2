package dev.lantern.autodiff;

import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.EnumMap;
import java.util.Map;

/**
 * The table from op to its gradient rule, filled by one small class per op family. An op absent
 * here has no rule: {@link #rule} says why in a {@link GradientException} naming the node.
 */
final class VjpRules {
    private VjpRules() {}

    private static final Map<Op, VjpRule> TABLE = new EnumMap<>(Op.class);

    static {
        ElementwiseVjp.register(TABLE);
        LinearVjp.register(TABLE);
        RowwiseVjp.register(TABLE);
        MovementVjp.register(TABLE);
        ReductionVjp.register(TABLE);
        AttentionVjp.register(TABLE);
    }

    /** Whether {@code op} has a rule. */
    static boolean has(Op op) {
        return TABLE.containsKey(op);
    }

    /** The rule of {@code n}'s op; a {@link GradientException} that names the node and the reason otherwise. */
    static VjpRule rule(Node n) {
        VjpRule r = TABLE.get(n.op());
        if (r != null) {
            return r;
        }
        String why = switch (n.op()) {
            case GEMM, FUSED_NORM, NORM_WEIGHT_GRAD, ELEMENTWISE_FUSED ->
                    "a fusion-made op has no gradient rule: differentiate the graph before fusion (the builders and the ONNX importer emit primitive ops)";
            case GELU_GRAD, SILU_GRAD, RELU_GRAD, SOFTMAX_GRAD, RMS_NORM_GRAD, LAYER_NORM_GRAD, CROSS_ENTROPY_GRAD,
                 ATTENTION_LSE, ATTENTION_GRAD_Q, ATTENTION_GRAD_KV ->
                    "a gradient helper op has no gradient rule (second-order gradients are not supported)";
            default -> "no gradient rule for op " + n.op().text();
        };
        throw new GradientException(n, why);
    }
}
