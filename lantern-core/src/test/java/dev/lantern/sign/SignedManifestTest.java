package dev.lantern.sign;

import dev.lantern.ir.LanternException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Signed artifacts: a signed set verifies; one flipped bit anywhere in any file, in the manifest or in
 * the signature is refused naming that file; so are a missing file, another key, and a manifest line
 * that reaches outside its folder.
 */
class SignedManifestTest {
    @TempDir
    Path dir;

    List<Path> files() throws IOException {
        SplittableRandom rng = new SplittableRandom(19);
        Files.createDirectories(dir.resolve("jars"));
        byte[] jar = new byte[70_000]; // larger than one read buffer
        for (int i = 0; i < jar.length; i++) {
            jar[i] = (byte) rng.nextInt(256);
        }
        Files.write(dir.resolve("jars/a.jar"), jar);
        Files.writeString(dir.resolve("sbom.json"), "{\"bomFormat\": \"CycloneDX\"}");
        return List.of(dir.resolve("sbom.json"), dir.resolve("jars/a.jar"));
    }

    @Test
    void aSignedSetVerifiesAndTheManifestIsSha256sumsForm() throws IOException {
        KeyPair k = SignedManifest.newKeyPair();
        Path m = SignedManifest.sign(dir, files(), k.getPrivate());
        assertEquals(List.of("jars/a.jar", "sbom.json"), SignedManifest.verify(m, k.getPublic()));
        List<String> lines = Files.readAllLines(m);
        assertEquals(2, lines.size());
        assertTrue(lines.get(1).matches("[0-9a-f]{64}  sbom\\.json"), lines.get(1));
        assertEquals(SignedManifest.sha256(dir.resolve("jars/a.jar")), lines.getFirst().substring(0, 64));
        // the public key survives its text form
        assertEquals(List.of("jars/a.jar", "sbom.json"), SignedManifest.verify(m, SignedManifest.decodePublicKey(SignedManifest.encode(k.getPublic()))));
    }

    @Test
    void everyFlippedBitIsRefusedNamingItsFile() throws IOException {
        KeyPair k = SignedManifest.newKeyPair();
        Path m = SignedManifest.sign(dir, files(), k.getPrivate());
        SplittableRandom rng = new SplittableRandom(7);
        for (String victim : List.of("jars/a.jar", "sbom.json", SignedManifest.MANIFEST)) {
            for (int trial = 0; trial < 20; trial++) {
                Path f = dir.resolve(victim);
                byte[] original = Files.readAllBytes(f);
                byte[] b = original.clone();
                int at = rng.nextInt(b.length);
                b[at] ^= (byte) (1 << rng.nextInt(8));
                Files.write(f, b);
                VerificationException e = assertThrows(VerificationException.class, () -> SignedManifest.verify(m, k.getPublic()),
                        victim + " byte " + at);
                assertEquals(victim, e.file(), e.getMessage());
                Files.write(f, original);
            }
        }
        byte[] sig = Files.readAllBytes(dir.resolve(SignedManifest.SIGNATURE));
        sig[3] = (byte) (sig[3] == 'A' ? 'B' : 'A');
        Files.write(dir.resolve(SignedManifest.SIGNATURE), sig);
        VerificationException e = assertThrows(VerificationException.class, () -> SignedManifest.verify(m, k.getPublic()));
        // the key is random: the changed signature either fails to verify (the manifest named) or no longer
        // decodes to a curve point (the signature file named); both refuse it
        assertTrue(List.of(SignedManifest.MANIFEST, SignedManifest.SIGNATURE).contains(e.file()), e.getMessage());
    }

    @Test
    void aMissingFileAnotherKeyAndAnEscapingPathAreRefused() throws IOException {
        KeyPair k = SignedManifest.newKeyPair();
        Path m = SignedManifest.sign(dir, files(), k.getPrivate());
        VerificationException other = assertThrows(VerificationException.class, () -> SignedManifest.verify(m, SignedManifest.newKeyPair().getPublic()));
        assertTrue(other.getMessage().contains("signed by another key"), other.getMessage());
        Files.delete(dir.resolve("sbom.json"));
        VerificationException missing = assertThrows(VerificationException.class, () -> SignedManifest.verify(m, k.getPublic()));
        assertEquals("sbom.json", missing.file());
        assertTrue(missing.getMessage().endsWith("missing"));

        // a manifest that names a file outside its folder, correctly signed, is refused all the same
        Path sub = Files.createDirectories(dir.resolve("sub"));
        Files.writeString(sub.resolve(SignedManifest.MANIFEST), "0".repeat(64) + "  ../jars/a.jar\n");
        java.security.Signature s;
        try {
            s = java.security.Signature.getInstance("Ed25519");
            s.initSign(k.getPrivate());
            s.update(Files.readAllBytes(sub.resolve(SignedManifest.MANIFEST)));
            Files.writeString(sub.resolve(SignedManifest.SIGNATURE), java.util.Base64.getEncoder().encodeToString(s.sign()));
        } catch (java.security.GeneralSecurityException ex) {
            throw new AssertionError(ex);
        }
        VerificationException escape = assertThrows(VerificationException.class,
                () -> SignedManifest.verify(sub.resolve(SignedManifest.MANIFEST), k.getPublic()));
        assertTrue(escape.getMessage().contains("outside the manifest's folder"), escape.getMessage());

        assertThrows(LanternException.class, () -> SignedManifest.sign(dir, List.of(), k.getPrivate()));
        assertThrows(LanternException.class, () -> SignedManifest.sign(dir, List.of(Path.of("/etc/hostname")), k.getPrivate()));
        assertThrows(LanternException.class, () -> SignedManifest.decodePublicKey("not a key"));
    }
}
