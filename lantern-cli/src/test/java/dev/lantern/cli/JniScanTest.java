package dev.lantern.cli;

import dev.lantern.ir.LanternException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The security gate's JNI check: a class with a native method and JNI loads is caught, each named; an
 * FFM lookup is not; and the main classes of every module (built before lantern-cli's tests run)
 * hold none.
 */
class JniScanTest {
    static final Path FIXTURES = Path.of("target/test-classes/dev/lantern/cli");

    @Test
    void aNativeMethodAndBothJniLoadsAreFound() {
        List<JniScan.Finding> f = JniScan.scanClass(FIXTURES.resolve("JniFixture.class"));
        List<String> what = f.stream().map(JniScan.Finding::what).toList();
        assertEquals(3, f.size(), what.toString());
        assertTrue(what.contains("native method dev.lantern.cli.JniFixture.nativeAdd(II)I"), what.toString());
        assertTrue(what.contains("dev.lantern.cli.JniFixture.load calls java.lang.System.loadLibrary"), what.toString());
        assertTrue(what.contains("dev.lantern.cli.JniFixture.loadByPath calls java.lang.Runtime.load"), what.toString());
    }

    @Test
    void anFfmLookupIsAllowed() {
        assertEquals(List.of(), JniScan.scanClass(FIXTURES.resolve("JniFixture$Ffm.class")));
    }

    @Test
    void noMainClassOfAnyModuleLoadsJni() {
        List<Path> roots = SecurityGate.modules(Path.of("..").toAbsolutePath().normalize()).stream()
                .map(m -> m.resolve("target/classes")).filter(Files::isDirectory).toList();
        assertTrue(roots.size() >= 5, "modules built: " + roots);
        JniScan.Report r = JniScan.scan(roots);
        assertEquals(List.of(), r.findings());
        assertTrue(r.classes() > 500, r.classes() + " classes");
    }

    @Test
    void aFolderThatIsNotThereIsAnErrorNotAPass(@TempDir Path dir) {
        assertThrows(LanternException.class, () -> JniScan.scan(List.of(dir.resolve("missing"))));
        assertThrows(LanternException.class, () -> {
            Files.writeString(dir.resolve("Bad.class"), "not a class");
            JniScan.scan(List.of(dir));
        });
    }
}
