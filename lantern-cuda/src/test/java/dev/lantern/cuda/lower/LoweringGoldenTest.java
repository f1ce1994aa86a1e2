package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every device step and every generated kernel of the DESIGN.md blocks (bf16, fused and eager,
 * for the H200) against golden files: {@code <config>-<mode>.steps} (each step with its launch
 * shape, arguments and buffers, or its GEMM spec) and {@code <config>-<mode>.cu} (each distinct
 * kernel's source once). A refactor of the engine that changes no behaviour shows no diff.
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
        StringBuilder steps = new StringBuilder();
        Map<String, String> sources = new TreeMap<>();
        for (Step s : l.steps()) {
            steps.append(describe(s)).append('\n');
            if (s instanceof Step.Launch launch) {
                sources.put(launch.source().entry(), launch.source().source());
            }
        }
        StringBuilder cu = new StringBuilder();
        sources.forEach((entry, src) -> cu.append("// ===== ").append(entry).append('\n').append(src).append('\n'));
        String base = config + (fused ? "-fused" : "-eager");
        check(base + ".steps", steps.toString());
        check(base + ".cu", cu.toString());
    }

    /** A step as the golden file writes it: kernel index, what runs, how it is launched, what it reads and writes. */
    static String describe(Step s) {
        return switch (s) {
            case Step.Launch l -> {
                CudaKernelSource src = l.source();
                LaunchConfig lc = src.launch();
                StringBuilder b = new StringBuilder();
                b.append("k").append(l.kernel()).append(" launch ").append(src.entry()).append(" [").append(src.variant()).append("]")
                        .append(" grid ").append(lc.gridX()).append('x').append(lc.gridY()).append('x').append(lc.gridZ())
                        .append(" block ").append(lc.blockX()).append('x').append(lc.blockY()).append('x').append(lc.blockZ())
                        .append(" shared ").append(lc.dynamicSharedBytes()).append(" args");
                for (Step.Arg a : l.args()) {
                    b.append(' ').append(switch (a) {
                        case Step.Ptr p -> p.buf() + "(" + p.extent() + ")";
                        case Step.I64 v -> v.v() + "L";
                        case Step.I32 v -> Integer.toString(v.v());
                        case Step.F32 v -> v.v() + "f";
                    });
                }
                yield b.toString();
            }
            case Step.Gemm g -> "k" + g.kernel() + " gemm " + g.spec() + " a " + g.a() + " b " + g.b() + " c " + g.c()
                    + " d " + g.d() + " bias " + g.bias() + " beta " + g.beta();
        };
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
