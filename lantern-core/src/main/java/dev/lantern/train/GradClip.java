package dev.lantern.train;

import dev.lantern.cpu.CpuConfig;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Clipping by global L2 norm with {@code torch.nn.utils.clip_grad_norm_}'s semantics: the total
 * norm is the L2 norm of all gradients together; when it exceeds {@code maxNorm}, every gradient
 * is multiplied by {@code f32(maxNorm) / (total + 1e-6)}, a coefficient clamped at 1 (so a norm
 * under the limit leaves the gradients' bits as they are). A non-finite norm is returned as it is
 * and, as in PyTorch without {@code error_if_nonfinite}, scales the gradients by NaN or 0; under a
 * loss scaler that step is skipped before it gets here.
 *
 * <p>The sum of squares is taken in double, in a fixed order within each chunk (vector lanes, then
 * the tail), and the chunks' partials are added in chunk order ({@link MultiTensor}): the norm is
 * the same for any thread count (on one machine: the lane count is the CPU's vector width), and
 * within an f32 rounding of the exact norm.
 */
public final class GradClip {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VectorSpecies<Float> F = CpuConfig.F;
    /** Doubles of the same vector width: half the lanes, so a float vector widens into two. */
    private static final VectorSpecies<Double> D = VectorSpecies.of(double.class, VectorShape.forBitSize(F.vectorBitSize()));
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private GradClip() {}

    /** The L2 norm of every gradient in {@code plan} together, rounded to f32. */
    public static float globalNorm(MultiTensor plan) {
        double[] partial = plan.map((p, i, start, end) -> {
            MemorySegment g = p.grad().segment();
            double s = 0;
            long e = start;
            if (CpuConfig.VECTOR) {
                // two double accumulators per float vector; a float's square is exact in double
                DoubleVector lo = DoubleVector.zero(D);
                DoubleVector hi = DoubleVector.zero(D);
                for (long bound = start + (end - start) / F.length() * F.length(); e < bound; e += F.length()) {
                    FloatVector x = FloatVector.fromMemorySegment(F, g, e * 4, LE);
                    DoubleVector a = (DoubleVector) x.convertShape(VectorOperators.F2D, D, 0);
                    DoubleVector b = (DoubleVector) x.convertShape(VectorOperators.F2D, D, 1);
                    lo = a.fma(a, lo);
                    hi = b.fma(b, hi);
                }
                s = lo.add(hi).reduceLanes(VectorOperators.ADD);
            }
            for (; e < end; e++) {
                double x = g.getAtIndex(F32, e);
                s += x * x;
            }
            return s;
        });
        double total = 0;
        for (double s : partial) {
            total += s;
        }
        return (float) Math.sqrt(total);
    }

    /**
     * Clips the gradients of {@code plan} to a global L2 norm of {@code maxNorm}; returns the
     * total norm before clipping.
     */
    public static float clipGradNorm(MultiTensor plan, double maxNorm) {
        if (!(maxNorm > 0)) {
            throw new IllegalArgumentException("max norm must be positive, got " + maxNorm);
        }
        float total = globalNorm(plan);
        float coef = (float) maxNorm / (total + 1e-6f);
        // NOTE: clamp as torch.clamp(max=1) does: a NaN coefficient stays NaN
        if (coef >= 1f) {
            return total;
        }
        plan.forEach((p, i, start, end) -> {
            MemorySegment g = p.grad().segment();
            long e = start;
            if (CpuConfig.VECTOR) {
                for (long bound = start + (end - start) / F.length() * F.length(); e < bound; e += F.length()) {
                    FloatVector.fromMemorySegment(F, g, e * 4, LE).mul(coef).intoMemorySegment(g, e * 4, LE);
                }
            }
            for (; e < end; e++) {
                g.setAtIndex(F32, e, g.getAtIndex(F32, e) * coef);
            }
        });
        return total;
    }
}
