package dev.lantern.passes;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * residual-into-norm-grad on the CPU: fused compilation folds {@code add(norm_grad(x, w, dy), r)}
 * (either side) into the norm's dx, the unfused one keeps the add; in f32 the two are bit for bit
 * the same, in bf16 both are within a rounding of the float64 reference. Seeded random inputs at
 * odd and prime shapes.
 */
class NormGradResidualTest {
    private static final long SEED = 20_261_202L;

    @Test
    void fusedFoldsTheAddAndIsTheUnfusedSumBitForBitInF32() {
        SplittableRandom rnd = new SplittableRandom(SEED);
        for (int[] s : new int[][] {{7, 131}, {3, 1}, {13, 37}, {1, 1031}}) {
            for (String op : List.of("rms_norm_grad", "layer_norm_grad")) {
                boolean left = rnd.nextBoolean();
                Graph g = graph(op, "f32", s[0], s[1], left);
                Map<String, Tensor> in = inputs(g, rnd);
                CompiledModel fused = Compiler.compile(g, CompileOptions.defaults().withFuse(true));
                CompiledModel unfused = Compiler.compile(g, CompileOptions.defaults().withFuse(false));
                String what = op + " " + s[0] + "x" + s[1] + (left ? " add(dx, r)" : " add(r, dx)");
                assertEquals(1, residualForms(fused.graph()), what + ": " + fused.graph());
                assertEquals(0, residualForms(unfused.graph()), what + ": " + unfused.graph());
                assertTrue(unfused.graph().nodes().stream().anyMatch(n -> n.op() == Op.ADD), what + ": eager keeps the add");
                assertArrayEquals(run(unfused, in), run(fused, in), what);
            }
        }
    }

    @Test
    void inBf16TheSumIsRoundedOnceAndMatchesTheReference() {
        SplittableRandom rnd = new SplittableRandom(SEED + 1);
        for (int[] s : new int[][] {{5, 97}, {11, 3}}) {
            for (String op : List.of("rms_norm_grad", "layer_norm_grad")) {
                Graph g = graph(op, "bf16", s[0], s[1], rnd.nextBoolean());
                Map<String, Tensor> in = inputs(g, rnd);
                CompiledModel fused = Compiler.compile(g, CompileOptions.defaults().withFuse(true));
                assertEquals(1, residualForms(fused.graph()), fused.graph().toString());
                double[] ref = ReferenceInterpreter.run(g, in).get("y").data();
                double err = Accuracy.relErr(run(fused, in), ref);
                assertTrue(err < 1e-2, op + " " + s[0] + "x" + s[1] + " bf16: rel err " + err);
            }
        }
    }

    private static Graph graph(String op, String t, int rows, int d, boolean left) {
        String rt = t + "[" + rows + "," + d + "]";
        String eps = op.startsWith("rms") ? "1.0E-6" : "1.0E-5";
        return IrParser.parse("graph @g {\n"
                + "  %x = input {name=\"x\"} : " + rt + "\n"
                + "  %dy = input {name=\"dy\"} : " + rt + "\n"
                + "  %r = input {name=\"r\"} : " + rt + "\n"
                + "  %w = input {name=\"w\"} : " + t + "[" + d + "]\n"
                + "  %g = " + op + "(%x, %w, %dy) {eps=" + eps + "} : " + rt + "\n"
                + "  %y = add(" + (left ? "%g, %r" : "%r, %g") + ") : " + rt + "\n"
                + "  return %y\n}\n");
    }

    private static Map<String, Tensor> inputs(Graph g, SplittableRandom rnd) {
        Map<String, Tensor> in = new HashMap<>();
        for (Node n : g.inputs()) {
            Tensor v = Tensor.allocate(n.type().dtype(), n.type().shape());
            for (long i = 0; i < v.numel(); i++) {
                v.set(i, (float) (n.name().equals("w") ? 1 + 0.3 * rnd.nextGaussian() : 2 * rnd.nextGaussian()));
            }
            in.put(n.name(), v);
        }
        return in;
    }

    private static double[] run(CompiledModel m, Map<String, Tensor> in) {
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(m).bind(Map.of())) {
            return exec.run(in).get("y").toDoubles();
        }
    }

    private static long residualForms(Graph g) {
        return g.nodes().stream().filter(n -> (n.op() == Op.RMS_NORM_GRAD || n.op() == Op.LAYER_NORM_GRAD)
                && n.attrs().getBool("residual", false) && n.inputs().size() == 4).count();
    }
}
