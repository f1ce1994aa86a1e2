package dev.lantern.train.run;

import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamW;
import dev.lantern.train.NamedState;
import dev.lantern.train.Optimizer;
import dev.lantern.train.Parameter;
import dev.lantern.train.Sgd;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Moves the training state between a {@link DeviceStep} and the host's copies of it, for what
 * reads the host's ({@link Trainer#checkpoint}, {@link Trainer#weightsHash}, {@link Trainer#parameters})
 * and what writes it ({@link Trainer#restore}): the f32 masters into the parameters' tensors, the
 * optimizer's state (AdamW's moments, SGD's momentum buffers) into the optimizer's own tensors, in
 * place, and the step count. A checkpoint of a resident run is then the host optimizer's, name for name.
 */
final class DeviceStepState {
    private DeviceStepState() {}

    /**
     * The state tensors' name prefixes of {@code optimizer}, in the device's slot order
     * ({@link DeviceStep.Spec#slots} is their number).
     */
    static List<String> slots(Optimizer optimizer) {
        return switch (optimizer) {
            case AdamW a -> List.of("exp_avg.", "exp_avg_sq.");
            case Sgd s -> s.config().momentum() != 0 ? List.of("momentum_buffer.") : List.of();
        };
    }

    /** The device's masters and state into {@code params} and {@code optimizer}, whose step count becomes {@code steps}. */
    static void read(DeviceStep step, List<Parameter> params, Optimizer optimizer, long steps) {
        NamedState st = optimizer.state();
        step.read(masters(params), state(params, optimizer, st)); // the optimizer's own state tensors, filled in place
        Map<String, String> meta = new HashMap<>(st.metadata());
        meta.put("step", Long.toString(steps));
        optimizer.loadState(new NamedState(st.tensors(), meta));
        for (Parameter p : params) {
            p.refreshLow(0, p.numel());
        }
    }

    /** The host's masters and optimizer state onto the device. */
    static void write(DeviceStep step, List<Parameter> params, Optimizer optimizer) {
        step.write(masters(params), state(params, optimizer, optimizer.state()));
    }

    private static List<Tensor> masters(List<Parameter> params) {
        List<Tensor> masters = new ArrayList<>();
        for (Parameter p : params) {
            masters.add(p.value());
        }
        return masters;
    }

    /** Per slot, that state's tensor of every parameter, in parameter order. */
    private static List<List<Tensor>> state(List<Parameter> params, Optimizer optimizer, NamedState st) {
        List<List<Tensor>> slots = new ArrayList<>();
        for (String prefix : slots(optimizer)) {
            List<Tensor> t = new ArrayList<>();
            for (Parameter p : params) {
                t.add(st.tensors().get(prefix + p.name()));
            }
            slots.add(t);
        }
        return slots;
    }
}
