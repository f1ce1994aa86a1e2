package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.driver.GraphCaptureException;
import dev.lantern.cuda.driver.GraphRunner;
import dev.lantern.cuda.ffi.CudaException;
import dev.lantern.runtime.GraphPolicy;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("gpu")
class GraphGpuTest {
    static final int N = 1 << 14;
    static final int KERNELS = 24;
    static final int THREADS = 256;

    static float[] random(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] x = new float[N];
        for (int i = 0; i < N; i++) {
            x[i] = (float) (r.nextDouble() * 4 - 2);
        }
        return x;
    }

    static float a(int i) {
        return 1.0f + 0.03125f * (i % 5) - 0.0625f * (i % 3);
    }

    static float b(int i) {
        return 0.25f * i - 1.5f;
    }

    /** 24 dependent axpb launches on one stream: x = fma(x, a_i, b_i). */
    static void chain(CudaStream s, CudaStorage x) {
        CudaModule.CudaKernel axpb = Gpu.kernels().kernel("axpb");
        for (int i = 0; i < KERNELS; i++) {
            axpb.launch(s, new int[] {Gpu.blocks(N, THREADS)}, new int[] {THREADS}, 0, x.address(), a(i), b(i), N);
        }
    }

    static float[] reference(float[] x0, int repeats) {
        float[] x = x0.clone();
        for (int r = 0; r < repeats; r++) {
            for (int i = 0; i < KERNELS; i++) {
                for (int j = 0; j < N; j++) {
                    x[j] = Math.fma(x[j], a(i), b(i));
                }
            }
        }
        return x;
    }

    @Test
    void capturedGraphReplaysEqualToEagerLaunches() {
        CudaDevice dev = Gpu.device();
        long seed = System.nanoTime();
        float[] x0 = random(seed);
        CudaStream s = dev.newStream(false);
        try (CudaStorage eager = dev.allocate(4L * N); CudaStorage graphed = dev.allocate(4L * N);
             GraphRunner runner = new GraphRunner(dev, GraphPolicy.REQUIRE)) {
            Gpu.upload(s, x0, eager);
            Gpu.upload(s, x0, graphed);
            int repeats = 3;
            for (int r = 0; r < repeats; r++) {
                chain(s, eager);
                runner.run("n=" + N, s, () -> chain(s, graphed));
            }
            float[] e = Gpu.download(s, eager, N);
            float[] g = Gpu.download(s, graphed, N);
            assertArrayEquals(reference(x0, repeats), e, "eager vs Math.fma reference (seed " + seed + ")");
            assertArrayEquals(e, g, "graph replay vs eager, bit for bit (seed " + seed + ")");
            assertEquals(KERNELS, runner.graph("n=" + N).kernelCount());
            GraphRunner.Stats st = runner.stats();
            assertEquals(3, st.replays());
            assertEquals(0, st.eagerRuns());
            assertEquals(1, st.captures());
            assertEquals(100.0, st.graphHitPct());
        } finally {
            s.close();
        }
    }

    /** add_one, then an illegal stream synchronisation, then add_one: x += 2 when run eagerly. */
    static Runnable illegalDuringCapture(CudaStream s, CudaStorage x) {
        CudaModule.CudaKernel addOne = Gpu.kernels().kernel("add_one");
        return () -> {
            addOne.launch(s, new int[] {Gpu.blocks(N, THREADS)}, new int[] {THREADS}, 0, x.address(), N);
            s.synchronize(); // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED while capturing
            addOne.launch(s, new int[] {Gpu.blocks(N, THREADS)}, new int[] {THREADS}, 0, x.address(), N);
        };
    }

    @Test
    void captureFailureFallsBackUnderPreferAndThrowsUnderRequire() {
        CudaDevice dev = Gpu.device();
        float[] x0 = random(System.nanoTime());
        CudaStream s = dev.newStream(false);
        try (CudaStorage x = dev.allocate(4L * N); GraphRunner prefer = new GraphRunner(dev, GraphPolicy.PREFER);
             GraphRunner require = new GraphRunner(dev, GraphPolicy.REQUIRE)) {
            Gpu.upload(s, x0, x);
            Runnable work = illegalDuringCapture(s, x);

            prefer.run("bad", s, work);
            prefer.run("bad", s, work); // remembered as eager-only: no second capture attempt
            float[] out = Gpu.download(s, x, N);
            for (int i = 0; i < N; i++) {
                assertEquals(x0[i] + 1f + 1f + 1f + 1f, out[i], "PREFER ran the work eagerly twice, at " + i);
            }
            GraphRunner.Stats st = prefer.stats();
            assertEquals(1, st.captures());
            assertEquals(1, st.captureFailures());
            assertEquals(2, st.eagerRuns());
            assertEquals(0.0, st.graphHitPct());
            assertNotNull(prefer.lastFailure());
            assertTrue(prefer.lastFailure().contains("CUDA_ERROR_STREAM_CAPTURE"), prefer.lastFailure());
            assertNull(prefer.graph("bad"));

            GraphCaptureException e = assertThrows(GraphCaptureException.class, () -> require.run("bad", s, work));
            assertTrue(e.getCause() instanceof CudaException, String.valueOf(e.getCause()));
            System.out.println("[gpu] REQUIRE capture failure: " + e.getMessage());

            // The stream is usable again after the failed captures: one more eager add_one.
            Gpu.kernels().kernel("add_one").launch(s, new int[] {Gpu.blocks(N, THREADS)}, new int[] {THREADS}, 0,
                    x.address(), N);
            float[] after = Gpu.download(s, x, N);
            for (int i = 0; i < N; i++) {
                assertEquals(out[i] + 1f, after[i], "at " + i);
            }
        } finally {
            s.close();
        }
    }

    @Test
    void offPolicyNeverCaptures() {
        CudaDevice dev = Gpu.device();
        CudaStream s = dev.newStream(false);
        float[] x0 = random(System.nanoTime());
        try (CudaStorage x = dev.allocate(4L * N); GraphRunner off = new GraphRunner(dev, GraphPolicy.OFF)) {
            Gpu.upload(s, x0, x);
            off.run("k", s, () -> chain(s, x));
            assertArrayEquals(reference(x0, 1), Gpu.download(s, x, N));
            assertEquals(new GraphRunner.Stats(0, 1, 0, 0), off.stats());
        } finally {
            s.close();
        }
    }
}
