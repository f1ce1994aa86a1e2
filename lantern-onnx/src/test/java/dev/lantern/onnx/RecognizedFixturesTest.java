package dev.lantern.onnx;

import dev.lantern.Lantern;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The decoders' exported attention becomes Lantern's ops: after import and the standard pipeline, the
 * LLaMA and GPT-2 fixtures (two layers) have one causal attention op per layer and no softmax left
 * (the scale and the causal mask folded in), and LLaMA's rotary embedding is rope ops (or rope inside
 * the attention), with no slice/neg/concat rotate-half left; GPT-2's written-out tanh GELU is in its GEMM's
 * epilogue. ModelFixturesTest checks the numbers.
 */
class RecognizedFixturesTest {
    private static final int LAYERS = 2;

    @ParameterizedTest(name = "{0} [{1}, {2}]")
    @CsvSource({"llama,2,16", "gpt2,2,16", "llama,1,7", "gpt2,1,7"})
    void oneCausalAttentionPerLayer(String family, long batch, long seq) throws Exception {
        ImportedModel m = OnnxImporter.importFile(ModelFixturesTest.folder(family).resolve("model.onnx"),
                Map.of("input_ids", new long[] {batch, seq}));
        Graph g = Lantern.compile(m.graph(), CompileOptions.defaults()).model().graph();
        List<Node> attention = ops(g, Op.ATTENTION);
        assertEquals(LAYERS, attention.size(), g.toString());
        for (Node a : attention) {
            assertTrue(a.attrs().getBool("causal", false), a.toString());
            assertEquals(0.25, a.attrs().getDouble("scale", 0), 1e-7, a.toString()); // 1/sqrt(head_dim 16)
        }
        assertEquals(0, ops(g, Op.SOFTMAX).size(), g.toString());
        assertEquals(0, ops(g, Op.NEG).size() + ops(g, Op.CONCAT).size(), g.toString());
        if (family.equals("gpt2")) {
            // the tanh GELU written out, after a Conv1D's flattened matmul: in the GEMM's epilogue
            long geluGemms = ops(g, Op.GEMM).stream().filter(n -> n.attrs().getString("act", "").equals("gelu_tanh")).count();
            assertEquals(LAYERS, geluGemms, g.toString());
            assertEquals(0, ops(g, Op.TANH).size() + ops(g, Op.GELU).size(), g.toString());
        }
        if (family.equals("llama")) {
            long inAttention = attention.stream().filter(a -> a.attrs().getBool("rope", false)).count();
            assertEquals(2 * LAYERS, ops(g, Op.ROPE).size() + 2 * inAttention, "rope on q and k of each layer: " + g);
            for (Node r : ops(g, Op.ROPE)) {
                assertEquals(10000.0, r.attrs().getDouble("base", 0), r.toString()); // the fixture's rope_theta
            }
        }
    }

    private static List<Node> ops(Graph g, Op op) {
        return g.nodes().stream().filter(n -> n.op() == op).toList();
    }
}
