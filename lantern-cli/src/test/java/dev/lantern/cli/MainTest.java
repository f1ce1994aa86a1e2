package dev.lantern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The command line as a user meets it: exit codes, one-line errors, the demo's figures and files. */
class MainTest {
    record Run(int code, String out, String err) {}

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            unknown command      | frobnicate                          | 2 | lantern: unknown command 'frobnicate'
            unknown option       | demo --colour                       | 2 | lantern demo: unknown option --colour
            missing value        | demo --config                       | 2 | lantern demo: --config needs a value
            bad number           | demo --runs many                    | 2 | lantern demo: --runs must be an integer
            bad config           | demo --config gigantic              | 2 | lantern demo: unknown config 'gigantic'
            bad device           | demo --device tpu                   | 2 | lantern demo: --device must be auto, cpu or cuda
            bad amp              | demo --amp fp8                      | 2 | lantern demo: --amp takes none, bf16 or f16
            too big for the cpu  | demo --config decoder --device cpu  | 1 | too much for the CPU
            demo extra argument  | demo extra                          | 2 | lantern demo: unexpected argument 'extra'
            dump-ir into /       | demo --device cpu --dump-ir /       | 1 | lantern demo: cannot write /: it is a folder
            opt without a file   | opt                                 | 2 | lantern opt
            opt missing file     | opt /no/such/file.ir                | 1 | lantern opt: no such file: /no/such/file.ir
            opt unknown pass     | opt /no/such/file.ir --passes bogus | 2 | lantern opt: unknown pass 'bogus'
            opt bad amp          | opt /no/such/file.ir --amp fp8      | 2 | lantern opt: --amp takes none, bf16 or f16
            opt amp ignored      | opt /no/such/file.ir --amp bf16     | 2 | lantern opt: --amp applies to --passes standard only
            opt two files        | opt a.ir b.ir                       | 2 | lantern opt: unexpected argument 'b.ir'
            bench bad config     | bench macro --config bogus          | 2 | lantern bench: unknown config 'bogus'
            bench micro config   | bench micro --config decoder        | 2 | lantern bench: --config applies to bench macro only
            bench extra argument | bench micro extra                   | 2 | lantern bench: expected
            bench micro pipeline | bench micro --pipeline              | 2 | lantern bench: --pipeline applies to bench macro only
            bench model pipeline | bench model --model x.onnx --pipeline | 2 | lantern bench: --pipeline applies to bench macro only
            doctor extra         | doctor extra                        | 2 | lantern doctor: unexpected argument 'extra'
            soak extra           | soak extra                          | 2 | lantern soak: unknown argument extra
            soak tests nothing   | soak --seconds 1e-300               | 1 | lantern soak: only 0 operations
            soak too few ops     | soak --max-ops 1                    | 1 | too few to judge
            no command           | --verbose                           | 2 | usage: lantern <command>
            """)
    void badInputIsOneLineAndNonzero(String what, String argLine, int code, String message) {
        Run r = run(argLine.split(" "));
        assertEquals(code, r.code(), () -> what + ": " + r.err());
        assertTrue(r.err().contains(message), () -> what + ": " + r.err());
        assertEquals(argLine.equals("--verbose") ? Main.USAGE.lines().count() : 1, r.err().strip().lines().count(),
                () -> what + ": more than one line: " + r.err());
        assertFalse(r.err().contains("\tat "), "no stack trace without --verbose");
    }

    @Test
    void demoJsonMeetsTheFoundationFiguresAndIsStable(@TempDir Path dir) throws IOException {
        Path ir = dir.resolve("block.ir");
        Run a = run("demo", "--device", "cpu", "--json", "--runs", "3", "--dump-ir", ir.toString());
        Run b = run("demo", "--device", "cpu", "--json", "--runs", "3");
        assertEquals(0, a.code(), a.err());
        assertEquals(0, b.code(), b.err());
        for (String key : new String[] {"device", "config", "graph_hash", "ops", "ms", "rel_err", "kernels", "fusion_coverage",
                "eager_ms", "compiled_ms", "speedup", "planned_peak_bytes", "lower_bound_bytes", "naive_bytes"}) {
            assertTrue(a.out().contains("\"" + key + "\": "), key + " missing from " + a.out());
        }
        assertTrue(number(a.out(), "rel_err") <= 1e-5, a.out());
        // cpu-small: 8 of its 9 non-GEMM ops absorbed (free views are not counted, docs/compiler.md)
        assertEquals(8.0 / 9, number(a.out(), "fusion_coverage"), 1e-4, a.out());
        assertTrue(number(a.out(), "kernels") <= 10, a.out());
        assertTrue(number(a.out(), "planned_peak_bytes") <= 1.1 * number(a.out(), "lower_bound_bytes"), a.out());
        assertEquals(string(a.out(), "graph_hash"), string(b.out(), "graph_hash"));
        assertEquals(string(a.out(), "cache_key"), string(b.out(), "cache_key"));
        assertEquals(number(a.out(), "rel_err"), number(b.out(), "rel_err"), "same seed, same numbers");

        // the dumped IR prints back byte for byte, and leaves no temporary file behind
        Run opt = run("opt", ir.toString());
        assertEquals(0, opt.code(), opt.err());
        assertEquals(Files.readString(ir), opt.out());
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "only block.ir in " + dir);
        }
    }

    @Test
    void dumpIntoAMissingFolderFailsCleanly(@TempDir Path dir) {
        Run r = run("demo", "--device", "cpu", "--runs", "1", "--dump-ir", dir.resolve("nope/block.ir").toString());
        assertEquals(1, r.code());
        assertTrue(r.err().contains("does not exist"), r.err());
        assertFalse(Files.exists(dir.resolve("nope")));
    }

    @Test
    void verboseShowsTheStackTrace(@TempDir Path dir) throws IOException {
        Path bad = dir.resolve("bad.ir");
        Files.writeString(bad, "graph @g {\n  %x = input {name=\"x\"} : f32[4]\n  %0 = frobnicate(%x) : f32[4]\n  return %0\n}\n");
        Run r = run("opt", bad.toString(), "--verbose");
        assertEquals(1, r.code());
        assertTrue(r.err().contains("\tat "), r.err());
    }

    @Test
    void demoWithoutAGpuOnCudaIsABadCommandLineLikeBench() {
        assumeTrue(dev.lantern.cuda.driver.CudaDevice.count() == 0, "a GPU is present: the demo would run");
        Run demo = run("demo", "--device", "cuda");
        Run bench = run("bench", "macro");
        assertEquals(2, demo.code(), demo.err());
        assertEquals(2, bench.code(), bench.err());
        assertTrue(demo.err().startsWith("lantern demo: --device cuda: no usable CUDA device"), demo.err());
        assertEquals(1, demo.err().strip().lines().count(), demo.err());
    }

    @Test
    void textThatIsNotUtf8NamesTheByte(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("latin1.ir");
        Files.write(f, new byte[] {'g', 'r', 'a', 'p', 'h', ' ', '\n', '@', (byte) 0xE9, 't', 'e'});
        Run r = run("opt", f.toString());
        assertEquals(1, r.code(), r.err());
        assertEquals("lantern opt: " + f + " is not UTF-8 text (byte 0xE9 at offset 8, line 2); convert it to UTF-8\n", r.err());
    }

    @Test
    void aFolderIsNotReadAsText(@TempDir Path dir) {
        Run r = run("opt", dir.toString());
        assertEquals(1, r.code(), r.err());
        assertEquals("lantern opt: cannot read " + dir + ": it is a folder, not a file\n", r.err());
    }

    @Test
    void anInputNestedTooDeeplyIsOneLineNotAJvmDump(@TempDir Path dir) throws IOException {
        int depth = 100_000;
        Path f = dir.resolve("deep.ir");
        Files.writeString(f, "graph @g {\n  %x = input {name=\"x\"} : f32[4]\n  %y = elementwise(%x) {expr=\""
                + "neg(".repeat(depth) + "$0" + ")".repeat(depth) + "\"} : f32[4]\n  return %y\n}\n");
        Run r = run("opt", f.toString());
        // a typed refusal (1) once the parser limits nesting, an internal error (3) where it overflows: never a crash
        assertTrue(r.code() == 1 || r.code() == 3, r.code() + ": " + r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().startsWith("lantern opt: "), r.err());
    }

    @Test
    void doctorNamesTheJdkAndVectorWidth() {
        Run r = run("doctor");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("vector width"), r.out());
        assertTrue(r.out().contains("cuda"), r.out());
    }

    private static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": ([-0-9.Ee+]+)").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return Double.parseDouble(m.group(1));
    }

    private static String string(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": \"([^\"]*)\"").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return m.group(1);
    }
}
