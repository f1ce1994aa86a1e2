package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** GPT-2's Conv1D form (a matmul on flattened rows between reshapes) becomes a matmul on the activation. */
class RecognizeFlatLinearTest {
    static RecognizeCase conv1d(String outShape, String after) {
        return RecognizeCase.of("""
                  %x = input {name="x"} : f32[2,8,32]
                  %w = input {name="w"} : f32[32,48]
                  %0 = reshape(%x) {shape=[16,32]} : f32[16,32]
                  %1 = matmul(%0, %w) : f32[16,48]
                  %2 = reshape(%1) {shape=OUT} : f32OUT
                """.replace("OUT", outShape) + after, Map.of());
    }

    @Test
    void flattenedLinearBecomesOneMatmulThatItsGeluReads() {
        RecognizeCase c = conv1d("[2,8,48]", "  %3 = gelu(%2) : f32[2,8,48]\n  return %3\n");
        Graph g = new Canonicalize().run(new RecognizeFlatLinear().run(c.graph()));
        Node mm = g.node("2");
        assertEquals(Op.MATMUL, mm.op(), g.toString());
        assertEquals(List.of("x", "w"), mm.inputs());
        assertEquals(0, c.count(g, Op.RESHAPE), g.toString());
        c.assertSameMeaning(g, 1e-15);
        // and the GELU now fuses into the GEMM's epilogue
        Graph fused = new Fuse().run(g);
        assertEquals("gelu_tanh", fused.node("3").attrs().getString("act", ""), fused.toString());
    }

    @Test
    void otherRowGroupingsAreKeptExactly() {
        RecognizeCase c = conv1d("[4,4,48]", "  return %2\n");
        Graph g = new RecognizeFlatLinear().run(c.graph());
        assertEquals(Op.MATMUL, g.node("2").op(), g.toString());
        c.assertSameMeaning(g, 1e-15);
    }

    @Test
    void aSplitOutputAxisOrAnotherReaderIsLeftAlone() {
        RecognizeCase split = conv1d("[2,8,6,8]", "  return %2\n");
        assertSame(split.graph(), new RecognizeFlatLinear().run(split.graph()));
        RecognizeCase shared = conv1d("[2,8,48]", "  return %2, %1\n");
        assertSame(shared.graph(), new RecognizeFlatLinear().run(shared.graph()));
    }
}
