package dev.lantern.engine;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TypeException;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Grouped-query attention: the K/V head repeats front ends emit (concat of copies, gather of zero
 * ids) become an attention that reads K/V head i / (h / hk) itself, and the compiled result matches
 * the float64 reference of the graph as written (repeat included) on seeded random inputs.
 */
class GroupedQueryAttentionTest {
    /** q (b,h,s,d), k/v (b,hk,t,d) repeated to h heads by {@code form}, then attention as matmul/softmax/matmul. */
    static String graph(int b, int h, int hk, int s, int t, int d, boolean causal, String form, boolean rope) {
        int g = h / hk;
        StringBuilder ir = new StringBuilder("graph @gqa {\n");
        ir.append(line("%q = input {name=\"q\"}", b, h, s, d));
        ir.append(line("%k = input {name=\"k\"}", b, hk, t, d));
        ir.append(line("%v = input {name=\"v\"}", b, hk, t, d));
        String q = "%q";
        String k = "%k";
        if (rope) {
            ir.append(line("%rq = rope(%q) {base=10000.0}", b, h, s, d));
            ir.append(line("%rk = rope(%k) {base=10000.0}", b, hk, t, d));
            q = "%rq";
            k = "%rk";
        }
        if (form.equals("gather")) {
            ir.append("  %ids = constant {value=0.0} : i64[" + g + "]\n");
        }
        for (String[] x : new String[][] {{k, "k"}, {"%v", "v"}}) {
            String n = x[1];
            ir.append(line("%" + n + "5 = reshape(" + x[0] + ") {shape=[" + b + "," + hk + ",1," + t + "," + d + "]}", b, hk, 1, t, d));
            String copies = form.equals("gather") ? "gather(%" + n + "5, %ids) {axis=2}"
                    : "concat(" + String.join(", ", java.util.Collections.nCopies(g, "%" + n + "5")) + ") {axis=2}";
            ir.append(line("%" + n + "c = " + copies, b, hk, g, t, d));
            ir.append(line("%" + n + "r = reshape(%" + n + "c) {shape=[" + b + "," + h + "," + t + "," + d + "]}", b, h, t, d));
        }
        ir.append(line("%sc = matmul(" + q + ", %kr) {transpose_b=true}", b, h, s, t));
        ir.append(line("%p = softmax(%sc) {causal=" + causal + ", scale=" + 1 / Math.sqrt(d) + "}", b, h, s, t));
        ir.append(line("%o = matmul(%p, %vr)", b, h, s, d));
        return ir.append("  return %o\n}\n").toString();
    }

    private static String line(String lhs, int... dims) {
        return "  " + lhs + " : f32" + java.util.Arrays.toString(dims).replace(" ", "") + "\n";
    }

    @ParameterizedTest(name = "{0} h={1} hk={2} s={3} t={4} d={5} causal={6} rope={7}")
    @CsvSource({"concat,6,2,37,29,24,false,false", "concat,6,2,37,37,64,true,true", "gather,6,2,37,37,24,true,true",
            "gather,4,1,19,33,16,false,false", "concat,4,1,5,5,8,true,false"})
    void repeatIsDroppedAndResultMatchesReference(String form, int h, int hk, int s, int t, int d, boolean causal, boolean rope) {
        Graph g = IrParser.parse(graph(2, h, hk, s, t, d, causal, form, rope));
        CompiledModel m = Compiler.compile(g, CompileOptions.defaults());
        Node att = m.graph().nodes().stream().filter(n -> n.op() == Op.ATTENTION).findFirst().orElseThrow(
                () -> new AssertionError("no attention in\n" + m.graph()));
        assertEquals(hk, m.graph().type(att.input(1)).shape().dim(1), "k keeps its " + hk + " heads");
        assertEquals(hk, m.graph().type(att.input(2)).shape().dim(1), "v keeps its " + hk + " heads");
        assertEquals(rope, att.attrs().getBool("rope", false), "rope on q and k goes into the attention: " + att);
        assertFalse(m.graph().nodes().stream().anyMatch(n -> n.op() == Op.CONCAT || n.op() == Op.GATHER || n.op() == Op.ROPE),
                "no head copies left:\n" + m.graph());
        Map<String, Tensor> inputs = Feeds.inputs(g, 20261201L + h * 31 + t);
        double[] ref = ReferenceInterpreter.run(g, inputs).get("o").data();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(m).bind(Map.of())) {
            exec.poisonArena();
            double[] got = exec.run(inputs).get(m.graph().outputs().getFirst()).toDoubles();
            double rel = Accuracy.relErr(got, ref);
            assertTrue(rel <= 1e-5, "compiled GQA attention vs float64 reference of the repeated form: " + rel);
        }
    }

    @Test
    void referenceOfGqaAttentionEqualsTheRepeatedForm() {
        Graph repeated = IrParser.parse(graph(2, 6, 2, 11, 13, 8, true, "concat", false));
        Graph direct = IrParser.parse("""
                graph @direct {
                  %q = input {name="q"} : f32[2,6,11,8]
                  %k = input {name="k"} : f32[2,2,13,8]
                  %v = input {name="v"} : f32[2,2,13,8]
                  %o = attention(%q, %k, %v) {causal=true, scale=0.3535533905932738} : f32[2,6,11,8]
                  return %o
                }
                """);
        Map<String, Tensor> inputs = Feeds.inputs(repeated, 7);
        double[] a = ReferenceInterpreter.run(repeated, inputs).get("o").data();
        double[] b = ReferenceInterpreter.run(direct, inputs).get("o").data();
        assertTrue(Accuracy.relErr(b, a) <= 1e-12, "float64 GQA attention vs explicit repeat: " + Accuracy.relErr(b, a));
    }

    @Test
    void repeatWithAnotherReaderStays() {
        String ir = graph(1, 4, 2, 8, 8, 8, false, "concat", false).replace("  return %o\n", "  return %o, %kr\n");
        CompiledModel m = Compiler.compile(IrParser.parse(ir), CompileOptions.defaults());
        Node att = m.graph().nodes().stream().filter(n -> n.op() == Op.ATTENTION).findFirst().orElseThrow();
        // k's repeat is an output too, so it stays; v's alone cannot go (k and v share their head count)
        assertEquals(4, m.graph().type(att.input(1)).shape().dim(1), "k's repeat is kept and read");
        assertEquals(4, m.graph().type(att.input(2)).shape().dim(1), "v's repeat is kept with k's");
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), 5);
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(m).bind(Map.of())) {
            double[] got = exec.run(inputs).get(m.graph().outputs().getFirst()).toDoubles();
            double[] ref = ReferenceInterpreter.run(IrParser.parse(ir), inputs).get("o").data();
            assertTrue(Accuracy.relErr(got, ref) <= 1e-5, "partly repeated: " + Accuracy.relErr(got, ref));
        }
    }

    @Test
    void headsNotAMultipleOfKvHeadsIsATypeError() {
        TensorType q = TensorType.of(DType.F32, Shape.of(1, 6, 8, 8));
        TensorType k = TensorType.of(DType.F32, Shape.of(1, 4, 8, 8));
        TypeException e = assertThrows(TypeException.class, () -> Op.ATTENTION.infer(List.of(q, k, k), Attrs.of()));
        assertTrue(e.getMessage().contains("h % hk == 0") && e.getMessage().contains("h=6, hk=4"), e.getMessage());
    }
}
