package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.engine.Feeds;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import java.util.stream.Stream;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * GEMMs with an odd, prime N large enough to be padded (GPT-2's vocabulary GEMM, scaled down): N
 * rounded up to 8 through a padded copy of B, D's rows packed back, in row chunks when the padded
 * D is over 64 MiB; B read transposed (a tied embedding) or as stored, f32 and bf16, against the
 * float64 reference on fresh seeded inputs.
 */
@Tag("gpu")
class PaddedGemmGpuTest {
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("f32", 1031, 1021, 96, true, false),
                Arguments.of("f32", 1031, 1021, 96, false, false),
                Arguments.of("bf16", 1031, 1021, 96, true, false),
                Arguments.of("bf16", 1031, 1021, 96, false, false),
                Arguments.of("f32", 2053, 8191, 32, true, false), // 67 MB of padded f32 D: two row chunks
                Arguments.of("bf16", 1031, 1021, 96, true, true), // a weight table read in place, its padding rows allocated
                Arguments.of("f32", 2053, 8191, 32, true, true));
    }

    @ParameterizedTest(name = "{0} {1}x{2}x{3} transB={4} param={5}")
    @MethodSource("cases")
    void matchesTheFloat64Reference(String dtype, int m, int n, int k, boolean transB, boolean param) {
        String w = transB ? dtype + "[" + n + "," + k + "]" : dtype + "[" + k + "," + n + "]";
        Graph g = IrParser.parse("""
                graph @head {
                  %x = input {name="x"} : DT[M,K]
                  %w = input {name="w"} : W
                  %o = matmul(%x, %w) {transpose_b=TB} : DT[M,N]
                  return %o
                }
                """.replace("DT", dtype).replace("M", Integer.toString(m)).replace("N", Integer.toString(n))
                .replace("K", Integer.toString(k)).replace("W", w).replace("TB", Boolean.toString(transB)));
        long seed = 20261201L + m * 31L + n + (transB ? 1 : 0);
        var inputs = new java.util.HashMap<>(Feeds.inputs(g, seed));
        double[] ref = ReferenceInterpreter.run(g, inputs).get("o").data();
        Map<String, dev.lantern.tensor.Tensor> params = Map.of();
        if (param) {
            // the same graph with w a parameter: the padded GEMM reads it in place (no copy of the table)
            g = IrParser.parse(dev.lantern.ir.IrPrinter.print(g).replace("%w = input", "%w = param"));
            params = Map.of("w", inputs.remove("w"));
        }
        try (CudaSession s = CudaSession.open(Gpu.device(), g, params, CudaSession.Options.compiled())) {
            s.setInputs(inputs);
            s.poison();
            s.forward();
            double[] got = s.output().toDoubles();
            for (double v : got) {
                assertTrue(Double.isFinite(v), "NaN/Inf in the output: an element was not written");
            }
            double rel = Accuracy.relErr(got, ref);
            System.out.printf("[gpu] padded gemm %s %dx%dx%d transB=%s param=%s rel_err=%.2e%n", dtype, m, n, k, transB, param, rel);
            assertTrue(rel <= (dtype.equals("f32") ? 1e-5 : 2e-2), dtype + " rel err " + rel + " (seed " + seed + ")");
        }
    }
}
