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
 * SGD with momentum as {@code torch.optim.SGD} computes it for f32 parameters on the CPU, in f32,
 * each Python scalar rounded to f32 as PyTorch rounds it, and each {@code add(x, alpha=a)} a fused
 * multiply-add as PyTorch's AVX2/AVX-512 kernels compute it ({@code fma(a, b, c)} = a*b + c, one
 * rounding):
 *
 * <pre>
 * g   = fma(f32(wd), p, g)                                   (when wd != 0; L2, into the gradient)
 * buf = g                                                    (first step)
 * buf = fma(f32(1 - dampening), g, buf * f32(momentum))      (later steps)
 * g   = nesterov ? fma(f32(momentum), buf, g) : buf          (when momentum != 0)
 * p   = fma(f32(-lr), g, p)
 * </pre>
 *
 * These are PyTorch's results bit for bit (TorchReferenceTest), and what a CUDA kernel computes
 * from the same lines with {@code fmaf}. Java never fuses on its own, so the rounding is fixed by
 * these lines whatever the thread count.
 *
 * The gradient tensor itself is left as the backward wrote it (PyTorch adds the decay into a new
 * tensor too). With momentum 0 there is no buffer and the state holds no tensors.
 */
public final class Sgd implements Optimizer {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VectorSpecies<Float> F = CpuConfig.F;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private final SgdConfig config;
    private final MultiTensor plan;
    private final Tensor[] buffers; // null entries when momentum == 0
    private double lr;
    private long steps;

    /** An optimizer over {@code params}, stepping on {@code threads} threads. */
    public Sgd(List<Parameter> params, SgdConfig config, int threads) {
        this(new MultiTensor(params, threads), config);
    }

    /** An optimizer over {@code params} on the CPU backend's thread count. */
    public Sgd(List<Parameter> params, SgdConfig config) {
        this(new MultiTensor(params), config);
    }

    private Sgd(MultiTensor plan, SgdConfig config) {
        this.plan = plan;
        this.config = config;
        this.lr = config.lr();
        buffers = new Tensor[plan.params().size()];
        if (config.momentum() != 0) {
            for (int i = 0; i < buffers.length; i++) {
                buffers[i] = Tensor.allocate(DType.F32, plan.params().get(i).value().shape());
            }
        }
    }

    /** The hyperparameters this optimizer was built with (its learning rate is {@link #lr()}). */
    public SgdConfig config() {
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
        SgdScalars k = SgdScalars.of(config, lr, steps); // the device kernel's scalars too
        float wd = k.weightDecay();
        boolean doDecay = k.doDecay();
        float mom = k.momentum();
        boolean doMomentum = k.doMomentum();
        float keep = k.keep();
        boolean first = k.first();
        boolean nesterov = k.nesterov();
        float negLr = k.negLr();
        plan.forEach((p, i, start, end) -> {
            MemorySegment pv = p.value().segment();
            MemorySegment g = p.grad().segment();
            MemorySegment buf = doMomentum ? buffers[i].segment() : null;
            long e = start;
            if (CpuConfig.VECTOR) {
                // the same lines lane by lane: Vector API arithmetic and fma round as the scalar ones
                FloatVector wdv = FloatVector.broadcast(F, wd);
                FloatVector keepv = FloatVector.broadcast(F, keep);
                FloatVector momv = FloatVector.broadcast(F, mom);
                FloatVector negLrv = FloatVector.broadcast(F, negLr);
                for (long bound = start + (end - start) / F.length() * F.length(); e < bound; e += F.length()) {
                    long o = e * 4;
                    FloatVector pe = FloatVector.fromMemorySegment(F, pv, o, LE);
                    FloatVector ge = FloatVector.fromMemorySegment(F, g, o, LE);
                    if (doDecay) {
                        ge = pe.fma(wdv, ge);
                    }
                    if (doMomentum) {
                        FloatVector be = first ? ge : ge.fma(keepv, FloatVector.fromMemorySegment(F, buf, o, LE).mul(mom));
                        be.intoMemorySegment(buf, o, LE);
                        ge = nesterov ? be.fma(momv, ge) : be;
                    }
                    ge.fma(negLrv, pe).intoMemorySegment(pv, o, LE);
                }
            }
            for (; e < end; e++) {
                float pe = pv.getAtIndex(F32, e);
                float ge = g.getAtIndex(F32, e);
                if (doDecay) {
                    ge = Math.fma(wd, pe, ge);
                }
                if (doMomentum) {
                    float be = first ? ge : Math.fma(keep, ge, buf.getAtIndex(F32, e) * mom);
                    buf.setAtIndex(F32, e, be);
                    ge = nesterov ? Math.fma(mom, be, ge) : be;
                }
                pv.setAtIndex(F32, e, Math.fma(negLr, ge, pe));
            }
            p.refreshLow(start, end);
        });
        steps++;
    }

    @Override
    public NamedState state() {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (int i = 0; i < buffers.length; i++) {
            if (buffers[i] != null) {
                tensors.put("momentum_buffer." + params().get(i).name(), buffers[i]);
            }
        }
        Map<String, String> meta = new HashMap<>();
        meta.put("optimizer", "sgd");
        meta.put("step", Long.toString(steps));
        meta.put("lr", Double.toString(lr));
        meta.put("momentum", Double.toString(config.momentum()));
        meta.put("dampening", Double.toString(config.dampening()));
        meta.put("nesterov", Boolean.toString(config.nesterov()));
        meta.put("weight_decay", Double.toString(config.weightDecay()));
        return new NamedState(tensors, meta);
    }

    @Override
    public void loadState(NamedState state) {
        if (!"sgd".equals(state.string("optimizer"))) {
            throw new TrainStateException("state is of optimizer " + state.string("optimizer") + ", not sgd");
        }
        long step = state.longValue("step");
        double savedLr = state.doubleValue("lr");
        if (step < 0 || !(savedLr >= 0)) {
            throw new TrainStateException("optimizer state has step " + step + " and learning rate " + savedLr);
        }
        // check every tensor first: a bad checkpoint leaves the optimizer as it was
        for (int i = 0; i < buffers.length; i++) {
            if (buffers[i] != null) {
                state.checkTensor("momentum_buffer." + params().get(i).name(), buffers[i]);
            }
        }
        for (int i = 0; i < buffers.length; i++) {
            if (buffers[i] != null) {
                state.copyInto("momentum_buffer." + params().get(i).name(), buffers[i]);
            }
        }
        steps = step;
        setLr(savedLr);
    }
}
