package dev.lantern.cuda.lower;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.cuda.codegen.KernelSpec;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * What the kernel lowerers share while one compiled model is lowered: the target and the tuned
 * choices, the steps emitted so far, the session-long scratch buffers, the residual sums that norms
 * wrote, and the transient buffers (placed after lowering by the core's memory planner,
 * {@link TransientPlacement}). Views come from the kernels' operands alone (their storage, layout
 * and origin), never from the graph.
 */
final class LoweringContext {
    final CompiledModel model;
    final CudaTarget target;
    private final Function<KernelSpec, CudaTarget> tuned;
    private final Predicate<GemmSpec> splitGelu;
    final List<Step> steps = new ArrayList<>();
    final Map<String, Buf> scratch = new LinkedHashMap<>();
    /** "x+r" -> the buffer a residual norm wrote x + r into, for a later GEMM that takes it as C. */
    final Map<String, Buf> sums = new HashMap<>();
    /** Storage of every graph output: a value that must survive the forward. */
    final Set<String> outputStorage;
    /** attention's delta = rowsum(dy∘o) by the (o, dy) views it was computed from: grad_q's, reused by grad_kv. */
    final Map<String, Buf> deltas = new HashMap<>();
    /**
     * norm_weight_grad kernels deferred to the dx kernel that follows them (by that kernel's name),
     * which computes both in one read of x and dy ({@link dev.lantern.cuda.codegen.NormBackwardSpec}).
     */
    final Map<String, Kernel> deferredWeightGrads = new HashMap<>();
    /** attention_grad_q kernels whose dq the attention_grad_kv after them computes from its dS tiles (by that kernel's name), see {@link DsDq}. */
    final Map<String, Kernel> deferredDq = new HashMap<>();
    /** Elementwise kernels (by name) whose work a GEMM's epilogue does, so they are not launched ({@link GeluEpilogue}). */
    final Set<String> folded = new java.util.HashSet<>();
    /** Slice outputs read in place from their source (value name -> alias), see {@link SliceAlias}. */
    final Map<String, SliceAlias> aliases = new HashMap<>();
    private int transients;
    int kernel;

    LoweringContext(CompiledModel model, CudaTarget target, Function<KernelSpec, CudaTarget> tuned, Predicate<GemmSpec> splitGelu) {
        this.model = model;
        this.target = target;
        this.tuned = tuned;
        this.splitGelu = splitGelu;
        this.outputStorage = model.outputStorage();
    }

    boolean splitGelu(GemmSpec spec) {
        return splitGelu.test(spec);
    }

    CudaTarget tuned(KernelSpec spec) {
        return tuned.apply(spec);
    }

    /** Operand {@code o} as a kernel reads it: its storage's buffer (constants are uploaded by the executor), at its strides. */
    View view(Operand o) {
        SliceAlias alias = aliases.get(o.storage());
        if (alias != null) {
            return alias.view(o);
        }
        return new View(Buf.value(o.storage(), o.storageBytes()), o.dtype(), o.shape(), o.strides());
    }

    /** Input {@code i} of {@code k}. */
    View in(Kernel k, int i) {
        return view(k.inputs().get(i));
    }

    /** {@code k}'s output, dense. */
    View out(Kernel k) {
        Operand o = k.output();
        return View.dense(Buf.value(o.value(), o.bytes()), o.dtype(), o.shape());
    }

    /** {@code k}'s side output in {@code role} (dense), or null when it writes none there. */
    static View sideOut(Kernel k, String role) {
        Operand o = k.sideOutput(role);
        return o == null ? null : View.dense(Buf.value(o.value(), o.bytes()), o.dtype(), o.shape());
    }

    /** A kernel's planned scratch tensor, dense. */
    static View workspace(Operand w) {
        return View.dense(Buf.value(w.value(), w.bytes()), w.dtype(), w.shape());
    }

    /**
     * A fresh transient buffer: memory that lives only between the steps that use it. Its offset
     * is set after lowering, by the memory planner, from the first and last step that name it.
     */
    Buf transientBuf(long bytes) {
        return new Buf(Buf.Kind.TRANSIENT, "t" + transients++, bytes, 0);
    }

    /** {@code v} as a contiguous tensor: itself, or a copy into a transient buffer. */
    View contiguous(View v) {
        if (v.contiguous()) {
            return v;
        }
        View dst = View.dense(transientBuf(v.shape().numel() * v.dtype().bytes()), v.dtype(), v.shape());
        materialiseInto(v, dst);
        return dst;
    }

    void materialiseInto(View src, View dst) {
        ElementwiseSpec spec = new ElementwiseSpec("lt_copy", dims(src.shape()),
                List.of(new ElementwiseSpec.Operand(src.dtype(), src.strideList())), List.of(), dst.dtype());
        launch(spec, List.of(ptr(src), ptr(dst), new Step.I64(src.shape().numel())));
    }

    /**
     * Renders {@code spec} under an entry name derived from its own text, so that identical
     * kernels (the three projections' copies, the two ropes) share one module.
     */
    void launch(KernelSpec spec, List<Step.Arg> args) {
        CudaKernelSource src = KernelNames.render(spec, tuned(spec));
        steps.add(new Step.Launch(kernel, spec, src, args));
    }

    // ---------------------------------------------------------------- helpers

    /** Strides of {@code v} over {@code out}'s dims, numpy broadcasting (right-aligned; size-1 dims read 0). */
    static List<Long> broadcastStrides(View v, Shape out) {
        int r = out.rank();
        int vr = v.shape().rank();
        if (r == 0) {
            return List.of(0L); // a scalar (the loss times its scale) runs as one element, see dims
        }
        List<Long> s = new ArrayList<>();
        for (int i = 0; i < r; i++) {
            int j = i - (r - vr);
            s.add(j < 0 || v.shape().dim(j) == 1 ? 0L : v.strides()[j]);
        }
        return s;
    }

    static List<Long> dims(Shape s) {
        List<Long> d = new ArrayList<>();
        for (int x : s.dims()) {
            d.add((long) x);
        }
        return d.isEmpty() ? List.of(1L) : d;
    }

    /** A pointer to {@code v}'s buffer that the kernel reads or writes within {@code v}'s extent. */
    static Step.Ptr ptr(View v) {
        long[] d = new long[v.shape().rank()];
        for (int i = 0; i < d.length; i++) {
            d[i] = v.shape().dim(i);
        }
        return new Step.Ptr(v.buf(), LaunchContract.extentBytes(d, v.strides(), v.dtype().bytes()), v.offset() * v.dtype().bytes());
    }

    static Step.Ptr ptr(Buf b) {
        return new Step.Ptr(b);
    }

    static GemmSpec.DataType gemmType(DType t) {
        return switch (t) {
            case F32 -> GemmSpec.DataType.F32;
            case F16 -> GemmSpec.DataType.F16;
            case BF16 -> GemmSpec.DataType.BF16;
            default -> throw new CodegenException("cuBLASLt GEMMs take f32, f16 or bf16, not " + t);
        };
    }
}
