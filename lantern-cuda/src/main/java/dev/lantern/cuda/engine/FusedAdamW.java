package dev.lantern.cuda.engine;

import dev.lantern.cuda.codegen.AdamWKernel;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.cuda.codegen.ProblemSize;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.ir.DType;
import dev.lantern.train.AdamWConfig;

/**
 * AdamW on the GPU: one launch of {@link AdamWKernel} per step over every parameter, the f32
 * masters, gradients and moments each in one flat device buffer (parameter after parameter, as
 * {@code dev.lantern.train.MultiTensor} orders them), the bf16/f16 low copy written in the same
 * pass. The step's scalars come from the step count and learning rate in double, exactly as the
 * CPU's {@code AdamW.step} computes them, so a GPU step and a CPU step give the same bits
 * ({@code FusedAdamWGpuTest}). Not yet wired into {@code Trainer}: its step's gradients come back
 * to the host (docs/training.md).
 */
public final class FusedAdamW implements AutoCloseable {
    private final AdamWConfig config;
    private final DType low;
    private final CudaModule module;
    private final CudaKernelSource source;
    private double lr;
    private long steps;

    /** Loads the kernel for {@code device}; {@code low} is the low copy's dtype (bf16, f16) or null. */
    public FusedAdamW(CudaDevice device, AdamWConfig config, DType low) {
        this.config = config;
        this.low = low;
        this.lr = config.lr();
        this.source = AdamWKernel.render(low, CudaTargets.of(device));
        this.module = ModuleCache.forDevice(device).load(device, new KernelSource(source.entry(), source.source()));
    }

    /** Steps taken. */
    public long steps() {
        return steps;
    }

    /** The learning rate of the next step. */
    public double lr() {
        return lr;
    }

    /** Sets the learning rate of the next steps (a schedule's). */
    public void setLr(double lr) {
        if (!(lr >= 0)) {
            throw new IllegalArgumentException("learning rate must be non-negative, got " + lr);
        }
        this.lr = lr;
    }

    /**
     * One step over {@code n} elements at device addresses {@code p} (f32 masters), {@code g}
     * (f32 gradients), {@code m}, {@code v} (f32 moments) and {@code lowCopy} (ignored without a low
     * dtype), enqueued on {@code stream}.
     */
    public void step(CudaStream stream, long p, long g, long m, long v, long lowCopy, long n) {
        long t = steps + 1;
        double bc1 = 1 - Math.pow(config.beta1(), t);
        double bc2 = 1 - Math.pow(config.beta2(), t);
        float decay = (float) (1 - lr * config.weightDecay());
        int doDecay = config.weightDecay() != 0 ? 1 : 0;
        float w1 = (float) (1 - config.beta1());
        boolean small = Math.abs(w1) < 0.5f;
        float w2 = (float) (1 - config.beta2());
        float b2 = (float) config.beta2();
        float bc2Sqrt = (float) Math.sqrt(bc2);
        float eps = (float) config.eps();
        float negStepSize = (float) -(lr / bc1);
        LaunchConfig lc = source.launch(ProblemSize.of(n));
        Object[] args = low == null
                ? new Object[] {p, g, m, v, n, decay, doDecay, small ? w1 : w1 - 1f, small ? 1 : 0, w2, b2, bc2Sqrt, eps, negStepSize}
                : new Object[] {p, g, m, v, lowCopy, n, decay, doDecay, small ? w1 : w1 - 1f, small ? 1 : 0, w2, b2, bc2Sqrt, eps,
                        negStepSize};
        module.kernel(source.entry()).launch(stream, new int[] {(int) lc.gridX()}, new int[] {lc.blockX()}, 0, args);
        steps = t;
    }

    @Override
    public void close() {
        module.close();
    }
}
