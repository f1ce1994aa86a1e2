package dev.lantern.cli;

import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code lantern train}: the JSON a run prints, a run resumed from its checkpoint folder ending with
 * the uninterrupted run's weights, and bad command lines as one line with exit 2 (exit 1 for CUDA,
 * which has no backward kernels yet).
 */
class TrainCommandTest {
    static final String[] SHAPE = {"--shape", "2,32,32,4,64", "--vocab", "32"};

    @TempDir
    Path dir;

    static Map<String, JsonValue> json(String out) {
        String last = out.strip().lines().reduce((a, b) -> b).orElse("");
        return ((JsonValue.JsonObject) JsonParser.parse(last.getBytes(StandardCharsets.UTF_8), 16)).members();
    }

    static MainTest.Run train(String... extra) {
        String[] args = new String[1 + SHAPE.length + extra.length];
        args[0] = "train";
        System.arraycopy(SHAPE, 0, args, 1, SHAPE.length);
        System.arraycopy(extra, 0, args, 1 + SHAPE.length, extra.length);
        return MainTest.run(args);
    }

    static String text(JsonValue v) {
        return v instanceof JsonValue.JsonString s ? s.value() : ((JsonValue.JsonNumber) v).literal();
    }

    @Test
    void jsonAndABitExactResume() throws Exception {
        MainTest.Run whole = train("--steps", "12", "--json");
        assertEquals(0, whole.code(), whole.err());
        Map<String, JsonValue> w = json(whole.out());
        for (String key : new String[] {"first_loss", "last_loss", "tokens_per_s", "step_ms", "overflows", "skipped_steps",
                "loss_scale", "weights_hash"}) {
            assertTrue(w.containsKey(key), key + " in " + whole.out());
        }
        assertEquals("12", text(w.get("steps")));
        assertTrue(text(w.get("weights_hash")).matches("[0-9a-f]{64}"));

        Path ck = dir.resolve("ck");
        MainTest.Run first = train("--steps", "8", "--checkpoint-dir", ck.toString(), "--checkpoint-every", "4", "--json");
        assertEquals(0, first.code(), first.err());
        assertTrue(Files.exists(ck.resolve("commit-000000000008.json")), "the step-8 checkpoint is committed");
        MainTest.Run resumed = train("--steps", "12", "--checkpoint-dir", ck.toString(), "--checkpoint-every", "4", "--resume", "--json");
        assertEquals(0, resumed.code(), resumed.err());
        Map<String, JsonValue> r = json(resumed.out());
        assertEquals("8", text(r.get("resumed_from")));
        assertEquals(text(w.get("weights_hash")), text(r.get("weights_hash")), "the resumed run ends as the uninterrupted one");
    }

    /** --tune tunes a GPU step; the CPU step has nothing to tune, so its weights end bit for bit as without it. */
    @Test
    void tuneChangesNothingOnTheCpu() throws Exception {
        MainTest.Run tuned = train("--steps", "3", "--tune", "--json");
        MainTest.Run plain = train("--steps", "3", "--json");
        assertEquals(0, tuned.code(), tuned.err());
        assertEquals(text(json(plain.out()).get("weights_hash")), text(json(tuned.out()).get("weights_hash")));
    }

    /** SGD with momentum trains from the command line (the loss falls), and a resumed SGD run ends bit-exactly. */
    @Test
    void sgdWithMomentumTrainsAndResumesBitExactly(@TempDir Path dir) throws Exception {
        MainTest.Run r = train("--steps", "30", "--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.05", "--json");
        assertEquals(0, r.code(), r.err());
        Map<String, JsonValue> j = json(r.out());
        assertEquals("sgd", text(j.get("optimizer")));
        double first = Double.parseDouble(text(j.get("first_loss")));
        double last = Double.parseDouble(text(j.get("last10_mean_loss")));
        assertTrue(last < 0.9 * first, "SGD trains: " + first + " -> " + last);
        Path ck = dir.resolve("sgd");
        MainTest.Run whole = train("--steps", "8", "--optimizer", "sgd", "--lr", "0.05", "--json");
        MainTest.Run half = train("--steps", "4", "--optimizer", "sgd", "--lr", "0.05", "--checkpoint-dir", ck.toString(),
                "--checkpoint-every", "4", "--json");
        assertEquals(0, half.code(), half.err());
        MainTest.Run resumed = train("--steps", "8", "--optimizer", "sgd", "--lr", "0.05", "--checkpoint-dir", ck.toString(),
                "--checkpoint-every", "4", "--resume", "--json");
        assertEquals(0, resumed.code(), resumed.err());
        assertEquals(text(json(whole.out()).get("weights_hash")), text(json(resumed.out()).get("weights_hash")),
                "the momentum buffers are in the checkpoint");
        assertEquals(2, train("--steps", "2", "--optimizer", "adam").code(), "an unknown optimizer");
        assertEquals(2, train("--steps", "2", "--momentum", "0.5").code(), "momentum without SGD");
    }

    @Test
    void accumulateCountsItsMicroBatches() throws Exception {
        MainTest.Run r = train("--steps", "2", "--accumulate", "3", "--json");
        assertEquals(0, r.code(), r.err());
        Map<String, JsonValue> j = json(r.out());
        assertEquals("3", text(j.get("accumulate")));
        MainTest.Run one = train("--steps", "2", "--json");
        long perBatch = Long.parseLong(text(json(one.out()).get("tokens_per_step")));
        assertEquals(3 * perBatch, Long.parseLong(text(j.get("tokens_per_step"))), "3 micro-batches a step");
    }

    /** An exported language model (the two-layer GPT-2 fixture of lantern-onnx): its initializers train, the loss falls. */
    @Test
    void anOnnxModelTrains() throws Exception {
        Path gpt2 = Path.of("../lantern-onnx/src/test/resources/models/gpt2/model.onnx");
        MainTest.Run r = MainTest.run("train", "--model", gpt2.toString(), "--steps", "30", "--batch", "4", "--seq", "32", "--lr", "3e-3", "--json");
        assertEquals(0, r.code(), r.err());
        Map<String, JsonValue> j = json(r.out());
        double first = Double.parseDouble(text(j.get("first_loss")));
        double last = Double.parseDouble(text(j.get("last10_mean_loss")));
        assertEquals(Math.log(256), first, 0.5, "starts near ln(vocab 256)");
        assertTrue(last < first - 0.3, "the loss falls: " + first + " -> " + last);

        Path twoInputs = Files.write(dir.resolve("lm.onnx"), OnnxFiles.languageModel(3).toByteArray());
        MainTest.Run refused = MainTest.run("train", "--model", twoInputs.toString(), "--steps", "2");
        assertEquals(1, refused.code(), refused.err());
        assertTrue(refused.err().contains("attention_mask"), refused.err());
    }

    @Test
    void badCommandLines() {
        for (String[] bad : new String[][] {{"train"}, {"train", "--config", "nope"}, {"train", "--config", "cpu-small", "--steps", "0"},
                {"train", "--config", "cpu-small", "--lr", "fast"}, {"train", "--config", "cpu-small", "--resume"},
                {"train", "--config", "cpu-small", "--amp", "f8"}, {"train", "--config", "cpu-small", "extra"},
                {"train", "--config", "cpu-small", "--device", "tpu"}, {"train", "--config", "cpu-small", "--accumulate", "0"}}) {
            MainTest.Run r = MainTest.run(bad);
            assertEquals(2, r.code(), String.join(" ", bad) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
        }
        if (!dev.lantern.Lantern.devices().contains(dev.lantern.Device.cuda(0))) {
            // the CUDA step (TrainerGpuTest on the gpu tier) needs a GPU: without one, a typed error that says so
            MainTest.Run cuda = MainTest.run("train", "--config", "cpu-small", "--steps", "1", "--device", "cuda");
            assertEquals(2, cuda.code(), cuda.err());
            assertTrue(cuda.err().contains("cuda"), cuda.err());
        }
    }
}
