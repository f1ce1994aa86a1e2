package dev.lantern.cli;

import dev.lantern.reference.Accuracy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.tensor.Npy;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code lantern run MODEL_DIR} on the Hugging Face fixtures (lantern-core's test resources, made
 * by scripts/fixtures/make_hf_fixtures.py): the stored ids in, PyTorch's stored output out, through
 * the command line, written as .npy.
 */
class HfRunCommandTest {
    static final Path FIXTURES = Path.of("../lantern-core/src/test/resources/hf");

    @TempDir
    Path out;

    @ParameterizedTest
    @ValueSource(strings = {"gpt2", "llama"})
    void aModelFolderRunsAndMatchesPyTorch(String family) {
        Path dir = FIXTURES.resolve(family);
        MainTest.Run r = MainTest.run("run", dir.toString(), "--device", "cpu", "--input", "input_ids=" + dir.resolve("input_ids.npy"),
                "--runs", "1", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("top5"), r.out());
        double[] got = Npy.read(out.resolve("logits.npy")).toDoubles();
        double[] want = Npy.read(dir.resolve("expected.npy")).toDoubles();
        assertEquals(want.length, got.length);
        double e = Accuracy.relErr(got, want);
        assertTrue(e < 1e-5, family + ": rel err " + e);
    }

    @Test
    void badCommandLinesAreOneLineWithExitTwo() {
        Path dir = FIXTURES.resolve("gpt2");
        MainTest.Run r = MainTest.run("run", dir.toString(), "--tokens", "1,2", "--batch", "2");
        assertEquals(2, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        MainTest.Run w = MainTest.run("run", dir.toString(), "--weights", "x.safetensors");
        assertEquals(2, w.code(), w.err());
        MainTest.Run s = MainTest.run("run", dir.toString(), "--seq", "1000");
        assertEquals(1, s.code(), s.err()); // past n_positions: a typed error naming the field
        assertTrue(s.err().contains("n_positions"), s.err());
    }
}
