package dev.lantern.cli;

import dev.lantern.cpu.CpuConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code lantern bench cpu} (issue 15): one-line argument errors, the records, the step table and the results file. */
class CpuBenchCommandTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            unknown option   | bench cpu --frob                                      | lantern bench cpu: unknown option --frob
            extra argument   | bench cpu extra                                       | lantern bench cpu: unexpected argument 'extra'
            bad config       | bench cpu --config bogus                              | lantern bench cpu: unknown config 'bogus'
            bad shape        | bench cpu --shape 2,128,256                           | lantern bench cpu: bad block shape
            config and shape | bench cpu --config cpu-small --shape 2,128,256,4,1024 | lantern bench cpu: --config and --shape both
            model and config | bench cpu --config cpu-small --model m.onnx           | lantern bench cpu: --model and --config both
            missing model    | bench cpu --model /no/such/model.onnx                 | lantern bench cpu: --model takes an .onnx file
            batch on a block | bench cpu --config cpu-small --batch 2                | lantern bench cpu: --batch applies to --model only
            missing peer     | bench cpu --onnx /no/such/block.onnx                  | lantern bench cpu: --onnx /no/such/block.onnx is not a file
            zero rounds      | bench cpu --rounds 0                                  | lantern bench cpu: --rounds
            bad threads      | bench cpu --threads two                               | lantern bench cpu: --threads
            """)
    void badArgumentsAreOneLineWithExit2(String what, String argLine, String message) {
        MainTest.Run r = MainTest.run(argLine.split(" "));
        assertEquals(2, r.code(), () -> what + ": " + r.err());
        assertTrue(r.err().contains(message), () -> what + ": " + r.err());
        assertEquals(1, r.err().strip().lines().count(), () -> what + ": more than one line: " + r.err());
    }

    @Test
    void threadsThisProcessCannotRunAreRefused() {
        String before = System.getProperty("lantern.cpu.threads");
        int other = CpuConfig.THREADS + 1; // the backend has read its count: another one cannot take effect
        try {
            MainTest.Run r = MainTest.run("bench", "cpu", "--threads", String.valueOf(other));
            assertEquals(2, r.code(), r.err());
            assertTrue(r.err().contains("already runs " + CpuConfig.THREADS + " threads"), r.err());
        } finally {
            if (before == null) {
                System.clearProperty("lantern.cpu.threads");
            } else {
                System.setProperty("lantern.cpu.threads", before);
            }
        }
    }

    @Test
    void blockStepTableAccountsForTheForward(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("r.json");
        MainTest.Run r = MainTest.run("bench", "cpu", "--shape", "2,32,64,4,128", "--rounds", "5", "--warmups", "5", "--json",
                "--out", file.toString());
        assertEquals(0, r.code(), r.err());
        List<String> records = r.out().strip().lines().toList();
        assertEquals(1, records.size(), "no peer without --onnx: " + r.out());
        String lantern = records.getFirst();
        assertTrue(lantern.contains("\"impl\": \"lantern\"") && lantern.contains("\"case\": \"2,32,64,4,128,decoder\""), lantern);
        double profiled = number(lantern, "profiled_ms");
        double sum = numbers(lantern, "\"ms\": ").stream().skip(1).mapToDouble(Double::doubleValue).sum(); // the first is the forward's
        assertTrue(number(lantern, "ms") > 0 && profiled > 0, lantern);
        assertTrue(sum <= profiled * 1.001 && sum >= 0.3 * profiled, "steps " + sum + " ms of a " + profiled + " ms forward: " + lantern);
        assertTrue(lantern.contains("\"kind\": \"gemm\"") && lantern.contains("\"kind\": \"attention\""), lantern);
        String saved = Files.readString(file);
        for (String key : new String[] {"date", "commit", "machine", "cores", "vector_bits", "jdk", "threads", "records"}) {
            assertTrue(saved.contains("\"" + key + "\": "), key + " missing from " + saved);
        }
        assertTrue(saved.contains(lantern), "the file holds the record printed");
    }

    @Test
    void modelBesideOnnxRuntimeAgrees(@TempDir Path dir) throws IOException {
        Path model = dir.resolve("lm.onnx");
        Files.write(model, OnnxFiles.languageModel(15).toByteArray());
        Path file = dir.resolve("r.json");
        MainTest.Run r = MainTest.run("bench", "cpu", "--model", model.toString(), "--batch", "2", "--seq", "5", "--rounds", "3",
                "--warmups", "2", "--out", file.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("lm_b2_s5, ") && r.out().contains("ONNX Runtime") && r.out().contains("Lantern at "), r.out());
        assertTrue(r.out().contains("(profiled forward)") && r.out().contains("top: "), r.out());
        assertFalse(r.out().contains("INVALID"), r.out());
        String saved = Files.readString(file);
        assertTrue(saved.contains("\"impl\": \"onnxruntime\"") && saved.contains("\"valid\": true"), saved);
        assertTrue(number(saved, "rel_err") <= 1e-6, "same weights, same ids: " + saved);
    }

    private static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": ([-0-9.eE+]+)").matcher(json);
        assertTrue(m.find(), key + " missing from " + json);
        return Double.parseDouble(m.group(1));
    }

    private static List<Double> numbers(String json, String prefix) {
        Matcher m = Pattern.compile(Pattern.quote(prefix) + "([-0-9.eE+]+)").matcher(json);
        List<Double> all = new java.util.ArrayList<>();
        while (m.find()) {
            all.add(Double.parseDouble(m.group(1)));
        }
        return all;
    }

    /**
     * {@code --torch}: the peer process is driven forward by forward and its own timings land in the
     * records. A stand-in script (bash, no PyTorch needed) speaks torch_peer.py's protocol and answers
     * a fixed 4 ms, so the ratio checks the plumbing; scripts/bench/torch_peer.py itself is the real peer.
     */
    @Test
    void torchPeerTimesLandInTheRecords(@TempDir Path dir) throws IOException {
        Path script = fakePeer(dir, """
                echo "ready fake-$1-t$2"
                while read -r cmd; do case "$cmd" in run) echo "4.000000 3.500000";; quit) exit 0;; *) exit 9;; esac; done
                """);
        MainTest.Run r = withPeer(dir, () -> MainTest.run("bench", "cpu", "--shape", "2,32,64,4,128", "--rounds", "4", "--warmups", "2",
                "--torch", "--json", "--out", dir.resolve("r.json").toString()));
        assertEquals(0, r.code(), r.err());
        List<String> records = r.out().strip().lines().toList();
        assertEquals(2, records.size(), r.out());
        String torch = records.get(1);
        assertTrue(torch.contains("\"impl\": \"pytorch-cpu\"") && torch.contains("\"version\": \"fake-2,32,64,4,128,decoder-t"), torch);
        assertEquals(4.0, number(torch, "ms"), 1e-9);
        assertEquals(3.5, number(torch, "cpu_ms"), 1e-9);
        double ratio = 4.0 / number(records.getFirst(), "ms"); // the record's ms is rounded to 0.1 µs
        assertEquals(1.0, number(torch, "lantern_speed_vs_torch") / ratio, 1e-3);
        assertTrue(script.toFile().exists());
    }

    @Test
    void aPeerThatDoesNotStartIsOneLineWithExit1(@TempDir Path dir) throws IOException {
        fakePeer(dir, "echo 'ModuleNotFoundError: torch' >&2; exit 1\n");
        MainTest.Run r = withPeer(dir, () -> MainTest.run("bench", "cpu", "--shape", "2,32,64,4,128", "--rounds", "2", "--warmups", "0",
                "--torch", "--out", dir.resolve("r.json").toString()));
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().startsWith("lantern bench: PyTorch peer:") && r.err().contains("pip install torch"), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    private static Path fakePeer(Path home, String body) throws IOException {
        Path script = home.resolve("scripts/bench/torch_peer.py");
        Files.createDirectories(script.getParent());
        Files.writeString(script, body);
        return script;
    }

    private static MainTest.Run withPeer(Path home, java.util.function.Supplier<MainTest.Run> body) {
        String oldHome = System.getProperty("lantern.home");
        String oldPython = System.getProperty("lantern.python");
        System.setProperty("lantern.home", home.toString());
        System.setProperty("lantern.python", "bash");
        try {
            return body.get();
        } finally {
            restore("lantern.home", oldHome);
            restore("lantern.python", oldPython);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }
}
