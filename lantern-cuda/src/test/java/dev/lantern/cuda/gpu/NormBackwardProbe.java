package dev.lantern.cuda.gpu;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A norm's dx and dw in one kernel ({@code NormBackwardSpec}, then norm_weight_grad's FINISH) alone:
 * no cuBLASLt, no test-tier warm-up, so that compute-sanitizer's racecheck (its block sums go through
 * shared memory) and memcheck can run it. rms and layer, with and without the residual, f32, bf16 and
 * f16, widths from under a warp to the 4096 of the decoder step (16 columns a thread), rows not a
 * multiple of a chunk; dx and dw checked against the float64 reference. Exits 1 when one is off.
 */
public final class NormBackwardProbe {
    private NormBackwardProbe() {}

    public static void main(String[] args) {
        Object[][] cases = {
            {"norm_backward_rms_residual", "f32", 301, 4096},
            {"norm_backward_layer", "bf16", 257, 3001},
            {"norm_backward_rms", "f16", 33, 37},
            {"norm_backward_layer", "f32", 65, 5},
            {"norm_backward_rms_residual", "bf16", 129, 1000},
        };
        StringBuilder bad = new StringBuilder();
        try (CudaDevice gpu = CudaDevice.open(0)) {
            for (Object[] c : cases) {
                String op = (String) c[0];
                String t = (String) c[1];
                Graph g = IrParser.parse("graph @probe {\n" + BackwardOpsGpuTest.body(op, t, (Integer) c[2], (Integer) c[3])
                        + "  return %y, %dw\n}\n");
                Map<String, Tensor> in = new HashMap<>();
                Map<String, Tensor> params = new HashMap<>();
                BackwardOpsGpuTest.draw(g, op, (Integer) c[2], (Integer) c[3], new SplittableRandom(23), in, params);
                Map<String, Tensor> all = new HashMap<>(params);
                all.putAll(in);
                Map<String, RefTensor> ref = ReferenceInterpreter.run(g, all);
                double tol = t.equals("f32") ? 2e-5 : 1e-2;
                try (CudaSession s = CudaSession.open(gpu, g, params, CudaSession.Options.compiled())) {
                    s.setInputs(in);
                    s.forward();
                    for (String out : g.outputs()) {
                        double e = Accuracy.relErr(s.output(out).toDoubles(), ref.get(out).data());
                        String line = op + " " + t + " " + c[2] + "x" + c[3] + " %" + out + ": rel err " + e;
                        System.out.println("[norm-bwd-probe] " + line);
                        if (!(e <= tol)) {
                            bad.append(line).append('\n');
                        }
                    }
                }
            }
        }
        System.out.println(bad.isEmpty() ? "norm backward probe: OK" : "norm backward probe: FAILED\n" + bad);
        if (!bad.isEmpty()) {
            System.exit(1);
        }
    }
}
