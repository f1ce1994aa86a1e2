package dev.lantern.train.run;

import dev.lantern.Device;
import dev.lantern.RunMode;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.Graph;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.SgdConfig;

import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * The training step kept on a device: the f32 master weights, the gradients and the optimizer's
 * state (AdamW's moments, SGD's momentum buffers) live there from the first step to the last, so a step moves only the batch in and a few numbers
 * out (the loss, and per chunk of gradient a sum of squares and a non-finite flag, from which the
 * host takes the global norm and the loss scaler's decision). {@link Trainer} drives it; a backend
 * module provides it ({@link Provider}, found with {@link ServiceLoader}: lantern-cuda's for
 * {@code cuda}). Where none is found the trainer runs the step through a session and the optimizer
 * on the host ({@link SessionStepExecutor}).
 */
public interface DeviceStep extends AutoCloseable {
    /**
     * What {@link #open} compiles and loads.
     *
     * @param graph     the step (forward and backward) with every parameter an input of its name
     * @param options   compile options (AMP, strictness); the provider sets its target
     * @param device    where it runs
     * @param mode      {@link RunMode#EAGER} (one kernel per op: the baseline), COMPILED or GRAPH
     * @param trained   the trained parameters' input names, in the trainer's order
     * @param gradients each trained parameter's gradient output value, in the same order
     * @param loss      the scaled loss's output value
     * @param initial   every parameter's first value by input name (trained: f32 masters; fixed ones as they are)
     * @param autotune  tune the compiled step's GEMMs and kernels on the device before its first run
     *                  ({@link TrainOptions#autotune()}); ignored by an eager step
     * @param slots     f32 state tensors per parameter the optimizer keeps on the device: 2 for AdamW
     *                  (its moments), 1 for SGD with momentum (the buffer), 0 for plain SGD
     */
    record Spec(Graph graph, CompileOptions options, Device device, RunMode mode, List<String> trained, List<String> gradients,
                String loss, Map<String, Tensor> initial, boolean autotune, int slots) {
        /** Copies the lists and the map. */
        public Spec {
            trained = List.copyOf(trained);
            gradients = List.copyOf(gradients);
            initial = Map.copyOf(initial);
            if (trained.size() != gradients.size()) {
                throw new IllegalArgumentException(trained.size() + " trained parameters but " + gradients.size() + " gradients");
            }
            if (slots < 0 || slots > 2) {
                throw new IllegalArgumentException("an optimizer keeps 0 to 2 state tensors per parameter, not " + slots);
            }
        }

        /** A step for AdamW (two moments per parameter). */
        public Spec(Graph graph, CompileOptions options, Device device, RunMode mode, List<String> trained, List<String> gradients,
                    String loss, Map<String, Tensor> initial, boolean autotune) {
            this(graph, options, device, mode, trained, gradients, loss, initial, autotune, 2);
        }
    }

    /**
     * What one forward and backward left on the device, measured there.
     *
     * @param scaledLoss  the loss as the step computed it (times the loss scale)
     * @param sumSquares  the sum of squares of every gradient times {@code invScale} (inf or NaN when one is)
     * @param nonFinite   indexes (in {@link Spec#trained} order) of the parameters whose unscaled gradient holds an inf or NaN
     */
    record Measured(double scaledLoss, double sumSquares, List<Integer> nonFinite) {
        /** Copies the list. */
        public Measured {
            nonFinite = List.copyOf(nonFinite);
        }
    }

    /** A backend module's device steps, for one device kind. */
    interface Provider {
        /** The device kind it serves ({@code "cuda"}). */
        String kind();

        /** Compiles and loads {@code spec} and uploads its initial values. */
        DeviceStep open(Spec spec);
    }

    /** The device the step runs on. */
    Device device();

    /** The step as compiled for that device. */
    CompiledModel compiled();

    /** Uploads the batch ({@code inputs} by input name), runs forward and backward, and measures the gradients. */
    Measured run(Map<String, Tensor> inputs, float invScale);

    /**
     * AdamW's step {@code t} at learning rate {@code lr} on every trained parameter, from the
     * gradients of the last {@link #run}, each multiplied by {@code invScale} and then (when
     * {@code clip}) by {@code coef}: the CPU's {@code AdamW.step} after its scaler and
     * {@code GradClip}, per element.
     */
    void adamw(AdamWConfig config, double lr, long t, float invScale, boolean clip, float coef);

    /**
     * SGD's step after {@code stepsTaken} applied ones (0: the momentum buffers become the
     * gradients) at learning rate {@code lr} on every trained parameter, from the gradients of the
     * last {@link #run}, each multiplied by {@code invScale} and then (when {@code clip}) by
     * {@code coef}: the CPU's {@code Sgd.step} after its scaler and {@code GradClip}, per element.
     */
    void sgd(SgdConfig config, double lr, long stepsTaken, float invScale, boolean clip, float coef);

    /**
     * One whole step: {@link #run}, then {@code update} as {@link StepUpdate#decide} decides it
     * from what the run measured ({@link #adamw}, {@link #sgd}, or nothing when it is skipped). A
     * device that decides on its own overrides this to keep the host out of the step; the result
     * must be the same.
     */
    default Measured step(Map<String, Tensor> inputs, float invScale, StepUpdate update) {
        Measured m = run(inputs, invScale);
        StepUpdate.Decision d = update.decide(m);
        if (d.applied()) {
            switch (update.rule()) {
                case StepUpdate.AdamWRule a -> adamw(a.config(), a.lr(), a.t(), invScale, d.clip(), d.coef());
                case StepUpdate.SgdRule g -> sgd(g.config(), g.lr(), g.stepsTaken(), invScale, d.clip(), d.coef());
            }
        }
        return m;
    }

    /**
     * Downloads the masters and the optimizer's state into the given f32 tensors, in
     * {@link Spec#trained} order: {@code state} holds {@link Spec#slots} lists (AdamW: first
     * moments, second moments; SGD with momentum: the buffers).
     */
    void read(List<Tensor> masters, List<List<Tensor>> state);

    /** Uploads masters and the optimizer's state (a restored checkpoint's), laid out as {@link #read} takes them. */
    void write(List<Tensor> masters, List<List<Tensor>> state);

    /** The most device bytes the step's memory held at once (its allocator's figure), or -1 when unknown. */
    long peakBytes();

    /**
     * The device time of each {@link #step} since the last call (a device may keep only the newest few
     * thousand), in milliseconds, in order: from the
     * step's first work on its stream (the batch's upload) to the end of its optimizer, timed by
     * events on that stream, as {@code torch.cuda.Event} times a PyTorch step. Waits for the last
     * step's work. Time the host spends between steps is not in it; a step's wall time is. Empty
     * where the device does not time its steps.
     */
    default double[] stepDeviceMillis() {
        return new double[0];
    }

    @Override
    void close();

    /** {@code spec} opened by the provider of its device's kind, or {@code null} when no module provides one. */
    static DeviceStep open(Spec spec) {
        for (Provider p : ServiceLoader.load(Provider.class, DeviceStep.class.getClassLoader())) {
            if (p.kind().equals(spec.device().kind())) {
                return p.open(spec);
            }
        }
        return null;
    }
}
