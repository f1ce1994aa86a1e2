package dev.lantern.cpu;

import dev.lantern.ir.DType;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The settings are read once per JVM, so the scalar path ({@code lantern.cpu.vector=false}) and the
 * single-thread path ({@code lantern.cpu.threads=1}) are checked in a child JVM that runs the f32
 * differential cases through {@link #main}.
 */
class ScalarPathTest {
    @Test
    void scalarSingleThreadedKernelsMatchReference() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(java, "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-Dlantern.cpu.vector=false", "-Dlantern.cpu.threads=1",
                "-cp", System.getProperty("java.class.path"), ScalarPathTest.class.getName())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM timed out");
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("scalar cases passed"), out);
    }

    /** Child entry point: every f32 case of {@link OpDifferentialTest}; exits 1 on the first failure. */
    public static void main(String[] args) {
        if (CpuConfig.VECTOR || CpuConfig.THREADS != 1) {
            System.out.println("settings not applied: vector=" + CpuConfig.VECTOR + " threads=" + CpuConfig.THREADS);
            System.exit(1);
        }
        List<OpCase> cases = OpDifferentialTest.cases().stream().filter(c -> c.dtype() == DType.F32).toList();
        int i = 0;
        try {
            for (OpCase c : cases) {
                OpDifferentialTest.check(c, 0xC0FFEEL + 31L * i++);
            }
        } catch (Throwable t) {
            System.out.println("FAILED: " + t);
            System.exit(1);
        }
        System.out.println(cases.size() + " scalar cases passed");
    }
}
