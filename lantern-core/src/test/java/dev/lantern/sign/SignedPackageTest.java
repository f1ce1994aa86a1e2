package dev.lantern.sign;

import dev.lantern.ir.LanternException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A signed package: its entries come back as written; a flipped bit at every offset of the file
 * (contents, zip headers, central directory, signature, key) is refused; bytes appended or cut
 * off are refused; the same entries and key give the same bytes; a bad entry name or a failed
 * write leaves nothing behind.
 */
class SignedPackageTest {
    @TempDir
    Path dir;

    private static TreeMap<String, byte[]> entries(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        TreeMap<String, byte[]> m = new TreeMap<>();
        for (String name : List.of("model/a.ir", "plan/memory.txt", "cuda/k.sm_90.cubin")) {
            byte[] b = new byte[40 + r.nextInt(40)];
            r.nextBytes(b);
            m.put(name, b);
        }
        return m;
    }

    @Test
    void aFlippedBitAtEveryOffsetIsRefused() throws IOException {
        KeyPair key = SignedManifest.newKeyPair();
        Path lpk = dir.resolve("p.lpk");
        TreeMap<String, byte[]> written = entries(7);
        SignedPackage.write(lpk, written, key);
        SignedPackage.Verified ok = SignedPackage.read(lpk, key.getPublic());
        assertEquals(written.keySet(), ok.entries().keySet());
        written.forEach((k, v) -> assertArrayEquals(v, ok.entries().get(k), k));
        assertTrue(ok.pinned());

        byte[] whole = Files.readAllBytes(lpk);
        Path bad = dir.resolve("bad.lpk");
        List<Integer> accepted = new ArrayList<>();
        for (int i = 0; i < whole.length; i++) {
            byte[] b = whole.clone();
            b[i] ^= 1 << (i % 8);
            Files.write(bad, b);
            try {
                SignedPackage.read(bad, null);
                accepted.add(i);
            } catch (VerificationException expected) {
                assertFalse(expected.file().isBlank());
            }
        }
        assertEquals(List.of(), accepted, "offsets whose flipped bit verified, of " + whole.length);
    }

    @Test
    void appendedOrCutBytesAndAnotherKeyAreRefused() throws IOException {
        KeyPair key = SignedManifest.newKeyPair();
        Path lpk = dir.resolve("p.lpk");
        SignedPackage.write(lpk, entries(3), key);
        byte[] whole = Files.readAllBytes(lpk);
        Path bad = dir.resolve("bad.lpk");
        Files.write(bad, java.util.Arrays.copyOf(whole, whole.length + 5));
        assertThrows(VerificationException.class, () -> SignedPackage.read(bad, null));
        Files.write(bad, java.util.Arrays.copyOf(whole, whole.length - 1));
        assertThrows(VerificationException.class, () -> SignedPackage.read(bad, null));
        VerificationException e = assertThrows(VerificationException.class,
                () -> SignedPackage.read(lpk, SignedManifest.newKeyPair().getPublic()));
        assertEquals(SignedManifest.MANIFEST, e.file());
    }

    @Test
    void theSameEntriesAndKeyGiveTheSameBytes() throws IOException {
        KeyPair key = SignedManifest.newKeyPair();
        SignedPackage.write(dir.resolve("a.lpk"), entries(5), key);
        SignedPackage.write(dir.resolve("b.lpk"), entries(5), key);
        assertArrayEquals(Files.readAllBytes(dir.resolve("a.lpk")), Files.readAllBytes(dir.resolve("b.lpk")));
    }

    @Test
    void badNamesAreRefusedAndLeaveNothing() throws IOException {
        KeyPair key = SignedManifest.newKeyPair();
        for (String name : List.of("../x", "a/../../x", "/abs", SignedManifest.MANIFEST, "a b")) {
            TreeMap<String, byte[]> m = entries(1);
            m.put(name, new byte[] {1});
            assertThrows(LanternException.class, () -> SignedPackage.write(dir.resolve("n.lpk"), m, key), name);
        }
        try (var s = Files.list(dir)) {
            assertEquals(0, s.count());
        }
    }
}
