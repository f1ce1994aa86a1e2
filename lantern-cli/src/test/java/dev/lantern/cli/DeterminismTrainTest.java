package dev.lantern.cli;

import dev.lantern.weights.JsonValue;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code lantern determinism --train N}: training runs in separate JVMs, with 1 and 2 CPU threads in
 * turn, end with bit-identical losses and weights in strict mode, under f16 AMP with its loss scaler
 * too; a model is refused with --train.
 */
class DeterminismTrainTest {
    @Test
    void strictTrainingRunsAreBitIdenticalAcrossThreadCounts() {
        for (String amp : new String[] {"none", "f16"}) {
            MainTest.Run r = MainTest.run("determinism", "--runs", "3", "--shape", "2,32,32,4,64", "--train", "4", "--amp", amp,
                    "--deterministic", "--threads", "1,2", "--json");
            assertEquals(0, r.code(), r.err());
            Map<String, JsonValue> j = DeterminismCommandTest.json(r.out());
            assertEquals(new JsonValue.JsonBoolean(true), j.get("bit_identical"), amp + ": " + r.out());
            List<JsonValue> weights = ((JsonValue.JsonArray) j.get("weights_hashes")).elements();
            assertEquals(3, weights.size());
            assertEquals(1, weights.stream().distinct().count(), "weights hashes: " + weights);
            assertTrue(((JsonValue.JsonString) weights.getFirst()).value().matches("[0-9a-f]{64}"));
            assertEquals(1, ((JsonValue.JsonArray) j.get("loss_hashes")).elements().stream().distinct().count());
            assertEquals("4", ((JsonValue.JsonNumber) j.get("train_steps")).literal());
        }
    }

    @Test
    void trainTakesABlock() {
        MainTest.Run r = MainTest.run("determinism", "--runs", "2", "--model", "x.ir", "--train", "3");
        assertEquals(2, r.code(), r.err());
        MainTest.Run zero = MainTest.run("determinism", "--runs", "2", "--config", "cpu-small", "--train", "0");
        assertEquals(2, zero.code(), zero.err());
    }
}
