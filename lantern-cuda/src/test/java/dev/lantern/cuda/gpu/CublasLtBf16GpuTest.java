package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.blas.GemmSpec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The MLP's first GEMM in bf16: D = GELU(X · Wᵀ + bias), X (m×k), W (n×k), bias (n), all
 * bf16 with f32 accumulation, against a float64 reference on the bf16-rounded inputs.
 * cuBLASLt's GELU epilogue is the tanh form.
 */
@Tag("gpu")
class CublasLtBf16GpuTest {
    static short bf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
    }

    static float fromBf16(short h) {
        return Float.intBitsToFloat((h & 0xffff) << 16);
    }

    static short[] randomBf16(SplittableRandom r, int n, double scale) {
        short[] x = new short[n];
        for (int i = 0; i < n; i++) {
            x[i] = bf16((float) ((r.nextDouble() * 2 - 1) * scale));
        }
        return x;
    }

    static void upload(CudaStream s, short[] host, CudaStorage dst) {
        try (CudaStorage pinned = Gpu.device().allocatePinned(2L * host.length)) {
            MemorySegment.copy(host, 0, pinned.hostSegment(), ValueLayout.JAVA_SHORT, 0, host.length);
            s.copy(pinned, 0, dst, 0, 2L * host.length);
            s.synchronize();
        }
    }

    static short[] download(CudaStream s, CudaStorage src, int n) {
        try (CudaStorage pinned = Gpu.device().allocatePinned(2L * n)) {
            s.copy(src, 0, pinned, 0, 2L * n);
            s.synchronize();
            short[] out = new short[n];
            MemorySegment.copy(pinned.hostSegment(), ValueLayout.JAVA_SHORT, 0, out, 0, n);
            return out;
        }
    }

    static double gelu(double x) {
        return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));
    }

    @Test
    void geluBiasEpilogueInBf16() {
        CudaDevice dev = Gpu.device();
        int m = 128;
        int n = 256;
        int k = 512;
        long seed = System.nanoTime();
        SplittableRandom r = new SplittableRandom(seed);
        short[] x = randomBf16(r, m * k, 1.0);
        short[] w = randomBf16(r, n * k, 1.0 / Math.sqrt(k));
        short[] bias = randomBf16(r, n, 0.5);
        GemmSpec spec = new GemmSpec(m, n, k, 1, false, true, GemmSpec.DataType.BF16, GemmSpec.DataType.BF16,
                GemmSpec.Epilogue.GELU_BIAS, GemmSpec.DataType.BF16);
        long ws = 32L << 20;
        CudaStream s = dev.newStream(false);
        try (CublasLtHandle lt = CublasLtHandle.create(dev); CublasLtGemm gemm = lt.plan(spec, ws, 8);
             CudaStorage dx = dev.allocate(2L * x.length); CudaStorage dw = dev.allocate(2L * w.length);
             CudaStorage db = dev.allocate(2L * n); CudaStorage dd = dev.allocate(2L * m * n);
             CudaStorage work = dev.allocate(ws)) {
            assertFalse(gemm.candidates().isEmpty(), "the heuristic offers bf16 GELU_BIAS algorithms");
            upload(s, x, dx);
            upload(s, w, dw);
            upload(s, bias, db);
            s.memset(dd, 0, (byte) 0xff, 2L * m * n); // poison: 0xffff is a bf16 NaN
            gemm.run(s, dx.address(), dw.address(), 0, dd.address(), db.address(), 1f, 0f, work.address(), ws);
            short[] d = download(s, dd, m * n);
            double num = 0;
            double den = 0;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double acc = fromBf16(bias[j]);
                    for (int p = 0; p < k; p++) {
                        acc += (double) fromBf16(x[i * k + p]) * fromBf16(w[j * k + p]);
                    }
                    double ref = gelu(acc);
                    double got = fromBf16(d[i * n + j]);
                    assertFalse(Double.isNaN(got), "unwritten or NaN at " + i + "," + j);
                    num += (got - ref) * (got - ref);
                    den += ref * ref;
                }
            }
            double err = Math.sqrt(num / den);
            System.out.printf("[gpu] cublasLt bf16 GELU_BIAS %dx%dx%d: %d candidates, rel err %.2e (seed %d)%n", m, n,
                    k, gemm.candidates().size(), err, seed);
            assertTrue(err < 1e-2, "relative error " + err + " (seed " + seed + ")");
        } finally {
            s.close();
        }
    }
}
