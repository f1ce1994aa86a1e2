package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * attention's flash backward on CUDA (attention_lse, attention_grad_q, attention_grad_kv) against
 * the float64 reference on odd shapes (prime lengths, s ≠ t, grouped-query heads, causal, masks)
 * in f32, bf16 and f16, compiled and in strict mode (two runs bit-identical), with the lse in the
 * three ways a graph can hold it ({@link Lse}): written by the forward attention's kernel (the
 * training step), by the forward with RoPE inside it against the backward's rope nodes, and by
 * attention_lse's own kernel (o given). Then the backward at 16×32×1024×128 bf16, causal and not,
 * timed (median ms, printed as {@code [flash-bwd]} lines for comparison with
 * {@code scripts/bench/torch_sdpa_bwd.py}): the backward alone (lse recomputed) and the training
 * step's attention (forward writing the lse, then the backward).
 */
@Tag("gpu")
class FlashAttentionBackwardGpuTest {
    /** Where the graph's lse comes from. */
    enum Lse {
        /** {@code %o = attention(%q, %k, %v)}: the forward's kernel writes the lse (no attention_lse kernel). */
        FORWARD,
        /** The training step's form: {@code attention {rope=true}}, lse and gradients over {@code rope(%q)}, {@code rope(%k)}. */
        ROPE,
        /** {@code %o} is an input: attention_lse runs its own kernel. */
        OWN_KERNEL
    }

    /** b, h, hk, s, t, d, causal, mask shape or null, dtype, lse source (rope on even head dims only). */
    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        Object[][] shapes = {
            {1, 2, 2, 37, 37, 64, true, null},
            {2, 6, 2, 61, 131, 64, false, new int[] {2, 1, 1, 131}},
            {1, 4, 1, 97, 41, 128, true, null},
            {1, 3, 3, 29, 67, 128, true, new int[] {1, 3, 29, 67}},
            {2, 4, 2, 131, 67, 128, false, null},
            {1, 2, 1, 200, 129, 128, true, null},
            // several tiles each way, neither length a multiple of 64: the pipelined walks' prologue, steady state and epilogue
            {1, 2, 1, 300, 333, 128, false, null},
            {1, 4, 2, 333, 300, 128, true, null},
            // one query (decode-shaped): 1x1 causal, 1x77; at head_dim 128 in bf16 and f16 the wgmma kernels' one partial tile
            {1, 2, 1, 1, 1, 128, true, null},
            {1, 2, 2, 1, 77, 128, false, null},
            {2, 4, 2, 13, 17, 37, false, null},
            {1, 2, 1, 5, 3, 8, true, new int[] {1, 1, 5, 3}},
        };
        // -Dlantern.test.flashBwd.hopperOnly=true: only what the wgmma kernels serve (head_dim 128, bf16/f16, no mask), for a sanitizer's run
        boolean hopperOnly = Boolean.getBoolean("lantern.test.flashBwd.hopperOnly");
        for (Object[] sh : shapes) {
            if (hopperOnly && ((int) sh[5] != 128 || sh[7] != null)) {
                continue;
            }
            for (DType t : hopperOnly ? new DType[] {DType.BF16, DType.F16} : new DType[] {DType.F32, DType.BF16, DType.F16}) {
                for (Lse lse : Lse.values()) {
                    if (lse == Lse.ROPE && (int) sh[5] % 2 != 0) {
                        continue;
                    }
                    Object[] a = new Object[sh.length + 2];
                    System.arraycopy(sh, 0, a, 0, sh.length);
                    a[sh.length] = t;
                    a[sh.length + 1] = lse;
                    all.add(Arguments.of(a));
                }
            }
        }
        return all.stream();
    }

    static String graph(int b, int h, int hk, int s, int t, int d, boolean causal, int[] mask, String dt, Lse lse) {
        String attrs = "{causal=" + causal + ", scale=" + (1 / Math.sqrt(d)) + "}";
        String q = dt + "[" + b + "," + h + "," + s + "," + d + "]";
        String kv = dt + "[" + b + "," + hk + "," + t + "," + d + "]";
        String m = mask == null ? "" : ", %m";
        StringBuilder g = new StringBuilder("graph @flash_bwd {\n");
        g.append("  %q = input {name=\"q\"} : ").append(q).append('\n');
        g.append("  %k = input {name=\"k\"} : ").append(kv).append('\n');
        g.append("  %v = input {name=\"v\"} : ").append(kv).append('\n');
        g.append("  %dy = input {name=\"dy\"} : ").append(q).append('\n');
        if (mask != null) {
            g.append("  %m = input {name=\"m\"} : ").append(dt).append(java.util.Arrays.toString(mask).replace(" ", "")).append('\n');
        }
        String qs = "%q";
        String ks = "%k";
        switch (lse) {
            case FORWARD -> g.append("  %o = attention(%q, %k, %v").append(m).append(") ").append(attrs).append(" : ").append(q).append('\n');
            case ROPE -> {
                g.append("  %o = attention(%q, %k, %v").append(m).append(") ")
                        .append(attrs.replace("}", ", rope=true, rope_base=10000.0}")).append(" : ").append(q).append('\n');
                g.append("  %rq = rope(%q) {base=10000.0} : ").append(q).append('\n');
                g.append("  %rk = rope(%k) {base=10000.0} : ").append(kv).append('\n');
                qs = "%rq";
                ks = "%rk";
            }
            case OWN_KERNEL -> g.append("  %o = input {name=\"o\"} : ").append(q).append('\n');
        }
        String qk = qs + ", " + ks;
        g.append("  %lse = attention_lse(").append(qk).append(m).append(") ").append(attrs)
                .append(" : f32[").append(b).append(',').append(h).append(',').append(s).append("]\n");
        g.append("  %dq = attention_grad_q(").append(qk).append(", %v, %o, %dy, %lse").append(m).append(") ").append(attrs).append(" : ").append(q).append('\n');
        g.append("  %dkv = attention_grad_kv(").append(qk).append(", %v, %o, %dy, %lse").append(m).append(") ").append(attrs)
                .append(" : ").append(dt).append("[2,").append(b).append(',').append(hk).append(',').append(t).append(',').append(d).append("]\n");
        g.append("  return %lse, %dq, %dkv").append(lse == Lse.OWN_KERNEL ? "" : ", %o").append("\n}\n");
        return g.toString();
    }

    @ParameterizedTest(name = "{0}x{1}/{2}x{3}x{4}x{5} causal={6} {8} lse={9}")
    @MethodSource("cases")
    void matchesTheFloat64Reference(int b, int h, int hk, int s, int t, int d, boolean causal, int[] mask, DType dtype, Lse lse) {
        Gpu.device();
        Graph g = IrParser.parse(graph(b, h, hk, s, t, d, causal, mask, dtype.name().toLowerCase(Locale.ROOT), lse));
        SplittableRandom r = new SplittableRandom(31L * s + t + d);
        Map<String, Tensor> in = new HashMap<>();
        for (Node n : g.inputs()) {
            String name = n.attrs().getString("name", n.name());
            Tensor v = Tensor.allocate(n.type().dtype(), n.type().shape());
            for (long i = 0; i < v.numel(); i++) {
                // the mask: a few keys (never key 0) at -inf, the rest small
                v.set(i, name.equals("m") ? (i % 5 == 2 && i % t != 0 ? Float.NEGATIVE_INFINITY : (float) r.nextGaussian())
                        : (float) ((name.equals("o") ? 0.5 : 1.5) * r.nextGaussian()));
            }
            in.put(name, v);
        }
        Map<String, RefTensor> ref = ReferenceInterpreter.run(g, in);
        double tol = dtype == DType.F32 ? 1e-4 : 2e-2;
        String what = g.inputs().getFirst().type() + " causal=" + causal + " mask=" + (mask != null) + " hk=" + hk + " lse=" + lse;
        for (boolean strict : new boolean[] {false, true}) {
            Program p = Lantern.compile(g, CompileOptions.defaults().withTarget("cuda").withDeterministic(strict));
            boolean lseKernel = p.model().kernels().stream().anyMatch(k -> k.node().op() == Op.ATTENTION_LSE);
            assertEquals(lse == Lse.OWN_KERNEL, lseKernel, what + ": an attention_lse kernel where the forward should write it, or none");
            // eager too (one op at a time, its own allocations: the forward's side output is allocated with its output)
            for (RunMode mode : strict ? List.of(RunMode.COMPILED) : List.of(RunMode.COMPILED, RunMode.EAGER)) {
                try (Session sess = p.load(Device.cuda(0), Weights.of(Map.of()), mode)) {
                    Map<String, Tensor> first = sess.run(in);
                    for (String out : g.outputs()) {
                        double e = oneKey(t, out) ? distance(first.get(out).toDoubles(), ref.get(out).data()) / norm(in.get("dy").toDoubles())
                                : Accuracy.relErr(first.get(out).toDoubles(), ref.get(out).data());
                        assertTrue(e <= tol, what + (strict ? " strict" : "") + " " + mode + " %" + out + ": rel err " + e + " > " + tol);
                    }
                    if (strict) {
                        Map<String, Tensor> again = sess.run(in);
                        for (String out : g.outputs()) {
                            assertArrayEquals(first.get(out).toDoubles(), again.get(out).toDoubles(), what + ": strict mode, two runs of %" + out + " differ");
                        }
                    }
                }
            }
        }
    }

    /**
     * With one key, every row's softmax is 1 and dS = P·(dP − delta) is 0: dq is zero in exact
     * arithmetic, and what the GPU returns is rounding (P a rounding away from 1, dP and delta summed
     * in different orders), so its error is measured against dy's norm, the scale a wrong dS would
     * show at, not against dq's vanishing one.
     */
    private static boolean oneKey(int t, String out) {
        return t == 1 && out.equals("dq");
    }

    private static double distance(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (a[i] - b[i]) * (a[i] - b[i]);
        }
        return Math.sqrt(s);
    }

    private static double norm(double[] a) {
        return distance(a, new double[a.length]);
    }

    /**
     * The backward of 16×32×1024×128 bf16 attention, median of device-timed forwards of a graph
     * holding only it, causal and not: first alone (o given: lse recomputed by its own kernel, delta,
     * dq, dk;dv), then as the training step runs it (the forward attention writing the lse, then
     * delta, dq, dk;dv), whose {@code [flash-bwd] step} line gives the backward's kernels' sum (the
     * figure against SDPA's backward) and the forward's.
     */
    @Test
    void timesTheBackwardAtTheBenchmarkShape() {
        Gpu.device();
        int b = 16;
        int h = 32;
        int s = 1024;
        int d = 128;
        for (boolean causal : new boolean[] {true, false}) {
            String attrs = "{causal=" + causal + ", scale=" + (1 / Math.sqrt(d)) + "}";
            String x = "bf16[" + b + "," + h + "," + s + "," + d + "]";
            Graph g = IrParser.parse("graph @flash_bwd_bench {\n"
                    + "  %q = input {name=\"q\"} : " + x + "\n  %k = input {name=\"k\"} : " + x + "\n"
                    + "  %v = input {name=\"v\"} : " + x + "\n  %o = input {name=\"o\"} : " + x + "\n"
                    + "  %dy = input {name=\"dy\"} : " + x + "\n"
                    + "  %lse = attention_lse(%q, %k) " + attrs + " : f32[" + b + "," + h + "," + s + "]\n"
                    + "  %dq = attention_grad_q(%q, %k, %v, %o, %dy, %lse) " + attrs + " : " + x + "\n"
                    + "  %dkv = attention_grad_kv(%q, %k, %v, %o, %dy, %lse) " + attrs + " : bf16[2," + b + "," + h + "," + s + "," + d + "]\n"
                    + "  return %dq, %dkv\n}\n");
            try (CudaSession sess = CudaSession.open(Gpu.device(), g, Map.of(), CudaSession.Options.compiled())) {
                sess.fillInputs(5);
                double ms = sess.timeMs(sess::forward, 2, 5);
                double flops = 10.0 * b * h * s * s * d * (causal ? 0.5 : 1.0);
                System.out.printf(Locale.ROOT, "[flash-bwd] %dx%dx%dx%d bf16 causal=%b: %.3f ms (%.1f TFLOP/s)%n",
                        b, h, s, d, causal, ms, flops / ms / 1e9);
                for (CudaSession.StepTime st : sess.profileInForward(1, 3)) {  // inside whole forwards: the ring kernel (GRAD_KV_DQ) waits on flags only the launch before it clears
                    System.out.printf(Locale.ROOT, "[flash-bwd]   %-40s %.3f ms%n", st.op(), st.ms());
                }
                assertTrue(ms > 0, "a positive time");
            }
            Graph step = IrParser.parse("graph @flash_step_bench {\n"
                    + "  %q = input {name=\"q\"} : " + x + "\n  %k = input {name=\"k\"} : " + x + "\n"
                    + "  %v = input {name=\"v\"} : " + x + "\n  %dy = input {name=\"dy\"} : " + x + "\n"
                    + "  %o = attention(%q, %k, %v) " + attrs + " : " + x + "\n"
                    + "  %lse = attention_lse(%q, %k) " + attrs + " : f32[" + b + "," + h + "," + s + "]\n"
                    + "  %dq = attention_grad_q(%q, %k, %v, %o, %dy, %lse) " + attrs + " : " + x + "\n"
                    + "  %dkv = attention_grad_kv(%q, %k, %v, %o, %dy, %lse) " + attrs + " : bf16[2," + b + "," + h + "," + s + "," + d + "]\n"
                    + "  return %o, %dq, %dkv\n}\n");
            try (CudaSession sess = CudaSession.open(Gpu.device(), step, Map.of(), CudaSession.Options.compiled())) {
                sess.fillInputs(5);
                double ms = sess.timeMs(sess::forward, 2, 5);
                double backward = 0;
                double forward = 0;
                for (CudaSession.StepTime st : sess.profileInForward(2, 5)) {
                    System.out.printf(Locale.ROOT, "[flash-bwd]   %-40s %.3f ms%n", st.op(), st.ms());
                    if (st.op().contains("attn_bwd")) {
                        backward += st.ms();
                    } else {
                        forward += st.ms();
                    }
                }
                System.out.printf(Locale.ROOT, "[flash-bwd] step %dx%dx%dx%d bf16 causal=%b: %.3f ms forward and backward; "
                        + "backward kernels %.3f ms (%.1f TFLOP/s), forward with the lse %.3f ms%n",
                        b, h, s, d, causal, ms, backward, 10.0 * b * h * s * s * d * (causal ? 0.5 : 1.0) / backward / 1e9, forward);
                assertTrue(backward > 0 && forward > 0, "both halves timed");
            }
        }
    }
}
