package dev.lantern.cli;

import dev.lantern.cuda.ffi.CudaUnavailableException;
import dev.lantern.ir.LanternException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The exit-code contract (0 done, 1 bad input, 2 bad command line, 3 internal error) and failed output. */
class ErrorReportingTest {
    record Run(int code, String out, String err) {}

    /** Runs {@code lantern boom} where the command {@code boom} throws {@code t}. */
    static Run throwing(Throwable t, String... extra) {
        Main.Command boom = (args, out, err, verbose) -> {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw (Error) t;
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] argv = new String[extra.length + 1];
        argv[0] = "boom";
        System.arraycopy(extra, 0, argv, 1, extra.length);
        int code = Main.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of("boom", boom));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void anUntypedExceptionIsAnInternalErrorOnOneLine() {
        Run r = throwing(new ArithmeticException("/ by zero"));
        assertEquals(3, r.code(), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("lantern boom: internal error (a bug in Lantern): / by zero [java.lang.ArithmeticException at "),
                r.err());
    }

    @Test
    void anExceptionWithoutAMessageIsDescribedNotShownAsABareClassName() {
        Run r = throwing(new NullPointerException());
        assertEquals(3, r.code(), r.err());
        assertTrue(r.err().startsWith("lantern boom: internal error (a bug in Lantern): unexpected NullPointerException with no message ["),
                r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @Test
    void errorsAreInternalErrorsToo() {
        for (Error e : List.of(new StackOverflowError(), new OutOfMemoryError("Java heap space"), new AssertionError("x"))) {
            Run r = throwing(e);
            assertEquals(3, r.code(), e + ": " + r.err());
            assertEquals(1, r.err().lines().count(), r.err());
        }
        assertTrue(throwing(new StackOverflowError()).err().contains("ran out of stack"));
    }

    @Test
    void verboseAddsTheStackTrace() {
        Run r = throwing(new IllegalStateException("bad state"), "--verbose");
        assertEquals(3, r.code());
        assertTrue(r.err().contains("\tat "), r.err());
    }

    @Test
    void typedErrorsKeepTheirCodes() {
        assertEquals(1, throwing(new LanternException("bad input")).code());
        assertEquals(2, throwing(new UsageException("boom: bad option")).code());
        Run noGpu = throwing(new CudaUnavailableException("libcuda.so.1 not found"));
        assertEquals(2, noGpu.code(), "a missing device is reported like bench's and soak's");
        assertEquals("lantern boom: no usable CUDA device: libcuda.so.1 not found\n", noGpu.err());
    }

    @Test
    void aFailedWriteToStandardOutputIsAnError() {
        OutputStream full = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("No space left on device");
            }
        };
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);

        int code = Main.run(new String[] {"doctor"}, new PrintStream(full, true, StandardCharsets.UTF_8), e);
        assertEquals(1, code, err.toString(StandardCharsets.UTF_8));
        assertEquals("lantern doctor: cannot write to standard output: write failed\n", err.toString(StandardCharsets.UTF_8));

        err.reset();
        code = Main.run(new String[] {"doctor"}, CheckedOutput.over(full, StandardCharsets.UTF_8), e);
        assertEquals(1, code);
        assertEquals("lantern doctor: cannot write to standard output: No space left on device\n", err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void optIntoDevFullExitsNonzero(@TempDir Path dir) throws Exception {
        File devFull = new File("/dev/full");
        assumeTrue(devFull.exists(), "no /dev/full here");
        Path ir = dir.resolve("tiny.ir");
        Files.writeString(ir, "graph @g {\n  %x = input {name=\"x\"} : f32[4]\n  %0 = neg(%x) : f32[4]\n  return %0\n}\n");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "opt", ir.toString())
                .redirectOutput(devFull)
                .start();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(1, p.exitValue(), err);
        List<String> lines = err.lines().filter(l -> !l.startsWith("WARNING: Using incubator modules")).toList();
        assertEquals(List.of("lantern opt: cannot write to standard output: No space left on device"), lines);
        assertFalse(err.contains("\tat "), err);
    }
}
