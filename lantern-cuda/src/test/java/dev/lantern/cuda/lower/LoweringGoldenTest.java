package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every device step and every generated kernel of the DESIGN.md blocks (bf16, fused and eager,
 * for the H200) against golden files: {@code <config>-<mode>.steps} (each step with its launch
 * shape, arguments and buffers, or its GEMM spec) and {@code <config>-<mode>.cu} (each distinct
 * kernel's source once). A refactor of the engine that changes no behaviour shows no diff.
 * The text is {@link StepText}'s, which {@code lantern compile --emit steps|cuda} prints too.
 * Regenerate after an intended change with {@code -Dlantern.updateSnapshots=true} and review it.
 */
class LoweringGoldenTest {
    static final Path DIR = Path.of("src/test/resources/lowering-golden");
    private static final boolean UPDATE = Boolean.getBoolean("lantern.updateSnapshots");

    static Stream<Arguments> cases() {
        return BlockConfig.ALL.stream().flatMap(c -> Stream.of(Arguments.of(c.name(), true), Arguments.of(c.name(), false)));
    }

    @ParameterizedTest(name = "{0} fused={1}")
    @MethodSource("cases")
    void stepsAndSourcesMatchGolden(String config, boolean fused) throws IOException {
        BlockConfig c = BlockConfig.named(config);
        CompiledModel m = Compiler.compile(TransformerBlock.build(c, DType.BF16).graph(),
                CompileOptions.defaults().withTarget("cuda").withFuse(fused));
        CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
        String base = config + (fused ? "-fused" : "-eager");
        check(base + ".steps", StepText.steps(l));
        check(base + ".cu", StepText.sources(l));
    }

    private static void check(String name, String text) throws IOException {
        Path golden = DIR.resolve(name);
        if (UPDATE) {
            Files.createDirectories(DIR);
            Files.writeString(golden, text);
            return;
        }
        assertTrue(Files.exists(golden), "no golden file " + golden.toAbsolutePath() + "; run with -Dlantern.updateSnapshots=true");
        assertEquals(Files.readString(golden), text, "lowering of " + name + " changed");
    }
}
