package dev.lantern.train.run;

import dev.lantern.Device;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.DType;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.AdamWScalars;
import dev.lantern.train.SgdConfig;
import dev.lantern.train.SgdScalars;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link DeviceStep} for tests without a GPU, registered in lantern-core's test classpath as the
 * {@code cuda} provider: the step graph (parameters as inputs, as the real device step compiles
 * it) run by the compiled CPU executor, and the optimizer as the multi-tensor kernels of
 * lantern-cuda's {@code MultiTensorKernels} compute it, line for line in Java ({@link #sgd},
 * {@link #adamw}). It keeps its own masters and state, as a device does, so the trainer's wiring
 * (which step it opens, the state slots, the step counts it passes, what it reads back into
 * checkpoints and writes on restore) is tested here; the kernels themselves are the GPU tier's.
 *
 * <p>{@link #overflowAt} plants an inf in chosen runs' gradients, so that a test sees steps skipped.
 * SGD's buffer slot starts as NaN, not zero: the kernel never reads it on the first step, so a
 * trainer that passed the wrong step count would poison the weights.
 */
public final class HostDeviceStep implements DeviceStep {
    /** The steps opened, newest last, for tests to look at. */
    static final List<HostDeviceStep> OPENED = new ArrayList<>();

    final Spec spec;
    final List<String> calls = new ArrayList<>();   // "sgd 0", "adamw 1", ...
    private final CompiledModel model;
    private final CompiledCpuExecutor exec;
    private final Map<String, Tensor> values = new HashMap<>(); // by input name: masters (own copies) and fixed tables
    private final List<Tensor> masters = new ArrayList<>();
    private final List<List<Tensor>> state = new ArrayList<>();
    private List<Tensor> grads = List.of();
    /** Runs (from 0) whose first gradient gets an inf planted, as an overflow of the loss scale would leave it. */
    java.util.Set<Integer> overflowAt = java.util.Set.of();
    private int runs;

    HostDeviceStep(Spec spec) {
        this.spec = spec;
        this.model = Compiler.compile(spec.graph(), spec.options().withTarget("cpu"));
        this.exec = new CompiledCpuExecutor(model).bind(Map.of());
        values.putAll(spec.initial());
        for (String name : spec.trained()) {
            Tensor m = copy(spec.initial().get(name));
            values.put(name, m);
            masters.add(m);
        }
        for (int k = 0; k < spec.slots(); k++) {
            List<Tensor> slot = new ArrayList<>();
            for (Tensor m : masters) {
                Tensor t = Tensor.allocate(DType.F32, m.shape());
                if (spec.slots() == 1) {
                    for (long e = 0; e < t.numel(); e++) {
                        t.set(e, Float.NaN);
                    }
                }
                slot.add(t);
            }
            state.add(slot);
        }
        OPENED.add(this);
    }

    private static Tensor copy(Tensor t) {
        Tensor c = Tensor.allocate(t.dtype(), t.shape());
        MemorySegment.copy(t.segment(), 0, c.segment(), 0, t.numel() * t.dtype().bytes());
        return c;
    }

    @Override
    public Device device() {
        return spec.device();
    }

    @Override
    public CompiledModel compiled() {
        return model;
    }

    @Override
    public Measured run(Map<String, Tensor> inputs, float invScale) {
        Map<String, Tensor> all = new HashMap<>(values);
        all.putAll(inputs);
        Map<String, Tensor> out = exec.run(all);
        grads = spec.gradients().stream().map(out::get).toList();
        if (overflowAt.contains(runs++)) {
            grads.getFirst().set(0, Float.POSITIVE_INFINITY);
        }
        double sum = 0;
        List<Integer> nonFinite = new ArrayList<>();
        for (int i = 0; i < grads.size(); i++) {
            boolean bad = false;
            for (long e = 0; e < grads.get(i).numel(); e++) {
                float x = invScale == 1f ? grads.get(i).get(e) : grads.get(i).get(e) * invScale;
                bad |= !Float.isFinite(x);
                sum += (double) x * x;
            }
            if (bad) {
                nonFinite.add(i);
            }
        }
        return new Measured(out.get(spec.loss()).get(0), sum, nonFinite);
    }

    /** The gradient element as the kernels read it: unscaled, then clipped. */
    private float grad(int i, long e, float inv, boolean clip, float coef) {
        float g = grads.get(i).get(e);
        g = inv == 1f ? g : g * inv;
        return clip ? g * coef : g;
    }

    @Override
    public void adamw(AdamWConfig config, double lr, long t, float invScale, boolean clip, float coef) {
        calls.add("adamw " + t);
        AdamWScalars k = AdamWScalars.of(config, lr, t);
        for (int i = 0; i < masters.size(); i++) {
            Tensor p = masters.get(i);
            Tensor m = state.get(0).get(i);
            Tensor v = state.get(1).get(i);
            for (long e = 0; e < p.numel(); e++) {
                float ge = grad(i, e, invScale, clip, coef);
                float pe = k.doDecay() ? p.get(e) * k.decay() : p.get(e);
                float me = Math.fma(k.w1(), ge - m.get(e), k.small() ? m.get(e) : ge);
                float ve = Math.fma(k.w2() * ge, ge, v.get(e) * k.b2());
                float denom = (float) Math.sqrt(ve) / k.bc2Sqrt() + k.eps();
                p.set(e, pe + (k.negStepSize() * me) / denom);
                m.set(e, me);
                v.set(e, ve);
            }
        }
    }

    @Override
    public void sgd(SgdConfig config, double lr, long stepsTaken, float invScale, boolean clip, float coef) {
        calls.add("sgd " + stepsTaken);
        SgdScalars k = SgdScalars.of(config, lr, stepsTaken);
        for (int i = 0; i < masters.size(); i++) {
            Tensor p = masters.get(i);
            Tensor b = k.doMomentum() ? state.get(0).get(i) : null;
            for (long e = 0; e < p.numel(); e++) {
                float ge = grad(i, e, invScale, clip, coef);
                float pe = p.get(e);
                if (k.doDecay()) {
                    ge = Math.fma(k.weightDecay(), pe, ge);
                }
                if (k.doMomentum()) {
                    float be = k.first() ? ge : Math.fma(k.keep(), ge, b.get(e) * k.momentum());
                    b.set(e, be);
                    ge = k.nesterov() ? Math.fma(k.momentum(), be, ge) : be;
                }
                p.set(e, Math.fma(k.negLr(), ge, pe));
            }
        }
    }

    @Override
    public void read(List<Tensor> into, List<List<Tensor>> intoState) {
        check(into, intoState);
        for (int i = 0; i < masters.size(); i++) {
            MemorySegment.copy(masters.get(i).segment(), 0, into.get(i).segment(), 0, masters.get(i).numel() * 4);
            for (int k = 0; k < state.size(); k++) {
                MemorySegment.copy(state.get(k).get(i).segment(), 0, intoState.get(k).get(i).segment(), 0, masters.get(i).numel() * 4);
            }
        }
    }

    @Override
    public void write(List<Tensor> from, List<List<Tensor>> fromState) {
        check(from, fromState);
        for (int i = 0; i < masters.size(); i++) {
            MemorySegment.copy(from.get(i).segment(), 0, masters.get(i).segment(), 0, masters.get(i).numel() * 4);
            for (int k = 0; k < state.size(); k++) {
                MemorySegment.copy(fromState.get(k).get(i).segment(), 0, state.get(k).get(i).segment(), 0, masters.get(i).numel() * 4);
            }
        }
    }

    private void check(List<Tensor> m, List<List<Tensor>> s) {
        if (m.size() != masters.size() || s.size() != state.size() || s.stream().anyMatch(l -> l.size() != masters.size())) {
            throw new IllegalArgumentException("expected " + masters.size() + " masters and " + state.size() + " state slots of as many");
        }
    }

    @Override
    public long peakBytes() {
        return -1;
    }

    @Override
    public void close() {
        exec.close();
    }

    /** The test classpath's {@code cuda} provider. */
    public static final class Provider implements DeviceStep.Provider {
        @Override
        public String kind() {
            return "cuda";
        }

        @Override
        public DeviceStep open(Spec spec) {
            return new HostDeviceStep(spec);
        }
    }
}
