package dev.lantern.train.run;

import dev.lantern.engine.CompileOptions;
import dev.lantern.train.TrainStateException;

/**
 * How {@link Trainer} trains.
 *
 * @param vocab         the generated task's vocabulary (tokens 0..vocab-1)
 * @param lr            AdamW's learning rate
 * @param weightDecay   AdamW's decoupled weight decay
 * @param clipNorm      gradients clipped to this global L2 norm (0: no clipping)
 * @param amp           none, bf16 or f16 (matmuls and attention in the low dtype, f32 master weights;
 *                      f16 with the dynamic loss scaler, bf16 with a fixed scale of 1 that still skips
 *                      steps with non-finite gradients)
 * @param seed          the weights', the data's and the loop's seed
 * @param threads       threads of the optimizer's pass (the CPU kernels take lantern.cpu.threads)
 * @param deterministic strict determinism mode for the compiled step (CompileOptions.deterministic)
 * @param accumulate    micro-batches per optimizer step: their gradients are averaged (each
 *                      micro-batch's loss scaled by 1/accumulate, as PyTorch users divide it) before
 *                      one clip and one AdamW step; 1: none
 * @param autotune      on a device that tunes (CUDA): time the step's GEMM algorithms and kernel tiles
 *                      once before the first step and keep the winners in the tune cache
 *                      ({@code LANTERN_TUNE_CACHE}), as {@code lantern bench} does for a forward.
 *                      Off by default: tuning costs seconds at the start, and a tuned GEMM may sum
 *                      in another order, so its weights differ in the last bits from an untuned run's
 * @param optimizer     AdamW (decoupled weight decay, the default) or SGD ({@code torch.optim.SGD}:
 *                      weight decay as L2 on the gradient, momentum buffer); on a GPU either runs in
 *                      the device-resident step's multi-tensor kernel
 * @param momentum      SGD's momentum (0: plain SGD); AdamW ignores it
 */
public record TrainOptions(int vocab, double lr, double weightDecay, double clipNorm, CompileOptions.Amp amp, long seed,
                           int threads, boolean deterministic, int accumulate, boolean autotune, Kind optimizer, double momentum) {
    /** The optimizer a run steps with. */
    public enum Kind {
        ADAMW, SGD;

        /** {@code adamw} or {@code sgd}. */
        public static Kind parse(String s) {
            return switch (s) {
                case "adamw" -> ADAMW;
                case "sgd" -> SGD;
                default -> throw new TrainStateException("--optimizer takes adamw or sgd, found '" + s + "'");
            };
        }
    }

    public TrainOptions {
        if (vocab < 3 || !(lr > 0) || !(weightDecay >= 0) || !(clipNorm >= 0) || threads < 1 || accumulate < 1 || optimizer == null
                || !(momentum >= 0 && momentum < 1)) {
            throw new TrainStateException("bad training options: vocab " + vocab + " (>= 3), lr " + lr + " (> 0), weight decay "
                    + weightDecay + " (>= 0), clip " + clipNorm + " (>= 0), threads " + threads + " (>= 1), accumulate "
                    + accumulate + " (>= 1), optimizer " + optimizer + ", momentum " + momentum + " (in [0, 1))");
        }
    }

    /** AdamW options. */
    public TrainOptions(int vocab, double lr, double weightDecay, double clipNorm, CompileOptions.Amp amp, long seed, int threads,
                        boolean deterministic, int accumulate, boolean autotune) {
        this(vocab, lr, weightDecay, clipNorm, amp, seed, threads, deterministic, accumulate, autotune, Kind.ADAMW, 0.9);
    }

    /** Options without autotuning. */
    public TrainOptions(int vocab, double lr, double weightDecay, double clipNorm, CompileOptions.Amp amp, long seed, int threads,
                        boolean deterministic, int accumulate) {
        this(vocab, lr, weightDecay, clipNorm, amp, seed, threads, deterministic, accumulate, false, Kind.ADAMW, 0.9);
    }

    /** Options without gradient accumulation (one micro-batch per step) and without autotuning. */
    public TrainOptions(int vocab, double lr, double weightDecay, double clipNorm, CompileOptions.Amp amp, long seed, int threads,
                        boolean deterministic) {
        this(vocab, lr, weightDecay, clipNorm, amp, seed, threads, deterministic, 1, false, Kind.ADAMW, 0.9);
    }

    /** vocab 64, lr 1e-3 (PyTorch's AdamW default; on cpu-small it halves the loss in 200 steps at batch 2, 1e-2 does not), weight decay 0.01, clip 1.0, f32, seed 0, the CPU's threads, not strict. */
    public static TrainOptions defaults() {
        return new TrainOptions(64, 1e-3, 0.01, 1.0, CompileOptions.Amp.NONE, 0, Math.max(1, Runtime.getRuntime().availableProcessors()), false);
    }

    /** These options with learning rate {@code v}. */
    public TrainOptions withLr(double v) {
        return new TrainOptions(vocab, v, weightDecay, clipNorm, amp, seed, threads, deterministic, accumulate, autotune, optimizer, momentum);
    }

    /** These options with mixed precision {@code a}. */
    public TrainOptions withAmp(CompileOptions.Amp a) {
        return new TrainOptions(vocab, lr, weightDecay, clipNorm, a, seed, threads, deterministic, accumulate, autotune, optimizer, momentum);
    }

    /** These options with seed {@code s}. */
    public TrainOptions withSeed(long s) {
        return new TrainOptions(vocab, lr, weightDecay, clipNorm, amp, s, threads, deterministic, accumulate, autotune, optimizer, momentum);
    }

    /** These options with {@code t} optimizer threads. */
    public TrainOptions withThreads(int t) {
        return new TrainOptions(vocab, lr, weightDecay, clipNorm, amp, seed, t, deterministic, accumulate, autotune, optimizer, momentum);
    }

    /** These options with a vocabulary of {@code v} tokens. */
    public TrainOptions withVocab(int v) {
        return new TrainOptions(v, lr, weightDecay, clipNorm, amp, seed, threads, deterministic, accumulate, autotune, optimizer, momentum);
    }

    /** These options in strict determinism mode, or not. */
    public TrainOptions withDeterministic(boolean d) {
        return new TrainOptions(vocab, lr, weightDecay, clipNorm, amp, seed, threads, d, accumulate, autotune, optimizer, momentum);
    }

    /** These options with {@code k} micro-batches per optimizer step. */
    public TrainOptions withAccumulate(int k) {
        return new TrainOptions(vocab, lr, weightDecay, clipNorm, amp, seed, threads, deterministic, k, autotune, optimizer, momentum);
    }

    /** These options with gradients clipped to global norm {@code c} (0: none). */
    public TrainOptions withClipNorm(double c) {
        return new TrainOptions(vocab, lr, weightDecay, c, amp, seed, threads, deterministic, accumulate, autotune, optimizer, momentum);
    }

    /** These options with the step tuned on its device before the first step, or not. */
    public TrainOptions withAutotune(boolean t) {
        return new TrainOptions(vocab, lr, weightDecay, clipNorm, amp, seed, threads, deterministic, accumulate, t, optimizer, momentum);
    }

    /** These options stepping with {@code k}, SGD with momentum {@code m} (AdamW ignores it). */
    public TrainOptions withOptimizer(Kind k, double m) {
        return new TrainOptions(vocab, lr, weightDecay, clipNorm, amp, seed, threads, deterministic, accumulate, autotune, k, m);
    }
}
