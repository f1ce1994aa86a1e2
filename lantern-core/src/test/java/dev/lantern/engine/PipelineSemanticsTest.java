package dev.lantern.engine;

import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every pass of the standard pipeline keeps the block's meaning: the graph after each pass, run on
 * the float64 reference with the same weights and input, gives the source graph's output (exactly
 * up to float64 rounding without AMP; within bf16 rounding with it). A tiny block keeps it fast.
 */
class PipelineSemanticsTest {
    @ParameterizedTest(name = "decoder={0} amp={1}")
    @CsvSource({"true,NONE", "false,NONE", "true,BF16", "false,BF16"})
    void everyPassPreservesTheBlock(boolean decoder, CompileOptions.Amp amp) {
        BlockConfig tiny = new BlockConfig("tiny", 2, 16, 32, 2, 64, decoder);
        Model m = TransformerBlock.build(tiny, DType.F32);
        Map<String, Tensor> feeds = new HashMap<>(m.parameters(3));
        feeds.putAll(Feeds.inputs(m.graph(), 3));
        double[] want = ReferenceInterpreter.run(m.graph(), feeds).get(m.graph().outputs().getFirst()).data();
        List<String> report = new ArrayList<>();
        Pipeline.standard(CompileOptions.defaults().withAmp(amp)).run(m.graph(), (p, g) -> {
            double[] got = ReferenceInterpreter.run(g, declared(g, feeds)).get(g.outputs().getFirst()).data();
            double rel = Accuracy.relErr(got, want);
            report.add(p.name() + "=" + rel);
            assertTrue(rel <= (amp == CompileOptions.Amp.NONE ? 1e-12 : 2e-2), "after " + p.name() + ": " + rel + " " + report);
        });
    }

    /** Weights rounded to the dtype the graph declares (autocast's bf16 parameters), as bind does. */
    static Map<String, Tensor> declared(Graph g, Map<String, Tensor> feeds) {
        return Feeds.declared(g, feeds);
    }
}
