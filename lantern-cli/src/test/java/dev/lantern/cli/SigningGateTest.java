package dev.lantern.cli;

import dev.lantern.sign.SignedManifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.Base64;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code lantern sign}, {@code lantern verify} and the signing gate: signed files verify; a tampered
 * jar is refused with exit 1 naming it; the gate signs a root's jars and SBOMs and sees each tampered
 * copy refused; a root with nothing built fails the gate.
 */
class SigningGateTest {
    @TempDir
    Path dir;

    @Test
    void signThenVerifyThenATamperedJarIsRefusedByName() throws IOException {
        Files.createDirectories(dir.resolve("jars"));
        Files.write(dir.resolve("jars/lantern-core.jar"), new byte[] {0x50, 0x4b, 3, 4, 10, 20, 30, 40});
        Files.writeString(dir.resolve("lantern-sbom.json"), "{\"bomFormat\": \"CycloneDX\"}\n");
        MainTest.Run s = MainTest.run("sign", "--dir", dir.toString(), dir.resolve("jars/lantern-core.jar").toString(),
                dir.resolve("lantern-sbom.json").toString());
        assertEquals(0, s.code(), s.err());
        String manifest = dir.resolve(SignedManifest.MANIFEST).toString();
        String pub = dir.resolve(VerifyCommand.PUBLIC_KEY).toString();
        MainTest.Run ok = MainTest.run("verify", manifest, "--public-key", pub);
        assertEquals(0, ok.code(), ok.err());
        assertEquals("verified: the signature and 2 files match", ok.out().strip());

        SigningGate.flipOneByte(dir.resolve("jars/lantern-core.jar"));
        MainTest.Run bad = MainTest.run("verify", manifest, "--public-key", pub);
        assertEquals(1, bad.code());
        assertTrue(bad.err().startsWith("lantern verify: REFUSED jars/lantern-core.jar: tampered"), bad.err());
        assertEquals(2, MainTest.run("verify", manifest).code());
        assertEquals(2, MainTest.run("sign", "--dir", dir.toString()).code());
    }

    @Test
    void aReleaseKeyFromTheEnvironmentTextSignsAndVerifies() throws IOException {
        KeyPair k = SignedManifest.newKeyPair();
        String text = Base64.getEncoder().encodeToString(k.getPrivate().getEncoded()) + ":" + SignedManifest.encode(k.getPublic());
        KeyPair back = VerifyCommand.releaseKey(text);
        Files.writeString(dir.resolve("a.txt"), "artifact");
        Path m = SignedManifest.sign(dir, java.util.List.of(dir.resolve("a.txt")), back.getPrivate());
        assertEquals(java.util.List.of("a.txt"), SignedManifest.verify(m, k.getPublic()));
        assertEquals(2, MainTest.run("sign", "--dir", dir.toString(), "--key-env", "LANTERN_NO_SUCH_VARIABLE_19", m.toString()).code());
    }

    @Test
    void theGateSignsARootsArtifactsAndRefusesEachTamperedCopy() throws IOException {
        Path root = dir.resolve("root");
        Path m = Files.createDirectories(root.resolve("lantern-x/target"));
        Files.writeString(root.resolve("lantern-x/pom.xml"), "<project/>");
        Files.write(m.resolve("lantern-x-0.1.0-SNAPSHOT.jar"), new byte[] {0x50, 0x4b, 3, 4, 1, 2, 3, 4, 5, 6});
        Files.writeString(m.resolve("lantern-x-sbom.json"), "{\"bomFormat\": \"CycloneDX\", \"components\": []}");
        GateResult g = SigningGate.evaluate(root, dir.resolve("staging"));
        assertTrue(g.pass(), g.line());
        assertTrue(g.line().startsWith("GATE signing PASS 2 artifacts (1 jars, 1 SBOMs)"), g.line());
        Files.createDirectories(dir.resolve("bare/lantern-y"));
        Files.writeString(dir.resolve("bare/lantern-y/pom.xml"), "<project/>"); // a module, nothing built
        GateResult empty = SigningGate.evaluate(dir.resolve("bare"), dir.resolve("s2"));
        assertFalse(empty.pass(), empty.line());
    }
}
