package dev.lantern.cuda.codegen;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The generated CUDA C of {@link BenchmarkKernels} against golden files, so that a refactor
 * that changes no behaviour shows no diff. Regenerate after an intended change with
 * {@code ./mvnw -pl lantern-cuda -am test -Dtest=CudaSnapshotTest -Dlantern.updateSnapshots=true
 * -Dsurefire.failIfNoSpecifiedTests=false}, then review the diff.
 */
class CudaSnapshotTest {
    static final Path DIR = Path.of("src/test/resources/cuda-snapshots");
    private static final boolean UPDATE = Boolean.getBoolean("lantern.updateSnapshots");

    static Stream<KernelSpec> specs() {
        return BenchmarkKernels.all().stream();
    }

    @ParameterizedTest
    @MethodSource("specs")
    void matchesGolden(KernelSpec spec) throws IOException {
        String text = spec.render(CudaTarget.H200).source();
        Path golden = DIR.resolve(spec.name() + ".cu");
        if (UPDATE) {
            Files.createDirectories(DIR);
            Files.writeString(golden, text);
            return;
        }
        assertTrue(Files.exists(golden), "no golden file " + golden.toAbsolutePath()
                + "; run with -Dlantern.updateSnapshots=true");
        assertEquals(Files.readString(golden), text, "generated CUDA C of " + spec.name() + " changed");
    }
}
