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
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.Step;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.reference.Accuracy;
import dev.lantern.tensor.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A training MLP's GELU in cuBLASLt's epilogues (the CUDA lowering's GeluEpilogue): forward
 * {@code y = gelu_tanh(x·w)} with the product kept (GELU_AUX) and backward
 * {@code dh = gelu_tanh_grad(h, dy·w2ᵀ)} (DGELU), in bf16 and f16 at seeded random odd row counts
 * and depths; widths a multiple of 8 take the epilogues (checked in the lowering), other widths the
 * GEMM then the elementwise kernel. y and dh against the float64 reference within 1e-2
 * (||gpu − ref|| / ||ref||, one rounding to 8 bits), and in strict mode twice bit-identical.
 */
@Tag("gpu")
class GeluEpilogueGpuTest {
    static Stream<Arguments> cases() {
        SplittableRandom r = new SplittableRandom(41);
        List<Arguments> all = new ArrayList<>();
        for (DType t : new DType[] {DType.BF16, DType.F16}) {
            for (int i = 0; i < 4; i++) {
                int rows = 1 + 2 * r.nextInt(400);
                int depth = 1 + r.nextInt(300);
                int width = i < 3 ? 8 * (1 + r.nextInt(90)) : 8 * (1 + r.nextInt(90)) + 1 + r.nextInt(7);
                all.add(Arguments.of(t, rows, depth, width, 1 + r.nextInt(200), r.nextLong()));
            }
        }
        all.add(Arguments.of(DType.BF16, 1031, 1024, 4096, 1024, 7L)); // the decoder block's MLP, narrowed
        return all.stream();
    }

    @ParameterizedTest(name = "{0} x[{1},{2}] w[{2},{3}] dy[{1},{4}]")
    @MethodSource("cases")
    void geluAndItsGradientInTheEpilogueMatchTheReference(DType dtype, int rows, int depth, int width, int out, long seed) {
        Gpu.device();
        String t = dtype.name().toLowerCase(Locale.ROOT);
        Graph g = IrParser.parse("graph @mlp {\n"
                + "  %x = input {name=\"x\"} : " + t + "[" + rows + "," + depth + "]\n"
                + "  %w = input {name=\"w\"} : " + t + "[" + depth + "," + width + "]\n"
                + "  %dy = input {name=\"dy\"} : " + t + "[" + rows + "," + out + "]\n"
                + "  %w2 = input {name=\"w2\"} : " + t + "[" + out + "," + width + "]\n"
                + "  %h = matmul(%x, %w) : " + t + "[" + rows + "," + width + "]\n"
                + "  %y = gelu(%h) {approximate=\"tanh\"} : " + t + "[" + rows + "," + width + "]\n"
                + "  %gh = matmul(%dy, %w2) : " + t + "[" + rows + "," + width + "]\n"
                + "  %dh = gelu_grad(%h, %gh) {approximate=\"tanh\"} : " + t + "[" + rows + "," + width + "]\n"
                + "  return %y, %dh\n}\n");
        SplittableRandom r = new SplittableRandom(seed);
        Map<String, Tensor> in = new HashMap<>();
        for (Node n : g.nodes()) {
            if (n.op() == dev.lantern.ir.Op.INPUT) {
                Tensor v = Tensor.allocate(n.type().dtype(), n.type().shape());
                double scale = n.type().shape().dim(0) == rows ? 1.0 : 1.0 / Math.sqrt(n.type().shape().dim(0));
                for (long i = 0; i < v.numel(); i++) {
                    v.set(i, (float) (r.nextGaussian() * scale));
                }
                in.put(n.attrs().getString("name", n.name()), v);
            }
        }
        var refs = ReferenceInterpreter.run(g, in);
        String what = dtype + " " + rows + "x" + depth + "x" + width + " (seed " + seed + ")";
        for (boolean strict : new boolean[] {false, true}) {
            Program p = Lantern.compile(g, CompileOptions.defaults().withTarget("cuda").withDeterministic(strict));
            long aux = CudaLowering.lower(p.model(), CudaTarget.H200).steps().stream()
                    .filter(s -> s instanceof Step.Gemm gs && gs.spec().epilogue().hasAux()).count();
            assertEquals(width % 8 == 0 ? 2 : 0, aux, what + ": GELU_AUX and DGELU GEMMs");
            try (Session s = p.load(Device.cuda(0), Weights.of(Map.of()), RunMode.COMPILED)) {
                var first = s.run(in);
                var second = strict ? s.run(in) : null;
                for (String o : List.of("y", "dh")) {
                    double[] got = first.get(o).toDoubles();
                    double e = Accuracy.relErr(got, refs.get(o).data());
                    assertTrue(e <= 1e-2, what + " " + o + (strict ? " strict" : "") + ": rel err " + e);
                    if (strict) {
                        assertArrayEquals(got, second.get(o).toDoubles(), what + " " + o + ": strict mode, two runs differ");
                    }
                }
            }
        }
    }
}
