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

    static Kernel withStrategy(Kernel k, String strategy) {
        TreeMap<String, String> spec = new TreeMap<>(k.key().specialization());
        spec.put("strategy", strategy);
        KernelKey key = new KernelKey(k.key().arch(), k.key().dtypes(), k.key().layouts(), k.key().tile(), spec,
                k.key().sourceHash(), k.key().compilerVersions());
        return new Kernel(k.index(), k.name(), k.kind(), k.node(), k.fusedOps(), k.space(), k.tile(), k.vectorWidth(),
                k.inputs(), k.output(), k.workspace(), key);
    }
}
