package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.ir.DType;
import java.util.Locale;

/**
 * A GPU-machine probe (not a test): what one wide GEMM (q, k and v projections side by side,
 * 16384 x 12288 x 4096) costs against three 16384 x 4096 x 4096 ones, each with its best
 * cuBLASLt candidate, under sustained load (the power-limited state of a big forward), and
 * the o projection with and without a C input. Usage: {@code WideGemmProbe}.
 */
public final class WideGemmProbe {
    private WideGemmProbe() {}

    public static void main(String[] args) {
        int m = 16384;
        int k = 4096;
        try (CudaDevice device = CudaDevice.open(0); CublasLtHandle lt = CublasLtHandle.create(device);
             CudaStream s = device.newStream(false); DeviceFill fill = new DeviceFill(device);
             CudaStorage a = device.allocate(2L * m * k); CudaStorage b = device.allocate(2L * k * 3 * k);
             CudaStorage c = device.allocate(2L * m * 3 * k); CudaStorage d = device.allocate(2L * m * 3 * k);
             CudaStorage ws = device.allocate(CudaSession.WORKSPACE_BYTES)) {
            fill.fill(s, a.address(), (long) m * k, DType.BF16, 1, 1f);
            fill.fill(s, b.address(), (long) k * 3 * k, DType.BF16, 2, 0.02f);
            fill.fill(s, c.address(), (long) m * 3 * k, DType.BF16, 3, 1f);
            s.synchronize();
            for (int round = 0; round < 1; round++) {
                double narrow = best(device, lt, s, GemmSpec.of(m, k, k, GemmSpec.DataType.BF16, GemmSpec.DataType.BF16), a, b, null, d, ws);
                double wide = best(device, lt, s, GemmSpec.of(m, 3 * k, k, GemmSpec.DataType.BF16, GemmSpec.DataType.BF16), a, b, null, d, ws);
                double withC = best(device, lt, s, GemmSpec.of(m, k, k, GemmSpec.DataType.BF16, GemmSpec.DataType.BF16), a, b, c, d, ws);
                System.out.printf(Locale.ROOT, "round %d: 3 x 16384x4096x4096 %.4f ms (one %.4f), 16384x12288x4096 %.4f ms: wide saves %.4f ms; "
                        + "16384x4096x4096 +C %.4f ms (C costs %.4f)%n", round, 3 * narrow, narrow, wide, 3 * narrow - wide, withC, withC - narrow);
            }
        }
    }

    /** Best sustained median over the heuristic candidates. */
    private static double best(CudaDevice device, CublasLtHandle lt, CudaStream s, GemmSpec spec, CudaStorage a, CudaStorage b,
                               CudaStorage c, CudaStorage d, CudaStorage ws) {
        try (CublasLtGemm g = lt.plan(spec, CudaSession.WORKSPACE_BYTES, dev.lantern.engine.BackendChoices.DEFAULT_GEMM_CANDIDATES)) {
            int n = Math.max(1, Math.min(dev.lantern.engine.BackendChoices.DEFAULT_GEMM_CANDIDATES, g.candidates().size()));
            double best = Double.MAX_VALUE;
            StringBuilder row = new StringBuilder();
            for (int cand = 0; cand < n; cand++) {
                try {
                    double ms = GemmSearchProbe.sustainedMs(device, s, g, g.candidates().get(cand).algo(), a, b, c, d, ws, 200, 30);
                    row.append(String.format(Locale.ROOT, " %d:%.4f", cand, ms));
                    best = Math.min(best, ms);
                } catch (RuntimeException e) {
                    row.append(" ").append(cand).append(":fail");
                }
            }
            System.out.printf(Locale.ROOT, "  %dx%dx%d%s (%d candidates):%s%n", spec.m(), spec.n(), spec.k(), c == null ? "" : " +C",
                    g.candidates().size(), row);
            return best;
        }
    }
}
