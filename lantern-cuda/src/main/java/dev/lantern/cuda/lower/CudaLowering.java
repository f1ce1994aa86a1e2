package dev.lantern.cuda.lower;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.AttentionSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.ElementwiseOp;
import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.cuda.codegen.KernelSpec;
import dev.lantern.cuda.codegen.NormSpec;
import dev.lantern.cuda.codegen.PermuteSpec;
import dev.lantern.cuda.codegen.RopeSpec;
import dev.lantern.cuda.codegen.SoftmaxSpec;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelLowering;
import dev.lantern.kernel.Operand;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Kernel IR -> device steps: each {@link Kernel} of a compiled model becomes codegen specs
 * (rendered for a {@link CudaTarget}) and cuBLASLt GEMM plans, with the argument bindings.
 *
 * <ul>
 * <li>gemm / matmul: one cuBLASLt GEMM; bias and GELU(tanh) / ReLU go to its epilogue, one
 *     residual to its C input with beta = 1; two residuals to C as well, through the sum the
 *     preceding residual norm already wrote (or one elementwise add). What the epilogue cannot
 *     express (erf GELU, a residual after an activation, broadcast residuals) runs as an
 *     elementwise kernel in place afterwards: a correct path, never a wrong fast one.
 * <li>attention: the fused kernel with q/k/v/o strides ({@code out_perm} becomes o's strides);
 *     {@code rope=true}: when the target's own attention tile can rotate q and k itself (Hopper,
 *     two consumer warpgroups and TMA: {@link AttentionSpec#ropeFusable}; not the default tile)
 *     the kernel reads them unrotated, in place; otherwise k is first roped (RopeSpec) into the
 *     kernel's planned scratch, and q too unless the tile rotates q alone (any warp-specialised
 *     TMA tile, the H200 default: the kernel reads q unrotated, in place).
 * <li>norms, softmax, rope, elementwise chains, permute copies: their specs; any operand that a
 *     kernel cannot read through strides is copied to a contiguous transient buffer first.
 * </ul>
 */
public final class CudaLowering {
    private final CompiledModel model;
    private final Graph g;
    private final CudaTarget target;
    private final Function<KernelSpec, CudaTarget> tuned;
    private final java.util.function.Predicate<GemmSpec> splitGelu;
    private final List<Step> steps = new ArrayList<>();
    private final Map<String, Buf> scratch = new LinkedHashMap<>();
    private final Map<String, Buf> sums = new HashMap<>(); // "x+r" -> buffer holding x + r
    private long transientTop;
    private long transientPeak;
    private int kernel;

    private CudaLowering(CompiledModel model, CudaTarget target, Function<KernelSpec, CudaTarget> tuned,
                         java.util.function.Predicate<GemmSpec> splitGelu) {
        this.splitGelu = splitGelu;
        this.model = model;
        this.g = model.graph();
        this.target = target;
        this.tuned = tuned;
    }

    /** The lowered model: steps in stream order, the scratch buffers and the transient area's size. */
    public record Lowered(CompiledModel model, List<Step> steps, List<Buf> scratch, long transientBytes) {
        public Lowered {
            steps = List.copyOf(steps);
            scratch = List.copyOf(scratch);
        }

        public long launches() {
            return steps.stream().filter(s -> s instanceof Step.Launch).count();
        }

        public long gemms() {
            return steps.stream().filter(s -> s instanceof Step.Gemm).count();
        }
    }

    public static Lowered lower(CompiledModel model, CudaTarget target) {
        return lower(model, target, s -> target);
    }

    /** As {@link #lower(CompiledModel, CudaTarget)}, rendering each spec for the target {@code tuned} picks for it. */
    public static Lowered lower(CompiledModel model, CudaTarget target, Function<KernelSpec, CudaTarget> tuned) {
        return lower(model, target, tuned, g -> false);
    }

    /**
     * As above; {@code splitGelu} names the GELU-epilogue GEMMs that the autotuner found faster as
     * a plain (or bias) epilogue followed by an elementwise GELU in place.
     */
    public static Lowered lower(CompiledModel model, CudaTarget target, Function<KernelSpec, CudaTarget> tuned,
                                java.util.function.Predicate<GemmSpec> splitGelu) {
        CudaLowering l = new CudaLowering(model, target, tuned, splitGelu);
        for (Kernel k : model.kernels()) {
            l.kernel = k.index();
            l.transientTop = 0;
            try {
                l.lowerKernel(k);
            } catch (CodegenException | IllegalArgumentException e) {
                throw new CodegenException("cuda lowering of kernel " + k.name() + ": " + k.node() + ": " + e.getMessage());
            }
        }
        LaunchContract.check(model, l.steps);
        return new Lowered(model, l.steps, List.copyOf(l.scratch.values()), l.transientPeak);
    }

    private void lowerKernel(Kernel k) {
        Node n = k.node();
        switch (n.op()) {
            case GEMM, MATMUL -> gemm(n);
            case ATTENTION -> attention(n, k);
            case FUSED_NORM, RMS_NORM, LAYER_NORM -> norm(n);
            case SOFTMAX -> softmax(n);
            case ROPE -> rope(n);
            case PERMUTE -> permute(n);
            case RESHAPE -> materialiseInto(view(n.input(0)), out(n));
            default -> {
                if (n.op().isElementwise()) {
                    elementwise(n);
                } else {
                    throw new CodegenException("no CUDA kernel computes " + n.op().text());
                }
            }
        }
    }

    // ---------------------------------------------------------------- operands

    /** A value as a kernel reads it: the base buffer, element strides, dtype and logical shape. */
    record View(Buf buf, DType dtype, Shape shape, long[] strides) {
        boolean contiguous() {
            return Arrays.equals(strides, shape.contiguousStrides());
        }

        List<Long> strideList() {
            return Arrays.stream(strides).boxed().toList();
        }
    }

    private View view(String value) {
        TensorType t = g.type(value);
        String base = value;
        Node bn = g.node(base);
        while (bn != null && KernelLowering.isFree(bn, g) && !bn.op().isSource()) {
            base = bn.input(0);
            bn = g.node(base);
        }
        if (bn != null && bn.op() == Op.CONSTANT) {
            throw new CodegenException("constant operands (" + bn + ") are not supported on CUDA yet");
        }
        return new View(Buf.value(base, g.type(base).contiguous().bytes()), t.dtype(), t.shape(), t.layout().strides(t.shape()));
    }

    private View out(Node n) {
        TensorType t = n.type().contiguous();
        return new View(Buf.value(n.name(), t.bytes()), t.dtype(), t.shape(), t.shape().contiguousStrides());
    }

    private Buf transientBuf(long bytes) {
        long off = transientTop;
        long size = (bytes + 255) & ~255L;
        transientTop += size;
        transientPeak = Math.max(transientPeak, transientTop);
        return new Buf(Buf.Kind.TRANSIENT, "t" + off, bytes, off);
    }

    /** {@code v} as a contiguous tensor: itself, or a copy into a transient buffer. */
    private View contiguous(View v) {
        if (v.contiguous()) {
            return v;
        }
        View dst = new View(transientBuf(v.shape().numel() * v.dtype().bytes()), v.dtype(), v.shape(), v.shape().contiguousStrides());
        materialiseInto(v, dst);
        return dst;
    }

    private void materialiseInto(View src, View dst) {
        List<Long> shape = dims(src.shape());
        ElementwiseSpec spec = new ElementwiseSpec("lt_copy", shape,
                List.of(new ElementwiseSpec.Operand(src.dtype(), src.strideList())), List.of(), dst.dtype());
        launch(spec, args(List.of(ptr(src), ptr(dst)), new Step.I64(src.shape().numel())));
    }

    // ---------------------------------------------------------------- kernels

    private void gemm(Node n) {
        boolean ta = n.attrs().getBool("transpose_a", false);
        boolean tb = n.attrs().getBool("transpose_b", false);
        boolean hasBias = n.op() == Op.GEMM && n.attrs().getBool("bias", false);
        String act = n.op() == Op.GEMM ? n.attrs().getString("act", "none") : "none";
        View a = view(n.input(0));
        View b = view(n.input(1));
        View d = out(n);
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
        } else if (a.shape().numel() == batch * mm * kk && b.shape().numel() == batch * (long) kk * nn) {
            m = mm;
            gemmBatch = Math.toIntExact(batch);
        } else {
            throw new CodegenException("GEMM with a broadcast operand (" + a.shape() + " x " + b.shape() + ") is not supported");
        }
        a = contiguous(a);
        b = contiguous(b);
        int next = 2;
        View bias = hasBias ? view(n.input(next++)) : null;
        List<View> residuals = new ArrayList<>();
        for (; next < n.inputs().size(); next++) {
            residuals.add(view(n.input(next)));
        }
        boolean biasInEpilogue = bias != null && bias.shape().rank() == 1 && bias.shape().dim(0) == nn && bias.contiguous();
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
                && splitGelu.test(new GemmSpec(m, nn, kk, gemmBatch, ta, tb, gemmType(a.dtype()), gemmType(d.dtype()), epi,
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
            c = sums.get(residuals.get(0).buf().name() + "+" + residuals.get(1).buf().name());
            if (c == null) {
                c = sums.get(residuals.get(1).buf().name() + "+" + residuals.get(0).buf().name());
            }
            if (c == null) {
                View sum = new View(transientBuf(os.numel() * d.dtype().bytes()), d.dtype(), os, os.contiguousStrides());
                addInto(List.of(residuals.get(0), residuals.get(1)), null, sum, false);
                c = sum.buf();
            }
        } else if (cFits) {
            cFits = false;
        }
        GemmSpec spec = new GemmSpec(m, nn, kk, gemmBatch, ta, tb, gemmType(a.dtype()), gemmType(d.dtype()), epi,
                epi.hasBias() ? gemmType(bias.dtype()) : null);
        steps.add(new Step.Gemm(kernel, spec, a.buf(), b.buf(), c, d.buf(), epi.hasBias() ? bias.buf() : null, c == null ? 0f : 1f));
        // what the epilogue could not do, in order: bias, activation, residuals (in place on d)
        List<View> after = new ArrayList<>();
        if (bias != null && !epi.hasBias()) {
            after.add(bias);
        }
        String postAct = actInEpilogue ? null : (act.equals("gelu") ? "gelu_tanh" : act);
        if (!after.isEmpty() || postAct != null) {
            addInto(after, postAct, d, true);
        }
        if (!cFits && !residuals.isEmpty()) {
            addInto(residuals, null, d, true);
        }
    }

    /** {@code dst = act(dst + Σ terms)} when {@code inPlace} (dst read and written by the same thread), else {@code dst = Σ terms}. */
    private void addInto(List<View> terms, String act, View dst, boolean inPlace) {
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
        launch(new ElementwiseSpec("lt_addact", dims(dst.shape()), ops, chain, dst.dtype()), args(ptrs, new Step.I64(dst.shape().numel())));
    }

    private void attention(Node n, Kernel kernel) {
        View q = view(n.input(0));
        View k = view(n.input(1));
        View v = view(n.input(2));
        View o = out(n);
        Shape qs = q.shape();
        int d = qs.dim(3);
        AttentionSpec spec = new AttentionSpec("lt_attention", qs.dim(0), qs.dim(1), qs.dim(2), k.shape().dim(2), d,
                n.attrs().getBool("causal", false), n.attrs().getDouble("scale", 1.0 / Math.sqrt(d)), q.dtype());
        if (n.attrs().getBool("rope", false)) {
            double base = n.attrs().getDouble("rope_base", 10000.0);
            // inside the kernel only when the session's own tile rotates (not the default: there the rotation
            // of each K tile costs about what the two rope kernels do, docs/perf-notes.md "RoPE inside")
            boolean inPlace = q.strides()[3] == 1 && k.strides()[3] == 1 && q.dtype() == k.dtype();
            if (inPlace && spec.withRope(base).ropeFusable(target)) {
                spec = spec.withRope(base); // the attention kernel rotates q and k as they arrive: no rope kernels
            } else {
                // q inside the kernel where its tile can (each CTA rotates its own Q tile once, so
                // this costs less than a rope kernel's pass over q), k by a rope kernel: every CTA of
                // a head reads each K tile, so rotating K inside would repeat the work per query block
                boolean queryInside = inPlace && model.options().choices().queryRopeInAttention()
                        && spec.withQueryRope(base).ropeFusable(target);
                if (queryInside) {
                    spec = spec.withQueryRope(base);
                }
                Map<String, Operand> ws = new HashMap<>();
                kernel.workspace().forEach(w -> ws.put(w.role(), w));
                Operand qw = ws.get("q_rope");
                Operand kw = ws.get("k_rope");
                // the planned scratch holds the roped q and k; the not-yet-written output is the
                // staging buffer of the (b, h, s, d) copies, so no transient memory is needed
                boolean planned = qw != null && kw != null && qw.dtype() == q.dtype() && kw.dtype() == k.dtype()
                        && o.dtype() == q.dtype() && o.shape().numel() >= qs.numel();
                if (!queryInside) {
                    q = planned ? ropedInto(q, base, o.buf(), workspaceView(qw)) : roped(q, base);
                }
                k = planned ? ropedInto(k, base, o.buf(), workspaceView(kw)) : roped(k, base);
            }
        }
        if (q.dtype() != k.dtype() || q.dtype() != v.dtype() || q.dtype() != o.dtype()) {
            throw new CodegenException("attention over mixed dtypes " + q.dtype() + "/" + k.dtype() + "/" + v.dtype() + " -> " + o.dtype());
        }
        // o's strides over the logical (b, h, s, d): out dim i holds logical dim perm[i]
        long[] os = o.shape().contiguousStrides();
        long[] ol = os.clone();
        int[] perm = n.attrs().getInts("out_perm");
        if (perm != null) {
            for (int i = 0; i < perm.length; i++) {
                ol[perm[i]] = os[i];
            }
        }
        if (q.strides()[3] != 1 || k.strides()[3] != 1 || v.strides()[3] != 1 || ol[3] != 1) {
            q = contiguous(q);
            k = contiguous(k);
            v = contiguous(v);
        }
        List<Step.Arg> a = new ArrayList<>(List.of(ptr(q), ptr(k), ptr(v), ptr(o),
                new Step.I32(qs.dim(1)), new Step.I32(qs.dim(2)), new Step.I32(k.shape().dim(2))));
        for (long[] s : List.of(q.strides(), k.strides(), v.strides(), ol)) {
            a.add(new Step.I64(s[0]));
            a.add(new Step.I64(s[1]));
            a.add(new Step.I64(s[2]));
        }
        launch(spec, a);
    }

    private static View workspaceView(Operand w) {
        return new View(Buf.value(w.value(), w.bytes()), w.dtype(), w.shape(), w.shape().contiguousStrides());
    }

    /** Rotate-half RoPE of {@code x} into {@code dst}, through a (b, h, s, d) copy in {@code staging} when x is strided. */
    private View ropedInto(View x, double base, Buf staging, View dst) {
        long[] st = x.strides();
        if (!x.contiguous() && x.shape().rank() == 4 && st[3] == 1) {
            // a strided (b, h, s, d) view (q or k inside the fused QKV output): the rope reads it in place
            Shape s = x.shape();
            RopeSpec spec = new RopeSpec("lt_rope", s.numel() / s.dim(3), s.dim(2), (int) s.dim(3), base, 0, false,
                    x.dtype(), dst.dtype(), new RopeSpec.InputLayout(s.dim(1), st[0], st[1], st[2]));
            launch(spec, List.of(ptr(x), ptr(dst), new Step.I64(s.numel() / s.dim(3))));
            return dst;
        }
        View src = x;
        if (!x.contiguous()) {
            src = new View(staging, x.dtype(), x.shape(), x.shape().contiguousStrides());
            materialiseInto(x, src);
        }
        ropeInto(src, dst, base, 0);
        return dst;
    }

    /** Rotate-half RoPE of a (b, h, s, d) value into a fresh contiguous transient buffer. */
    private View roped(View x, double base) {
        Shape s = x.shape();
        View dst = new View(transientBuf(s.numel() * x.dtype().bytes()), x.dtype(), s, s.contiguousStrides());
        long mark = transientTop;
        ropeInto(contiguous(x), dst, base, 0);
        transientTop = mark; // the contiguous copy is dead once roped: k's copy reuses its bytes
        return dst;
    }

    private void ropeInto(View src, View dst, double base, long offset) {
        Shape s = src.shape();
        int d = s.last();
        long seq = s.rank() >= 2 ? s.dim(-2) : 1;
        long rows = s.numel() / d;
        RopeSpec spec = new RopeSpec("lt_rope", rows, seq, d, base, offset, false, src.dtype(), dst.dtype());
        launch(spec, List.of(ptr(src), ptr(dst), new Step.I64(rows)));
    }

    /**
     * A standalone rope (eager; a rope fusion did not take): a strided (b, h, s, d) input with
     * head_dim contiguous (q or k, a free permute of a projection's output) is read in place, as
     * the attention's own ropes do, instead of being copied contiguous first.
     */
    private void rope(Node n) {
        View x = view(n.input(0));
        View o = out(n);
        double base = n.attrs().getDouble("base", 10000.0);
        long offset = n.attrs().getLong("offset", 0);
        long[] st = x.strides();
        if (!x.contiguous() && x.shape().rank() == 4 && st[3] == 1) {
            Shape s = x.shape();
            long rows = s.numel() / s.dim(3);
            RopeSpec spec = new RopeSpec("lt_rope", rows, s.dim(2), s.dim(3), base, offset, false, x.dtype(), o.dtype(),
                    new RopeSpec.InputLayout(s.dim(1), st[0], st[1], st[2]));
            launch(spec, List.of(ptr(x.buf()), ptr(o.buf()), new Step.I64(rows)));
            return;
        }
        ropeInto(contiguous(x), o, base, offset);
    }

    private void norm(Node n) {
        boolean res = n.op() == Op.FUSED_NORM && n.attrs().getBool("residual", false);
        NormSpec.Kind kind = switch (n.op()) {
            case RMS_NORM -> NormSpec.Kind.RMS;
            case LAYER_NORM -> NormSpec.Kind.LAYER;
            default -> n.attrs().getString("kind", "rms").equals("rms") ? NormSpec.Kind.RMS : NormSpec.Kind.LAYER;
        };
        int i = 0;
        View x = contiguous(view(n.input(i++)));
        View r = res ? contiguous(view(n.input(i++))) : null;
        View w = contiguous(view(n.input(i++)));
        View b = i < n.inputs().size() ? contiguous(view(n.input(i))) : null;
        View o = out(n);
        Shape s = x.shape();
        long rows = s.numel() / s.last();
        double eps = n.attrs().getDouble("eps", kind == NormSpec.Kind.RMS ? 1e-6 : 1e-5);
        if (res && r.dtype() != x.dtype()) {
            throw new CodegenException("residual norm over " + x.dtype() + " + " + r.dtype());
        }
        if (b != null && b.dtype() != w.dtype()) {
            throw new CodegenException("norm weight " + w.dtype() + " and bias " + b.dtype() + " differ");
        }
        NormSpec spec = new NormSpec("lt_norm", kind, rows, s.last(), eps, x.dtype(), w.dtype(), o.dtype(), res, b != null);
        List<Step.Arg> a = new ArrayList<>();
        a.add(ptr(x));
        if (res) {
            a.add(ptr(r));
        }
        a.add(ptr(w));
        if (b != null) {
            a.add(ptr(b));
        }
        a.add(ptr(o));
        if (res) {
            // the kernel writes x + r anyway; a later GEMM with the same two residuals reads it as C
            String key = x.buf().name() + "+" + r.buf().name();
            Buf sum = sums.get(key);
            if (sum == null) {
                if (sumMayOverwriteResidual(n, x, r) && KernelNames.render(spec, tuned.apply(spec)).variant().equals("registers")) {
                    // every later reader of r reads x + r (the pair-residual GEMM takes it as C), and the
                    // registers kernel reads each element of r once before writing the sum at the same place
                    sum = r.buf();
                } else {
                    sum = new Buf(Buf.Kind.SCRATCH, "sum_" + scratch.size() + "_" + n.name(), s.numel() * x.dtype().bytes(), 0);
                    scratch.put(sum.name(), sum);
                }
                sums.put(key, sum);
            }
            a.add(new Step.Ptr(sum, s.numel() * x.dtype().bytes()));
        }
        a.add(new Step.I64(rows));
        launch(spec, a);
    }

    /**
     * Whether the residual norm {@code n} may write x + r over r: r is an intermediate (not a
     * source, not an output) read directly, and every other reader is a later gemm with no
     * activation whose residuals are exactly x and r (it takes the sum as C).
     */
    private boolean sumMayOverwriteResidual(Node n, View x, View r) {
        String rv = r.buf().name();
        Node rn = g.node(rv);
        if (rn == null || rn.op().isSource() || g.outputs().contains(rv) || !n.input(1).equals(rv)
                || !n.input(0).equals(x.buf().name())) {
            return false;
        }
        List<Node> nodes = g.nodes();
        int at = nodes.indexOf(n);
        for (Node u : g.users().getOrDefault(rv, List.of())) {
            if (u == n || u.equals(n)) {
                continue;
            }
            boolean bias = u.attrs().getBool("bias", false);
            List<String> resid = u.op() == Op.GEMM ? u.inputs().subList(bias ? 3 : 2, u.inputs().size()) : List.of();
            if (u.op() != Op.GEMM || nodes.indexOf(u) < at || !u.attrs().getString("act", "none").equals("none")
                    || resid.size() != 2 || !resid.contains(rv) || !resid.contains(x.buf().name())) {
                return false;
            }
        }
        return true;
    }

    private void softmax(Node n) {
        View x = contiguous(view(n.input(0)));
        View o = out(n);
        Shape s = x.shape();
        long rows = s.numel() / s.last();
        SoftmaxSpec spec = new SoftmaxSpec("lt_softmax", rows, s.last(), n.attrs().getDouble("scale", 1.0),
                n.attrs().getBool("causal", false), s.rank() >= 2 ? s.dim(-2) : 1, x.dtype(), o.dtype());
        launch(spec, List.of(ptr(x), ptr(o), new Step.I64(rows)));
    }

    private void permute(Node n) {
        View x = view(n.input(0));
        View o = out(n);
        int[] perm = n.attrs().getInts("perm");
        if (x.contiguous() && x.dtype() == o.dtype()) {
            PermuteSpec spec = new PermuteSpec("lt_permute", dims(x.shape()), Arrays.stream(perm).boxed().toList(), x.dtype());
            launch(spec, List.of(ptr(x), ptr(o), new Step.I64(x.shape().numel())));
            return;
        }
        List<Long> strides = new ArrayList<>();
        for (int p : perm) {
            strides.add(x.strides()[p]);
        }
        ElementwiseSpec spec = new ElementwiseSpec("lt_copy", dims(o.shape()),
                List.of(new ElementwiseSpec.Operand(x.dtype(), strides)), List.of(), o.dtype());
        launch(spec, List.of(ptr(x), ptr(o), new Step.I64(o.shape().numel())));
    }

    private void elementwise(Node n) {
        View o = out(n);
        List<ElementwiseSpec.Operand> ops = new ArrayList<>();
        List<Step.Arg> a = new ArrayList<>();
        for (String in : n.inputs()) {
            View v = view(in);
            ops.add(new ElementwiseSpec.Operand(v.dtype(), broadcastStrides(v, o.shape())));
            a.add(ptr(v));
        }
        List<ElementwiseSpec.Step> chain = ExpressionChain.of(n, ops.size());
        a.add(ptr(o));
        a.add(new Step.I64(o.shape().numel()));
        launch(new ElementwiseSpec("lt_ew", dims(o.shape()), ops, chain, o.dtype()), a);
    }

    // ---------------------------------------------------------------- helpers

    /** Strides of {@code v} over {@code out}'s dims, numpy broadcasting (right-aligned; size-1 dims read 0). */
    private static List<Long> broadcastStrides(View v, Shape out) {
        int r = out.rank();
        int vr = v.shape().rank();
        List<Long> s = new ArrayList<>();
        for (int i = 0; i < r; i++) {
            int j = i - (r - vr);
            s.add(j < 0 || v.shape().dim(j) == 1 ? 0L : v.strides()[j]);
        }
        return s;
    }

    private static List<Long> dims(Shape s) {
        List<Long> d = new ArrayList<>();
        for (int x : s.dims()) {
            d.add((long) x);
        }
        return d.isEmpty() ? List.of(1L) : d;
    }

    private static Step.Ptr ptr(Buf b) {
        return new Step.Ptr(b);
    }

    /** A pointer to {@code v}'s buffer that the kernel reads or writes within {@code v}'s extent. */
    private static Step.Ptr ptr(View v) {
        return new Step.Ptr(v.buf(), LaunchContract.extentBytes(dimsOf(v.shape()), v.strides(), v.dtype().bytes()));
    }

    private static long[] dimsOf(Shape s) {
        long[] d = new long[s.rank()];
        for (int i = 0; i < d.length; i++) {
            d[i] = s.dim(i);
        }
        return d;
    }

    private static List<Step.Arg> args(List<Step.Arg> ptrs, Step.Arg... rest) {
        List<Step.Arg> a = new ArrayList<>(ptrs);
        a.addAll(List.of(rest));
        return a;
    }

    private static GemmSpec.DataType gemmType(DType t) {
        return switch (t) {
            case F32 -> GemmSpec.DataType.F32;
            case F16 -> GemmSpec.DataType.F16;
            case BF16 -> GemmSpec.DataType.BF16;
            default -> throw new CodegenException("cuBLASLt GEMMs take f32, f16 or bf16, not " + t);
        };
    }

    /**
     * Renders {@code spec} under an entry name derived from its own text, so that identical
     * kernels (the three projections' copies, the two ropes) share one module.
     */
    private void launch(KernelSpec spec, List<Step.Arg> args) {
        CudaTarget t = tuned.apply(spec);
        CudaKernelSource src = KernelNames.render(spec, t);
        steps.add(new Step.Launch(kernel, spec, src, args));
    }
}
