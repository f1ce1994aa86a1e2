package dev.lantern.cuda.train;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.train.AdamWConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The device optimizer's kernels timed alone with CUDA events at the decoder block's parameter
 * sizes (16x1024x4096, MLP 16384: about 201M f32 parameters): the sum of squares with its copies
 * ({@link MultiTensorOptimizer#measure}) and one AdamW step, each the median of 20, and the bytes
 * per second each moves. What the training step spends outside its forward and backward.
 */
public final class OptimizerTimingProbe {
    private OptimizerTimingProbe() {}

    public static void main(String[] args) {
        int h = 4096;
        int mlp = 16384;
        int vocab = 64;
        long[] sizes = {(long) vocab * h, h, 3L * h * h, (long) h * h, h, (long) h * mlp, (long) mlp * h, h, (long) h * vocab};
        long total = Arrays.stream(sizes).sum();
        try (CudaDevice gpu = CudaDevice.open(0)) {
            CudaStream stream = gpu.newStream(false);
            List<CudaStorage> buffers = new ArrayList<>();
            long[] p = new long[sizes.length];
            long[] g = new long[sizes.length];
            try (MultiTensorOptimizer opt = new MultiTensorOptimizer(gpu, stream, sizes);
                 CudaEvent a = gpu.newEvent(true); CudaEvent b = gpu.newEvent(true)) {
                for (int i = 0; i < sizes.length; i++) {
                    CudaStorage pd = gpu.allocate(sizes[i] * 4);
                    CudaStorage gd = gpu.allocate(sizes[i] * 4);
                    buffers.add(pd);
                    buffers.add(gd);
                    stream.memset(pd, 0, (byte) 0x3c, sizes[i] * 4); // 0x3c3c3c3c: about 0.0115
                    stream.memset(gd, 0, (byte) 0x3a, sizes[i] * 4);
                    p[i] = pd.address();
                    g[i] = gd.address();
                }
                opt.bind(p, g);
                stream.synchronize();
                AdamWConfig cfg = new AdamWConfig(1e-3, 0.9, 0.999, 1e-8, 0.01);
                float[] measure = new float[20];
                float[] adam = new float[20];
                for (int r = -3; r < 20; r++) {
                    stream.record(a);
                    opt.measure(1f);
                    stream.record(b);
                    b.synchronize();
                    if (r >= 0) {
                        measure[r] = b.elapsedMillisSince(a);
                    }
                    opt.finish();
                    stream.record(a);
                    opt.adamw(cfg, 1e-3, r + 4, 1f, true, 0.5f);
                    stream.record(b);
                    b.synchronize();
                    if (r >= 0) {
                        adam[r] = b.elapsedMillisSince(a);
                    }
                }
                Arrays.sort(measure);
                Arrays.sort(adam);
                System.out.printf(Locale.ROOT, "[optimizer] %d parameters: sumsq+copies %.3f ms (%.0f GB/s), adamw %.3f ms (%.0f GB/s)%n",
                        total, measure[10], total * 4 / (measure[10] * 1e6), adam[10], total * 28 / (adam[10] * 1e6));
            } finally {
                stream.synchronize();
                buffers.forEach(CudaStorage::close);
                stream.close();
            }
        }
    }
}
