package dev.lantern.train.run;

import dev.lantern.autodiff.BackwardGraph;
import dev.lantern.autodiff.Gradients;
import dev.lantern.checkpoint.Checkpoint;
import dev.lantern.checkpoint.StoredTensor;
import dev.lantern.Device;
import dev.lantern.RunMode;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;
import dev.lantern.train.AdamW;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.Optimizer;
import dev.lantern.train.Sgd;
import dev.lantern.train.SgdConfig;
import dev.lantern.train.GradClip;
import dev.lantern.train.NamedState;
import dev.lantern.train.Parameter;
import dev.lantern.train.TrainStateException;
import dev.lantern.train.amp.DynamicLossScaler;
import dev.lantern.train.amp.LossScalerConfig;
import dev.lantern.train.amp.UnscaleReport;
import dev.lantern.train.data.SplitMix64;
import dev.lantern.train.data.TokenBatch;
import dev.lantern.train.data.TokenTask;
import dev.lantern.train.data.TokenTaskConfig;
import dev.lantern.train.state.TrainingState;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Trains a {@link LanguageModel} on the generated next-token task: the model and its gradient
 * ({@link Gradients}) as one graph compiled by the standard pipeline and run by a
 * {@link StepExecutor} on the CPU, AdamW (or SGD with momentum) over f32 master weights on the host (the model reads
 * bf16/f16 copies under AMP), gradients clipped by global norm, and under AMP the dynamic loss
 * scaler. On a device whose module provides a {@link DeviceStep} (CUDA), the weights, gradients and
 * the optimizer's state stay on the device and the optimizer runs there; the host keeps the scaler's and the clipping's
 * decisions, from the gradients' sum of squares, so the logic is the same. A step is forward + backward (one compiled run) + optimizer;
 * everything a resumed run needs is in {@link #checkpoint()}, so that a run restored from it
 * continues bit-exactly.
 */
public final class Trainer implements AutoCloseable {
    private static final String WEIGHTS = "weights.";
    private static final String STATE = "state.";
    /** System property: {@code true} keeps the optimizer on the host on every device. */
    public static final String HOST_OPTIMIZER = "lantern.train.hostOptimizer";

    private final LanguageModel model;
    private final TrainOptions options;
    private final BackwardGraph backward;
    private final StepExecutor exec;          // the CPU, or a device without a DeviceStep; null when resident
    private final DeviceStep resident;        // the step kept on a device, or null
    private boolean hostStale;                // the device stepped since the host's copies were last read
    private final List<Parameter> params = new ArrayList<>();
    private final Map<String, String> gradientOutput = new HashMap<>(); // parameter name -> output value
    private final Map<String, Tensor> fixed = new HashMap<>();          // parameters not trained, by name
    private final Optimizer optimizer;        // AdamW or SGD (TrainOptions.optimizer); a resident step's state is read back into it
    private final DynamicLossScaler scaler;
    private final TokenTaskConfig taskConfig;
    private TokenTask task;
    private SplitMix64 rng;
    private long step;
    private long residentSteps;               // optimizer steps the resident step took

    /** A trainer whose step runs on the CPU: {@link #Trainer(LanguageModel, TrainOptions, Device)} with {@link Device#cpu()}. */
    public Trainer(LanguageModel model, TrainOptions options) {
        this(model, options, Device.cpu());
    }

    /** A trainer on {@code device}: {@link RunMode#GRAPH} there (compiled on the CPU, which has no graphs). */
    public Trainer(LanguageModel model, TrainOptions options, Device device) {
        this(model, options, device, RunMode.GRAPH);
    }

    /**
     * Differentiates {@code model}'s step and compiles it for {@code device} in {@code mode}
     * ({@link RunMode#EAGER}: one kernel per op, the baseline of {@code lantern bench train}; the
     * CPU runs its compiled executor in every mode), makes the parameters from its initial weights,
     * the optimizer, the scaler (under AMP) and the task's stream from {@code options}.
     */
    public Trainer(LanguageModel model, TrainOptions options, Device device, RunMode mode) {
        this.model = model;
        this.options = options;
        // every floating parameter is trained; an integer table (an imported model's position ids) is bound as it is
        try (Span s = Tracing.span("differentiate", "compile")) {
            this.backward = StepGradients.of(model, mode);
        }
        CompileOptions co = CompileOptions.defaults().withAmp(options.amp()).withDeterministic(options.deterministic());
        DType low = options.amp().dtype();
        Map<String, String> names = model.paramNames();
        for (Map.Entry<String, String> e : names.entrySet()) {
            Tensor init = model.initial().get(e.getValue());
            if (init == null) {
                throw new TrainStateException("no initial value for parameter " + e.getValue());
            }
            if (!backward.gradients().containsKey(e.getKey())) {
                fixed.put(e.getValue(), init); // an integer table or a weight the loss does not reach: bound as it is
                continue;
            }
            Tensor master = init.dtype() == DType.F32 ? copy(init) : init.cast(DType.F32);
            params.add(low == null ? Parameter.of(e.getValue(), master) : Parameter.mixed(e.getValue(), master, low));
            gradientOutput.put(e.getValue(), backward.gradientOf(e.getKey()));
        }
        this.optimizer = options.optimizer() == TrainOptions.Kind.SGD
                ? new Sgd(params, new SgdConfig(options.lr(), options.momentum(), 0, false, options.weightDecay()), options.threads())
                : new AdamW(params, new AdamWConfig(options.lr(), 0.9, 0.999, 1e-8, options.weightDecay()), options.threads());
        this.resident = device.kind().equals("cpu") ? null : openResident(co, device, mode);
        this.exec = resident != null ? null : StepExecutor.open(backward.graph(), co, device);
        this.scaler = low == null ? null : new DynamicLossScaler(LossScalerConfig.forType(low));
        this.taskConfig = TokenTaskConfig.of(options.vocab(), batchOf(model), seqOf(model), options.seed());
        this.task = TokenTask.start(taskConfig);
        this.rng = new SplitMix64(options.seed() ^ 0x5DEECE66DL);
    }

    /**
     * The step kept on {@code device}, or null where no module provides one or the system property
     * {@value #HOST_OPTIMIZER} is true (the step through a session, the optimizer on the host: the reference
     * the device optimizer is tested against), or the options accumulate micro-batches. AdamW and
     * SGD both run there.
     */
    private DeviceStep openResident(CompileOptions co, Device device, RunMode mode) {
        if (Boolean.getBoolean(HOST_OPTIMIZER) || options.accumulate() > 1) {
            return null; // accumulation runs the session route until the device step sums micro-batches itself
        }
        Map<String, Tensor> initial = new HashMap<>(fixed);
        List<String> trained = new ArrayList<>();
        List<String> grads = new ArrayList<>();
        for (Parameter p : params) {
            initial.put(p.name(), p.value());
            trained.add(p.name());
            grads.add(gradientOutput.get(p.name()));
        }
        return DeviceStep.open(new DeviceStep.Spec(SessionStepExecutor.paramsAsInputs(backward.graph()), co, device, mode, trained,
                grads, backward.loss(), initial, options.autotune(), DeviceStepState.slots(optimizer).size()));
    }

    private static int batchOf(LanguageModel m) {
        return m.graph().type(m.graph().inputs().stream().filter(n -> n.attrs().getString("name", "").equals(m.ids()))
                .findFirst().orElseThrow().name()).shape().dim(0);
    }

    private static int seqOf(LanguageModel m) {
        return m.graph().type(m.graph().inputs().stream().filter(n -> n.attrs().getString("name", "").equals(m.ids()))
                .findFirst().orElseThrow().name()).shape().dim(1);
    }

    private static Tensor copy(Tensor t) {
        Tensor c = Tensor.allocate(t.dtype(), t.shape());
        MemorySegment.copy(t.segment(), 0, c.segment(), 0, t.numel() * t.dtype().bytes());
        return c;
    }

    /** The compiled step (forward, backward) the trainer runs. */
    public CompiledModel compiled() {
        return resident != null ? resident.compiled() : exec.compiled();
    }

    /** The device the compiled step runs on. */
    public Device device() {
        return resident != null ? resident.device() : exec.device();
    }

    /** Whether the weights, gradients and optimizer state stay on the device (a {@link DeviceStep}). */
    public boolean resident() {
        return resident != null;
    }

    /** The resident step's device time (ms) of each step since the last call ({@link DeviceStep#stepDeviceMillis}); else empty. */
    public double[] stepDeviceMillis() {
        return resident != null ? resident.stepDeviceMillis() : new double[0];
    }

    /** The most device bytes the resident step held at once, or -1 (on the CPU, or not resident). */
    public long devicePeakBytes() {
        return resident != null ? resident.peakBytes() : -1;
    }

    /** Steps completed (skipped ones count). */
    public long steps() {
        return step;
    }

    /** Tokens per step (batch × seq × micro-batches). */
    public long tokensPerStep() {
        return task.tokensPerBatch() * options.accumulate();
    }

    /** The loss scaler, or {@code null} without AMP. */
    public DynamicLossScaler scaler() {
        return scaler;
    }

    /** The parameters (f32 masters, gradients, low copies under AMP) in graph order; a resident step's read back first. */
    public List<Parameter> parameters() {
        pull();
        return List.copyOf(params);
    }

    /** One step on the next batch. A {@code LossScaleException} ends a run whose scale keeps overflowing. */
    public StepResult step() {
        try (Span span = Tracing.span("train step", "step")) {
            return tracedStep();
        }
    }

    private StepResult tracedStep() {
        long t0 = System.nanoTime();
        TokenBatch b;
        try (Span next = Tracing.span("next batch", "host")) {
            b = task.next();
        }
        float s = scaler == null ? 1f : scaler.scale();
        int k = options.accumulate();
        // each micro-batch's loss times s / k: the summed gradients, unscaled by 1 / s, are their mean
        float micro = k == 1 ? s : s / k;
        Tensor scale = Tensor.allocate(DType.F32, Shape.of());
        scale.set(0, micro);
        if (resident != null) {
            return residentStep(t0, b, s, scale);
        }
        Map<String, Tensor> bind = new HashMap<>(fixed);
        for (Parameter p : params) {
            DType want = exec.boundType(p.name());
            bind.put(p.name(), p.low() != null && p.low().dtype() == want ? p.low() : p.value());
        }
        double loss = 0;
        for (int m = 0; m < k; m++) {
            TokenBatch mb = m == 0 ? b : task.next();
            Map<String, Tensor> out;
            try (Span run = Tracing.span("forward+backward", "step")) {
                out = exec.run(bind, Map.of(model.ids(), mb.tokens(), model.targets(), mb.targets(), model.scale(), scale));
            }
            loss += out.get(backward.loss()).get(0) / micro;
            try (Span grads = Tracing.span("gradients to masters", "host")) {
                List<Tensor> g = params.stream().map(p -> out.get(gradientOutput.get(p.name()))).toList();
                HostGradients.collect(optimizer.plan(), g, m > 0);
            }
        }
        loss /= k;
        boolean applied;
        double norm;
        try (Span opt = Tracing.span("optimizer", "step")) {
            if (scaler == null) {
                norm = options.clipNorm() > 0 ? GradClip.clipGradNorm(optimizer.plan(), options.clipNorm()) : Double.NaN;
                optimizer.step();
                applied = true;
            } else {
                DynamicLossScaler.ScaledStep r = scaler.step(optimizer, options.clipNorm() > 0 ? options.clipNorm() : Double.POSITIVE_INFINITY);
                applied = r.applied();
                norm = r.gradNorm();
            }
        }
        step++;
        return new StepResult(step, loss, applied, norm, s, System.nanoTime() - t0);
    }

    /**
     * The step on the device: forward and backward, the gradients' sum of squares and non-finite
     * flags, and the optimizer (AdamW or SGD) as {@link StepUpdate#decide} decides it (skip on a
     * non-finite gradient under the scaler, clip when the norm is above the limit), decided on the
     * device where it can; the host reads the same figures back and keeps its own count.
     */
    private StepResult residentStep(long t0, TokenBatch b, float s, Tensor scale) {
        float inv = (float) (1.0 / (double) s);
        StepUpdate.Rule rule = switch (optimizer) {
            case AdamW a -> new StepUpdate.AdamWRule(a.config(), a.lr(), residentSteps + 1);
            case Sgd g -> new StepUpdate.SgdRule(g.config(), g.lr(), residentSteps);
        };
        StepUpdate update = new StepUpdate(rule, options.clipNorm() > 0 ? (float) options.clipNorm() : 0f, scaler != null);
        DeviceStep.Measured m;
        try (Span run = Tracing.span("forward+backward and optimizer", "step")) {
            m = resident.step(Map.of(model.ids(), b.tokens(), model.targets(), b.targets(), model.scale(), scale), inv, update);
        }
        double loss = m.scaledLoss() / s;
        StepUpdate.Decision d = update.decide(m);
        if (d.applied()) {
            residentSteps++;
            hostStale = true;
        }
        if (scaler != null) {
            List<String> bad = m.nonFinite().stream().map(i -> params.get(i).name()).toList();
            scaler.update(new UnscaleReport(bad, inv));
        }
        step++;
        return new StepResult(step, loss, d.applied(), d.norm(), s, System.nanoTime() - t0);
    }

    /** A resident step's masters and optimizer state read back into the host's parameters and optimizer. */
    private void pull() {
        if (resident != null && hostStale) {
            DeviceStepState.read(resident, params, optimizer, residentSteps);
            hostStale = false;
        }
    }

    /** The host's masters and optimizer state (a restored checkpoint's) written to the resident step. */
    private void push() {
        if (resident != null) {
            DeviceStepState.write(resident, params, optimizer);
            residentSteps = optimizer.steps();
            hostStale = false;
        }
    }

    /** SHA-256 of the weights: each parameter's name and its f32 master bytes, in graph order. */
    public String weightsHash() {
        pull();
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            for (Parameter p : params) {
                d.update(p.name().getBytes(StandardCharsets.UTF_8));
                d.update(p.value().segment().asSlice(0, p.numel() * 4).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            }
            return HexFormat.of().formatHex(d.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /**
     * Everything a resumed run needs: the f32 master weights and the {@link TrainingState}, copied,
     * so that the checkpoint stays the one of this step while training goes on.
     */
    public Checkpoint checkpoint() {
        pull();
        Map<String, StoredTensor> tensors = new LinkedHashMap<>();
        for (Parameter p : params) {
            tensors.put(WEIGHTS + p.name(), StoredTensor.of(copy(p.value())));
        }
        NamedState st = TrainingState.capture(step, optimizer, scaler, rng, task).toNamedState();
        st.tensors().forEach((k, v) -> tensors.put(STATE + k, StoredTensor.of(copy(v))));
        Map<String, String> meta = new LinkedHashMap<>();
        st.metadata().forEach((k, v) -> meta.put(STATE + k, v));
        meta.put("model.graph_hash", dev.lantern.ir.GraphHash.of(model.graph()));
        return new Checkpoint(step, tensors, meta);
    }

    /** Continues from {@code c} (a {@link #checkpoint()} of a run of the same model and options). */
    public void restore(Checkpoint c) {
        String want = dev.lantern.ir.GraphHash.of(model.graph());
        if (!want.equals(c.metadata().get("model.graph_hash"))) {
            throw new TrainStateException("the checkpoint of step " + c.step() + " is of another model (graph hash "
                    + c.metadata().get("model.graph_hash") + ", this run's " + want + ")");
        }
        for (Parameter p : params) {
            StoredTensor t = c.tensors().get(WEIGHTS + p.name());
            if (t == null || t.data().byteSize() != p.numel() * 4) {
                throw new TrainStateException("the checkpoint of step " + c.step() + " has no f32 weights of " + p.name()
                        + " in its shape " + p.value().shape());
            }
        }
        Map<String, Tensor> st = new LinkedHashMap<>();
        c.tensors().forEach((k, v) -> {
            if (k.startsWith(STATE)) {
                st.put(k.substring(STATE.length()), v.toTensor());
            }
        });
        Map<String, String> meta = new LinkedHashMap<>();
        c.metadata().forEach((k, v) -> {
            if (k.startsWith(STATE)) {
                meta.put(k.substring(STATE.length()), v);
            }
        });
        TrainingState s = TrainingState.fromNamedState(new NamedState(st, meta));
        s.restore(optimizer, scaler); // checks every tensor before it writes
        for (Parameter p : params) {
            MemorySegment.copy(c.tensors().get(WEIGHTS + p.name()).data(), 0, p.value().segment(), 0, p.numel() * 4);
            p.refreshLow(0, p.numel());
        }
        push();
        task = TokenTask.resume(taskConfig, s.data());
        rng = new SplitMix64(s.rngState());
        step = s.step();
    }

    @Override
    public void close() {
        if (resident != null) {
            resident.close();
        } else {
            exec.close();
        }
    }
}
