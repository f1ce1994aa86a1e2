package dev.lantern.engine.cpu;

import dev.lantern.cpu.View;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelKey;
import dev.lantern.kernel.KernelLowering;
import dev.lantern.kernel.Operand;
import dev.lantern.kernel.Target;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Both attention strategies (two GEMMs per head; the backend's flash kernel) against the float64 reference, with rope, a mask, strided q/k/v and a permuted output. */
class AttentionStrategiesTest {
    @ParameterizedTest(name = "{0} causal={1} rope={2} {3}")
    @CsvSource({"per_head_gemm,true,true,f32", "flash,true,true,f32", "per_head_gemm,false,false,f32", "flash,false,false,f32",
            "per_head_gemm,true,true,bf16", "flash,true,true,bf16"})
    void matchesReference(String strategy, boolean causal, boolean rope, String dtype) {
        String t = dtype;
        Graph g = IrParser.parse("""
                graph @attn {
                  %x = input {name="x"} : T[2,40,96]
                  %0 = reshape(%x) {shape=[2,40,3,32]} : T[2,40,3,32]
                  %1 = permute(%0) {perm=[0,2,1,3]} : T[2,3,40,32]@[3840,32,96,1]
                  %2 = attention(%1, %1, %1) {causal=C, out_perm=[0,2,1,3], rope=R, scale=0.17677669529663687} : T[2,40,3,32]
                  return %2
                }
                """.replace("T[", t + "[").replace("C,", causal + ",").replace("R,", rope + ","));
        Node att = g.nodes().stream().filter(n -> n.op() == Op.ATTENTION).findFirst().orElseThrow();
        Kernel k = withStrategy(KernelLowering.lower(att, g, 0, Target.cpu()), strategy);
        assertEquals(strategy, k.key().specialization().get("strategy"));

        Tensor x = Tensor.allocate(DType.parse(t), g.node("x").type().shape());
        long key = Philox.key(11, "x");
        for (long i = 0; i < x.numel(); i++) {
            x.set(i, Philox.normal(key, i));
        }
        View q = View.of(x).reshape(g.node("0").type().shape()).permute(0, 2, 1, 3);
        Tensor out = Tensor.allocate(att.type()).poison();
        List<View> ws = new ArrayList<>();
        if (strategy.equals("flash") && rope) {
            for (Operand o : List.of(
                    new Operand("q_rope", "q_rope", DType.F32, q.shape(), q.shape().contiguousStrides()),
                    new Operand("k_rope", "k_rope", DType.F32, q.shape(), q.shape().contiguousStrides()))) {
                ws.add(View.of(Tensor.allocate(o.dtype(), o.shape()).poison()));
            }
        }
        FusedKernels.prepare(k).run(List.of(q, q, q), View.of(out), ws);
        Map<String, Tensor> src = new HashMap<>(Map.of("x", x));
        double[] ref = ReferenceInterpreter.run(g, src).get("2").data();
        double rel = Accuracy.relErr(out.toDoubles(), ref);
        assertTrue(rel <= (t.equals("f32") ? 1e-5 : 1e-2), strategy + ": " + rel);
    }

    /** Grouped-query attention (k, v with fewer heads, read in place as head i / (h / hk)) in both strategies, odd shapes. */
    @ParameterizedTest(name = "{0} h={1} hk={2} s={3} t={4} causal={5} rope={6}")
    @CsvSource({"per_head_gemm,6,2,37,37,true,true", "flash,6,2,37,37,true,true", "per_head_gemm,4,1,19,70,false,false",
            "flash,4,1,19,70,false,false", "flash,6,3,70,45,true,false"})
    void groupedQueryMatchesReference(String strategy, int h, int hk, int s, int t, boolean causal, boolean rope) {
        int d = 24;
        Graph g = IrParser.parse("""
                graph @gqa {
                  %q = input {name="q"} : f32[2,H,S,24]
                  %k = input {name="k"} : f32[2,K,T,24]
                  %v = input {name="v"} : f32[2,K,T,24]
                  %o = attention(%q, %k, %v) {causal=C, rope=R, scale=0.2} : f32[2,H,S,24]
                  return %o
                }
                """.replace("H,", h + ",").replace("K,", hk + ",").replace("S,", s + ",").replace("T,", t + ",")
                .replace("C,", causal + ",").replace("R,", rope + ","));
        Node att = g.nodes().stream().filter(n -> n.op() == Op.ATTENTION).findFirst().orElseThrow();
        Kernel k = withStrategy(KernelLowering.lower(att, g, 0, Target.cpu()), strategy);
        Map<String, Tensor> src = new HashMap<>();
        List<View> in = new ArrayList<>();
        for (String name : List.of("q", "k", "v")) {
            Tensor x = Tensor.allocate(DType.F32, g.node(name).type().shape());
            long key = Philox.key(17, name);
            for (long i = 0; i < x.numel(); i++) {
                x.set(i, Philox.normal(key, i));
            }
            src.put(name, x);
            in.add(View.of(x));
        }
        List<View> ws = new ArrayList<>();
        if (strategy.equals("flash") && rope) { // the roped q and k (as the flash lowering plans them)
            ws.add(View.of(Tensor.allocate(DType.F32, in.get(0).shape()).poison()));
            ws.add(View.of(Tensor.allocate(DType.F32, in.get(1).shape()).poison()));
        }
        Tensor out = Tensor.allocate(att.type()).poison();
        FusedKernels.prepare(k).run(in, View.of(out), ws);
        double rel = Accuracy.relErr(out.toDoubles(), ReferenceInterpreter.run(g, src).get("o").data());
        assertTrue(rel <= 1e-5, strategy + " h=" + h + " hk=" + hk + " d=" + d + ": " + rel);
    }

    static Kernel withStrategy(Kernel k, String strategy) {
        TreeMap<String, String> spec = new TreeMap<>(k.key().specialization());
        spec.put("strategy", strategy);
        KernelKey key = new KernelKey(k.key().arch(), k.key().dtypes(), k.key().layouts(), k.key().tile(), spec,
                k.key().sourceHash(), k.key().compilerVersions());
        return new Kernel(k.index(), k.name(), k.kind(), k.node(), k.fusedOps(), k.space(), k.tile(), k.vectorWidth(),
                k.inputs(), k.output(), k.workspace(), key);
    }
}
