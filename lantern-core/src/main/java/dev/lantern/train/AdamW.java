package dev.lantern.train;

import dev.lantern.cpu.CpuConfig;
import dev.lantern.ir.DType;
import dev.lantern.tensor.Tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * AdamW as {@code torch.optim.AdamW} computes it on the CPU for f32 parameters (the single-tensor
 * path), operation for operation in f32, with the step's scalars worked out in double and rounded
 * to f32 as PyTorch rounds a Python scalar for an f32 kernel, and a fused multiply-add
 * ({@code fma(a, b, c)} = a*b + c, one rounding) wherever PyTorch's AVX2/AVX-512 kernels fuse one:
 *
 * <pre>
 * p      = p * f32(1 - lr*wd)                                  (decoupled weight decay, when wd != 0)
 * w      = f32(1 - beta1)                                      (lerp(m, g, w):)
 * m      = w &lt; 0.5 ? fma(w, g - m, m) : fma(w - 1, g - m, g)
 * v      = fma(f32(1 - beta2) * g, g, v * f32(beta2))          (addcmul)
 * denom  = sqrt(v) / f32(sqrt(1 - beta2^t)) + f32(eps)         (eps outside the root)
 * p      = p + (f32(-lr / (1 - beta1^t)) * m) / denom          (addcdiv)
 * </pre>
 *
 * <p>The moments are PyTorch's bit for bit; so is the parameter, but for PyTorch's f32 square root
 * on x86 (MKL's, up to 0.75 ulp off), where Lantern's is correctly rounded: a few percent of the
 * elements then differ in their last bits (TorchReferenceTest). A CUDA kernel with {@code fmaf} at
 * the same places and IEEE {@code sqrtf} and division gives Lantern's results. Java never fuses on
 * its own, so the rounding is fixed by these lines whatever the thread count.
 */
public final class AdamW implements Optimizer {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VectorSpecies<Float> F = CpuConfig.F;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private final AdamWConfig config;
    private final MultiTensor plan;
    private final Tensor[] expAvg;
    private final Tensor[] expAvgSq;
    private double lr;
    private long steps;

    /** An optimizer over {@code params}, stepping on {@code threads} threads. */
    public AdamW(List<Parameter> params, AdamWConfig config, int threads) {
        this(new MultiTensor(params, threads), config);
    }

    /** An optimizer over {@code params} on the CPU backend's thread count. */
    public AdamW(List<Parameter> params, AdamWConfig config) {
        this(new MultiTensor(params), config);
    }

    private AdamW(MultiTensor plan, AdamWConfig config) {
        this.plan = plan;
        this.config = config;
        this.lr = config.lr();
        int n = plan.params().size();
        expAvg = new Tensor[n];
        expAvgSq = new Tensor[n];
        for (int i = 0; i < n; i++) {
            expAvg[i] = Tensor.allocate(DType.F32, plan.params().get(i).value().shape());
            expAvgSq[i] = Tensor.allocate(DType.F32, plan.params().get(i).value().shape());
        }
    }

    /** The hyperparameters this optimizer was built with (its learning rate is {@link #lr()}). */
    public AdamWConfig config() {
        return config;
    }

    @Override
    public MultiTensor plan() {
        return plan;
    }

    @Override
    public long steps() {
        return steps;
    }

    @Override
    public double lr() {
        return lr;
    }

    @Override
    public void setLr(double lr) {
        if (!(lr >= 0)) {
            throw new IllegalArgumentException("learning rate must be non-negative, got " + lr);
        }
        this.lr = lr;
    }

    @Override
    public void step() {
        long t = steps + 1;
        AdamWScalars k = AdamWScalars.of(config, lr, t);
        float decay = k.decay();
        boolean doDecay = k.doDecay();
        float w1 = k.w1(); // the lerp weight of the branch taken: f32(1 - beta1), or that minus 1
        boolean smallWeight = k.small();
        float b2 = k.b2();
        float w2 = k.w2();
        float bc2Sqrt = k.bc2Sqrt();
        float eps = k.eps();
        float negStepSize = k.negStepSize();
        plan.forEach((p, i, start, end) -> {
            MemorySegment pv = p.value().segment();
            MemorySegment g = p.grad().segment();
            MemorySegment m = expAvg[i].segment();
            MemorySegment v = expAvgSq[i].segment();
            long e = start;
            if (CpuConfig.VECTOR) {
                // the same lines lane by lane: Vector API arithmetic, sqrt and fma round as the scalar ones
                FloatVector w1v = FloatVector.broadcast(F, w1);
                FloatVector b2v = FloatVector.broadcast(F, b2);
                for (long bound = start + (end - start) / F.length() * F.length(); e < bound; e += F.length()) {
                    long o = e * 4;
                    FloatVector pe = FloatVector.fromMemorySegment(F, pv, o, LE);
                    FloatVector ge = FloatVector.fromMemorySegment(F, g, o, LE);
                    FloatVector me = FloatVector.fromMemorySegment(F, m, o, LE);
                    FloatVector ve = FloatVector.fromMemorySegment(F, v, o, LE);
                    if (doDecay) {
                        pe = pe.mul(decay);
                    }
                    FloatVector diff = ge.sub(me);
                    me = diff.fma(w1v, smallWeight ? me : ge);
                    ve = ge.mul(w2).fma(ge, ve.mul(b2v));
                    FloatVector denom = ve.sqrt().div(bc2Sqrt).add(eps);
                    pe = pe.add(me.mul(negStepSize).div(denom));
                    pe.intoMemorySegment(pv, o, LE);
                    me.intoMemorySegment(m, o, LE);
                    ve.intoMemorySegment(v, o, LE);
                }
            }
            for (; e < end; e++) {
                float pe = pv.getAtIndex(F32, e);
                float ge = g.getAtIndex(F32, e);
                float me = m.getAtIndex(F32, e);
                float ve = v.getAtIndex(F32, e);
                if (doDecay) {
                    pe = pe * decay;
                }
                me = Math.fma(w1, ge - me, smallWeight ? me : ge);
                ve = Math.fma(w2 * ge, ge, ve * b2);
                float denom = (float) Math.sqrt(ve) / bc2Sqrt + eps;
                pe = pe + (negStepSize * me) / denom;
                pv.setAtIndex(F32, e, pe);
                m.setAtIndex(F32, e, me);
                v.setAtIndex(F32, e, ve);
            }
            p.refreshLow(start, end);
        });
        steps = t;
    }

    @Override
    public NamedState state() {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (int i = 0; i < expAvg.length; i++) {
            tensors.put("exp_avg." + params().get(i).name(), expAvg[i]);
            tensors.put("exp_avg_sq." + params().get(i).name(), expAvgSq[i]);
        }
        Map<String, String> meta = new HashMap<>();
        meta.put("optimizer", "adamw");
        meta.put("step", Long.toString(steps));
        meta.put("lr", Double.toString(lr));
        meta.put("beta1", Double.toString(config.beta1()));
        meta.put("beta2", Double.toString(config.beta2()));
        meta.put("eps", Double.toString(config.eps()));
        meta.put("weight_decay", Double.toString(config.weightDecay()));
        return new NamedState(tensors, meta);
    }

    @Override
    public void loadState(NamedState state) {
        if (!"adamw".equals(state.string("optimizer"))) {
            throw new TrainStateException("state is of optimizer " + state.string("optimizer") + ", not adamw");
        }
        long step = state.longValue("step");
        double savedLr = state.doubleValue("lr");
        if (step < 0 || !(savedLr >= 0)) {
            throw new TrainStateException("optimizer state has step " + step + " and learning rate " + savedLr);
        }
        // check every tensor first: a bad checkpoint leaves the optimizer as it was
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < expAvg.length; i++) {
                String name = params().get(i).name();
                if (pass == 0) {
                    state.checkTensor("exp_avg." + name, expAvg[i]);
                    state.checkTensor("exp_avg_sq." + name, expAvgSq[i]);
                } else {
                    state.copyInto("exp_avg." + name, expAvg[i]);
                    state.copyInto("exp_avg_sq." + name, expAvgSq[i]);
                }
            }
        }
        steps = step;
        setLr(savedLr);
    }
}
