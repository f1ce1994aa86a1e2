package dev.lantern.cli;

import dev.lantern.bench.cpu.OrtBeside;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CPU demo's ONNX Runtime line (issue 15): a stored ratio found and chosen, a missing peer file refused, a peer timed now. */
class DemoPeerTest {
    private static String record(String impl, int threads, double ms) {
        return "    {\"case\": \"cpu-small\", \"impl\": \"" + impl + "\", \"threads\": " + threads + ", \"ms\": " + ms + ", \"min_ms\": 1.0},";
    }

    @Test
    void theNewestStoredFigureAtTheThreadCountWins(@TempDir Path root) throws IOException {
        Path dir = Files.createDirectories(root.resolve("bench/results/cpu"));
        Files.writeString(dir.resolve("2026-01-01-aaaaaaa-bench-cpu-small.json"),
                String.join("\n", record("lantern", 2, 8.0), record("onnxruntime", 2, 4.0)));
        Files.writeString(dir.resolve("2026-02-01-bbbbbbb-bench-cpu-small-t2.json"),
                String.join("\n", record("lantern", 1, 6.0), record("onnxruntime", 1, 9.0), record("lantern", 2, 3.0), record("onnxruntime", 2, 3.3)));
        Files.writeString(dir.resolve("2026-03-01-ccccccc-bench-encoder-small.json"), record("lantern", 2, 1.0));
        // the same day, an older run whose commit hash sorts later: the modification time decides
        Path older = dir.resolve("2026-02-01-fffffff-bench-cpu-small-t2.json");
        Files.writeString(older, String.join("\n", record("lantern", 2, 2.0), record("onnxruntime", 2, 1.0)));
        Files.setLastModifiedTime(older, java.nio.file.attribute.FileTime.fromMillis(Files.getLastModifiedTime(dir.resolve("2026-02-01-bbbbbbb-bench-cpu-small-t2.json")).toMillis() - 60_000));

        OrtBeside.Stored two = OrtBeside.stored(List.of(root), "cpu-small", 2, 0).orElseThrow();
        assertEquals(1.1, two.ratio(), 1e-12);
        assertEquals("2026-02-01-bbbbbbb-bench-cpu-small-t2.json", two.file().getFileName().toString());
        OrtBeside.Stored one = OrtBeside.stored(List.of(root), "cpu-small", 1, 0).orElseThrow();
        assertEquals(1.5, one.ratio(), 1e-12);
        assertEquals(1, OrtBeside.stored(List.of(root), "cpu-small", 7, 0).orElseThrow().threads(), "another thread count when none matches");
        assertTrue(OrtBeside.stored(List.of(root), "encoder-small", 2, 0).isEmpty(), "a Lantern record without ORT's is no figure");
    }

    /**
     * A fresh clone gives every stored file the same modification time: a day's runs are then ordered by the
     * checkout's history, so the newest commit's figure is shown, whichever hash sorts later; and the newest date
     * comes first whatever the history says.
     */
    @Test
    void aDaysRunsAreOrderedByTheCheckoutsHistory(@TempDir Path root) throws IOException {
        Path dir = Files.createDirectories(root.resolve("bench/results/cpu"));
        Path b = dir.resolve("2026-02-01-bbbbbbb-bench-cpu-small-t2.json");
        Path f = dir.resolve("2026-02-01-fffffff-bench-cpu-small-t2.json");
        Path old = dir.resolve("2026-01-01-0000000-bench-cpu-small-t2.json");
        Files.writeString(b, String.join("\n", record("lantern", 2, 2.0), record("onnxruntime", 2, 3.0)));
        Files.writeString(f, String.join("\n", record("lantern", 2, 2.0), record("onnxruntime", 2, 1.0)));
        Files.writeString(old, String.join("\n", record("lantern", 2, 1.0), record("onnxruntime", 2, 9.0)));
        var same = java.nio.file.attribute.FileTime.fromMillis(1_700_000_000_000L);
        for (Path p : List.of(b, f, old)) {
            Files.setLastModifiedTime(p, same);
        }
        List<String> bNewer = List.of("bbbbbbb1234567890", "0000000aaaa", "fffffff9876543210");
        assertEquals(1.5, OrtBeside.stored(List.of(root), "cpu-small", 2, 0, bNewer).orElseThrow().ratio(), 1e-12);
        List<String> fNewer = List.of("fffffff9876543210", "bbbbbbb1234567890");
        assertEquals(0.5, OrtBeside.stored(List.of(root), "cpu-small", 2, 0, fNewer).orElseThrow().ratio(), 1e-12);
        assertEquals("2026-02-01-fffffff-bench-cpu-small-t2.json",
                OrtBeside.stored(List.of(root), "cpu-small", 2, 0, List.of()).orElseThrow().file().getFileName().toString(),
                "no history: the later name of the newest date");
    }

    /**
     * A figure from a machine of this one's vector width comes first, at the thread count if it has one, then at
     * any; another machine's only when there is none (the demo once showed an AVX-512 host's 1.71x on an AVX2 one).
     */
    @Test
    void aFigureFromAMachineOfTheSameVectorWidthWins(@TempDir Path root) throws IOException {
        Path dir = Files.createDirectories(root.resolve("bench/results/cpu"));
        String wide = "  \"vector_bits\": 512,\n";
        String narrow = "  \"vector_bits\": 256,\n";
        Files.writeString(dir.resolve("2026-01-01-aaaaaaa-bench-cpu-small-t1.json"),
                narrow + String.join("\n", record("lantern", 1, 10.0), record("onnxruntime", 1, 9.0)));
        Files.writeString(dir.resolve("2026-02-01-bbbbbbb-bench-cpu-small-t2.json"),
                wide + String.join("\n", record("lantern", 2, 2.0), record("onnxruntime", 2, 3.4)));
        OrtBeside.Stored avx2 = OrtBeside.stored(List.of(root), "cpu-small", 2, 256).orElseThrow();
        assertEquals(256, avx2.vectorBits());
        assertEquals(1, avx2.threads(), "this width at another thread count before another width at this one");
        assertEquals(0.9, avx2.ratio(), 1e-12);
        OrtBeside.Stored avx512 = OrtBeside.stored(List.of(root), "cpu-small", 2, 512).orElseThrow();
        assertEquals(512, avx512.vectorBits());
        assertEquals(1.7, avx512.ratio(), 1e-12);
        OrtBeside.Stored other = OrtBeside.stored(List.of(root), "cpu-small", 2, 128).orElseThrow();
        assertEquals(2, other.threads(), "no figure of this width: another machine's at the thread count");
    }

    @Test
    void aPyTorchRecordBesideThemIsNeitherSide(@TempDir Path root) throws IOException {
        // bench cpu --torch writes lantern, onnxruntime, then pytorch-cpu (43ce97c's files): the demo once printed
        // PyTorch's 12.0 ms as Lantern's and 0.30x
        Path dir = Files.createDirectories(root.resolve("bench/results/cpu"));
        Files.writeString(dir.resolve("2026-12-02-43ce97c-bench-cpu-small-t2.json"),
                String.join("\n", record("lantern", 2, 2.4186), record("onnxruntime", 2, 3.5563), record("pytorch-cpu", 2, 12.0115)));
        OrtBeside.Stored s = OrtBeside.stored(List.of(root), "cpu-small", 2, 0).orElseThrow();
        assertEquals(2.4186, s.lanternMs(), 1e-12);
        assertEquals(3.5563 / 2.4186, s.ratio(), 1e-12);
    }

    @Test
    void aMissingPeerFileIsABadCommandLine() {
        MainTest.Run r = MainTest.run("demo", "--device", "cpu", "--runs", "1", "--onnx", "/no/such/block.onnx");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--onnx /no/such/block.onnx is not a file"), r.err());
    }

    /**
     * The peer path end to end: ORT times the file on the block's own input beside Lantern. The file is the
     * block exported by scripts/bench/export_block.py when {@code lantern.test.cpuSmallOnnx} names one;
     * else a Tanh over the block's input written here, so the path runs on every machine (no PyTorch needed).
     */
    @Test
    void aPeerFileIsTimedBesideLantern(@TempDir Path dir) throws IOException {
        String exported = System.getProperty("lantern.test.cpuSmallOnnx");
        Path file = exported != null ? Path.of(exported) : dir.resolve("tanh-block.onnx");
        if (exported == null) {
            Files.write(file, OnnxFiles.blockShapedTanh().toByteArray());
        }
        MainTest.Run r = MainTest.run("demo", "--device", "cpu", "--runs", "3", "--json", "--onnx", file.toString());
        assertEquals(0, r.code(), r.err());
        Matcher m = Pattern.compile("\"ort_ms\": ([0-9.]+)").matcher(r.out());
        assertTrue(m.find(), r.out());
        assertTrue(Double.parseDouble(m.group(1)) > 0, r.out());
        assertTrue(r.out().contains("\"lantern_speed_vs_ort\": "), r.out());
    }
}
