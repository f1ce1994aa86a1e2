package dev.lantern.train.run;

import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamW;
import dev.lantern.train.NamedState;
import dev.lantern.train.Parameter;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Moves the training state between a {@link DeviceStep} and the host's copies of it, for what
 * reads the host's ({@link Trainer#checkpoint}, {@link Trainer#weightsHash}, {@link Trainer#parameters})
 * and what writes it ({@link Trainer#restore}): the f32 masters into the parameters' tensors, the
 * moments into the optimizer's own tensors, in place, and AdamW's step count.
 */
final class DeviceStepState {
    private DeviceStepState() {}

    /** The device's masters and moments into {@code params} and {@code optimizer}, whose step count becomes {@code steps}. */
    static void read(DeviceStep step, List<Parameter> params, AdamW optimizer, long steps) {
        NamedState st = optimizer.state();
        List<List<Tensor>> t = tensors(params, st);
        step.read(t.get(0), t.get(1), t.get(2)); // the optimizer's own moment tensors, filled in place
        Map<String, String> meta = new HashMap<>(st.metadata());
        meta.put("step", Long.toString(steps));
        optimizer.loadState(new NamedState(st.tensors(), meta));
        for (Parameter p : params) {
            p.refreshLow(0, p.numel());
        }
    }

    /** The host's masters and moments onto the device. */
    static void write(DeviceStep step, List<Parameter> params, AdamW optimizer) {
        List<List<Tensor>> t = tensors(params, optimizer.state());
        step.write(t.get(0), t.get(1), t.get(2));
    }

    /** Masters, first moments, second moments, in parameter order. */
    private static List<List<Tensor>> tensors(List<Parameter> params, NamedState st) {
        List<Tensor> masters = new ArrayList<>();
        List<Tensor> m = new ArrayList<>();
        List<Tensor> v = new ArrayList<>();
        for (Parameter p : params) {
            masters.add(p.value());
            m.add(st.tensors().get("exp_avg." + p.name()));
            v.add(st.tensors().get("exp_avg_sq." + p.name()));
        }
        return List.of(masters, m, v);
    }
}
