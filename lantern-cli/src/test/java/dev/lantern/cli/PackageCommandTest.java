package dev.lantern.cli;

import dev.lantern.sign.SignedManifest;
import dev.lantern.sign.SignedPackage;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Compiled model packages on the CPU: compile → verify → run gives the outputs of running the IR
 * itself; a flipped byte in each entry, a cut-off file, another signer's key, a package for another
 * architecture or device, and a plan that this build does not reproduce are each refused with one
 * line and exit 1; a failed compile leaves no package behind.
 */
class PackageCommandTest {
    private static final java.util.Set<String> RESERVED = java.util.Set.of(SignedManifest.MANIFEST, SignedManifest.SIGNATURE, SignedPackage.PUBLIC_KEY);
    @TempDir
    Path dir;
    Path ir;
    Path lpk;

    @BeforeEach
    void compile() {
        ir = Examples.file(dir, "mlp-softmax.ir");
        lpk = dir.resolve("out/m.lpk");
        MainTest.Run c = MainTest.run("compile", ir.toString(), "--device", "cpu", "--package", lpk.toString());
        assertEquals(0, c.code(), c.err());
        assertTrue(Files.isRegularFile(lpk));
    }

    @Test
    void roundTripRunsTheSameOutputsAsTheIr() {
        MainTest.Run v = MainTest.run("verify", lpk.toString());
        assertEquals(0, v.code(), v.err());
        assertTrue(v.out().contains("compiled for cpu " + System.getProperty("os.arch")), v.out());
        MainTest.Run direct = MainTest.run("run", ir.toString(), "--device", "cpu", "--runs", "1", "--seed", "7", "--json");
        MainTest.Run packaged = MainTest.run("run", lpk.toString(), "--device", "cpu", "--runs", "1", "--seed", "7", "--json");
        assertEquals(0, direct.code(), direct.err());
        assertEquals(0, packaged.code(), packaged.err());
        String outputs = direct.out().substring(direct.out().indexOf("\"outputs\""));
        assertTrue(outputs.contains("sha256"), outputs);
        assertEquals(outputs, packaged.out().substring(packaged.out().indexOf("\"outputs\"")));
    }

    @Test
    void anOnnxPackageRunsWithItsShapesAndTheModelsOutputs() throws IOException {
        Path onnx = Files.write(dir.resolve("lm.onnx"), OnnxFiles.languageModel(19).toByteArray());
        Path pkg = dir.resolve("lm.lpk");
        assertEquals(0, MainTest.run("compile", onnx.toString(), "--package", pkg.toString(), "--batch", "2", "--seq", "3").code());
        MainTest.Run direct = MainTest.run("run", onnx.toString(), "--batch", "2", "--seq", "3", "--device", "cpu", "--runs", "1", "--json");
        MainTest.Run packaged = MainTest.run("run", pkg.toString(), "--device", "cpu", "--runs", "1", "--json");
        assertEquals(0, direct.code(), direct.err());
        assertEquals(0, packaged.code(), packaged.err());
        String outputs = direct.out().substring(direct.out().indexOf("\"outputs\""));
        assertTrue(outputs.contains("\"shape\": [2, 3, "), outputs);
        assertEquals(outputs, packaged.out().substring(packaged.out().indexOf("\"outputs\"")));
        MainTest.Run again = MainTest.run("run", pkg.toString(), "--seq", "4");
        assertEquals(2, again.code());
        assertTrue(again.err().contains("--seq is fixed by the package"), again.err());
    }

    @Test
    void aFlippedByteInEachEntryIsRefusedNamingIt() throws IOException {
        byte[] whole = Files.readAllBytes(lpk);
        List<String> names = new ArrayList<>();
        try (ZipFile z = new ZipFile(lpk.toFile())) {
            Collections.list(z.entries()).stream().map(ZipEntry::getName).forEach(names::add);
        }
        assertTrue(names.size() >= 10, names.toString());
        for (String name : names) {
            byte[] content = entry(name);
            int at = indexOf(whole, content);
            assertTrue(at > 0, name);
            byte[] bad = whole.clone();
            bad[at + content.length / 2] ^= 0x20; // a letter's case, or another digit: still text, and still wrong
            Path copy = dir.resolve("flip.lpk");
            Files.write(copy, bad);
            MainTest.Run r = MainTest.run("verify", copy.toString());
            assertEquals(1, r.code(), name + ": " + r.out());
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertTrue(r.err().startsWith("lantern verify: REFUSED "), r.err());
            // a changed key or signature fails the signature check (the manifest or the signature named, as the
            // random key's bytes fall), or does not decode (named itself)
            boolean named = r.err().startsWith("lantern verify: REFUSED " + name + ": ") || RESERVED.contains(name)
                    && RESERVED.stream().anyMatch(x -> r.err().startsWith("lantern verify: REFUSED " + x + ": "));
            assertTrue(named, name + " -> " + r.err());
        }
        Path copy = dir.resolve("flip.lpk");
        MainTest.Run run = MainTest.run("run", copy.toString(), "--device", "cpu", "--runs", "1");
        assertEquals(1, run.code(), run.out());
        assertEquals(1, run.err().strip().lines().count(), run.err());
    }

    @Test
    void aCutOffFileIsRefused() throws IOException {
        byte[] whole = Files.readAllBytes(lpk);
        Path cut = dir.resolve("cut.lpk");
        Files.write(cut, Arrays.copyOf(whole, whole.length - 40));
        for (String cmd : List.of("verify", "run")) {
            MainTest.Run r = MainTest.run(cmd, cut.toString());
            assertEquals(1, r.code(), cmd);
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertTrue(r.err().contains("cut.lpk: not a whole package"), r.err());
        }
    }

    @Test
    void anotherSignersKeyIsRefused() throws IOException {
        Path other = dir.resolve("other.pub");
        Files.writeString(other, SignedManifest.encode(SignedManifest.newKeyPair().getPublic()));
        MainTest.Run r = MainTest.run("verify", lpk.toString(), "--public-key", other.toString());
        assertEquals(1, r.code());
        assertTrue(r.err().startsWith("lantern verify: REFUSED MANIFEST.sha256: the signature does not match"), r.err());
        MainTest.Run run = MainTest.run("run", lpk.toString(), "--public-key", other.toString(), "--runs", "1");
        assertEquals(1, run.code());
        assertEquals(1, run.err().strip().lines().count(), run.err());
    }

    @Test
    void aPackageForAnotherArchitectureOrDeviceIsRefusedWithTheReason() {
        Path riscv = resigned("riscv.lpk", "arch=" + System.getProperty("os.arch") + "\n", "arch=riscv64\n");
        assertEquals(0, MainTest.run("verify", riscv.toString()).code());
        MainTest.Run r = MainTest.run("run", riscv.toString(), "--device", "cpu", "--runs", "1");
        assertEquals(1, r.code());
        assertTrue(r.err().contains("it is compiled for cpu riscv64, this machine's cpu is " + System.getProperty("os.arch")), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());

        Path cuda = resigned("cuda.lpk", "device=cpu\narch=" + System.getProperty("os.arch") + "\n", "device=cuda\narch=sm_90\n");
        MainTest.Run c = MainTest.run("run", cuda.toString(), "--device", "cpu", "--runs", "1");
        assertEquals(1, c.code());
        assertTrue(c.err().contains("it is compiled for cuda sm_90 and cannot run on cpu"), c.err());
    }

    @Test
    void aPlanThisBuildDoesNotReproduceIsRefused() throws IOException {
        var pkg = SignedPackage.read(lpk, null);
        TreeMap<String, byte[]> entries = new TreeMap<>(pkg.entries());
        entries.put(ModelPackager.MEMORY_PLAN, (new String(entries.get(ModelPackager.MEMORY_PLAN), StandardCharsets.UTF_8) + "# changed\n")
                .getBytes(StandardCharsets.UTF_8));
        PackageInfo info = PackageInfo.parse(entries.get(PackageInfo.ENTRY));
        entries.put(PackageInfo.ENTRY, new PackageInfo(info.device(), info.arch(), info.model(), info.options(),
                ModelPackager.planSha256(entries), info.cubins()).bytes());
        Path changed = dir.resolve("plan.lpk");
        SignedPackage.write(changed, entries, SignedManifest.newKeyPair());
        MainTest.Run r = MainTest.run("run", changed.toString(), "--device", "cpu", "--runs", "1");
        assertEquals(1, r.code());
        assertTrue(r.err().contains("is not the packaged plan"), r.err());
    }

    @Test
    void aFailedCompileLeavesNoPackageAndKeepsAnOldOne() throws IOException {
        Path broken = Files.writeString(dir.resolve("broken.ir"), "graph @g {\n  %x = input {name=\"x\"} : f32[2]\n  return %nope\n}\n");
        byte[] before = Files.readAllBytes(lpk);
        MainTest.Run r = MainTest.run("compile", broken.toString(), "--package", lpk.toString());
        assertEquals(1, r.code(), r.err());
        assertArrayEquals(before, Files.readAllBytes(lpk));
        Path fresh = dir.resolve("fresh.lpk");
        assertEquals(1, MainTest.run("compile", broken.toString(), "--package", fresh.toString()).code());
        assertFalse(Files.exists(fresh));
        try (var s = Files.list(lpk.getParent())) {
            assertEquals(List.of(lpk), s.toList(), "no temp file left beside the package");
        }
        assertEquals(2, MainTest.run("compile", ir.toString(), "--package", fresh.toString(), "--emit", "ir").code());
    }

    /** The package with {@code from} replaced by {@code to} in its properties, signed again by a fresh key. */
    private Path resigned(String name, String from, String to) {
        var pkg = SignedPackage.read(lpk, null);
        TreeMap<String, byte[]> entries = new TreeMap<>(pkg.entries());
        String props = new String(entries.get(PackageInfo.ENTRY), StandardCharsets.UTF_8);
        assertTrue(props.contains(from), props);
        entries.put(PackageInfo.ENTRY, props.replace(from, to).getBytes(StandardCharsets.UTF_8));
        Path out = dir.resolve(name);
        SignedPackage.write(out, entries, SignedManifest.newKeyPair());
        return out;
    }

    private byte[] entry(String name) throws IOException {
        try (ZipFile z = new ZipFile(lpk.toFile())) {
            return z.getInputStream(z.getEntry(name)).readAllBytes();
        }
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
