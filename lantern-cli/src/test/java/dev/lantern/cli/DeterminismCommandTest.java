package dev.lantern.cli;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code lantern determinism}: five strict-mode runs of a benchmark block in separate JVMs with 1
 * and 2 CPU threads in turn are bit-identical (issue 17's CPU figure); outside strict mode the
 * tolerance gate applies; bad command lines are one line and exit 2; a difference is located.
 */
class DeterminismCommandTest {
    @TempDir
    Path dir;

    static Map<String, JsonValue> json(String out) {
        return ((JsonValue.JsonObject) JsonParser.parse(out.strip().getBytes(StandardCharsets.UTF_8), 16)).members();
    }

    @Test
    void fiveStrictRunsOfABlockAreBitIdenticalWithOneAndTwoThreads() {
        long t0 = System.nanoTime();
        MainTest.Run r = MainTest.run("determinism", "--runs", "5", "--config", "cpu-small", "--deterministic", "--threads", "1,2", "--json");
        System.out.printf("determinism --runs 5 --config cpu-small --deterministic --threads 1,2: %.1f s%n", (System.nanoTime() - t0) / 1e9);
        assertEquals(0, r.code(), r.err());
        Map<String, JsonValue> j = json(r.out());
        assertEquals("5", ((JsonValue.JsonNumber) j.get("runs")).literal());
        assertEquals(new JsonValue.JsonBoolean(true), j.get("bit_identical"));
        assertEquals(new JsonValue.JsonBoolean(true), j.get("pass"));
        assertTrue(j.get("first_difference") instanceof JsonValue.JsonNull);
        assertTrue(((JsonValue.JsonString) j.get("graph_hash")).value().matches("[0-9a-f]{64}"));
        List<JsonValue> hashes = ((JsonValue.JsonArray) j.get("output_hashes")).elements();
        assertEquals(5, hashes.size());
        assertEquals(1, hashes.stream().distinct().count(), "output hashes: " + hashes);
        assertEquals("[1, 2, 1, 2, 1]", ((JsonValue.JsonArray) j.get("threads")).elements().stream()
                .map(v -> ((JsonValue.JsonNumber) v).literal()).toList().toString());
        assertTrue(((JsonValue.JsonArray) j.get("kernel_keys")).elements().size() >= 5);
    }

    @Test
    void outsideStrictModeTheToleranceGateAppliesToAnIrModel() {
        MainTest.Run r = MainTest.run("determinism", "--runs", "2", "--model", Examples.file(dir, "mlp-softmax.ir").toString(),
                "--amp", "bf16", "--json");
        assertEquals(0, r.code(), r.err());
        Map<String, JsonValue> j = json(r.out());
        assertEquals("0.001", ((JsonValue.JsonNumber) j.get("tolerance")).literal());
        assertEquals(new JsonValue.JsonBoolean(false), j.get("deterministic"));
        assertEquals(new JsonValue.JsonBoolean(true), j.get("pass"));
    }

    @Test
    void badCommandLinesAreOneLineAndExitTwo() {
        for (String[] args : List.of(
                new String[] {"determinism", "--config", "cpu-small", "--train", "0"},
                new String[] {"determinism", "--config", "cpu-small", "--train", "2", "--device", "cuda:x"},
                new String[] {"determinism", "--runs", "1", "--config", "cpu-small"},
                new String[] {"determinism", "--device", "tpu"},
                new String[] {"determinism", "--config", "cpu-small", "--shape", "1,8,32,2,64"},
                new String[] {"determinism", "--threads", "0"},
                new String[] {"determinism", "--config", "no-such-block"})) {
            MainTest.Run r = MainTest.run(args);
            assertEquals(2, r.code(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
        if (dev.lantern.cuda.driver.CudaDevice.count() < 1) { // training runs on CUDA too; without a GPU, a usage error saying so
            assertTrue(MainTest.run("determinism", "--config", "cpu-small", "--train", "2", "--device", "cuda").err().contains("CUDA"));
        }
    }

    @Test
    void theFirstDifferenceIsLocatedInTheOutputsShape() {
        Tensor a = Philox.normal(Tensor.allocate(DType.F32, Shape.of(2, 3, 4)), 5, 1f);
        Tensor b = Tensor.allocate(DType.F32, a.shape());
        java.lang.foreign.MemorySegment.copy(a.segment(), 0, b.segment(), 0, a.segment().byteSize());
        b.set(17, Math.nextUp(a.get(17))); // one ulp at (1, 1, 1)
        Map<String, Object> rec = Map.of("graph_hash", "g", "cache_key", "c", "kernel_keys", List.of("k0", "k1"),
                "autotune", Map.of("gemm.x", "1"), "outputs", List.of(Map.of("name", "y")));
        assertNull(RunDifference.of(1, rec, rec, List.of(a), List.of(a)));
        RunDifference d = RunDifference.of(1, rec, rec, List.of(a), List.of(b));
        assertEquals("output", d.field());
        assertEquals(17, d.index());
        assertEquals(List.of(1, 1, 1), d.position());
        assertTrue(DeterminismCommand.relDiff(a, b) > 0 && DeterminismCommand.relDiff(a, b) < 1e-6);
        // a different autotune choice is reported before the outputs it explains
        Map<String, Object> tuned = new java.util.HashMap<>(rec);
        tuned.put("autotune", Map.of("gemm.x", "3"));
        RunDifference t = RunDifference.of(2, rec, tuned, List.of(a), List.of(b));
        assertEquals("autotune", t.field());
        assertEquals("gemm.x", t.where());
        assertEquals("1", t.expected());
        assertEquals("3", t.found());
    }
}
