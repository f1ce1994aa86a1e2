package dev.lantern.cuda.train;

import dev.lantern.Device;
import dev.lantern.RunMode;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.TuneCache;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.DType;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.TensorType;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.SgdConfig;
import dev.lantern.train.run.DeviceStep;
import dev.lantern.train.run.StepUpdate;

import java.lang.foreign.ValueLayout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The training step kept on one GPU ({@link DeviceStep}): the step graph (parameters as inputs)
 * compiled for cuda and loaded as a {@link CudaSession}, whose input buffers hold the f32 masters
 * for the whole run; the gradients are the step's outputs where the memory plan put them; the
 * optimizer's state is flat f32 buffers of the {@link MultiTensorOptimizer}. Per step: the batch uploaded, forward and backward (a CUDA
 * graph replay in {@link RunMode#GRAPH}), one {@code lt_mt_sumsq} launch, and the loss and the
 * per-chunk sums read back; then, as the host decides, one {@code lt_mt_adamw} or {@code lt_mt_sgd}
 * launch (the optimizer keeps {@link DeviceStep.Spec#slots} state buffers: AdamW's moments, SGD's
 * momentum buffers). Nothing
 * else crosses the bus. A whole {@link #step} keeps the host out of the step: the batch goes up
 * behind the last step's optimizer ({@link BatchUploader}), the decision (norm, clip, skip) is taken
 * on the device ({@link MultiTensorOptimizer#decide}) and the optimizer is launched before the host
 * waits for the loss and the sums, so the GPU runs the optimizer while the host reads them and
 * enqueues the next step; the host checks that the device decided as {@link StepUpdate#decide} does. With {@link DeviceStep.Spec#autotune()} the first run, once the batch is on
 * the device, tunes the step's GEMMs and kernels ({@link CudaSession#autotune()}, the tune cache of
 * {@link TuneCache#defaultFile()}) before it runs.
 */
public final class CudaTrainStep implements DeviceStep {
    private final Device device;
    private final CudaDevice gpu;
    private final CudaSession session;
    private final CudaStream stream;
    private final RunMode mode;
    private final List<String> masterValues = new ArrayList<>(); // the trained inputs' node names
    private final List<String> gradValues = new ArrayList<>();   // the gradients' values in the compiled graph
    private final String lossValue;
    private final MultiTensorOptimizer optimizer;
    private final BatchUploader uploader;
    private final CudaStorage lossHost;  // page-locked: the loss's f32, copied there by each step
    private final CudaEvent measured;    // after a step's loss, sums and decision have reached the host
    private final StepSpans spans;       // each whole step's device time, for stepDeviceMillis
    private boolean tunePending;

    /** Compiles {@code spec} for its cuda device and uploads its initial values. */
    public CudaTrainStep(DeviceStep.Spec spec) {
        this.device = spec.device();
        this.mode = spec.mode();
        CompiledModel model = Compiler.compile(spec.graph(), spec.options().withTarget("cuda").withFuse(mode.fused()));
        Map<String, Node> inputs = new HashMap<>();
        for (Node n : model.graph().inputs()) {
            inputs.put(n.attrs().getString("name", n.name()), n);
        }
        // the compiled graph may rename a returned value but keeps the outputs' positions
        List<String> before = spec.graph().outputs();
        List<String> after = model.graph().outputs();
        long[] sizes = new long[spec.trained().size()];
        for (int i = 0; i < sizes.length; i++) {
            Node in = inputs.get(spec.trained().get(i));
            int at = before.indexOf(spec.gradients().get(i));
            if (in == null || at < 0) {
                throw new LanternException("the training step has no input '" + spec.trained().get(i) + "' or no output %"
                        + spec.gradients().get(i) + " for its gradient");
            }
            TensorType pt = model.graph().type(in.name());
            TensorType gt = model.graph().type(after.get(at));
            if (pt.dtype() != DType.F32 || gt.dtype() != DType.F32 || pt.shape().numel() != gt.shape().numel()) {
                throw new LanternException("parameter '" + spec.trained().get(i) + "' is " + pt + " and its gradient " + gt
                        + ": the device optimizer steps f32 masters on f32 gradients of the same size");
            }
            masterValues.add(in.name());
            gradValues.add(after.get(at));
            sizes[i] = pt.shape().numel();
        }
        int lossAt = before.indexOf(spec.loss());
        if (lossAt < 0) {
            throw new LanternException("the training step has no output %" + spec.loss() + " for its loss");
        }
        this.lossValue = after.get(lossAt);
        TensorType lossType = model.graph().type(lossValue);
        if (lossType.dtype() != DType.F32 || lossType.shape().numel() != 1) {
            throw new LanternException("the training step's loss %" + spec.loss() + " is " + lossType + ", not one f32");
        }
        Map<String, TensorType> inputTypes = new HashMap<>();
        inputs.forEach((name, n) -> inputTypes.put(name, model.graph().type(n.name())));
        this.gpu = CudaDevice.open(device.index());
        CudaSession s = null;
        MultiTensorOptimizer opt = null;
        BatchUploader up = null;
        CudaStorage host = null;
        CudaEvent event = null;
        StepSpans timed = null;
        try {
            CudaSession.Options o = switch (mode) {
                case EAGER -> CudaSession.Options.eager();
                case COMPILED -> CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF);
                case GRAPH -> CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER);
            };
            this.tunePending = spec.autotune() && mode != RunMode.EAGER;
            if (tunePending) {
                o = o.withAutotune(new TuneCache(TuneCache.defaultFile()));
            }
            s = CudaSession.open(gpu, model, Map.of(), o);
            this.session = s;
            this.stream = s.stream();
            session.setSomeInputs(spec.initial());
            opt = new MultiTensorOptimizer(gpu, stream, sizes, spec.slots());
            CudaSession opened = s;
            up = new BatchUploader(gpu, stream, inputTypes, name -> opened.addressOf(inputs.get(name).name()));
            host = gpu.allocatePinned(64);
            event = gpu.newEvent(false);
            timed = new StepSpans(gpu, stream);
            stream.synchronize();
        } catch (RuntimeException e) {
            // whatever was made before the failure, in reverse order, then the device
            for (AutoCloseable c : new AutoCloseable[] {timed, event, host, up, opt, s}) {
                closeQuietly(c, e);
            }
            gpu.close();
            throw e;
        }
        this.optimizer = opt;
        this.uploader = up;
        this.lossHost = host;
        this.measured = event;
        this.spans = timed;
    }

    private static void closeQuietly(AutoCloseable c, RuntimeException failure) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception suppressed) {
            failure.addSuppressed(suppressed);
        }
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public CompiledModel compiled() {
        return session.model();
    }

    @Override
    public Measured run(Map<String, Tensor> inputs, float invScale) {
        session.setSomeInputs(inputs);
        forwardBackward();
        optimizer.measure(invScale);
        Tensor loss = session.output(lossValue); // synchronises the stream: the measure's copies are done
        MultiTensorOptimizer.Measure r = optimizer.finish();
        return new Measured(loss.get(0), r.sumSquares(), r.nonFinite());
    }

    @Override
    public Measured step(Map<String, Tensor> inputs, float invScale, StepUpdate update) {
        try (Span launch = Tracing.span("enqueue the step", "host")) {
            spans.begin();
            uploader.upload(inputs);
            forwardBackward();
            optimizer.measure(invScale);
            optimizer.decide(update.maxNorm(), update.skipNonFinite());
            stream.copy(CudaStorage.view(gpu, session.addressOf(lossValue), 4, () -> { }), 0, lossHost, 0, 4);
            stream.record(measured);
            switch (update.rule()) {
                case StepUpdate.AdamWRule a -> optimizer.adamw(a.config(), a.lr(), a.t(), invScale);
                case StepUpdate.SgdRule g -> optimizer.sgd(g.config(), g.lr(), g.stepsTaken(), invScale);
            }
            spans.end();
        }
        try (Span wait = Tracing.span("wait for the loss and sums", "host")) {
            measured.synchronize(); // the optimizer runs on while the host reads
        }
        try (Span read = Tracing.span("read the loss and sums", "host")) {
            spans.collect();
            MultiTensorOptimizer.Measure r = optimizer.finish();
            Measured m = new Measured(lossHost.hostSegment().get(ValueLayout.JAVA_FLOAT, 0), r.sumSquares(), r.nonFinite());
            StepUpdate.Decision want = update.decide(m);
            MultiTensorOptimizer.Decision got = optimizer.decision();
            if (got.skip() == want.applied() || got.clip() != want.clip() || Float.compare(got.coef(), want.coef()) != 0) {
                throw new IllegalStateException("the device decided the step as " + got + ", the host as " + want + " from the same sums");
            }
            return m;
        }
    }

    /**
     * The step's graph (forward, loss and backward) on this batch: tuned once, on the first batch (so
     * that the gathers read real ids), then run or replayed; the optimizer's tensor table follows.
     */
    private void forwardBackward() {
        if (tunePending) {
            tunePending = false;
            session.autotune();
        }
        if (mode == RunMode.GRAPH) {
            session.forwardGraph();
        } else {
            session.forward();
        }
        refreshTable();
    }

    /** The tensor table for where the masters and this step's gradients are now (uploaded when it moved). */
    private void refreshTable() {
        long[] masters = new long[masterValues.size()];
        long[] grads = new long[gradValues.size()];
        for (int i = 0; i < masters.length; i++) {
            masters[i] = session.addressOf(masterValues.get(i));
            grads[i] = session.addressOf(gradValues.get(i));
        }
        optimizer.bind(masters, grads);
    }

    @Override
    public void adamw(AdamWConfig config, double lr, long t, float invScale, boolean clip, float coef) {
        optimizer.adamw(config, lr, t, invScale, clip, coef);
    }

    @Override
    public void sgd(SgdConfig config, double lr, long stepsTaken, float invScale, boolean clip, float coef) {
        optimizer.sgd(config, lr, stepsTaken, invScale, clip, coef);
    }

    @Override
    public void read(List<Tensor> masters, List<List<Tensor>> state) {
        checkSizes(masters, state);
        for (int i = 0; i < masterValues.size(); i++) {
            long bytes = masters.get(i).numel() * 4;
            optimizer.download(session.addressOf(masterValues.get(i)), masters.get(i).segment(), bytes);
            for (int k = 0; k < state.size(); k++) {
                optimizer.download(optimizer.state(k, i), state.get(k).get(i).segment(), bytes);
            }
        }
    }

    @Override
    public void write(List<Tensor> masters, List<List<Tensor>> state) {
        checkSizes(masters, state);
        for (int i = 0; i < masterValues.size(); i++) {
            long bytes = masters.get(i).numel() * 4;
            optimizer.upload(session.addressOf(masterValues.get(i)), masters.get(i).segment().asSlice(0, bytes));
            for (int k = 0; k < state.size(); k++) {
                optimizer.upload(optimizer.state(k, i), state.get(k).get(i).segment().asSlice(0, bytes));
            }
        }
    }

    private void checkSizes(List<Tensor> masters, List<List<Tensor>> state) {
        int n = masterValues.size();
        if (state.size() != optimizer.slots()) {
            throw new IllegalArgumentException("expected " + optimizer.slots() + " kinds of optimizer state, got " + state.size());
        }
        List<List<Tensor>> kinds = new ArrayList<>(List.of(masters));
        kinds.addAll(state);
        for (List<Tensor> kind : kinds) {
            if (kind.size() != n) {
                throw new IllegalArgumentException("expected " + n + " tensors of each kind, got " + kind.size());
            }
            for (int i = 0; i < n; i++) {
                Tensor t = kind.get(i);
                if (t.dtype() != DType.F32 || t.numel() != optimizer.table().size(i)) {
                    throw new IllegalArgumentException("tensor " + i + " is " + t.dtype() + t.shape() + ", not f32 of " + optimizer.table().size(i)
                            + " elements");
                }
            }
        }
    }

    @Override
    public double[] stepDeviceMillis() {
        return spans.drain();
    }

    @Override
    public long peakBytes() {
        return session.peakBytes() + optimizer.deviceBytes();
    }

    @Override
    public void close() {
        try {
            stream.synchronize();
        } finally {
            try {
                session.close();
            } finally {
                optimizer.close();
                uploader.close();
                measured.close();
                spans.close();
                lossHost.close();
                gpu.close();
            }
        }
    }

    /** The {@link DeviceStep.Provider} of lantern-cuda. */
    public static final class Provider implements DeviceStep.Provider {
        @Override
        public String kind() {
            return "cuda";
        }

        @Override
        public DeviceStep open(DeviceStep.Spec spec) {
            return new CudaTrainStep(spec);
        }
    }
}
