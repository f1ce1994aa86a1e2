package dev.lantern.train.amp;

import dev.lantern.cpu.CpuConfig;
import dev.lantern.train.GradClip;
import dev.lantern.train.MultiTensor;
import dev.lantern.train.Optimizer;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Dynamic loss scaling for f16 (and, with a fixed scale, bf16) training, with
 * {@code torch.cuda.amp.GradScaler}'s rules: the loss is multiplied by {@link #scale()} before the
 * backward; {@link #unscale} multiplies every gradient by {@code f32(1 / (double) scale)} in one
 * pass and reports the tensors with a non-finite value; {@link #update} then skips the step and
 * backs off ({@code scale * backoffFactor}, never under the floor) on an overflow, or counts a
 * clean step and grows the scale ({@code scale * growthFactor}, if finite) after
 * {@code growthInterval} clean steps in a row. The K-th overflow in a row raises
 * {@link LossScaleException}.
 *
 * <pre>{@code
 * seed = scaler.scale();                 // d(loss)/d(loss) of the backward
 * ... backward writes p.grad() ...
 * ScaledStep s = scaler.step(optimizer, 1.0);   // unscale, clip to norm 1, step unless overflow, update
 * }</pre>
 */
public final class DynamicLossScaler {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VectorSpecies<Float> F = CpuConfig.F;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /** Scale events kept for the report and the checkpoint (the oldest fall off first). */
    public static final int HISTORY = 256;

    /** What one {@link #step} did. */
    public record ScaledStep(boolean applied, float scaleUsed, float gradNorm, UnscaleReport unscale) {}

    private final LossScalerConfig config;
    private float scale;
    private int growthTracker;
    private long steps;
    private long overflows;
    private long skippedSteps;
    private int consecutive;
    private long streakFirstStep;
    private List<String> streakFirstTensors = List.of();
    private final Deque<ScaleEvent> history = new ArrayDeque<>();

    /** A scaler at {@code config.initScale()} with zeroed counters. */
    public DynamicLossScaler(LossScalerConfig config) {
        this.config = config;
        this.scale = config.initScale();
    }

    /** The settings. */
    public LossScalerConfig config() {
        return config;
    }

    /** The factor for the loss (the backward's seed) of the coming step. */
    public float scale() {
        return scale;
    }

    /** Clean steps in a row since the last growth or overflow (GradScaler's growth tracker). */
    public int growthTracker() {
        return growthTracker;
    }

    /** Updates so far, skipped or not. */
    public long steps() {
        return steps;
    }

    /** Overflowing updates so far. */
    public long overflows() {
        return overflows;
    }

    /** Optimizer steps skipped so far: one for each overflow. */
    public long skippedSteps() {
        return skippedSteps;
    }

    /** Overflowing updates in a row, up to now. */
    public int consecutiveOverflows() {
        return consecutive;
    }

    /** The scale history, oldest first (at most {@link #HISTORY} events). */
    public List<ScaleEvent> history() {
        return List.copyOf(history);
    }

    /**
     * The fused pass: multiplies every gradient of {@code plan} by the inverse scale and reports
     * which tensors hold an inf or NaN afterwards (an f16 overflow, or a finite gradient that the
     * unscale itself overflowed under a scale below 1). Call it once per step.
     */
    public UnscaleReport unscale(MultiTensor plan) {
        float inv = (float) (1.0 / (double) scale);
        boolean identity = inv == 1f;
        double[] bad = plan.map((p, i, start, end) -> {
            MemorySegment g = p.grad().segment();
            // x - x is 0 for a finite x and NaN for an inf or NaN, and a NaN sum stays NaN: one flag per lane, no branch
            float flag = 0f;
            long e = start;
            if (CpuConfig.VECTOR) {
                FloatVector acc = FloatVector.zero(F);
                for (long bound = start + (end - start) / F.length() * F.length(); e < bound; e += F.length()) {
                    FloatVector x = FloatVector.fromMemorySegment(F, g, e * 4, LE);
                    if (!identity) {
                        x = x.mul(inv);
                        x.intoMemorySegment(g, e * 4, LE);
                    }
                    acc = acc.add(x.sub(x));
                }
                flag = acc.reduceLanes(VectorOperators.ADD);
            }
            for (; e < end; e++) {
                float x = g.getAtIndex(F32, e);
                if (!identity) {
                    x = x * inv;
                    g.setAtIndex(F32, e, x);
                }
                flag += x - x;
            }
            return flag != 0f || flag != flag ? 1 : 0;
        });
        List<String> names = new ArrayList<>();
        List<MultiTensor.Chunk> chunks = plan.chunks();
        int last = -1;
        for (int c = 0; c < bad.length; c++) {
            int param = chunks.get(c).param();
            if (bad[c] != 0 && param != last) {
                names.add(plan.params().get(param).name());
                last = param;
            }
        }
        return new UnscaleReport(names, inv);
    }

    /**
     * Ends a step: on an overflow (the report not {@link UnscaleReport#finite()}), counts it as a
     * skipped step and backs the scale off; otherwise counts a clean step and grows the scale
     * after {@code growthInterval} of them. Throws {@link LossScaleException} at the K-th overflow
     * in a row, after the counters and scale are updated.
     */
    public void update(UnscaleReport report) {
        steps++;
        if (report.finite()) {
            consecutive = 0;
            streakFirstStep = 0;
            streakFirstTensors = List.of();
            int successful = growthTracker + 1;
            if (successful == config.growthInterval()) {
                float grown = scale * config.growthFactor();
                if (Float.isFinite(grown) && grown != scale) {
                    scale = grown;
                    record(ScaleEvent.Kind.GROWTH);
                }
                growthTracker = 0;
            } else {
                growthTracker = successful;
            }
            return;
        }
        overflows++;
        skippedSteps++;
        growthTracker = 0;
        if (consecutive == 0) {
            streakFirstStep = steps;
            streakFirstTensors = report.nonFinite();
        }
        consecutive++;
        float backed = scale * config.backoffFactor();
        if (backed < config.minScale()) {
            scale = config.minScale();
            record(ScaleEvent.Kind.FLOOR);
        } else if (backed != scale) {
            scale = backed;
            record(ScaleEvent.Kind.BACKOFF);
        }
        if (config.maxConsecutiveOverflows() > 0 && consecutive >= config.maxConsecutiveOverflows()) {
            throw new LossScaleException(new OverflowReport(consecutive, streakFirstStep, streakFirstTensors,
                    report.nonFinite(), scale, history()));
        }
    }

    /**
     * One scaled optimizer step: unscale, then (when every gradient is finite) clip to
     * {@code maxNorm} (0 or less: no clipping) and step, then {@link #update}. The gradients are
     * left unscaled either way.
     */
    public ScaledStep step(Optimizer optimizer, double maxNorm) {
        float used = scale;
        UnscaleReport r = unscale(optimizer.plan());
        float norm = Float.NaN;
        if (r.finite()) {
            norm = maxNorm > 0 ? GradClip.clipGradNorm(optimizer.plan(), maxNorm) : GradClip.globalNorm(optimizer.plan());
            optimizer.step();
        }
        update(r);
        return new ScaledStep(r.finite(), used, norm, r);
    }

    /** A snapshot of the scaler for a checkpoint. */
    public ScalerState state() {
        return new ScalerState(scale, growthTracker, steps, overflows, skippedSteps, consecutive, streakFirstStep,
                streakFirstTensors, history());
    }

    /** Restores a snapshot that {@link #state()} took. */
    public void loadState(ScalerState s) {
        scale = s.scale();
        growthTracker = s.growthTracker();
        steps = s.steps();
        overflows = s.overflows();
        skippedSteps = s.skippedSteps();
        consecutive = s.consecutiveOverflows();
        streakFirstStep = s.streakFirstStep();
        streakFirstTensors = s.streakFirstTensors();
        history.clear();
        history.addAll(s.history());
        while (history.size() > HISTORY) {
            history.removeFirst();
        }
    }

    private void record(ScaleEvent.Kind kind) {
        history.addLast(new ScaleEvent(steps, kind, scale));
        if (history.size() > HISTORY) {
            history.removeFirst();
        }
    }
}
