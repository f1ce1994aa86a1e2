package dev.lantern.cuda.gpu;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * attention's flash backward kernels alone (attention, attention_lse, attention_grad_q,
 * attention_grad_kv; the lse written by the forward, with and without RoPE, or by its own kernel;
 * no cuBLASLt, no test-tier warm-up), so that compute-sanitizer's memcheck and
 * racecheck can run them (scripts/gpu-sanitize): odd shapes on the tensor-core path (bf16 and f16,
 * head_dim 64 and 128, causal, masked, grouped heads, s ≠ t; at head_dim 128
 * without a mask the wgmma kernels) and one on the general path, each
 * checked against the float64 reference. Exits 1 when a result is off.
 */
public final class FlashBackwardProbe {
    private FlashBackwardProbe() {}

    public static void main(String[] args) {
        Object[][] cases = {
            {1, 4, 2, 67, 131, 64, true, new int[] {1, 1, 1, 131}, "bf16", FlashAttentionBackwardGpuTest.Lse.FORWARD},
            {1, 2, 2, 97, 41, 128, false, null, "f16", FlashAttentionBackwardGpuTest.Lse.ROPE},
            {2, 3, 1, 45, 45, 128, true, new int[] {2, 3, 45, 45}, "bf16", FlashAttentionBackwardGpuTest.Lse.OWN_KERNEL},
            {1, 4, 2, 131, 67, 128, true, null, "bf16", FlashAttentionBackwardGpuTest.Lse.FORWARD},
            {2, 2, 1, 67, 200, 128, false, null, "f16", FlashAttentionBackwardGpuTest.Lse.OWN_KERNEL},
            {1, 2, 1, 13, 17, 37, true, null, "f32", FlashAttentionBackwardGpuTest.Lse.FORWARD},
        };
        StringBuilder bad = new StringBuilder();
        try (CudaDevice gpu = CudaDevice.open(0)) {
            for (Object[] c : cases) {
                int t = (Integer) c[4];
                Graph g = IrParser.parse(FlashAttentionBackwardGpuTest.graph((Integer) c[0], (Integer) c[1], (Integer) c[2], (Integer) c[3],
                        t, (Integer) c[5], (Boolean) c[6], (int[]) c[7], (String) c[8], (FlashAttentionBackwardGpuTest.Lse) c[9]));
                SplittableRandom r = new SplittableRandom(11);
                Map<String, Tensor> in = new HashMap<>();
                for (Node n : g.inputs()) {
                    String name = n.attrs().getString("name", n.name());
                    Tensor v = Tensor.allocate(n.type().dtype(), n.type().shape());
                    for (long i = 0; i < v.numel(); i++) {
                        v.set(i, name.equals("m") ? (i % 5 == 2 && i % t != 0 ? Float.NEGATIVE_INFINITY : (float) r.nextGaussian())
                                : (float) ((name.equals("o") ? 0.5 : 1.5) * r.nextGaussian()));
                    }
                    in.put(name, v);
                }
                Map<String, RefTensor> ref = ReferenceInterpreter.run(g, in);
                try (CudaSession s = CudaSession.open(gpu, g, Map.of(), CudaSession.Options.compiled())) {
                    s.setInputs(in);
                    s.forward();
                    for (String out : g.outputs()) {
                        double e = Accuracy.relErr(s.output(out).toDoubles(), ref.get(out).data());
                        String line = g.inputs().getFirst().type() + " %" + out + ": rel err " + e;
                        System.out.println("[flash-bwd-probe] " + line);
                        if (!(e <= 2e-2)) {
                            bad.append(line).append('\n');
                        }
                    }
                }
            }
        }
        System.out.println(bad.isEmpty() ? "flash backward probe: OK" : "flash backward probe: FAILED\n" + bad);
        if (!bad.isEmpty()) {
            System.exit(1);
        }
    }
}
