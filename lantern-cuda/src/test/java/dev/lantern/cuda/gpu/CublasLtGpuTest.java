package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.blas.GemmSpec;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** f32 GEMMs through cuBLASLt against a float64 reference: a linear layer with bias, and a batch. */
@Tag("gpu")
class CublasLtGpuTest {
    static float[] random(SplittableRandom r, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) (r.nextDouble() * 2 - 1);
        }
        return x;
    }

    /** ‖out − ref‖ / ‖ref‖ of row-major D = op(A)·op(B) + bias over {@code batch} batches. */
    static double relError(float[] a, float[] b, float[] bias, float[] d, GemmSpec s) {
        double num = 0;
        double den = 0;
        for (int p = 0; p < s.batch(); p++) {
            for (int i = 0; i < s.m(); i++) {
                for (int j = 0; j < s.n(); j++) {
                    double acc = bias == null ? 0 : bias[j];
                    for (int k = 0; k < s.k(); k++) {
                        double av = s.transA() ? a[p * s.m() * s.k() + k * s.m() + i] : a[p * s.m() * s.k() + i * s.k() + k];
                        double bv = s.transB() ? b[p * s.k() * s.n() + j * s.k() + k] : b[p * s.k() * s.n() + k * s.n() + j];
                        acc += av * bv;
                    }
                    double diff = d[p * s.m() * s.n() + i * s.n() + j] - acc;
                    num += diff * diff;
                    den += acc * acc;
                }
            }
        }
        return Math.sqrt(num / den);
    }

    void check(GemmSpec spec) {
        CudaDevice dev = Gpu.device();
        long seed = System.nanoTime();
        SplittableRandom r = new SplittableRandom(seed);
        int batch = spec.batch();
        float[] a = random(r, batch * spec.m() * spec.k());
        float[] b = random(r, batch * spec.k() * spec.n());
        float[] bias = spec.epilogue().hasBias() ? random(r, spec.n()) : null;
        long ws = 32L << 20;
        CudaStream s = dev.newStream(false);
        try (CublasLtHandle lt = CublasLtHandle.create(dev); CublasLtGemm gemm = lt.plan(spec, ws, 8);
             CudaStorage da = dev.allocate(4L * a.length); CudaStorage db = dev.allocate(4L * b.length);
             CudaStorage dd = dev.allocate(4L * batch * spec.m() * spec.n());
             CudaStorage dbias = dev.allocate(4L * spec.n()); CudaStorage work = dev.allocate(ws)) {
            assertFalse(gemm.candidates().isEmpty(), "the heuristic offers algorithms for " + spec);
            Gpu.upload(s, a, da);
            Gpu.upload(s, b, db);
            if (bias != null) {
                Gpu.upload(s, bias, dbias);
            }
            s.memset32(dd, 0, Float.floatToRawIntBits(Float.NaN), (long) batch * spec.m() * spec.n());
            gemm.run(s, da.address(), db.address(), 0, dd.address(), dbias.address(), 1f, 0f, work.address(), ws);
            float[] d = Gpu.download(s, dd, batch * spec.m() * spec.n());
            double err = relError(a, b, bias, d, spec);
            System.out.printf("[gpu] cublasLt %s: %d candidates, rel err %.2e (seed %d)%n", spec,
                    gemm.candidates().size(), err, seed);
            assertTrue(err < 1e-5, "relative error " + err + " (seed " + seed + ")");
        } finally {
            s.close();
        }
    }

    @Test
    void linearLayerWithBiasEpilogue() {
        check(new GemmSpec(64, 96, 128, 1, false, true, GemmSpec.DataType.F32, GemmSpec.DataType.F32,
                GemmSpec.Epilogue.BIAS, GemmSpec.DataType.F32));
    }

    @Test
    void stridedBatchWithTransposedA() {
        check(new GemmSpec(48, 40, 72, 3, true, false, GemmSpec.DataType.F32, GemmSpec.DataType.F32,
                GemmSpec.Epilogue.NONE, null));
    }
}
