package dev.lantern.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.weights.JsonValue;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code lantern bench train}: the training step timed on the CPU here (the GPU run is the gpu
 * machine's: {@code bench train --device cuda --config decoder}), one JSON object with the step
 * time, tokens/s and the step count; bad command lines are one line and exit 2.
 */
class TrainBenchCommandTest {
    @Test
    void timesTrainingStepsOnTheCpu() {
        MainTest.Run r = MainTest.run("bench", "train", "--shape", "2,16,32,2,64", "--device", "cpu", "--steps", "3", "--warmups", "1", "--json");
        assertEquals(0, r.code(), r.err());
        Map<String, JsonValue> j = TrainCommandTest.json(r.out());
        assertEquals("cpu", TrainCommandTest.text(j.get("device")));
        assertEquals("3", ((JsonValue.JsonNumber) j.get("steps")).literal());
        assertEquals("32", ((JsonValue.JsonNumber) j.get("tokens_per_step")).literal()); // batch 2 x seq 16
        double ms = Double.parseDouble(((JsonValue.JsonNumber) j.get("step_ms")).literal());
        double tps = Double.parseDouble(((JsonValue.JsonNumber) j.get("tokens_per_s")).literal());
        assertTrue(ms > 0 && Math.abs(tps - 32 / (ms / 1e3)) < 1e-6 * tps, ms + " ms, " + tps + " tokens/s");
        assertTrue(j.get("peak_device_bytes") instanceof JsonValue.JsonNull, "no device memory on the CPU: " + j.get("peak_device_bytes"));
        assertTrue(j.get("tuned") instanceof JsonValue.JsonBoolean b && !b.value(), "nothing is tuned on the CPU: " + j.get("tuned"));
    }

    static final String GPT2 = "../lantern-onnx/src/test/resources/models/gpt2/model.onnx";

    @Test
    void timesAnOnnxLanguageModel() {
        MainTest.Run r = MainTest.run("bench", "train", "--model", GPT2, "--batch", "2", "--seq", "16", "--device", "cpu", "--steps", "2",
                "--warmups", "0", "--json");
        assertEquals(0, r.code(), r.err());
        Map<String, JsonValue> j = TrainCommandTest.json(r.out());
        assertEquals("model.onnx", TrainCommandTest.text(j.get("config")));
        assertEquals("32", ((JsonValue.JsonNumber) j.get("tokens_per_step")).literal()); // batch 2 x seq 16
        assertTrue(Long.parseLong(((JsonValue.JsonNumber) j.get("parameters")).literal()) > 0);
        double first = Double.parseDouble(((JsonValue.JsonNumber) j.get("first_loss")).literal());
        assertEquals(Math.log(256), first, 0.5, "the fixture's vocabulary of 256: the loss starts near ln 256");
    }

    @Test
    void badCommandLines() {
        for (String[] bad : new String[][] {{"bench", "train"}, {"bench", "train", "--config", "cpu-small", "--device", "tpu"},
                {"bench", "train", "--config", "cpu-small", "--steps", "0"}, {"bench", "train", "--config", "cpu-small", "extra"},
                {"bench", "train", "--config", "cpu-small", "--model", GPT2}, {"bench", "train", "--config", "cpu-small", "--batch", "4"},
                {"bench", "train", "--model", "nope.onnx"}, {"bench", "train", "--config", "cpu-small", "--mode", "fast"}}) {
            MainTest.Run r = MainTest.run(bad);
            assertEquals(2, r.code(), String.join(" ", bad) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
        }
    }
}
