package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.ir.DType;
import java.util.Locale;

/**
 * A GPU-machine probe (not a test): why GPT-2's tied LM head (4096 x 50257 x 1024, B = the
 * (50257, 1024) embedding read transposed) runs at a tenth of LLaMA's: the same GEMM with D's rows
 * padded to 16 bytes, with N itself padded to a multiple of 8 and 64, in bf16 and f32 output, each
 * with its best cuBLASLt candidate. Usage: {@code VocabGemmProbe}.
 */
public final class VocabGemmProbe {
    private VocabGemmProbe() {}

    public static void main(String[] args) {
        int m = 4096;
        int k = 1024;
        int n = 50257;
        long maxN = 50304;
        try (CudaDevice device = CudaDevice.open(0); CublasLtHandle lt = CublasLtHandle.create(device);
             CudaStream s = device.newStream(false); DeviceFill fill = new DeviceFill(device);
             CudaStorage a = device.allocate(2L * m * k); CudaStorage b = device.allocate(2L * k * maxN);
             CudaStorage d = device.allocate(4L * m * maxN); CudaStorage ws = device.allocate(CudaSession.WORKSPACE_BYTES)) {
            fill.fill(s, a.address(), (long) m * k, DType.BF16, 1, 1f);
            fill.fill(s, b.address(), (long) k * maxN, DType.BF16, 2, 0.02f);
            s.synchronize();
            for (GemmSpec.DataType out : new GemmSpec.DataType[] {GemmSpec.DataType.BF16, GemmSpec.DataType.F32}) {
                for (int[] nl : new int[][] {{n, n}, {n, 50264}, {50264, 50264}, {50304, 50304}}) {
                    GemmSpec spec = new GemmSpec(m, nl[0], k, 1, false, true, GemmSpec.DataType.BF16, out, GemmSpec.Epilogue.NONE, null, nl[1]);
                    double ms = best(device, lt, s, spec, a, b, d, ws);
                    System.out.printf(Locale.ROOT, "vocab gemm %dx%dx%d ldd %d -> %s: %.4f ms, %.0f TFLOP/s%n", m, nl[0], k, nl[1], out, ms,
                            2.0 * m * nl[0] * k / ms / 1e9);
                }
            }
        }
    }

    private static double best(CudaDevice device, CublasLtHandle lt, CudaStream s, GemmSpec spec, CudaStorage a, CudaStorage b,
                               CudaStorage d, CudaStorage ws) {
        try (CublasLtGemm g = lt.plan(spec, CudaSession.WORKSPACE_BYTES, dev.lantern.engine.BackendChoices.DEFAULT_GEMM_CANDIDATES)) {
            int n = Math.max(1, Math.min(dev.lantern.engine.BackendChoices.DEFAULT_GEMM_CANDIDATES, g.candidates().size()));
            double best = Double.MAX_VALUE;
            for (int cand = 0; cand < n; cand++) {
                try {
                    best = Math.min(best, GemmSearchProbe.sustainedMs(device, s, g, g.candidates().get(cand).algo(), a, b, null, d, ws, 50, 10));
                } catch (RuntimeException e) {
                    // a candidate that fails to run is no answer
                }
            }
            return best;
        }
    }
}
