package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.broadcastStrides;
import static dev.lantern.cuda.lower.LoweringContext.dims;
import static dev.lantern.cuda.lower.LoweringContext.gemmType;
import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.ElementwiseOp;
import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.cuda.codegen.StridedCopySpec;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import java.util.ArrayList;
import java.util.List;

/**
 * gemm / matmul: one cuBLASLt GEMM; bias and GELU(tanh) / ReLU go to its epilogue, one residual to
 * its C input with beta = 1; two residuals to C as well, through the sum the preceding residual
 * norm already wrote (or one elementwise add). What the epilogue cannot express (erf GELU, a
 * residual after an activation, broadcast residuals) runs as an elementwise kernel in place
 * afterwards: a correct path, never a wrong fast one.
 */
final class GemmLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        Node n = k.node();
        boolean ta = n.attrs().getBool("transpose_a", false);
        boolean tb = n.attrs().getBool("transpose_b", false);
        boolean hasBias = n.op() == Op.GEMM && n.attrs().getBool("bias", false);
        String act = n.op() == Op.GEMM ? n.attrs().getString("act", "none") : "none";
        View a = cx.in(k, 0);
        View b = cx.in(k, 1);
        View d = cx.out(k);
        Shape os = d.shape();
        int mm = os.dim(-2);
        int nn = os.dim(-1);
        int kk = ta ? a.shape().dim(-2) : a.shape().dim(-1);
        long batch = os.numel() / ((long) mm * nn);
        if (a.dtype() != b.dtype()) {
            throw new CodegenException("GEMM operands of two dtypes: " + a.dtype() + ", " + b.dtype());
        }
        int m;
        int gemmBatch;
        if (b.shape().rank() == 2 && !ta) {
            m = Math.toIntExact(batch * mm); // fold the batch into M: one GEMM over all rows
            gemmBatch = 1;
        } else {
            // a batched GEMM; an operand broadcast over the batch (grouped-query attention's K and V, and
            // their gradients) is first written out at the full batch, so that cuBLASLt reads dense strides
            if (a.shape().numel() != batch * mm * kk) {
                a = broadcastBatch(a, os);
            }
            if (b.shape().numel() != batch * (long) kk * nn) {
                b = broadcastBatch(b, os);
            }
            m = mm;
            gemmBatch = Math.toIntExact(batch);
        }
        a = cx.contiguous(a);
        b = cx.contiguous(b);
        int next = 2;
        View bias = hasBias ? cx.in(k, next++) : null;
        List<View> residuals = new ArrayList<>();
        for (; next < k.inputs().size(); next++) {
            residuals.add(cx.in(k, next));
        }
        // cuBLASLt's bias epilogue takes a bias of D's dtype: an f32 bias on a bf16 output (autocast keeps
        // biases f32) is refused by its heuristics (CUBLAS_STATUS_INVALID_VALUE on the H200), so it is added after
        boolean biasInEpilogue = bias != null && bias.shape().rank() == 1 && bias.shape().dim(0) == nn && bias.contiguous()
                && bias.dtype() == d.dtype();
        GemmSpec.Epilogue epi;
        boolean actInEpilogue = true;
        switch (act) {
            case "none" -> epi = biasInEpilogue ? GemmSpec.Epilogue.BIAS : GemmSpec.Epilogue.NONE;
            case "gelu_tanh", "gelu" -> epi = biasInEpilogue ? GemmSpec.Epilogue.GELU_BIAS : GemmSpec.Epilogue.GELU;
            case "relu" -> epi = biasInEpilogue ? GemmSpec.Epilogue.RELU_BIAS : GemmSpec.Epilogue.RELU;
            default -> {
                epi = biasInEpilogue ? GemmSpec.Epilogue.BIAS : GemmSpec.Epilogue.NONE;
                actInEpilogue = false;
            }
        }
        if (bias != null && !biasInEpilogue && !act.equals("none")) {
            epi = GemmSpec.Epilogue.NONE; // bias, then the activation, both after the GEMM
            actInEpilogue = false;
        }
        if (actInEpilogue && (epi == GemmSpec.Epilogue.GELU || epi == GemmSpec.Epilogue.GELU_BIAS)
                && cx.splitGelu(new GemmSpec(m, nn, kk, gemmBatch, ta, tb, gemmType(a.dtype()), gemmType(d.dtype()), epi,
                epi.hasBias() ? gemmType(bias.dtype()) : null))) {
            epi = epi.hasBias() ? GemmSpec.Epilogue.BIAS : GemmSpec.Epilogue.NONE; // tuned: GEMM, then GELU in place
            actInEpilogue = false;
        }
        // C carries the residuals only when nothing non-linear follows the sum inside cuBLASLt
        Buf c = null;
        boolean cFits = act.equals("none") && (bias == null || biasInEpilogue) && !residuals.isEmpty()
                && residuals.stream().allMatch(r -> r.shape().equals(os) && r.contiguous() && r.dtype() == d.dtype());
        if (cFits && residuals.size() == 1) {
            c = residuals.getFirst().buf();
        } else if (cFits && residuals.size() == 2) {
            c = cx.sums.get(residuals.get(0).buf().name() + "+" + residuals.get(1).buf().name());
            if (c == null) {
                c = cx.sums.get(residuals.get(1).buf().name() + "+" + residuals.get(0).buf().name());
            }
            if (c == null) {
                View sum = View.dense(cx.transientBuf(os.numel() * d.dtype().bytes()), d.dtype(), os);
                addInto(cx, List.of(residuals.get(0), residuals.get(1)), null, sum, false);
                c = sum.buf();
            }
        } else if (cFits) {
            cFits = false;
        }
        GemmSpec spec = new GemmSpec(m, nn, kk, gemmBatch, ta, tb, gemmType(a.dtype()), gemmType(d.dtype()), epi,
                epi.hasBias() ? gemmType(bias.dtype()) : null);
        int ldd = paddedLdd(spec, c != null);
        int nGemm = paddedN(spec, c != null);
        ldd = Math.max(ldd, nGemm);
        GeluEpilogue.Fold fold = epi == GemmSpec.Epilogue.NONE && c == null && residuals.isEmpty() && gemmBatch == 1 && ldd == nn
                ? GeluEpilogue.find(k, d, cx) : null;
        if (fold != null) {
            // the GELU (or its gradient) that follows in the training step, in cuBLASLt's epilogue: that kernel is not launched
            spec = new GemmSpec(m, nn, kk, 1, ta, tb, gemmType(a.dtype()), gemmType(d.dtype()), fold.epilogue(), null);
            cx.folded.add(fold.absorbed().name());
            cx.steps.add(new Step.Gemm(cx.kernel, spec, a.buf(), b.buf(), null, fold.d().buf(), null, 0f, 0, fold.aux()));
        } else if (ldd == nn) {
            cx.steps.add(new Step.Gemm(cx.kernel, spec, a.buf(), b.buf(), c, d.buf(), epi.hasBias() ? bias.buf() : null, c == null ? 0f : 1f));
        } else {
            // An N that is not a multiple of 8 (a 50257-wide vocabulary) leaves cuBLASLt only slow kernels:
            // GPT-2's LM head ran at 105 TFLOP/s, with N padded to 50264 at 744 (VocabGemmProbe on the
            // H200; padding D's rows alone gains nothing). B is copied into nGemm rows (or columns; the
            // padding ones are never initialised: they only reach D's padding columns), the GEMM writes
            // rows ldd apart into scratch, and one strided copy packs them into D: both copies cost far
            // less than what the GEMM gains.
            // Rows go in chunks through a bounded scratch (a whole padded copy of 4096 f32 logits rows
            // would add 785 MiB to the peak); a batched GEMM or a transposed A goes in one piece.
            int bytes = spec.cdType().bytes;
            int chunk = gemmBatch == 1 && !ta ? (int) Math.max(1, Math.min(m, PAD_SCRATCH_BYTES / ((long) ldd * bytes))) : m;
            int rowStep = 256 >> Math.min(8, Long.numberOfTrailingZeros((long) kk * a.dtype().bytes())); // 256 / gcd(row bytes, 256)
            chunk = chunk >= m ? m : Math.max(rowStep, chunk / rowStep * rowStep); // each chunk's A starts 256-byte aligned
            Buf scratch = cx.transientBuf((long) gemmBatch * chunk * ldd * bytes);
            Buf biasBuf = epi.hasBias() ? bias.buf() : null;
            Buf bBuf = b.buf();
            dev.lantern.ir.Node bSource = cx.model.graph().node(b.buf().name());
            if (nGemm != nn && tb && b.buf().kind() == Buf.Kind.VALUE && bSource != null && bSource.op() == dev.lantern.ir.Op.PARAM) {
                // a parameter read as Bᵀ (GPT-2's tied head) is read in place: its padding rows are
                // bytes the executor allocates (zeroed) behind it (Lowered.valueBytes), so no copy of
                // the table is made (98 MiB for GPT-2's 50257 x 1024 bf16) and no copy kernel runs
                bBuf = Buf.value(b.buf().name(), (long) nGemm * kk * b.dtype().bytes());
            } else if (nGemm != nn) {
                int eb = b.dtype().bytes();
                bBuf = cx.transientBuf((long) nGemm * kk * eb);
                StridedCopySpec padB = tb
                        ? new StridedCopySpec("lt_padb", List.of((long) nn * kk), List.of(1L), List.of(1L), b.dtype())
                        : new StridedCopySpec("lt_padb", List.of((long) kk, (long) nn), List.of((long) nn, 1L), List.of((long) nGemm, 1L), b.dtype());
                long extent = tb ? (long) nn * kk * eb : ((long) (kk - 1) * nGemm + nn) * eb;
                cx.launch(padB, List.of(ptr(b), new Step.Ptr(bBuf, extent), new Step.I64((long) nn * kk)));
            }
            for (int row = 0; row < m; row += chunk) {
                int rows = Math.min(chunk, m - row);
                GemmSpec part = new GemmSpec(rows, nGemm, kk, gemmBatch, ta, tb, spec.abType(), spec.cdType(), epi, spec.biasType(), ldd);
                cx.steps.add(new Step.Gemm(cx.kernel, part, a.buf(), bBuf, null, scratch, biasBuf, 0f,
                        (long) row * kk * a.dtype().bytes()));
                long packed = (long) gemmBatch * rows;
                StridedCopySpec pack = new StridedCopySpec("lt_unpad", List.of(packed, (long) nn), List.of((long) ldd, 1L),
                        List.of((long) nn, 1L), d.dtype());
                long at = (long) row * nn * bytes;
                cx.launch(pack, List.of(ptr(scratch), new Step.Ptr(d.buf(), packed * nn * bytes, at), new Step.I64(packed * nn)));
            }
        }
        // what the epilogue could not do, in order: bias, activation, residuals (in place on d)
        List<View> after = new ArrayList<>();
        if (bias != null && !epi.hasBias()) {
            after.add(bias);
        }
        String postAct = actInEpilogue ? null : (act.equals("gelu") ? "gelu_tanh" : act);
        if (!after.isEmpty() || postAct != null) {
            addInto(cx, after, postAct, d, true);
        }
        if (!cFits && !residuals.isEmpty()) {
            addInto(cx, residuals, null, d, true);
        }
    }

    /** Smallest D rows cuBLASLt's fast kernels take (16 bytes); below it a GEMM is too small for padding to pay. */
    static final long PAD_MIN_ELEMENTS = 1L << 20;

    /** Scratch a padded GEMM writes at most at a time (rows in chunks). */
    static final long PAD_SCRATCH_BYTES = 64L << 20;

    /**
     * The leading dimension D is written with: n, or n rounded up to 16 bytes when n·dtype is not a
     * multiple of 16, D is large and no C is read (C would need the same padding).
     */
    static int paddedLdd(GemmSpec s, boolean readsC) {
        int elt = s.cdType().bytes;
        int align = 16 / elt;
        if (readsC || (long) s.n() * elt % 16 == 0 || (long) s.m() * s.n() * s.batch() < PAD_MIN_ELEMENTS) {
            return s.n();
        }
        return Math.toIntExact((s.n() + align - 1L) / align * align);
    }

    /**
     * The N the GEMM runs with: n, or n rounded up to a multiple of 8 for a large GEMM with an odd
     * N (cuBLASLt's fast kernels), when no C and no bias are read (both are n wide) and it is not
     * batched (B would need padding per batch).
     */
    static int paddedN(GemmSpec s, boolean readsC) {
        if (readsC || s.epilogue().hasBias() || s.batch() != 1 || s.n() % 8 == 0
                || (long) s.m() * s.n() * s.batch() < PAD_MIN_ELEMENTS) {
            return s.n();
        }
        return Math.toIntExact((s.n() + 7L) / 8 * 8);
    }

    /** {@code dst = act(dst + Σ terms)} when {@code inPlace} (dst read and written by the same thread), else {@code dst = Σ terms}. */
    private static void addInto(LoweringContext cx, List<View> terms, String act, View dst, boolean inPlace) {
        List<View> ins = new ArrayList<>();
        if (inPlace) {
            ins.add(dst);
        }
        ins.addAll(terms);
        List<ElementwiseSpec.Operand> ops = new ArrayList<>();
        List<Step.Arg> ptrs = new ArrayList<>();
        for (View v : ins) {
            ops.add(new ElementwiseSpec.Operand(v.dtype(), broadcastStrides(v, dst.shape())));
            ptrs.add(ptr(v));
        }
        List<ElementwiseSpec.Step> chain = new ArrayList<>();
        int last = 0;
        for (int i = 1; i < ins.size(); i++) {
            chain.add(new ElementwiseSpec.Step(ElementwiseOp.ADD, List.of(last, i)));
            last = ins.size() + chain.size() - 1;
        }
        if (act != null) {
            ElementwiseOp op = ElementwiseOp.forIrName(act).orElseThrow(() -> new CodegenException("no elementwise op " + act));
            chain.add(new ElementwiseSpec.Step(op, List.of(last)));
        }
        ptrs.add(ptr(dst));
        ptrs.add(new Step.I64(dst.shape().numel()));
        cx.launch(new ElementwiseSpec("lt_addact", dims(dst.shape()), ops, chain, dst.dtype()), ptrs);
    }

    /**
     * {@code v} (a GEMM operand: batch dims, then its matrix) read at the output's batch dims, each of
     * its own dims of size 1 (or missing, on the left) repeated: a view with stride 0 there, which the
     * caller's {@code contiguous} writes out. Dims that neither match nor are 1 are refused.
     */
    private static View broadcastBatch(View v, Shape out) {
        int r = out.rank();
        int vr = v.shape().rank();
        if (vr < 2) {
            throw new CodegenException("GEMM operand " + v.shape() + " has no matrix to broadcast over " + out);
        }
        int[] dims = new int[r];
        for (int i = 0; i < r - 2; i++) {
            int j = i - (r - vr);
            int have = j < 0 ? 1 : v.shape().dim(j);
            if (have != 1 && have != out.dim(i)) {
                throw new CodegenException("GEMM operand " + v.shape() + " does not broadcast over the batch of " + out);
            }
            dims[i] = out.dim(i);
        }
        dims[r - 2] = v.shape().dim(-2);
        dims[r - 1] = v.shape().dim(-1);
        Shape full = Shape.of(dims);
        long[] strides = LoweringContext.broadcastStrides(v, full).stream().mapToLong(Long::longValue).toArray();
        return new View(v.buf(), v.dtype(), full, strides, v.offset());
    }
}
