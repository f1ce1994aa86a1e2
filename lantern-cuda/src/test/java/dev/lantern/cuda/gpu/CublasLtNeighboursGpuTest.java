package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.ffi.CublasLt;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The neighbours of cuBLASLt's heuristic candidates (another cluster shape or CTA swizzling,
 * accepted by cublasLtMatmulAlgoCheck: what GemmSearchProbe times) compute the same bf16 GEMM:
 * each one's output against a float64 reference on the bf16-rounded inputs, output poisoned first.
 */
@Tag("gpu")
class CublasLtNeighboursGpuTest {
    static final int MIN_NEIGHBOURS = 8;

    @Test
    void everyCheckedNeighbourComputesTheGemm() {
        CudaDevice dev = Gpu.device();
        int m = 512;
        int n = 768;
        int k = 384;
        GemmSpec spec = GemmSpec.of(m, n, k, GemmSpec.DataType.BF16, GemmSpec.DataType.BF16);
        long seed = System.nanoTime();
        SplittableRandom r = new SplittableRandom(seed);
        short[] a = CublasLtBf16GpuTest.randomBf16(r, m * k, 1);
        short[] b = CublasLtBf16GpuTest.randomBf16(r, k * n, 0.1);
        double[] ref = new double[m * n];
        for (int i = 0; i < m; i++) {
            for (int kk = 0; kk < k; kk++) {
                double av = CublasLtBf16GpuTest.fromBf16(a[i * k + kk]);
                for (int j = 0; j < n; j++) {
                    ref[i * n + j] += av * CublasLtBf16GpuTest.fromBf16(b[kk * n + j]);
                }
            }
        }
        long ws = 32L << 20;
        CudaStream s = dev.newStream(false);
        try (CublasLtHandle lt = CublasLtHandle.create(dev); CublasLtGemm gemm = lt.plan(spec, ws, 8);
             CudaStorage da = dev.allocate(2L * a.length); CudaStorage db = dev.allocate(2L * b.length);
             CudaStorage dd = dev.allocate(2L * m * n); CudaStorage work = dev.allocate(ws)) {
            CublasLtBf16GpuTest.upload(s, a, da);
            CublasLtBf16GpuTest.upload(s, b, db);
            assertFalse(gemm.candidates().isEmpty());
            List<CublasLt.Heuristic> neighbours = gemm.neighbours(2, ws);
            System.out.printf("[gpu] cublasLt %dx%dx%d bf16: %d candidates, %d neighbours of the first two (seed %d)%n",
                    m, n, k, gemm.candidates().size(), neighbours.size(), seed);
            // 2 candidates x 4 cluster shapes x 2 swizzles = 16 tries; the H200 with cuBLASLt 13 accepted
            // 15 in every stored run. Fewer than half means the search has nearly nothing to test (and
            // with none, this test would check nothing).
            assertTrue(neighbours.size() >= MIN_NEIGHBOURS, "only " + neighbours.size() + " neighbours accepted");
            for (CublasLt.Heuristic h : neighbours) {
                assertTrue(h.workspaceBytes() <= ws);
                s.memset32(dd, 0, 0x7fc07fc0, (long) m * n / 2); // bf16 NaN pairs
                gemm.runAlgo(s, da.address(), db.address(), 0, dd.address(), 0, 1f, 0f, work.address(), ws, h.algo());
                short[] d = CublasLtBf16GpuTest.download(s, dd, m * n);
                double num = 0;
                double den = 0;
                for (int i = 0; i < m * n; i++) {
                    double diff = CublasLtBf16GpuTest.fromBf16(d[i]) - ref[i];
                    num += diff * diff;
                    den += ref[i] * ref[i];
                }
                double err = Math.sqrt(num / den);
                assertTrue(err < 1e-2, gemm.describe(h.algo()) + ": relative error " + err + " (seed " + seed + ")");
            }
        } finally {
            s.close();
        }
    }
}
