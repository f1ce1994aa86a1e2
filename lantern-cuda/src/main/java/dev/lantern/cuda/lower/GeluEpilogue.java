package dev.lantern.cuda.lower;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.ElementwiseOp;
import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.ir.DType;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import dev.lantern.plan.MemoryPlan;
import java.util.List;
import java.util.Map;

/**
 * A training step's GELU around a GEMM, folded into cuBLASLt's epilogue: the elementwise kernel that
 * follows the GEMM is not launched, the GEMM writes its output.
 * <ul>
 *   <li>Forward, {@code y = gelu_tanh(h)} with {@code h = a·b} kept for the backward:
 *       {@link GemmSpec.Epilogue#GELU_AUX} writes y to D and h to the auxiliary matrix (one write of
 *       h and no read of it, where the GEMM then the kernel wrote h, read it and wrote y).</li>
 *   <li>Backward, {@code dh = gelu_tanh_grad(h, g)} with {@code g = dy·wᵀ} read by nothing else:
 *       {@link GemmSpec.Epilogue#DGELU} reads h as the auxiliary matrix and writes dh (g is never
 *       written: at the decoder block's 16 384 × 16 384 bf16, 1 GB less traffic).</li>
 * </ul>
 * The fold moves the kernel's write earlier, to the GEMM, so it is taken only when that is safe:
 * the kernel's output shares no bytes with any value live from the GEMM up to the kernel (the
 * memory plan's placements), other than the GEMM's own output when the kernel writes over it.
 * Only fused compilations fold (the eager step stays one kernel per op); the system property
 * {@code lantern.gemm.gelu.epilogue=false} keeps the two launches (for A/B timing). cuBLASLt's
 * GELU is the tanh form; the erf form is never folded.
 */
final class GeluEpilogue {
    private GeluEpilogue() {}

    /** A fold: the epilogue, the buffer D becomes (the kernel's output), the auxiliary matrix, and the kernel not launched. */
    record Fold(GemmSpec.Epilogue epilogue, View d, Buf aux, Kernel absorbed) {}

    /**
     * The fold of the elementwise kernel after GEMM {@code gemm}, whose output {@code out} is a
     * dense D of a 16-bit dtype with rows {@code n} wide (a multiple of 8), or null.
     */
    static Fold find(Kernel gemm, View out, LoweringContext cx) {
        if (!cx.model.options().fuse() || "false".equals(System.getProperty("lantern.gemm.gelu.epilogue"))
                || out.dtype() == DType.F32 || !out.contiguous() || out.shape().dim(-1) % 8 != 0) {
            return null;
        }
        String g = gemm.output().value();
        if (cx.outputStorage.contains(g)) {
            return null;
        }
        Kernel next = null;
        int readers = 0;
        for (Kernel k : cx.model.kernels()) {
            if (k.index() > gemm.index() && DeferredWrite.reads(k, g)) {
                next = next == null ? k : next;
                readers++;
            }
        }
        if (next == null || !next.node().op().isElementwise()) {
            return null;
        }
        List<ElementwiseSpec.Step> chain = ExpressionChain.of(next.node(), next.inputs().size());
        if (chain.size() != 1 || chain.getFirst().roundTo() != null || next.output().dtype() != out.dtype()
                || !next.output().contiguous() || !next.output().shape().equals(out.shape())) {
            return null;
        }
        ElementwiseSpec.Step step = chain.getFirst();
        List<Operand> in = next.inputs();
        Fold fold = null;
        if (step.op() == ElementwiseOp.GELU_TANH && in.size() == 1 && denseOver(in.get(0), g, out)) {
            fold = new Fold(GemmSpec.Epilogue.GELU_AUX, cx.out(next), out.buf(), next);
        } else if (step.op() == ElementwiseOp.GELU_TANH_GRAD && in.size() == 2 && step.args().equals(List.of(0, 1))
                && readers == 1 && denseOver(in.get(1), g, out) && dense(in.get(0), out)
                && !in.get(0).storage().equals(g) && !in.get(0).storage().equals(next.output().storage())) {
            fold = new Fold(GemmSpec.Epilogue.DGELU, cx.out(next), cx.view(in.get(0)).buf(), next);
        }
        return fold != null && writableAt(gemm, next, cx, fold.epilogue() == GemmSpec.Epilogue.DGELU ? in.get(0).storage() : g)
                ? fold : null;
    }

    /** Whether {@code o} reads GEMM output {@code g} whole, as D is laid out. */
    private static boolean denseOver(Operand o, String g, View out) {
        return o.value().equals(g) && o.storage().equals(g) && dense(o, out);
    }

    private static boolean dense(Operand o, View out) {
        return o.dtype() == out.dtype() && o.shape().equals(out.shape()) && o.contiguous();
    }

    /**
     * Whether {@code next}'s output may be written when {@code gemm} runs: its bytes overlap no value
     * live at a kernel from the GEMM to the one before {@code next}, except the GEMM's own output
     * when the kernel writes in place over it (DGELU: the GEMM no longer writes it); never the
     * auxiliary matrix {@code aux}'s.
     */
    private static boolean writableAt(Kernel gemm, Kernel next, LoweringContext cx, String aux) {
        MemoryPlan plan = cx.model.plan();
        String outStorage = next.output().storage();
        Map<String, MemoryPlan.Placement> at = plan.byValue();
        MemoryPlan.Placement mine = at.get(outStorage);
        String over = plan.inPlace().get(next.output().value());
        if (mine == null || aux.equals(over) || aux.equals(outStorage)) {
            return false;
        }
        for (MemoryPlan.Placement p : plan.placements()) {
            String v = p.buffer().value();
            if (v.equals(outStorage) || v.equals(over) && v.equals(gemm.output().value())) {
                continue;
            }
            boolean live = p.buffer().first() <= next.index() - 1 && p.buffer().last() >= gemm.index();
            if (live && p.offset() < mine.end() && mine.offset() < p.end()) {
                return false;
            }
        }
        return true;
    }
}
