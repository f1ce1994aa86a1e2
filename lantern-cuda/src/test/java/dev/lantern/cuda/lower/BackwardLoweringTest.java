package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.AttentionBackwardSpec;
import dev.lantern.cuda.codegen.AttentionSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CrossEntropySpec;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.NormBackwardSpec;
import dev.lantern.cuda.codegen.NormWeightGradSpec;
import dev.lantern.cuda.codegen.ReduceSpec;
import dev.lantern.cuda.codegen.RopeSpec;
import dev.lantern.cuda.codegen.RowGradSpec;
import dev.lantern.cuda.codegen.ScatterAddSpec;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Op;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every op that autodiff emits lowers to CUDA kernels (fused and unfused), none of them uses
 * atomics (strict mode may run all), an inverse rope renders the rotation by -angle, and the whole
 * training step of a language model (f32 and under bf16/f16 autocast) lowers. The kernels compile
 * for sm_90 in {@link BackwardNvccTest}; they run against float64 in {@code BackwardOpsGpuTest}.
 */
class BackwardLoweringTest {
    @Test
    void everyBackwardOpLowersWithoutAtomics() {
        for (String body : BackwardGraphs.BODIES) {
            for (boolean fuse : new boolean[] {true, false}) {
                CompiledModel m = BackwardGraphs.compile(BackwardGraphs.graph(body), fuse, CompileOptions.Amp.NONE);
                CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
                assertFalse(l.steps().isEmpty(), body);
                for (Step s : l.steps()) {
                    if (s instanceof Step.Launch launch) {
                        StrictKernels.check(launch.source()); // throws on any atomic
                    }
                }
            }
        }
    }

    @Test
    void eachOpGetsItsKernelFamily() {
        assertTrue(specs("%y = softmax_grad(%x, %x) {scale=0.5} : f32[5,13]").stream().anyMatch(s -> s instanceof RowGradSpec r
                && r.kind() == RowGradSpec.Kind.SOFTMAX && r.param() == 0.5));
        assertTrue(specs("%y = layer_norm_grad(%x, %w, %x) {eps=1.0E-5} : f32[5,13]").stream().anyMatch(s -> s instanceof RowGradSpec r
                && r.kind() == RowGradSpec.Kind.LAYER_NORM));
        List<Object> ce = specs("%y = cross_entropy(%x, %t) : f32[]");
        assertEquals(2, ce.stream().filter(s -> s instanceof CrossEntropySpec).count(), ce.toString());
        // few ids: sorted by (row, position) once, then each row sums its run (size x count scans no more)
        List<Object> sa = specs("%y = scatter_add(%x, %t) {axis=0, size=7} : f32[7,13]");
        assertTrue(sa.stream().anyMatch(s -> s instanceof dev.lantern.cuda.codegen.ScatterAddSortedSpec a
                && a.stage() == dev.lantern.cuda.codegen.ScatterAddSortedSpec.Stage.SORT && a.count() == 5), sa.toString());
        assertTrue(sa.stream().anyMatch(s -> s instanceof dev.lantern.cuda.codegen.ScatterAddSortedSpec a
                && a.stage() == dev.lantern.cuda.codegen.ScatterAddSortedSpec.Stage.SUM && a.size() == 7 && a.inner() == 13), sa.toString());
        assertTrue(sa.stream().noneMatch(s -> s instanceof ScatterAddSpec), "the scan is the fallback past one CTA's sort");
        List<Object> rope = specs(BackwardGraphs.BODIES.getLast());
        RopeSpec r = (RopeSpec) rope.stream().filter(s -> s instanceof RopeSpec).findFirst().orElseThrow();
        assertTrue(r.inverse());
        String src = dev.lantern.cuda.lower.KernelNames.render(r, CudaTarget.H200).source();
        assertTrue(src.contains("sn = -sn"), src);
        // the forward rope does not negate
        assertFalse(dev.lantern.cuda.lower.KernelNames.render(new RopeSpec("lt_rope", 5, 5, 12, 1e4, 0, false,
                dev.lantern.ir.DType.F32, dev.lantern.ir.DType.F32), CudaTarget.H200).source().contains("sn = -sn"));
    }

    @Test
    void aGemmWithABroadcastBatchOperandWritesItOutFirst() {
        // grouped-query attention: 2 K/V heads for 4 query heads, as a broadcast over a group dim
        CompiledModel m = BackwardGraphs.compile(IrParser.parse("""
                graph @g {
                  %q = input {name="q"} : f32[3,2,2,5,7]
                  %k = input {name="k"} : f32[3,2,1,7,5]
                  %y = matmul(%q, %k) : f32[3,2,2,5,5]
                  return %y
                }
                """), false, CompileOptions.Amp.NONE);
        List<Step> steps = CudaLowering.lower(m, CudaTarget.H200).steps();
        Step.Gemm g = (Step.Gemm) steps.stream().filter(s -> s instanceof Step.Gemm).findFirst().orElseThrow();
        assertEquals(12, g.spec().batch(), "3 x 2 x 2 GEMMs of 5x7 by 7x5");
        assertEquals(5, g.spec().m());
        List<Step.Launch> copies = steps.stream().filter(s -> s instanceof Step.Launch).map(s -> (Step.Launch) s).toList();
        assertEquals(1, copies.size(), "k written out at the full batch before the GEMM");
        assertTrue(copies.getFirst().source().entry().startsWith("lt_copy"), copies.getFirst().source().entry());
    }

    @Test
    void reductionSplitsDependOnShapesOnly() {
        // a column sum over many rows splits into fixed chunks; a wide output runs direct
        List<Object> cols = specsOf("%x = input {name=\"x\"} : f32[4099,7]", "%y = reduce_sum(%x) {axes=[0]} : f32[7]");
        assertEquals(List.of(ReduceSpec.Stage.PARTIAL, ReduceSpec.Stage.FINISH),
                cols.stream().filter(s -> s instanceof ReduceSpec).map(s -> ((ReduceSpec) s).stage()).toList());
        ReduceSpec p = (ReduceSpec) cols.stream().filter(s -> s instanceof ReduceSpec).findFirst().orElseThrow();
        assertTrue(p.splits() > 1 && p.chunk() * p.splits() >= 4099 && p.chunk() * (p.splits() - 1) < 4099, p.toString());
        assertEquals(1, ReduceSpec.splitsFor(40000, 4099));
        assertEquals(1, ReduceSpec.splitsFor(7, 50));
    }

    @Test
    void normWeightGradIsTwoKernelsChosenByTheShapesAlone() {
        List<Object> dw = specs("%y = norm_weight_grad(%x, %x) {eps=1.0E-6, kind=\"rms\"} : f32[13]");
        assertEquals(List.of(NormWeightGradSpec.Stage.PARTIAL, NormWeightGradSpec.Stage.FINISH),
                dw.stream().filter(s -> s instanceof NormWeightGradSpec).map(s -> ((NormWeightGradSpec) s).stage()).toList());
        NormWeightGradSpec step = spec(16 * 1024, 4096);
        assertEquals(256, step.threads());
        assertEquals(16, step.perThread());
        assertEquals(1, step.colBlocks(), "the decoder step's row in registers");
        assertEquals(63, step.chunkRows());
        assertEquals(261, step.chunks(), "one wave of 2 CTAs per SM on 132 SMs");
        NormWeightGradSpec wide = spec(7, 5003);
        assertEquals(2, wide.colBlocks(), "past 4096 columns: two column blocks");
        assertEquals(7, wide.chunks());
        NormWeightGradSpec narrow = spec(5, 1);
        assertEquals(32, narrow.threads());
        assertEquals(1, narrow.perThread());
        for (NormWeightGradSpec s : List.of(step, wide, narrow)) {
            assertTrue(s.chunkRows() * s.chunks() >= s.rows() && s.chunkRows() * (s.chunks() - 1) < s.rows(), s.toString());
            StrictKernels.check(KernelNames.render(s, CudaTarget.H200));
        }
    }

    private static NormWeightGradSpec spec(long rows, long cols) {
        return new NormWeightGradSpec("lt_norm_dw", NormWeightGradSpec.Stage.PARTIAL, NormWeightGradSpec.Kind.RMS, rows, cols, 1e-6,
                dev.lantern.ir.DType.F32, dev.lantern.ir.DType.F32, dev.lantern.ir.DType.F32);
    }

    @Test
    void theFusedStepComputesEachNormWeightGradientInOneFusedKernel() {
        var lm = BackwardGraphs.model(BackwardGraphs.ODD, 29);
        for (CompileOptions.Amp amp : List.of(CompileOptions.Amp.NONE, CompileOptions.Amp.BF16)) {
            for (boolean fuse : new boolean[] {true, false}) {
                CompiledModel m = BackwardGraphs.compile(BackwardGraphs.backward(lm).graph(), fuse, amp);
                List<Step> steps = CudaLowering.lower(m, CudaTarget.H200).steps();
                long partials = steps.stream().filter(s -> s instanceof Step.Launch l && l.spec() instanceof NormWeightGradSpec w
                        && w.stage() == NormWeightGradSpec.Stage.PARTIAL).count();
                long finishes = steps.stream().filter(s -> s instanceof Step.Launch l && l.spec() instanceof NormWeightGradSpec w
                        && w.stage() == NormWeightGradSpec.Stage.FINISH).count();
                // each norm's dx kernel sums its weight gradient's partials from the same read of x and dy
                List<Step.Launch> fused = steps.stream().filter(s -> s instanceof Step.Launch l && l.spec() instanceof NormBackwardSpec)
                        .map(s -> (Step.Launch) s).toList();
                long rowGrads = steps.stream().filter(s -> s instanceof Step.Launch l && l.spec() instanceof RowGradSpec).count();
                assertEquals(fuse ? 3 : 0, fused.size(), amp + " fuse=" + fuse + ": one kernel a norm for dx and dw's partials");
                assertEquals(fuse ? 3 : 0, finishes, amp + " fuse=" + fuse);
                assertEquals(fuse ? 0 : 3, rowGrads, amp + " fuse=" + fuse + ": the unfused step's dx kernels");
                for (Step.Launch l : fused) {
                    // FINISH comes right after, reading the partials the fused kernel wrote
                    Step next = steps.get(steps.indexOf(l) + 1);
                    assertTrue(next instanceof Step.Launch f && f.spec() instanceof NormWeightGradSpec w
                            && w.stage() == NormWeightGradSpec.Stage.FINISH && f.args().getFirst().equals(l.args().get(l.args().size() - 2)),
                            next.toString());
                }
                // x̂ = norm(x, ones): a norm kernel whose weight is a constant (it fed a mul, then a reduce_sum)
                long xhats = m.kernels().stream().filter(k -> k.node().op() == Op.RMS_NORM || k.node().op() == Op.FUSED_NORM)
                        .filter(k -> m.graph().node(k.node().input(k.node().inputs().size() - 1)).op() == Op.CONSTANT).count();
                assertEquals(0, partials, amp + " fuse=" + fuse + ": the attention, MLP and final norms' dw, all fused");
                assertEquals(fuse ? 0 : 3, xhats, amp + " fuse=" + fuse);
            }
        }
    }

    @Test
    void trainingStepOfALanguageModelLowers() {
        var lm = BackwardGraphs.model(BackwardGraphs.ODD, 29);
        for (var bg : List.of(BackwardGraphs.backward(lm), BackwardGraphs.primitiveBackward(lm))) {
            boolean flash = bg.graph().nodes().stream().anyMatch(n -> n.op() == Op.ATTENTION_GRAD_KV);
            for (CompileOptions.Amp amp : CompileOptions.Amp.values()) {
                for (boolean fuse : new boolean[] {true, false}) {
                    CompiledModel m = BackwardGraphs.compile(bg.graph(), fuse, amp);
                    Set<Op> ops = EnumSet.noneOf(Op.class);
                    m.kernels().forEach(k -> ops.add(k.node().op()));
                    CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
                    assertTrue(l.launches() > 10 && l.gemms() > 3, amp + " " + fuse + ": " + l.launches() + " launches");
                    assertTrue(ops.contains(Op.SCATTER_ADD) && ops.contains(Op.CROSS_ENTROPY_GRAD), ops.toString());
                    // the trainer's step: flash attention forward and backward, no (s, t) softmax_grad; the
                    // forward's kernel writes the lse (no attention_lse kernel, no LSE launch)
                    assertEquals(flash, ops.containsAll(List.of(Op.ATTENTION, Op.ATTENTION_GRAD_Q, Op.ATTENTION_GRAD_KV))
                            && !ops.contains(Op.SOFTMAX_GRAD), amp + " " + fuse + " " + ops);
                    assertFalse(ops.contains(Op.ATTENTION_LSE), amp + " " + fuse + " " + ops);
                    List<Step.Launch> launches = l.steps().stream().filter(s -> s instanceof Step.Launch).map(s -> (Step.Launch) s).toList();
                    assertEquals(flash, launches.stream().anyMatch(s -> s.spec() instanceof AttentionSpec a && a.lse()), amp + " " + fuse);
                    assertTrue(launches.stream().noneMatch(s -> s.spec() instanceof AttentionBackwardSpec a
                            && a.kind() == AttentionBackwardSpec.Kind.LSE), amp + " " + fuse);
                    assertEquals(backwardLaunches(l, AttentionBackwardSpec.Kind.GRAD_KV), backwardLaunches(l, AttentionBackwardSpec.Kind.DELTA),
                            amp + " " + fuse + ": one delta pass per attention");
                }
            }
        }
    }

    /**
     * The residual stream's gradient is summed in each norm's dx kernel when the step is fused (an
     * lt_norm_grad with a res operand, no add kernel reading dx: a 193 us add per norm at
     * 16x1024x4096); the unfused (eager) step keeps the add.
     */
    @Test
    void theFusedStepAddsTheResidualGradientInTheNormsDxKernel() {
        var bg = BackwardGraphs.backward(BackwardGraphs.model(BackwardGraphs.ODD, 29));
        for (CompileOptions.Amp amp : CompileOptions.Amp.values()) {
            for (boolean fuse : new boolean[] {true, false}) {
                CompiledModel m = BackwardGraphs.compile(bg.graph(), fuse, amp);
                var g = m.graph();
                List<Step.Launch> launches = CudaLowering.lower(m, CudaTarget.H200).steps().stream()
                        .filter(s -> s instanceof Step.Launch).map(s -> (Step.Launch) s).toList();
                // fused, each norm's dx kernel is the one that also sums its weight gradient (NormBackwardSpec)
                long residual = launches.stream().filter(s -> s.spec() instanceof NormBackwardSpec r && r.residual()).count();
                long plain = launches.stream().filter(s -> s.spec() instanceof RowGradSpec r && r.kind() == RowGradSpec.Kind.RMS_NORM
                        && !r.residual() || s.spec() instanceof NormBackwardSpec b && !b.residual()).count();
                // the block's two norms take the residual gradient; the final norm's dx has nothing to add
                assertEquals(fuse ? 2 : 0, residual, amp + " " + fuse);
                assertEquals(fuse ? 1 : 3, plain, amp + " " + fuse);
                long readByAnAdd = g.nodes().stream().filter(n -> (n.op() == Op.ADD || n.op() == Op.ELEMENTWISE_FUSED)
                        && n.inputs().stream().map(g::node).anyMatch(p -> p != null && p.op() == Op.RMS_NORM_GRAD)).count();
                assertEquals(fuse ? 0 : 2, readByAnAdd, amp + " " + fuse + ": adds reading a norm's dx");
                launches.stream().filter(s -> s.spec() instanceof NormBackwardSpec r && r.residual()).forEach(s -> {
                    assertTrue(s.source().source().contains("lt_f32(res[base + c0 + k * THREADS])"), s.source().source());
                    assertEquals(7, s.args().size(), "x, w, dy, res, out, ws, rows");
                });
            }
        }
    }

    @Test
    void theFlashBackwardsKeyAndValueHalvesAreReadInPlace() {
        // the stacked dk;dv is cut by two slices along its first axis: each half is one aligned block,
        // read in place by the inverse rope (dk) and the permute (dv) instead of copied first
        var lm = BackwardGraphs.model(new dev.lantern.frontend.nn.BlockConfig("aligned-train", 2, 16, 64, 4, 128, true), 32);
        for (CompileOptions.Amp amp : List.of(CompileOptions.Amp.NONE, CompileOptions.Amp.BF16)) {
            CompiledModel m = BackwardGraphs.compile(BackwardGraphs.backward(lm).graph(), true, amp);
            assertTrue(m.kernels().stream().filter(k -> k.node().op() == Op.SLICE).count() >= 2, amp + ": the step slices dk;dv");
            List<Step.Launch> launches = CudaLowering.lower(m, CudaTarget.H200).steps().stream()
                    .filter(s -> s instanceof Step.Launch).map(s -> (Step.Launch) s).toList();
            assertTrue(launches.stream().noneMatch(s -> s.source().entry().startsWith("lt_slice")), amp + ": "
                    + launches.stream().map(s -> s.source().entry()).toList());
        }
        // an unaligned half (1 x 3 heads x 11 x 6 f32: dv starts 792 bytes in, not a multiple of 16) stays a copy
        var unaligned = BackwardGraphs.model(new dev.lantern.frontend.nn.BlockConfig("unaligned-train", 1, 11, 18, 3, 20, true), 29);
        CompiledModel odd = BackwardGraphs.compile(BackwardGraphs.backward(unaligned).graph(), true, CompileOptions.Amp.NONE);
        assertTrue(CudaLowering.lower(odd, CudaTarget.H200).steps().stream()
                .anyMatch(s -> s instanceof Step.Launch l && l.source().entry().startsWith("lt_slice")));
    }

    @Test
    void oneDeltaPassServesBothGradientsOfTheSameOAndDy() {
        String head = """
                graph @g {
                  %q = input {name="q"} : bf16[1,4,37,64]
                  %k = input {name="k"} : bf16[1,2,41,64]
                  %v = input {name="v"} : bf16[1,2,41,64]
                  %o = input {name="o"} : bf16[1,4,37,64]
                  %o2 = input {name="o2"} : bf16[1,4,37,64]
                  %dy = input {name="dy"} : bf16[1,4,37,64]
                  %lse = attention_lse(%q, %k) {causal=true, scale=0.125} : f32[1,4,37]
                """;
        String dq = "  %dq = attention_grad_q(%q, %k, %v, %o, %dy, %lse) {causal=true, scale=0.125} : bf16[1,4,37,64]\n";
        String dkv = "  %dkv = attention_grad_kv(%q, %k, %v, O, %dy, %lse) {causal=true, scale=0.125} : bf16[2,1,2,41,64]\n";
        // {body, outputs, DELTA launches}: shared, another o (two), grad_kv alone, grad_q alone
        for (String[] c : new String[][] {{dq + dkv.replace("O", "%o"), "%dq, %dkv", "1"}, {dq + dkv.replace("O", "%o2"), "%dq, %dkv", "2"},
                {dkv.replace("O", "%o"), "%dkv", "1"}, {dq, "%dq", "1"}}) {
            CompiledModel m = BackwardGraphs.compile(IrParser.parse(head + c[0] + "  return " + c[1] + "\n}\n"), true, CompileOptions.Amp.NONE);
            CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
            assertEquals(Long.parseLong(c[2]), backwardLaunches(l, AttentionBackwardSpec.Kind.DELTA), c[0]);
            // bf16 rows of 64 dims: the 16-byte-load delta kernel
            assertTrue(l.steps().stream().filter(st -> st instanceof Step.Launch x && x.spec() instanceof AttentionBackwardSpec a
                    && a.kind() == AttentionBackwardSpec.Kind.DELTA).allMatch(st -> ((Step.Launch) st).source().variant().equals("vector")), c[0]);
        }
    }

    /**
     * The delta kernel by head_dim: 16-byte loads (variant "vector") at a power of two from 8 to 256 in bf16/f16, the
     * general kernel at 48 and in f32. (At a power-of-two head_dim every view of a dense tensor starts its rows 16-byte
     * aligned; the lowering's copy of a misaligned o or dy is a guard no graph here reaches.)
     */
    @Test
    void theDeltaKernelFollowsTheHeadDim() {
        for (Object[] c : new Object[][] {{8, "bf16", "vector"}, {256, "f16", "vector"}, {48, "bf16", "general"}, {64, "f32", "general"}}) {
            String ir = """
                    graph @g {
                      %q = input {name="q"} : T[1,4,37,D]
                      %k = input {name="k"} : T[1,4,41,D]
                      %v = input {name="v"} : T[1,4,41,D]
                      %o = input {name="o"} : T[1,4,37,D]
                      %dy = input {name="dy"} : T[1,4,37,D]
                      %lse = attention_lse(%q, %k) {causal=false, scale=0.125} : f32[1,4,37]
                      %dq = attention_grad_q(%q, %k, %v, %o, %dy, %lse) {causal=false, scale=0.125} : T[1,4,37,D]
                      return %dq
                    }
                    """.replace("T[", c[1] + "[").replace(",D]", "," + c[0] + "]");
            CudaLowering.Lowered l = CudaLowering.lower(BackwardGraphs.compile(IrParser.parse(ir), true, CompileOptions.Amp.NONE),
                    CudaTarget.H200);
            List<String> variants = l.steps().stream().filter(st -> st instanceof Step.Launch x && x.spec() instanceof AttentionBackwardSpec a
                    && a.kind() == AttentionBackwardSpec.Kind.DELTA).map(st -> ((Step.Launch) st).source().variant()).toList();
            assertEquals(List.of((String) c[2]), variants, java.util.Arrays.toString(c));
        }
    }

    private static long backwardLaunches(CudaLowering.Lowered l, AttentionBackwardSpec.Kind kind) {
        return l.steps().stream().filter(s -> s instanceof Step.Launch x && x.spec() instanceof AttentionBackwardSpec a && a.kind() == kind).count();
    }

    /**
     * A norm's weight gradient joins the dx kernel after it (one {@link NormBackwardSpec}, then FINISH) when nothing in
     * between reads dw; a kernel in between that reads dw keeps dw where it is (PARTIAL and FINISH there, the row kernel
     * for dx); so does a row wider than one block of registers (4096 columns).
     */
    @Test
    void aNormsWeightGradientJoinsItsDxKernelOnlyWhenNothingBetweenReadsIt() {
        String in = "%x = input {name=\"x\"} : f32[7,D]\n  %dy = input {name=\"dy\"} : f32[7,D]\n  %w = param {name=\"w\"} : f32[D]\n  ";
        String dw = "%dw = norm_weight_grad(%x, %dy) {eps=1.0E-6, kind=\"rms\"} : f32[D]\n  ";
        String dx = "%y = rms_norm_grad(%x, %w, %dy) {eps=1.0E-6} : f32[7,D]\n";
        List<Object> apart = launched(in + dw + "%t = mul(%x, %x) : f32[7,D]\n  " + dx, "%y, %dw, %t", 40);
        assertEquals(1, apart.stream().filter(x -> x instanceof NormBackwardSpec).count(), apart.toString());
        assertEquals(List.of(NormWeightGradSpec.Stage.FINISH), apart.stream().filter(x -> x instanceof NormWeightGradSpec)
                .map(x -> ((NormWeightGradSpec) x).stage()).toList());
        assertTrue(apart.stream().noneMatch(x -> x instanceof RowGradSpec), apart.toString());
        List<Object> readBetween = launched(in + dw + "%s = mul(%dw, %dw) : f32[D]\n  " + dx, "%y, %s", 40);
        assertTrue(readBetween.stream().noneMatch(x -> x instanceof NormBackwardSpec), readBetween.toString());
        assertEquals(List.of(NormWeightGradSpec.Stage.PARTIAL, NormWeightGradSpec.Stage.FINISH), readBetween.stream()
                .filter(x -> x instanceof NormWeightGradSpec).map(x -> ((NormWeightGradSpec) x).stage()).toList());
        assertEquals(1, readBetween.stream().filter(x -> x instanceof RowGradSpec).count(), readBetween.toString());
        List<Object> wide = launched(in + dw + dx, "%y, %dw", 4097);
        assertTrue(wide.stream().noneMatch(x -> x instanceof NormBackwardSpec), "past 4096 columns: the two kernels");
    }

    /**
     * At head_dim 128 in bf16 without a mask, grad_q's dq comes from grad_kv's dS tiles (DELTA, GRAD_KV_DS, DQ_DS; no
     * GRAD_Q kernel), in strict mode too (no atomics); a kernel in between that reads dq, head_dim 64 and
     * {@code lantern.attention.backward.ds=false} keep grad_q's own kernel; a batch whose dS tiles pass the chunk budget
     * runs in chunks, each GRAD_KV_DS followed by its DQ_DS; the training step of a head_dim-128 model under bf16 takes it.
     */
    @Test
    void attentionsDqComesFromGradKvsDsTiles() {
        String head = """
                graph @g {
                  %q = input {name="q"} : bf16[B,4,37,D]
                  %k = input {name="k"} : bf16[B,2,41,D]
                  %v = input {name="v"} : bf16[B,2,41,D]
                  %o = input {name="o"} : bf16[B,4,37,D]
                  %dy = input {name="dy"} : bf16[B,4,37,D]
                  %lse = attention_lse(%q, %k) {causal=true, scale=0.125} : f32[B,4,37]
                  %dq = attention_grad_q(%q, %k, %v, %o, %dy, %lse) {causal=true, scale=0.125} : bf16[B,4,37,D]
                """;
        String dkv = "  %dkv = attention_grad_kv(%q, %k, %v, %o, %dy, %lse) {causal=true, scale=0.125} : bf16[2,B,2,41,D]\n";
        String between = "  %t = mul(%dq, %dq) : bf16[B,4,37,D]\n";
        record Case(String body, String outputs, int d, boolean strict, boolean ds, String off) {}
        for (Case c : List.of(new Case(dkv, "%dq, %dkv", 128, false, true, null), new Case(dkv, "%dq, %dkv", 128, true, true, null),
                new Case(between + dkv, "%t, %dkv", 128, false, false, null), new Case(dkv + between, "%t, %dkv", 128, false, true, null),
                new Case(dkv, "%dq, %dkv", 64, false, false, null), new Case(dkv, "%dq, %dkv", 128, false, false, "false"))) {
            String ir = (head + c.body() + "  return " + c.outputs() + "\n}\n").replace("D]", c.d() + "]").replace("[B,", "[1,")
                    .replace("[2,B,", "[2,1,");
            String before = System.getProperty("lantern.attention.backward.ds");
            try {
                if (c.off() != null) {
                    System.setProperty("lantern.attention.backward.ds", c.off());
                }
                CompiledModel m = dev.lantern.engine.Compiler.compile(IrParser.parse(ir),
                        CompileOptions.defaults().withTarget("cuda").withDeterministic(c.strict()));
                CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
                String what = c + " " + attentionOrder(l);
                assertEquals(c.ds() ? 1 : 0, backwardLaunches(l, AttentionBackwardSpec.Kind.GRAD_KV_DQ), what);
                assertEquals(c.ds() ? 0 : 1, backwardLaunches(l, AttentionBackwardSpec.Kind.GRAD_Q), what);
                assertEquals(c.ds() ? 0 : 1, backwardLaunches(l, AttentionBackwardSpec.Kind.GRAD_KV), what);
                if (c.ds()) {
                    assertEquals(List.of("LSE", "DELTA", "GRAD_KV_DQ"), attentionOrder(l), what);
                    // the ring's flags are zeroed by the launch just before it: one int for each of its working CTAs
                    int at = -1;
                    for (int i = 0; i < l.steps().size(); i++) {
                        if (l.steps().get(i) instanceof Step.Launch x && x.spec() instanceof AttentionBackwardSpec a
                                && a.kind() == AttentionBackwardSpec.Kind.GRAD_KV_DQ) {
                            at = i;
                        }
                    }
                    Step.Launch zero = (Step.Launch) l.steps().get(at - 1);
                    Step.Launch ring = (Step.Launch) l.steps().get(at);
                    assertTrue(zero.spec().name().startsWith("lt_attn_bwd_sync_zero"), zero.spec().name());
                    long flags = ((AttentionBackwardSpec) ring.spec()).ringFlags();
                    assertEquals(1 * 2 * (1 + 2 * 1), flags, "b * hk units of one grad_kv CTA and group * 1 dq CTAs");
                    Step.Ptr zeroed = (Step.Ptr) zero.args().get(1);
                    Step.Ptr sync = (Step.Ptr) ring.args().getLast();
                    assertEquals(zeroed.buf().name(), sync.buf().name());
                    assertEquals(flags * 4, sync.extent());
                }
            } finally {
                if (before == null) {
                    System.clearProperty("lantern.attention.backward.ds");
                } else {
                    System.setProperty("lantern.attention.backward.ds", before);
                }
            }
        }
        // without the ring (lantern.attention.backward.dsRing=false): 5 batches of 4 heads x 1 causal tile: 4 x 8 KiB of dS
        // a batch; a 64 KiB budget takes 2 batches a chunk -> 3 chunks (2, 2, 1)
        String before = System.getProperty("lantern.attention.backward.dsBytes");
        try {
            System.setProperty("lantern.attention.backward.dsBytes", String.valueOf(64 * 1024));
            System.setProperty("lantern.attention.backward.dsRing", "false");
            String ir = (head + dkv + "  return %dq, %dkv\n}\n").replace("D]", "128]").replace("[B,", "[5,").replace("[2,B,", "[2,5,");
            CudaLowering.Lowered l = CudaLowering.lower(dev.lantern.engine.Compiler.compile(IrParser.parse(ir),
                    CompileOptions.defaults().withTarget("cuda")), CudaTarget.H200);
            assertEquals(List.of("LSE", "DELTA", "GRAD_KV_DS", "DQ_DS", "GRAD_KV_DS", "DQ_DS", "GRAD_KV_DS", "DQ_DS"), attentionOrder(l));
            List<Long> batches = l.steps().stream().filter(s -> s instanceof Step.Launch x && x.spec() instanceof AttentionBackwardSpec a
                    && a.kind() == AttentionBackwardSpec.Kind.DQ_DS).map(s -> ((AttentionBackwardSpec) ((Step.Launch) s).spec()).batch()).toList();
            assertEquals(List.of(2L, 2L, 1L), batches);
        } finally {
            System.clearProperty("lantern.attention.backward.dsRing");
            if (before == null) {
                System.clearProperty("lantern.attention.backward.dsBytes");
            } else {
                System.setProperty("lantern.attention.backward.dsBytes", before);
            }
        }
        var lm = BackwardGraphs.model(new dev.lantern.frontend.nn.BlockConfig("hd128-train", 1, 33, 256, 2, 512, true), 29);
        CudaLowering.Lowered step = CudaLowering.lower(BackwardGraphs.compile(BackwardGraphs.backward(lm).graph(), true,
                CompileOptions.Amp.BF16), CudaTarget.H200);
        assertEquals(1, backwardLaunches(step, AttentionBackwardSpec.Kind.GRAD_KV_DQ), "the training step's attention");
        assertEquals(0, backwardLaunches(step, AttentionBackwardSpec.Kind.GRAD_Q), "the training step's attention");
    }

    private static List<String> attentionOrder(CudaLowering.Lowered l) {
        return l.steps().stream().filter(s -> s instanceof Step.Launch x && x.spec() instanceof AttentionBackwardSpec)
                .map(s -> ((AttentionBackwardSpec) ((Step.Launch) s).spec()).kind().name()).toList();
    }

    private static List<Object> launched(String body, String outputs, int d) {
        CompiledModel m = BackwardGraphs.compile(IrParser.parse(("graph @g {\n  " + body + "  return " + outputs + "\n}\n")
                .replace("D]", d + "]")), false, CompileOptions.Amp.NONE);
        return CudaLowering.lower(m, CudaTarget.H200).steps().stream()
                .filter(s -> s instanceof Step.Launch).map(s -> (Object) ((Step.Launch) s).spec()).toList();
    }

    private static List<Object> specs(String body) {
        CompiledModel m = BackwardGraphs.compile(BackwardGraphs.graph(body), false, CompileOptions.Amp.NONE);
        return CudaLowering.lower(m, CudaTarget.H200).steps().stream()
                .filter(s -> s instanceof Step.Launch).map(s -> (Object) ((Step.Launch) s).spec()).toList();
    }

    private static List<Object> specsOf(String inputs, String body) {
        CompiledModel m = BackwardGraphs.compile(IrParser.parse("graph @g {\n  " + inputs + "\n  " + body + "\n  return %y\n}\n"),
                false, CompileOptions.Amp.NONE);
        return CudaLowering.lower(m, CudaTarget.H200).steps().stream()
                .filter(s -> s instanceof Step.Launch).map(s -> (Object) ((Step.Launch) s).spec()).toList();
    }
}
