package dev.lantern.train.state;

import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.NamedState;
import dev.lantern.train.Optimizer;
import dev.lantern.train.TrainStateException;
import dev.lantern.train.amp.DynamicLossScaler;
import dev.lantern.train.amp.ScalerState;
import dev.lantern.train.data.SplitMix64;
import dev.lantern.train.data.TokenTask;
import dev.lantern.train.data.TokenTaskState;
import dev.lantern.weights.SafetensorsDType;
import dev.lantern.weights.SafetensorsFile;
import dev.lantern.weights.SafetensorsWriter;
import dev.lantern.weights.TensorView;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Everything besides the weights that a resumed run needs to continue bit-exactly where a saved
 * one stopped: the training step, the optimizer's state, the loss scaler's state (absent without
 * AMP), the training loop's generator state and the data stream's position and generator state.
 * {@link #toNamedState()} lays it out for a checkpoint (tensors {@code optim.KIND.PARAM},
 * metadata {@code train.step}, {@code optim.*}, {@code scaler.*}, {@code rng.state},
 * {@code data.*}); {@link #fromNamedState} reads it back.
 *
 * @param step training steps completed (scaler-skipped ones included)
 * @param optimizer the optimizer's {@link Optimizer#state()}
 * @param scaler the loss scaler's state, or {@code null} without one
 * @param rngState the training loop's {@link SplitMix64} state (dropout, sampling)
 * @param data the data stream's position and generator state
 */
public record TrainingState(long step, NamedState optimizer, ScalerState scaler, long rngState, TokenTaskState data) {
    /** Format version in the metadata, for a reader to refuse what it does not know. */
    public static final String VERSION = "1";

    /** Takes the state of a run; the optimizer's tensors are views of its live buffers. */
    public static TrainingState capture(long step, Optimizer optimizer, DynamicLossScaler scaler, SplitMix64 rng, TokenTask task) {
        return new TrainingState(step, optimizer.state(), scaler == null ? null : scaler.state(), rng.state(), task.state());
    }

    /**
     * Puts the optimizer's and the scaler's state back (copying the tensors into the live
     * buffers); the generator and the data stream are rebuilt from {@link #rngState()} and
     * {@link #data()} by the caller ({@code new SplitMix64(s.rngState())},
     * {@code TokenTask.resume(config, s.data())}).
     */
    public void restore(Optimizer into, DynamicLossScaler scalerInto) {
        if ((scaler == null) != (scalerInto == null)) {
            throw new TrainStateException(scaler == null ? "the checkpoint has no loss scaler state, the run has a scaler"
                    : "the checkpoint has loss scaler state, the run has no scaler");
        }
        into.loadState(optimizer);
        if (scalerInto != null) {
            scalerInto.loadState(scaler);
        }
    }

    /** The state as named tensors and metadata. */
    public NamedState toNamedState() {
        Map<String, String> m = new HashMap<>();
        m.put("train.version", VERSION);
        m.put("train.step", Long.toString(step));
        m.put("rng.state", Long.toString(rngState));
        m.put("data.position", Long.toString(data.position()));
        m.put("data.rng_state", Long.toString(data.rngState()));
        NamedState s = new NamedState(Map.of(), m).with(optimizer.prefixed("optim."));
        return scaler == null ? s : s.with(scaler.toNamedState().prefixed("scaler."));
    }

    /** Reads what {@link #toNamedState()} wrote. */
    public static TrainingState fromNamedState(NamedState s) {
        if (!VERSION.equals(s.string("train.version"))) {
            throw new TrainStateException("training state version " + s.string("train.version") + " is not " + VERSION);
        }
        boolean hasScaler = s.metadata().keySet().stream().anyMatch(k -> k.startsWith("scaler."));
        long step = s.longValue("train.step");
        long position = s.longValue("data.position");
        if (step < 0 || position < 0) {
            throw new TrainStateException("training state has step " + step + " and data position " + position);
        }
        return new TrainingState(step, s.under("optim."),
                hasScaler ? ScalerState.fromNamedState(s.under("scaler.")) : null, s.longValue("rng.state"),
                new TokenTaskState(position, s.longValue("data.rng_state")));
    }

    /** Adds the state's tensors and metadata to a checkpoint being written. */
    public void addTo(SafetensorsWriter writer) {
        NamedState s = toNamedState();
        s.metadata().forEach(writer::metadata);
        s.tensors().forEach((name, t) -> {
            int[] dims = t.shape().dims();
            long[] shape = new long[dims.length];
            for (int i = 0; i < dims.length; i++) {
                shape[i] = dims[i];
            }
            writer.add(name, SafetensorsDType.of(t.dtype()), shape, t.segment().asSlice(0, t.numel() * t.dtype().bytes()));
        });
    }

    /**
     * Reads the state from a checkpoint: the metadata keys it wrote and the tensors named
     * {@code optim.*}, copied out of the file (so the state outlives it). Other tensors and keys
     * (the weights, another helper's metadata) are left alone.
     */
    public static TrainingState readFrom(SafetensorsFile file) {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (String name : file.names()) {
            if (!name.startsWith("optim.")) {
                continue;
            }
            TensorView v = file.tensor(name);
            if (v.dtype().irType() == null) {
                throw new TrainStateException("state tensor " + name + " is " + v.dtype() + ", which Lantern has no type for");
            }
            long[] dims = v.shape();
            int[] d = new int[dims.length];
            for (int i = 0; i < dims.length; i++) {
                d[i] = Math.toIntExact(dims[i]);
            }
            Tensor t = Tensor.allocate(v.dtype().irType(), Shape.of(d));
            t.segment().asSlice(0, v.data().byteSize()).copyFrom(v.data());
            tensors.put(name, t);
        }
        return fromNamedState(new NamedState(tensors, file.metadata()));
    }
}
