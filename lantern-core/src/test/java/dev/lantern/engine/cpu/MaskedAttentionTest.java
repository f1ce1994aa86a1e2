package dev.lantern.engine.cpu;

import dev.lantern.cpu.View;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.engine.Feeds;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelLowering;
import dev.lantern.kernel.Target;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An additive mask on the scores (BERT's key padding (b,1,1,t), a full (b,1,s,t) one) goes into the
 * attention as its 4th input, scaled by the softmax's scale; compiled and in both CPU strategies
 * against the float64 reference of the graph as written, with grouped K/V heads too.
 */
class MaskedAttentionTest {
    static String graph(int h, int hk, int s, int t, int d, String maskShape, boolean causal, double scale) {
        String kv = hk == h ? "%k" : "%kr";
        String vv = hk == h ? "%v" : "%vr";
        String repeat = hk == h ? "" : """
                  %k5 = reshape(%k) {shape=[2,{HK},1,{T},{D}]} : f32[2,{HK},1,{T},{D}]
                  %kc = concat(%k5, %k5) {axis=2} : f32[2,{HK},2,{T},{D}]
                  %kr = reshape(%kc) {shape=[2,{H},{T},{D}]} : f32[2,{H},{T},{D}]
                  %v5 = reshape(%v) {shape=[2,{HK},1,{T},{D}]} : f32[2,{HK},1,{T},{D}]
                  %vc = concat(%v5, %v5) {axis=2} : f32[2,{HK},2,{T},{D}]
                  %vr = reshape(%vc) {shape=[2,{H},{T},{D}]} : f32[2,{H},{T},{D}]
                """;
        return ("""
                graph @masked {
                  %q = input {name="q"} : f32[2,{H},{S},{D}]
                  %k = input {name="k"} : f32[2,{HK},{T},{D}]
                  %v = input {name="v"} : f32[2,{HK},{T},{D}]
                  %m = input {name="m"} : f32{M}
                """ + repeat + """
                  %sc = matmul(%q, {KV}) {transpose_b=true} : f32[2,{H},{S},{T}]
                  %a = add(%sc, %m) : f32[2,{H},{S},{T}]
                  %p = softmax(%a) {causal={C}, scale={SC}} : f32[2,{H},{S},{T}]
                  %o = matmul(%p, {VV}) : f32[2,{H},{S},{D}]
                  return %o
                }
                """).replace("{KV}", kv).replace("{VV}", vv).replace("{M}", maskShape).replace("{HK}", "" + hk)
                .replace("{H}", "" + h).replace("{S}", "" + s).replace("{T}", "" + t).replace("{D}", "" + d)
                .replace("{C}", "" + causal).replace("{SC}", "" + scale);
    }

    /** Seeded inputs; every third key of batch 1 masked with −1e30, as a padding mask would. */
    static Map<String, Tensor> inputs(Graph g, long seed) {
        Map<String, Tensor> in = Feeds.inputs(g, seed);
        Tensor m = in.get("m");
        int t = m.shape().dims()[3];
        for (long i = m.numel() / 2; i < m.numel(); i++) {
            if (i % t % 3 == 2) {
                m.set(i, -1e30f);
            }
        }
        return in;
    }

    @ParameterizedTest(name = "h={0} hk={1} s={2} t={3} mask {5} causal={6} scale={7}")
    @CsvSource(delimiter = ';', value = {"4;4;13;13;16;[2,1,1,13];false;0.25", "4;4;13;17;16;[2,1,13,17];false;1.0",
            "4;2;19;19;8;[2,1,1,19];true;0.35355339059327373", "6;3;37;29;24;[2,6,37,29];false;0.2"})
    void maskGoesIntoTheAttention(int h, int hk, int s, int t, int d, String mask, boolean causal, double scale) {
        Graph g = IrParser.parse(graph(h, hk, s, t, d, mask, causal, scale));
        CompiledModel m = Compiler.compile(g, CompileOptions.defaults());
        Node att = m.graph().nodes().stream().filter(n -> n.op() == Op.ATTENTION).findFirst()
                .orElseThrow(() -> new AssertionError("no attention:\n" + m.graph()));
        assertEquals(4, att.inputs().size(), "the mask is the attention's 4th input: " + att);
        assertEquals(hk, m.graph().type(att.input(1)).shape().dim(1), "K/V heads in place: " + att);
        Map<String, Tensor> in = inputs(g, 41 + h * 7L + t);
        double[] ref = ReferenceInterpreter.run(g, in).get("o").data();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(m).bind(Map.of())) {
            exec.poisonArena();
            double rel = Accuracy.relErr(exec.run(in).get(m.graph().outputs().getFirst()).toDoubles(), ref);
            assertTrue(rel <= 1e-5, "compiled masked attention vs float64 reference: " + rel);
        }
        // both CPU strategies on the fused node, against the same reference
        for (String strategy : List.of(KernelLowering.ATTENTION_PER_HEAD, KernelLowering.ATTENTION_FLASH)) {
            Kernel k = AttentionStrategiesTest.withStrategy(KernelLowering.lower(att, m.graph(), 0, Target.cpu()), strategy);
            Map<String, dev.lantern.reference.RefTensor> all = ReferenceInterpreter.runAll(m.graph(), in);
            List<View> views = new ArrayList<>(); // the scaled mask (a mul before the attention) from the reference
            for (String v : att.inputs()) {
                views.add(View.of(in.containsKey(v) ? in.get(v) : toTensor(all.get(v))));
            }
            Tensor out = Tensor.allocate(att.type()).poison();
            FusedKernels.prepare(k).run(views, View.of(out), List.of());
            double rel = Accuracy.relErr(out.toDoubles(), ref);
            assertTrue(rel <= 1e-5, strategy + ": " + rel);
        }
    }

    private static Tensor toTensor(dev.lantern.reference.RefTensor r) {
        Tensor t = Tensor.allocate(dev.lantern.ir.DType.F32, r.shape());
        for (int i = 0; i < r.data().length; i++) {
            t.set(i, (float) r.data()[i]);
        }
        return t;
    }
}
