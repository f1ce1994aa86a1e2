package dev.lantern.cli;

import dev.lantern.sign.SignedManifest;
import dev.lantern.sign.SignedPackage;
import dev.lantern.tensor.Npy;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cuda package on the GPU machine: compiled (with nvcc cubins when nvcc is there), run in a separate
 * JVM with NVRTC disabled ({@code LANTERN_DISABLE_NVRTC=1}) and an empty kernel cache, so that every
 * kernel must come from the package's cubins; its outputs agree with {@code lantern run} of the IR
 * itself. A package re-signed for another arch is refused with the reason.
 */
@Tag("gpu")
class PackageGpuTest {
    @TempDir
    Path dir;

    @Test
    void aCudaPackageRunsWithoutNvrtcAndAgreesWithTheIr() throws Exception {
        Path ir = Examples.file(dir, "mlp-softmax.ir");
        Path lpk = dir.resolve("m.lpk");
        MainTest.Run c = MainTest.run("compile", ir.toString(), "--device", "cuda", "--amp", "bf16", "--package", lpk.toString());
        assertEquals(0, c.code(), c.err());
        System.out.print(c.out());
        MainTest.Run v = MainTest.run("verify", lpk.toString());
        assertEquals(0, v.code(), v.err());
        MainTest.Run direct = MainTest.run("run", ir.toString(), "--device", "cuda", "--amp", "bf16", "--seed", "17", "--runs", "3",
                "--out", dir.resolve("direct").toString());
        assertEquals(0, direct.code(), direct.err());
        Assumptions.assumeFalse(c.out().contains("cubins: none"), "no nvcc on this machine: the package holds no cubins");

        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-cp",
                // scripts/gpu-test runs the tests through the console launcher, whose java.class.path is its jar alone
                System.getProperty("lantern.test.classpath", System.getProperty("java.class.path")),
                "dev.lantern.cli.Main", "run", lpk.toString(), "--device", "cuda", "--seed", "17", "--runs", "3",
                "--out", dir.resolve("packaged").toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("LANTERN_DISABLE_NVRTC", "1");
        pb.environment().put("LANTERN_KERNEL_CACHE", Files.createDirectories(dir.resolve("empty-cache")).toString());
        Process p = pb.start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS));
        System.out.print(log);
        assertEquals(0, p.exitValue(), log);
        assertTrue(log.contains("prebuilt cubins"), log);
        double[] a = Npy.read(dir.resolve("direct/p.npy")).toDoubles();
        double[] b = Npy.read(dir.resolve("packaged/p.npy")).toDoubles();
        double err = RunCommandTest.relErr(b, a);
        System.out.printf("package without NVRTC vs the IR on cuda (bf16): rel err %.3e%n", err);
        assertTrue(err <= 1e-2, "rel err " + err);
    }

    @Test
    void aPackageForAnotherArchIsRefusedOnThisGpu() throws IOException {
        Path lpk = dir.resolve("m.lpk");
        assertEquals(0, MainTest.run("compile", Examples.file(dir, "mlp-softmax.ir").toString(), "--device", "cuda",
                "--package", lpk.toString()).code());
        TreeMap<String, byte[]> entries = new TreeMap<>(SignedPackage.read(lpk, null).entries());
        String props = new String(entries.get(PackageInfo.ENTRY), StandardCharsets.UTF_8);
        entries.put(PackageInfo.ENTRY, props.replace("arch=sm_90\n", "arch=sm_80\n").getBytes(StandardCharsets.UTF_8));
        Path other = dir.resolve("sm80.lpk");
        SignedPackage.write(other, entries, SignedManifest.newKeyPair());
        MainTest.Run r = MainTest.run("run", other.toString(), "--device", "cuda", "--runs", "1");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("it is compiled for cuda sm_80, this machine's cuda is sm_90"), r.err());
    }
}
