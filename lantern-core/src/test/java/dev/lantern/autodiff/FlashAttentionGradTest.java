package dev.lantern.autodiff;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.ir.Verifier;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * attention's flash backward (attention_lse, attention_grad_q, attention_grad_kv): the CPU kernels
 * against the float64 reference on seeded inputs (odd and prime sizes, grouped-query heads, causal,
 * masks, s ≠ t, f32 and bf16), the flash rule against the primitive rule (matmul, softmax, matmul),
 * float64 finite differences of the flash rule, and the ops' IR text.
 */
class FlashAttentionGradTest {
    /** b, h, hk, s, t, d, causal, mask shape (null: none), mask with −inf entries, rope, out_perm. */
    record Shape5(int b, int h, int hk, int s, int t, int d, boolean causal, int[] mask, boolean rope, boolean perm) {
        @Override
        public String toString() {
            return b + "x" + h + "/" + hk + "x" + s + "x" + t + "x" + d + (causal ? " causal" : "") + (mask != null ? " mask" : "")
                    + (rope ? " rope" : "") + (perm ? " out_perm" : "");
        }
    }

    static Stream<Shape5> shapes() {
        return Stream.of(
                new Shape5(2, 3, 3, 7, 7, 5, false, null, false, false),
                new Shape5(1, 4, 2, 13, 13, 8, true, null, true, true),
                new Shape5(2, 6, 2, 37, 71, 16, false, new int[] {2, 1, 1, 71}, false, true),
                new Shape5(1, 2, 1, 67, 131, 32, true, new int[] {1, 2, 67, 131}, true, false),
                new Shape5(1, 2, 2, 97, 41, 3, true, null, false, false));
    }

    /** The three ops (and the forward they need) in one graph: outputs lse, dq, dk;dv. */
    static Graph ops(Shape5 c, DType dt) {
        GraphBuilder g = new GraphBuilder("attn_bwd");
        Value q = g.input("q", TensorType.of(dt, c.b(), c.h(), c.s(), c.d()));
        Value k = g.input("k", TensorType.of(dt, c.b(), c.hk(), c.t(), c.d()));
        Value v = g.input("v", TensorType.of(dt, c.b(), c.hk(), c.t(), c.d()));
        Value dy = g.input("dy", TensorType.of(dt, c.b(), c.h(), c.s(), c.d()));
        Value mask = c.mask() == null ? null : g.input("mask", TensorType.of(dt, Shape.of(c.mask())));
        Attrs a = Attrs.of("causal", c.causal(), "scale", 1 / Math.sqrt(c.d()));
        Value o = mask == null ? g.op(Op.ATTENTION, a, q, k, v) : g.op(Op.ATTENTION, a, q, k, v, mask);
        Value lse = mask == null ? g.op(Op.ATTENTION_LSE, a, q, k) : g.op(Op.ATTENTION_LSE, a, q, k, mask);
        Value[] in = mask == null ? new Value[] {q, k, v, o, dy, lse} : new Value[] {q, k, v, o, dy, lse, mask};
        return g.build(lse, g.op(Op.ATTENTION_GRAD_Q, a, in), g.op(Op.ATTENTION_GRAD_KV, a, in));
    }

    static Map<String, Tensor> inputs(Graph g, long seed) {
        Map<String, Tensor> m = new HashMap<>();
        for (Node n : g.inputs()) {
            String key = n.attrs().getString("name", n.name());
            Tensor t = Philox.normal(Tensor.allocate(n.type()), Philox.key(seed, key), 1f);
            if (key.equals("mask")) {
                for (long i = 0; i < t.numel(); i++) {
                    t.set(i, i % 7 == 3 && i % (t.shape().last()) != 0 ? Float.NEGATIVE_INFINITY : t.get(i)); // key 0 is never masked
                }
            }
            m.put(key, t);
        }
        return m;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void cpuKernelsMatchTheFloat64Reference(Shape5 c) {
        for (DType dt : new DType[] {DType.F32, DType.BF16}) {
            Graph g = ops(c, dt);
            Map<String, Tensor> in = inputs(g, 17);
            Map<String, RefTensor> ref = ReferenceInterpreter.run(g, in);
            Map<String, Tensor> got = new EagerExecutor(true).run(g, in);
            double tol = dt == DType.F32 ? 2e-5 : 2e-2;
            for (String out : g.outputs()) {
                double e = Accuracy.relErr(got.get(out).toDoubles(), ref.get(out).data());
                assertTrue(e <= tol, c + " " + dt + " %" + out + " (" + g.node(out).op() + "): rel err " + e);
            }
            // a rerun gives the same bits (fixed summation order, no atomics)
            Map<String, Tensor> again = new EagerExecutor(true).run(g, in);
            for (String out : g.outputs()) {
                assertArrayEquals(got.get(out).toDoubles(), again.get(out).toDoubles(), c + " rerun %" + out);
            }
        }
    }

    /** loss = Σ attention(q, k, v [, mask]) · r, with the case's rope and out_perm. */
    static Graph forward(Shape5 c, List<String> wrt) {
        GraphBuilder g = new GraphBuilder("attn");
        Value q = g.input("q", TensorType.of(DType.F32, c.b(), c.h(), c.s(), c.d()));
        Value k = g.input("k", TensorType.of(DType.F32, c.b(), c.hk(), c.t(), c.d()));
        Value v = g.input("v", TensorType.of(DType.F32, c.b(), c.hk(), c.t(), c.d()));
        Attrs a = Attrs.of("causal", c.causal(), "scale", 0.7, "rope", c.rope(), "rope_base", 100.0);
        if (c.perm()) {
            a = a.with("out_perm", new int[] {0, 2, 1, 3});
        }
        Value y = c.mask() == null ? g.op(Op.ATTENTION, a, q, k, v)
                : g.op(Op.ATTENTION, a, q, k, v, g.input("mask", TensorType.of(DType.F32, Shape.of(c.mask()))));
        Value r = g.input("r", TensorType.of(DType.F32, y.shape()));
        Value loss = g.op(Op.REDUCE_SUM, Attrs.of("axes", new int[] {0, 1, 2, 3}), g.mul(y, r));
        wrt.addAll(List.of(q.name(), k.name(), v.name()));
        return g.build(loss);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void flashRuleEqualsThePrimitiveRule(Shape5 c) {
        List<String> wrt = new ArrayList<>();
        Graph f = forward(c, wrt);
        BackwardGraph flash = Gradients.of(f, f.outputs().getFirst(), wrt);
        BackwardGraph prim = Gradients.of(f, f.outputs().getFirst(), wrt, Gradients.Options.PRIMITIVE_ATTENTION);
        assertTrue(has(flash, Op.ATTENTION_GRAD_KV) && !has(flash, Op.SOFTMAX_GRAD), "the flash rule keeps no scores");
        assertTrue(has(prim, Op.SOFTMAX_GRAD) && !has(prim, Op.ATTENTION_GRAD_Q), "the primitive rule");
        Map<String, RefTensor> src = GradCheck.sources(f, 5, Map.of());
        Map<String, RefTensor> a = ReferenceInterpreter.runExact(flash.graph(), src);
        Map<String, RefTensor> b = ReferenceInterpreter.runExact(prim.graph(), src);
        Map<String, Tensor> f32 = new HashMap<>();
        src.forEach((k, v) -> f32.put(k, Tensor.of(DType.F32, v.shape(), v.toFloats())));
        Map<String, Tensor> cpu;
        // the compiled CPU pipeline (fusion, layout, plan) runs the attention forms eager cannot
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(Compiler.compile(flash.graph(), CompileOptions.defaults())).bind(Map.of())) {
            exec.poisonArena();
            cpu = exec.run(f32);
        }
        for (String w : wrt) {
            double[] want = b.get(prim.gradientOf(w)).data();
            double e = Accuracy.relErr(a.get(flash.gradientOf(w)).data(), want);
            // not 1e-15: with a mask the primitive form multiplies by the scale as an f32 constant (0.7f)
            assertTrue(e <= (c.mask() == null ? 1e-12 : 1e-7), c + " d" + w + ": float64 rel err " + e);
            double ec = Accuracy.relErr(cpu.get(flash.gradientOf(w)).toDoubles(), want);
            assertTrue(ec <= 2e-5, c + " d" + w + ": CPU f32 rel err " + ec);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void flashRuleMatchesFiniteDifferences(Shape5 c) {
        if (c.s() * c.t() * c.h() > 2000) {
            return; // finite differences cost two forwards per element: the small cases suffice
        }
        List<String> wrt = new ArrayList<>();
        Graph f = forward(c, wrt);
        Map<String, RefTensor> src = GradCheck.copy(GradCheck.sources(f, 9, Map.of()));
        GradCheck.Result res = GradCheck.check(f, f.outputs().getFirst(), wrt, src);
        assertTrue(has(res.backward(), Op.ATTENTION_GRAD_Q), "checked the flash rule");
        assertTrue(res.worst() <= 1e-6, c + ":\n" + res.report());
    }

    @Test
    void smallFiniteDifferenceCasesWithMaskAndUnequalLengths() {
        for (Shape5 c : List.of(new Shape5(2, 4, 2, 5, 7, 4, true, new int[] {2, 1, 5, 7}, true, true),
                new Shape5(1, 3, 1, 6, 3, 2, false, new int[] {1, 3, 1, 3}, false, false))) {
            List<String> wrt = new ArrayList<>();
            Graph f = forward(c, wrt);
            Map<String, RefTensor> src = GradCheck.copy(GradCheck.sources(f, 3, Map.of()));
            GradCheck.Result res = GradCheck.check(f, f.outputs().getFirst(), wrt, src);
            assertTrue(has(res.backward(), Op.ATTENTION_GRAD_KV), "checked the flash rule");
            assertTrue(res.worst() <= 1e-6, c + ":\n" + res.report());
        }
    }

    @Test
    void aMaskThatNeedsAGradientOrUnequalHeadDimsTakeThePrimitiveRule() {
        GraphBuilder g = new GraphBuilder("m");
        Value q = g.input("q", TensorType.of(DType.F32, 1, 2, 3, 4));
        Value k = g.input("k", TensorType.of(DType.F32, 1, 2, 5, 4));
        Value v = g.input("v", TensorType.of(DType.F32, 1, 2, 5, 4));
        Value m = g.input("mask", TensorType.of(DType.F32, 1, 1, 1, 5));
        Value loss = g.op(Op.REDUCE_SUM, Attrs.of("axes", new int[] {0, 1, 2, 3}), g.op(Op.ATTENTION, Attrs.of("scale", 0.5), q, k, v, m));
        Graph f = g.build(loss);
        assertTrue(has(Gradients.of(f, loss.name(), List.of(q.name(), m.name())), Op.SOFTMAX_GRAD));
        assertTrue(has(Gradients.of(f, loss.name(), List.of(q.name(), k.name())), Op.ATTENTION_GRAD_Q));
        GraphBuilder g2 = new GraphBuilder("e");
        Value q2 = g2.input("q", TensorType.of(DType.F32, 1, 2, 3, 4));
        Value k2 = g2.input("k", TensorType.of(DType.F32, 1, 2, 5, 4));
        Value v2 = g2.input("v", TensorType.of(DType.F32, 1, 2, 5, 6));
        Value l2 = g2.op(Op.REDUCE_SUM, Attrs.of("axes", new int[] {0, 1, 2, 3}), g2.op(Op.ATTENTION, Attrs.EMPTY, q2, k2, v2));
        BackwardGraph b2 = Gradients.of(g2.build(l2), l2.name(), List.of(q2.name()));
        assertFalse(has(b2, Op.ATTENTION_GRAD_Q));
    }

    @Test
    void irTextRoundTrips() {
        String text = """
                graph @attn_bwd {
                  %q = input {name="q"} : bf16[2,4,9,8]
                  %k = input {name="k"} : bf16[2,2,11,8]
                  %v = input {name="v"} : bf16[2,2,11,8]
                  %o = input {name="o"} : bf16[2,4,9,8]
                  %dy = input {name="dy"} : bf16[2,4,9,8]
                  %m = input {name="m"} : bf16[2,1,1,11]
                  %lse = attention_lse(%q, %k, %m) {causal=true, scale=0.35} : f32[2,4,9]
                  %dq = attention_grad_q(%q, %k, %v, %o, %dy, %lse, %m) {causal=true, scale=0.35} : bf16[2,4,9,8]
                  %dkv = attention_grad_kv(%q, %k, %v, %o, %dy, %lse, %m) {causal=true, scale=0.35} : bf16[2,2,2,11,8]
                  return %dq, %dkv
                }
                """;
        Graph g = Verifier.verify(IrParser.parse(text), "round trip");
        assertEquals(text, IrPrinter.print(g));
        assertEquals(g, IrParser.parse(IrPrinter.print(g)));
        for (Op op : List.of(Op.ATTENTION_LSE, Op.ATTENTION_GRAD_Q, Op.ATTENTION_GRAD_KV)) {
            assertTrue(op.example().contains(op.text() + "("), op.example());
        }
    }

    private static boolean has(BackwardGraph b, Op op) {
        return b.graph().nodes().stream().anyMatch(n -> n.op() == op);
    }
}
