package dev.lantern.train.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Half;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamW;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.GradClip;
import dev.lantern.train.Parameter;
import dev.lantern.train.amp.DynamicLossScaler;
import dev.lantern.train.amp.LossScalerConfig;
import dev.lantern.train.data.SplitMix64;
import dev.lantern.train.data.TokenBatch;
import dev.lantern.train.data.TokenTask;
import dev.lantern.train.data.TokenTaskConfig;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The pieces together, as {@code lantern train} will use them, on a model small enough to
 * differentiate by hand: {@code logits[t] = A[token t] + B[token t-1]} (two bigram tables over a
 * vocabulary of 64, 8192 parameters), mean cross-entropy on the generated task. 200 steps of AdamW
 * with clipping halve the loss (first step's loss against the mean of the last 10); under bf16 and f16 AMP (the model reads the low copies, the
 * backward's gradients pass through the low type, so an f16 overflow arrives as inf, and the
 * scaler grows every 10 clean steps until it meets one) the final loss is within 5 % of f32's.
 */
class TrainLoopTest {
    static final int V = 64;
    static final TokenTaskConfig TASK = new TokenTaskConfig(V, 16, 64, 3, DType.I32);
    static final int STEPS = 200;
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    record Result(double firstLoss, double lastLoss, long overflows, long skipped, float scale) {}

    static Result train(DType amp) {
        SplitMix64 init = new SplitMix64(5);
        List<Parameter> ps = new ArrayList<>();
        for (String name : new String[] {"A", "B"}) {
            Tensor w = Tensor.allocate(DType.F32, Shape.of(V, V));
            for (long e = 0; e < w.numel(); e++) {
                w.set(e, (float) (init.nextDouble() - 0.5) * 0.02f);
            }
            ps.add(amp == null ? Parameter.of(name, w) : Parameter.mixed(name, w, amp));
        }
        AdamW opt = new AdamW(ps, new AdamWConfig(0.05, 0.9, 0.999, 1e-8, 0.0), 2);
        DynamicLossScaler scaler = amp == null ? null
                : new DynamicLossScaler(LossScalerConfig.forType(amp).withGrowthInterval(10).withMaxConsecutiveOverflows(8));
        TokenTask task = TokenTask.start(TASK);
        double first = 0;
        double last = 0;
        for (int step = 0; step < STEPS; step++) {
            TokenBatch b = task.next();
            float seed = scaler == null ? 1f : scaler.scale();
            double loss = forwardBackward(ps, b, seed, amp);
            if (step == 0) {
                first = loss;
            }
            if (step >= STEPS - 10) {
                last += loss / 10;
            }
            if (scaler == null) {
                GradClip.clipGradNorm(opt.plan(), 1.0);
                opt.step();
            } else {
                scaler.step(opt, 1.0);
            }
        }
        return scaler == null ? new Result(first, last, 0, 0, 1f)
                : new Result(first, last, scaler.overflows(), scaler.skippedSteps(), scaler.scale());
    }

    /** Mean cross-entropy of the batch; writes d(seed * loss)/dW into each grad, through the low type under AMP. */
    static double forwardBackward(List<Parameter> ps, TokenBatch b, float seed, DType amp) {
        float[] a = (amp == null ? ps.get(0).value() : ps.get(0).low()).toFloats();
        float[] bt = (amp == null ? ps.get(1).value() : ps.get(1).low()).toFloats();
        double[] tok = b.tokens().toDoubles();
        double[] tgt = b.targets().toDoubles();
        int n = tok.length;
        float[] ga = new float[V * V];
        float[] gb = new float[V * V];
        double loss = 0;
        float[] logits = new float[V];
        double[] exps = new double[V];
        for (int i = 0; i < n; i++) {
            int cur = (int) tok[i];
            int prev = i % TASK.seq() == 0 ? 0 : (int) tok[i - 1];
            float max = Float.NEGATIVE_INFINITY;
            for (int y = 0; y < V; y++) {
                logits[y] = a[cur * V + y] + bt[prev * V + y];
                max = Math.max(max, logits[y]);
            }
            double sum = 0;
            for (int y = 0; y < V; y++) {
                exps[y] = Math.exp(logits[y] - max);
                sum += exps[y];
            }
            int target = (int) tgt[i];
            loss += Math.log(sum) - (logits[target] - max);
            for (int y = 0; y < V; y++) {
                float d = (float) ((exps[y] / sum - (y == target ? 1 : 0)) * seed / n);
                ga[cur * V + y] += d;
                gb[prev * V + y] += d;
            }
        }
        float[][] grads = {ga, gb};
        for (int k = 0; k < 2; k++) {
            for (int e = 0; e < V * V; e++) {
                float v = grads[k][e];
                // the gradient of a low-precision weight is a low-precision value: f16 overflows to inf here
                grads[k][e] = amp == DType.F16 ? Half.roundF16(v) : amp == DType.BF16 ? Half.roundBf16(v) : v;
            }
            MemorySegment.copy(grads[k], 0, ps.get(k).grad().segment(), F32, 0, V * V);
        }
        return loss / n;
    }

    @Test
    void lossHalvesAndAmpStaysWithinFivePercent() {
        Result f32 = train(null);
        Result bf16 = train(DType.BF16);
        Result f16 = train(DType.F16);
        System.out.printf("train loop: f32 %.4f -> %.4f, bf16 -> %.4f, f16 -> %.4f (%d overflows, %d skipped, scale %.0f)%n",
                f32.firstLoss(), f32.lastLoss(), bf16.lastLoss(), f16.lastLoss(), f16.overflows(), f16.skipped(), f16.scale());
        assertEquals(Math.log(V), f32.firstLoss(), 0.1, "starts near the uniform loss");
        assertTrue(f32.lastLoss() < f32.firstLoss() / 2, "loss falls by half: " + f32.lastLoss());
        assertEquals(f32.lastLoss(), bf16.lastLoss(), 0.05 * f32.lastLoss());
        assertEquals(f32.lastLoss(), f16.lastLoss(), 0.05 * f32.lastLoss());
        assertTrue(f16.overflows() > 0, "the f16 run should meet overflows as the scale grows");
        assertEquals(f16.overflows(), f16.skipped());
        assertEquals(0, bf16.overflows());
    }
}
