package dev.lantern.train.state;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamW;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.NamedState;
import dev.lantern.train.Parameter;
import dev.lantern.train.TrainStateException;
import dev.lantern.train.amp.DynamicLossScaler;
import dev.lantern.train.amp.LossScalerConfig;
import dev.lantern.train.amp.ScaleEvent;
import dev.lantern.train.amp.UnscaleReport;
import dev.lantern.train.data.SplitMix64;
import dev.lantern.train.data.TokenTask;
import dev.lantern.train.data.TokenTaskConfig;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A checkpoint's metadata is outside input: fuzzes the training state's reader with a valid
 * state whose values (and keys) are replaced by fuzzed strings. Reading and restoring either
 * works, and then writes back what it read, or fails with a {@link TrainStateException}; nothing
 * else escapes. In CI this runs the regression seeds under src/test/resources; {@code JAZZER_FUZZ=1}
 * fuzzes.
 */
class TrainingStateFuzzTest {
    static NamedState valid() {
        List<Parameter> ps = List.of(Parameter.of("w", Tensor.allocate(DType.F32, Shape.of(3))));
        AdamW opt = new AdamW(ps, AdamWConfig.defaults(1e-3), 1);
        DynamicLossScaler scaler = new DynamicLossScaler(LossScalerConfig.defaults());
        scaler.update(new UnscaleReport(List.of("w"), 1f));
        scaler.update(new UnscaleReport(List.of(), 1f));
        TokenTask task = TokenTask.start(TokenTaskConfig.of(16, 1, 4, 1));
        task.next();
        return TrainingState.capture(2, opt, scaler, new SplitMix64(5), task).toNamedState();
    }

    @FuzzTest(maxDuration = "30s")
    void fuzzMetadata(FuzzedDataProvider data) {
        NamedState base = valid();
        Map<String, String> meta = new TreeMap<>(base.metadata());
        List<String> keys = List.copyOf(meta.keySet());
        int edits = data.consumeInt(0, 4);
        for (int i = 0; i < edits && data.remainingBytes() > 0; i++) {
            String key = data.pickValue(keys);
            if (data.consumeBoolean()) {
                meta.remove(key);
            } else {
                meta.put(key, data.consumeString(40));
            }
        }
        NamedState fuzzed = new NamedState(base.tensors(), meta);
        TrainingState s;
        try {
            s = TrainingState.fromNamedState(fuzzed);
            AdamW opt = new AdamW(List.of(Parameter.of("w", Tensor.allocate(DType.F32, Shape.of(3)))), AdamWConfig.defaults(1e-3), 1);
            s.restore(opt, s.scaler() == null ? null : new DynamicLossScaler(LossScalerConfig.defaults()));
        } catch (TrainStateException expected) {
            return;
        }
        // what was read writes back to a state that reads the same
        TrainingState again = TrainingState.fromNamedState(s.toNamedState());
        assertEquals(s.step(), again.step());
        assertEquals(s.scaler(), again.scaler());
        assertEquals(s.data(), again.data());
        assertEquals(s.rngState(), again.rngState());
        assertEquals(s.optimizer().metadata(), again.optimizer().metadata());
        if (s.scaler() != null) {
            for (ScaleEvent e : s.scaler().history()) {
                assertEquals(e, ScaleEvent.parse(e.toString()));
            }
        }
    }
}
