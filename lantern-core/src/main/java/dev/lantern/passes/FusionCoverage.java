package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.OpKind;

/**
 * fusion_coverage = absorbed ÷ counted, over non-GEMM compute ops.
 * <ul>
 * <li>counted: the compute ops of the graph an eager run executes (after canonicalize, and after
 *     autocast when it is on, but before any fusion) that are not matmuls and not free: every
 *     elementwise, row-wise (norms, softmax, rope) and movement op, and every view that an eager
 *     run must copy: a permute or transpose that reorders non-unit axes and that layout-normalize
 *     left contiguous (its reader needs a copy), a slice. Free views are not counted, by the rule
 *     that both eager runs (CPU {@code EagerExecutor}, GPU {@code CudaSession}) and the kernel
 *     partition use ({@code KernelLowering.isFree}): a reshape of a contiguous value, and a permute
 *     that layout-normalize made a strided view (its readers take the strides), cost nothing in
 *     eager either, so counting them would credit fusion with removing work that eager never did.
 * <li>absorbed: counted minus the ops of the fused graph that still run as a kernel of their own
 *     that holds nothing else: a lone primitive op (a plain rms_norm, a softmax, a permute copy).
 *     A view that fusion turned into strides of a kernel's operand is absorbed; so is every op
 *     inside a gemm epilogue, a fused_norm, an attention or an elementwise expression.
 * </ul>
 */
public record FusionCoverage(int counted, int standalone) {
    public double value() {
        return counted == 0 ? 1.0 : (double) (counted - standalone) / counted;
    }

    public static FusionCoverage of(Graph unfused, Graph fused) {
        int counted = 0;
        for (Node n : unfused.nodes()) {
            counted += counts(n, unfused) ? 1 : 0;
        }
        int standalone = 0;
        for (Node n : fused.nodes()) {
            boolean copyView = n.op() == Op.PERMUTE || n.op() == Op.TRANSPOSE ? n.type().layout().isContiguous() : n.op() == Op.SLICE;
            boolean primitive = n.op().kind() == OpKind.ELEMENTWISE && n.op() != Op.ELEMENTWISE_FUSED
                    || n.op().kind() == OpKind.ROWWISE || n.op().kind() == OpKind.MOVEMENT || n.op().kind() == OpKind.REDUCTION;
            standalone += counts(n, fused) && (primitive || copyView) ? 1 : 0;
        }
        return new FusionCoverage(counted, Math.min(standalone, counted));
    }

    /** Whether an eager run executes {@code n} as a non-GEMM op of its own (see the class comment). */
    static boolean counts(Node n, Graph g) {
        return switch (n.op().kind()) {
            case SOURCE, GEMM, COMPOSITE -> false; // composites are fused already: no primitive op to absorb
            case ELEMENTWISE, ROWWISE, MOVEMENT, REDUCTION -> n.op() != Op.ELEMENTWISE_FUSED;
            case VIEW -> switch (n.op()) {
                case PERMUTE -> n.type().layout().isContiguous() && !Build.movesNothing(g.type(n.input(0)).shape(), n.attrs().getInts("perm"));
                case TRANSPOSE -> n.type().layout().isContiguous();
                case SLICE -> true;
                default -> !g.type(n.input(0)).layout().isContiguous();
            };
        };
    }

    @Override
    public String toString() {
        return String.format("%.3f (%d of %d non-GEMM ops absorbed)", value(), counted - standalone, counted);
    }
}
