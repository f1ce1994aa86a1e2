package dev.lantern.cuda.lower;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.KernelSpec;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.plan.MemoryPlan;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Kernel IR -> device steps: each {@link Kernel} of a compiled model becomes codegen specs (rendered
 * for a {@link CudaTarget}) and cuBLASLt GEMM plans, with the argument bindings. It reads the
 * kernels alone (node attributes, operands with their layouts and storage, planned scratch), one
 * {@link KernelLowerer} per kind, in a table keyed by op; any operand that a kernel cannot read
 * through strides is copied to a transient buffer first, and the transient buffers are placed by
 * the core's memory planner ({@link TransientPlacement}).
 */
public final class CudaLowering {
    private static final Map<Op, KernelLowerer> TABLE = new EnumMap<>(Op.class);

    static {
        KernelLowerer gemm = new GemmLowerer();
        KernelLowerer norm = new NormLowerer();
        KernelLowerer copy = new CopyLowerer();
        TABLE.put(Op.GEMM, gemm);
        TABLE.put(Op.MATMUL, gemm);
        TABLE.put(Op.ATTENTION, new AttentionLowerer());
        TABLE.put(Op.FUSED_NORM, norm);
        TABLE.put(Op.RMS_NORM, norm);
        TABLE.put(Op.LAYER_NORM, norm);
        TABLE.put(Op.NORM_WEIGHT_GRAD, new NormWeightGradLowerer());
        TABLE.put(Op.SOFTMAX, new SoftmaxLowerer());
        TABLE.put(Op.ROPE, new RopeLowerer());
        TABLE.put(Op.PERMUTE, copy);
        TABLE.put(Op.RESHAPE, copy);
        KernelLowerer movement = new MovementLowerer();
        TABLE.put(Op.SLICE, movement);
        TABLE.put(Op.CONCAT, movement);
        TABLE.put(Op.GATHER, movement);
        KernelLowerer gradient = new GradientLowerer();
        for (Op op : new Op[] {Op.SOFTMAX_GRAD, Op.RMS_NORM_GRAD, Op.LAYER_NORM_GRAD, Op.CROSS_ENTROPY, Op.CROSS_ENTROPY_GRAD,
                Op.REDUCE_SUM, Op.SCATTER_ADD}) {
            TABLE.put(op, gradient);
        }
        KernelLowerer attentionBackward = new AttentionBackwardLowerer();
        for (Op op : new Op[] {Op.ATTENTION_LSE, Op.ATTENTION_GRAD_Q, Op.ATTENTION_GRAD_KV}) {
            TABLE.put(op, attentionBackward);
        }
        KernelLowerer elementwise = new ElementwiseLowerer();
        for (Op op : Op.values()) {
            if (op.isElementwise()) {
                TABLE.putIfAbsent(op, elementwise);
            }
        }
    }

    private CudaLowering() {}

    /**
     * The lowered model: steps in stream order, the scratch buffers that live as long as the
     * session, and the plan of the transient area (buffers that live between the steps using them).
     */
    public record Lowered(CompiledModel model, List<Step> steps, List<Buf> scratch, MemoryPlan transients) {
        public Lowered {
            steps = List.copyOf(steps);
            scratch = List.copyOf(scratch);
        }

        /** Bytes of the transient area. */
        public long transientBytes() {
            return transients.arenaBytes();
        }

        /**
         * The most bytes any step addresses in each graph value: a value's own size, or more where
         * a step reads padding behind it (a padded GEMM reading a parameter's table in place), which
         * the executor then allocates.
         */
        public Map<String, Long> valueBytes() {
            Map<String, Long> m = new java.util.HashMap<>();
            java.util.function.Consumer<Buf> see = b -> {
                if (b != null && b.kind() == Buf.Kind.VALUE) {
                    m.merge(b.name(), b.bytes(), Math::max);
                }
            };
            for (Step s : steps) {
                switch (s) {
                    case Step.Gemm g -> {
                        see.accept(g.a());
                        see.accept(g.b());
                        see.accept(g.c());
                        see.accept(g.d());
                        see.accept(g.bias());
                        see.accept(g.aux());
                    }
                    case Step.Launch l -> l.args().forEach(a -> {
                        if (a instanceof Step.Ptr p) {
                            see.accept(p.buf());
                        }
                    });
                }
            }
            return m;
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
                                Predicate<GemmSpec> splitGelu) {
        if (!model.options().target().equals("cuda")) {
            throw new CodegenException("cuda lowering of a model compiled for " + model.options().target()
                    + " (compile with target cuda: its kernels and scratch are planned for the GPU)");
        }
        LoweringContext cx = new LoweringContext(model, target, tuned, splitGelu);
        for (Kernel k : model.kernels()) {
            cx.kernel = k.index();
            try {
                KernelLowerer l = TABLE.get(k.node().op());
                if (l == null) {
                    throw new CodegenException("no CUDA kernel computes " + k.node().op().text());
                }
                l.lower(k, cx);
            } catch (CodegenException | IllegalArgumentException e) {
                throw new CodegenException("cuda lowering of kernel " + k.name() + ": " + k.node() + ": " + e.getMessage());
            }
        }
        TransientPlacement.Placed placed = TransientPlacement.place(cx.steps);
        LaunchContract.check(model, placed.steps());
        return new Lowered(model, placed.steps(), List.copyOf(cx.scratch.values()), placed.plan());
    }
}
