package dev.lantern.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.kernel.KernelKind;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** fusion_coverage counts what an eager run executes, no more: free views are not counted. */
class FusionCoverageTest {
    private static final String PERMUTE_THEN_GELU = """
            graph @g {
              %%x = input {name="x"} : f32[2,8,4,16]
              %%p = permute(%%x) {perm=[0,2,1,3]} : %s
              %%y = gelu(%%p) {approximate="tanh"} : f32[2,4,8,16]
              return %%y
            }
            """;

    @Test
    void aPermuteIsCountedOnlyWhenItsTypeMakesItACopy() {
        Graph view = IrParser.parse(PERMUTE_THEN_GELU.formatted("f32[2,4,8,16]@[512,16,64,1]"));
        Graph copy = IrParser.parse(PERMUTE_THEN_GELU.formatted("f32[2,4,8,16]"));
        // a strided permute is read in place by the gelu: eager runs one op, fusion removes nothing
        assertEquals(new FusionCoverage(1, 1), FusionCoverage.of(view, view));
        // a contiguous permute is a copy eager runs; both standalone in the "fused" graph
        assertEquals(new FusionCoverage(2, 2), FusionCoverage.of(copy, copy));
        assertEquals(0.0, FusionCoverage.of(copy, copy).value());
    }

    /**
     * The ops counted are exactly the non-GEMM kernels of the graph eager runs (its partition, which
     * skips free views as both eager executors do). Before, the three q/k/v permutes that layout-
     * normalize made views were counted too: decoder-small on CUDA read 10/12 = 0.833, not 7/9.
     */
    @ParameterizedTest(name = "{0} {1} amp={2}")
    @CsvSource({"cpu-small,cpu,NONE", "cpu-small,cpu,BF16", "encoder-small,cpu,NONE", "decoder-small,cuda,NONE",
            "encoder-small,cuda,NONE", "decoder,cuda,NONE"})
    void countedIsWhatEagerLaunches(String config, String target, CompileOptions.Amp amp) {
        DType dtype = target.equals("cuda") ? DType.BF16 : DType.F32;
        Graph g = TransformerBlock.build(BlockConfig.named(config), dtype).graph();
        CompileOptions o = CompileOptions.defaults().withTarget(target).withAmp(amp);
        CompiledModel m = Compiler.compile(g, o);
        long eagerNonGemm = new Partition(o.kernelTarget()).kernels(m.unfused()).stream()
                .filter(k -> k.kind() != KernelKind.GEMM).count();
        assertEquals(eagerNonGemm, m.coverage().counted(), config + " on " + target + ": " + m.coverage());
        if (config.equals("decoder-small") && target.equals("cuda")) {
            assertEquals(new FusionCoverage(9, 2), m.coverage(), "7 of 9: norms x2 stay standalone");
        }
    }

}
